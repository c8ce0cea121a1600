//! A result that reuses the bytes of an old, unreferenced blob survives a `gc` that runs
//! between its persist and its append: reusing the blob makes it young again.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use toolwire_core::Message;
use toolwire_core::{CallRef, Source, ToolResult, Value};
use toolwire_store::{GcOptions, NewSession, StoreConfig, Stores};

#[tokio::test]
async fn gc_between_persist_and_append_spares_a_reused_blob() {
    let dir = tempfile::tempdir().unwrap();
    let s = Stores::open(dir.path(), StoreConfig::default())
        .await
        .unwrap();
    let bytes = vec![7u8; 5000];
    let r = s.blobs().put(&bytes).await.unwrap();
    // The blob was orphaned a day ago.
    let hex = r.key.hex().to_owned();
    let file = std::fs::File::options()
        .write(true)
        .open(dir.path().join("blobs").join(&hex[..2]).join(&hex))
        .unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(86_400))
        .unwrap();
    let session = s.create_session(NewSession::default()).await.unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let result = ToolResult::success(
        CallRef::new("c1", "t"),
        Value::image(Source::base64(b64), "image/png"),
    );
    let persisted = s.persist(result, None).await.unwrap();
    // Another process runs `toolwire gc` now, with the default min_age.
    let report = s.gc(GcOptions::default()).await.unwrap();
    assert_eq!(report.removed, 0, "{report:?}");
    s.append(&session.id, Message::ToolResult(persisted))
        .await
        .unwrap();
}
