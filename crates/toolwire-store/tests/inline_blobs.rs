//! Small raw payloads kept in their result's row (`InlineBlob`): committed with it, read
//! back by key like any blob, never a file or an object of their own, gone with their
//! session; larger ones stay blobs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use toolwire_core::{CallRef, Message, ToolResult, Value};
use toolwire_store::{BlobKey, GcOptions, INLINE_RAW_LIMIT, InlineBlob, NewSession, StoreError};

fn echo(id: &str) -> ToolResult {
    ToolResult::success(CallRef::new(id, "echo"), Value::text("Echo: hi"))
}

on_every_backend! {
    async fn a_small_raw_payload_is_kept_in_its_row_and_read_back_by_key(backend) {
        let stores = backend.open().await;
        let session = stores.create_session(NewSession::default()).await.unwrap();
        let raw = br#"{"content":[{"type":"text","text":"Echo: hi"}],"_meta":{"n":1}}"#;
        let mut result = echo("c1");
        let inline = stores.keep_raw(&mut result, raw).await.unwrap();
        let inline = inline.expect("a small payload is kept in the row");
        let key = result.metadata.raw_ref.clone().unwrap();
        assert_eq!(key, inline.key.as_str());
        assert_eq!(key, format!("blake3:{}", blake3::hash(raw).to_hex()));
        // Nothing is written until the row is: no file, no object.
        assert!(stores.blobs().list().await.unwrap().is_empty());
        assert_eq!(stores.blobs().size(&inline.key).await.unwrap(), None);

        let stored = stores
            .record_result_or_failure(&session.id, result, None, vec![inline.clone()])
            .await
            .unwrap();
        let stored = &stored.result;
        assert_eq!(stored.metadata.raw_ref.as_deref(), Some(key.as_str()));
        assert_eq!(stored.status, toolwire_core::Status::Success);

        // Read back through every reader's path: whole, a range, its size.
        assert_eq!(stores.blob(&key).await.unwrap().as_ref(), raw);
        let part = stores.blobs().get_range(&inline.key, 2..9).await.unwrap();
        assert_eq!(part.as_ref(), &raw[2..9]);
        assert_eq!(
            stores.blobs().size(&inline.key).await.unwrap(),
            Some(raw.len() as u64)
        );
        let err = stores
            .blobs()
            .get_range(&inline.key, 0..(raw.len() as u64 + 1))
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::InvalidRange { .. }), "{err}");
        // Still no blob of its own, so gc neither counts nor removes it.
        assert!(stores.blobs().list().await.unwrap().is_empty());
        let report = stores
            .gc(GcOptions {
                min_age: std::time::Duration::ZERO,
                ..GcOptions::default()
            })
            .await
            .unwrap();
        assert_eq!((report.scanned, report.removed), (0, 0));
        assert!(stores.history().referenced_blobs().await.unwrap().contains(&inline.key));

        // Durable with its row: a new process reads it.
        drop(stores);
        let stores = backend.open().await;
        assert_eq!(stores.blob(&key).await.unwrap().as_ref(), raw);

        // Gone with its session.
        assert!(stores.delete_session(&session.id).await.unwrap());
        let err = stores.blob(&key).await.unwrap_err();
        assert!(matches!(err, StoreError::BlobNotFound { .. }), "{err}");
    }
}

on_every_backend! {
    async fn a_batch_keeps_each_raw_payload_with_its_row_and_large_ones_stay_blobs(backend) {
        let stores = backend.open().await;
        let session = stores.create_session(NewSession::default()).await.unwrap();
        let small: Vec<Vec<u8>> = (0..3)
            .map(|i| format!(r#"{{"content":[{{"type":"text","text":"call {i}"}}]}}"#).into_bytes())
            .collect();
        let mut messages = Vec::new();
        let mut inline = Vec::new();
        for (i, raw) in small.iter().enumerate() {
            let mut result = echo(&format!("c{i}"));
            inline.push(stores.keep_raw(&mut result, raw).await.unwrap().unwrap());
            messages.push(Message::ToolResult(result));
        }
        // One just over the limit is a blob, stored before the row that names it.
        let large = vec![b'x'; INLINE_RAW_LIMIT + 1];
        let mut result = echo("big");
        assert_eq!(stores.keep_raw(&mut result, &large).await.unwrap(), None);
        let large_key = BlobKey::parse(result.metadata.raw_ref.as_deref().unwrap()).unwrap();
        messages.push(Message::ToolResult(result));
        let stored = stores
            .append_many_inline(&session.id, messages, inline)
            .await
            .unwrap();
        assert_eq!(stored.len(), 4);
        for (i, raw) in small.iter().enumerate() {
            let Message::ToolResult(r) = &stored[i].content else {
                panic!("not a result");
            };
            assert_eq!(
                stores.blob(r.metadata.raw_ref.as_deref().unwrap()).await.unwrap().as_ref(),
                raw.as_slice()
            );
        }
        let listed: Vec<BlobKey> = stores
            .blobs()
            .list()
            .await
            .unwrap()
            .into_iter()
            .map(|b| b.key)
            .collect();
        assert_eq!(listed, vec![large_key.clone()], "only the large one is a blob");
        assert_eq!(stores.blobs().get(&large_key).await.unwrap().len(), large.len());
    }
}

on_every_backend! {
    async fn a_row_naming_a_blob_kept_nowhere_is_refused(backend) {
        let stores = backend.open().await;
        let session = stores.create_session(NewSession::default()).await.unwrap();
        let raw = br#"{"content":[]}"#;
        let mut result = echo("c1");
        let inline: InlineBlob = stores.keep_raw(&mut result, raw).await.unwrap().unwrap();
        // Appended without the bytes it names: the append must not leave a dangling key.
        let err = stores
            .append(&session.id, Message::ToolResult(result.clone()))
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::MissingBlob { .. }), "{err}");
        assert!(stores.history().load(&session.id).await.unwrap().is_empty());
        // With them, it is stored.
        stores
            .append_many_inline(&session.id, vec![Message::ToolResult(result)], vec![inline])
            .await
            .unwrap();
        assert_eq!(stores.history().load(&session.id).await.unwrap().len(), 1);
    }
}

on_every_backend! {
    async fn a_row_keeps_only_bytes_under_their_own_hash_and_within_the_limit(backend) {
        let stores = backend.open().await;
        let session = stores.create_session(NewSession::default()).await.unwrap();
        let mut result = echo("c1");
        let mut inline = stores.keep_raw(&mut result, b"{}").await.unwrap().unwrap();
        inline.bytes = bytes::Bytes::from_static(b"{\"forged\":1}");
        let err = stores
            .append_many_inline(&session.id, vec![Message::ToolResult(result)], vec![inline])
            .await
            .unwrap_err();
        assert!(err.to_string().contains("hash to"), "{err}");

        let big = vec![b'y'; INLINE_RAW_LIMIT + 1];
        let forged = InlineBlob {
            key: BlobKey::parse(&format!("blake3:{}", blake3::hash(&big).to_hex())).unwrap(),
            bytes: bytes::Bytes::from(big),
        };
        let mut result = echo("c2");
        result.metadata.raw_ref = Some(forged.key.to_string());
        let err = stores
            .append_many_inline(&session.id, vec![Message::ToolResult(result)], vec![forged])
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::BlobTooLarge { .. }), "{err}");
        assert!(stores.history().load(&session.id).await.unwrap().is_empty());
    }
}
