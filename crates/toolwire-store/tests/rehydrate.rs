//! Blob-backed images read back inline for display: the original bytes, within a size
//! limit, and a missing blob left as a reference.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use toolwire_core::{CallRef, Source, ToolResult, Value};
use toolwire_store::{BlobKey, rehydrate_images};

on_every_backend! {
    async fn persisted_images_come_back_inline_within_the_limit(backend) {
        let stores = backend.open().await;
        let mut png = vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
        png.extend(support::media_bytes(7, 4000));
        let original = ToolResult::success(
            CallRef::new("c1", "shot"),
            vec![
                Value::text("here"),
                Value::image(Source::base64(support::b64(&png)), "image/png"),
            ],
        );
        let stored = stores.persist(original.clone(), None).await.unwrap();
        assert!(
            stored.output[1].data["source"]["blob"].is_string(),
            "persisted to a blob"
        );

        let back = rehydrate_images(&stored, stores.blobs().as_ref(), 1 << 20)
            .await
            .unwrap();
        assert_eq!(
            back.output[1].data["source"],
            original.output[1].data["source"]
        );
        assert_eq!(back.output[0], stored.output[0]);

        // Over the limit: left as a reference.
        let kept = rehydrate_images(&stored, stores.blobs().as_ref(), 100)
            .await
            .unwrap();
        assert_eq!(kept, stored);

        // A result that lies about the size (10 bytes for a 4 KB blob) is judged by the
        // blob store's figure, not its claim.
        let mut lying = stored.clone();
        lying.output[1].data["source"]["size"] = 10.into();
        let kept = rehydrate_images(&lying, stores.blobs().as_ref(), 100)
            .await
            .unwrap();
        assert_eq!(kept, lying);

        // A blob that is gone: still a reference, no error.
        let key = stored.output[1].data["source"]["blob"]
            .as_str()
            .unwrap()
            .to_owned();
        stores
            .blobs()
            .delete(&BlobKey::parse(&key).unwrap())
            .await
            .unwrap();
        let missing = rehydrate_images(&stored, stores.blobs().as_ref(), 1 << 20)
            .await
            .unwrap();
        assert_eq!(missing, stored);
    }
}
