//! Blob store behaviour (dedup, streaming, ranges), the persist step's rules, and gc.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::Duration;

use bytes::Bytes;
use toolwire_core::Message;
use toolwire_core::{CallRef, ResourceKind, Source, ToolResult, Value};
use toolwire_store::{GcOptions, NewSession, PersistConfig, StoreError, persist, put_stream};

on_every_backend! {
    async fn same_bytes_make_one_blob_and_ranges_read_back(backend) {
        let stores = backend.open().await;
        let bytes = support::media_bytes(7, 9 << 20);
        let a = stores.blobs().put(&bytes).await.unwrap();
        let chunks: Vec<Result<Bytes, StoreError>> = bytes
            .chunks(100_003)
            .map(|c| Ok(Bytes::copy_from_slice(c)))
            .collect();
        let b = put_stream(stores.blobs().as_ref(), futures::stream::iter(chunks), None)
            .await
            .unwrap();
        assert_eq!(a.key, b.key);
        assert_eq!(
            a.key.as_str(),
            format!("blake3:{}", blake3::hash(&bytes).to_hex())
        );
        assert!(!a.existed && b.existed);
        assert_eq!(stores.blobs().list().await.unwrap().len(), 1);
        assert_eq!(stores.blobs().used_bytes(), bytes.len() as u64);
        let got = stores
            .blobs()
            .get_range(&a.key, 5_000_000..5_000_100)
            .await
            .unwrap();
        assert_eq!(got.as_ref(), &bytes[5_000_000..5_000_100]);
        assert!(
            stores
                .blobs()
                .get_range(&a.key, 0..0)
                .await
                .unwrap()
                .is_empty()
        );
        let err = stores
            .blobs()
            .get_range(&a.key, 10..(10 << 20))
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::InvalidRange { .. }), "{err}");
        // Usage is recounted on reopen.
        drop(stores);
        let stores = backend.open().await;
        assert_eq!(stores.blobs().used_bytes(), bytes.len() as u64);
        assert_eq!(stores.blobs().get(&a.key).await.unwrap().len(), bytes.len());
    }
}

on_every_backend! {
    async fn persist_externalizes_by_threshold_and_kind(backend) {
        let stores = backend.open().await;
        let small_img = support::media_bytes(1, 1024);
        let big_img = support::media_bytes(2, 1025);
        let tiny_audio = support::media_bytes(3, 10);
        let result = ToolResult::success(
            CallRef::new("c", "t"),
            vec![
                Value::image(Source::base64(support::b64(&small_img)), "image/png"),
                Value::image(Source::base64(support::b64(&big_img)), "image/png"),
                Value::file(
                    Source::base64(support::b64(&tiny_audio)),
                    "audio/ogg",
                    Some("a.ogg".into()),
                ),
                Value::text("not media"),
            ],
        );
        let raw = br#"{"content":[{"type":"image"}]}"#;
        let out = persist(
            result,
            Some(raw),
            stores.blobs().as_ref(),
            &PersistConfig::default(),
        )
        .await
        .unwrap();
        assert!(
            out.output[0].data["source"].get("base64").is_some(),
            "at the threshold stays inline"
        );
        assert_eq!(out.output[1].data["source"]["size"], 1025);
        assert_eq!(out.output[2].data["source"]["size"], 10);
        let kinds: Vec<_> = out
            .resources
            .iter()
            .map(|r| (r.kind, r.size, r.filename.clone()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (ResourceKind::Image, 1025, None),
                (ResourceKind::Audio, 10, Some("a.ogg".into()))
            ]
        );
        assert_eq!(
            out.metadata.raw_ref, None,
            "raw is kept out unless asked for"
        );

        let keep = PersistConfig {
            keep_raw: true,
            ..PersistConfig::default()
        };
        let again = persist(out.clone(), Some(raw), stores.blobs().as_ref(), &keep)
            .await
            .unwrap();
        let raw_key = again.metadata.raw_ref.clone().unwrap();
        assert_eq!(stores.blob(&raw_key).await.unwrap().as_ref(), raw);
        // Persisting a persisted result changes nothing but the raw reference.
        assert_eq!(again.output, out.output);
        assert_eq!(again.resources, out.resources);
    }
}

on_every_backend! {
    async fn persist_accepts_line_broken_url_safe_and_data_uri_base64(backend) {
        use base64::Engine as _;
        let stores = backend.open().await;
        let bytes = support::media_bytes(9, 3000);
        let std_b64 = support::b64(&bytes);
        let wrapped: String = std_b64
            .as_bytes()
            .chunks(76)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect::<Vec<_>>()
            .join("\r\n");
        let url_safe = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&bytes);
        let data_uri = format!("data:image/png;base64,{std_b64}");
        for form in [wrapped, url_safe, data_uri] {
            let r = ToolResult::success(
                CallRef::new("c", "t"),
                Value::image(Source::base64(form), "image/png"),
            );
            let out = stores.persist(r, None).await.unwrap();
            let key = out.output[0].data["source"]["blob"]
                .as_str()
                .unwrap()
                .to_owned();
            assert_eq!(stores.blob(&key).await.unwrap().as_ref(), bytes.as_slice());
        }
    }
}

on_every_backend! {
    async fn gc_lists_then_removes_only_unreferenced_blobs(backend) {
        let stores = backend.open().await;
        let session = stores

            .create_session(NewSession::default())
            .await
            .unwrap();
        let kept = ToolResult::success(
            CallRef::new("c", "t"),
            Value::file(
                Source::base64(support::b64(&support::media_bytes(1, 50))),
                "video/mp4",
                None,
            ),
        );
        stores.record_result(&session.id, kept, None).await.unwrap();
        let orphan = stores
            .blobs()
            .put(&support::media_bytes(2, 5000))
            .await
            .unwrap();

        let young = stores.gc(GcOptions::default()).await.unwrap();
        assert_eq!(
            (young.kept_young, young.removed),
            (1, 0),
            "fresh blobs are kept by min_age"
        );

        let now = GcOptions {
            dry_run: true,
            min_age: Duration::ZERO,
        };
        let dry = stores.gc(now).await.unwrap();
        assert_eq!(dry.scanned, 2);
        assert_eq!(
            dry.unreferenced.iter().map(|b| &b.key).collect::<Vec<_>>(),
            vec![&orphan.key]
        );
        assert_eq!(dry.removed, 0);
        assert!(stores.blobs().size(&orphan.key).await.unwrap().is_some());

        let real = stores
            .gc(GcOptions {
                dry_run: false,
                ..now
            })
            .await
            .unwrap();
        assert_eq!((real.removed, real.freed_bytes), (1, 5000));
        assert!(stores.blobs().size(&orphan.key).await.unwrap().is_none());
        let loaded = stores.history().load(&session.id).await.unwrap();
        let Message::ToolResult(r) = &loaded[0].content else {
            panic!("not a result")
        };
        let key = r.output[0].data["source"]["blob"].as_str().unwrap();
        assert_eq!(stores.blob(key).await.unwrap().len(), 50);
    }
}
