//! Acceptance: bad input gets a clear error and leaves the store unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::{Path, PathBuf};

use toolwire_core::Message;
use toolwire_core::{CallRef, Source, ToolResult, Value};
use toolwire_store::{
    BlobKey, BlobLimits, NewSession, Page, SqliteHistory, StoreConfig, StoreError, Stores,
};

/// Every file under `dir` with its bytes: "unchanged" means this is equal before and after.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn blob_files(data: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    snapshot(&data.join("blobs"))
}

async fn small_stores(dir: &Path, limits: BlobLimits) -> Stores {
    Stores::open(
        dir,
        StoreConfig {
            limits,
            ..StoreConfig::default()
        },
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn malformed_blob_keys_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let stores = small_stores(dir.path(), BlobLimits::default()).await;
    let session = stores.create_session(NewSession::default()).await.unwrap();
    for bad in [
        "sha256:abcd",
        "blake3:../../etc/passwd",
        &format!("blake3:{}", "A".repeat(64)),
        "",
    ] {
        let err = stores.blob(bad).await.unwrap_err();
        assert!(matches!(err, StoreError::InvalidBlobKey { .. }), "{err}");
        assert!(
            err.to_string()
                .contains("expected `blake3:` followed by 64"),
            "{err}"
        );
        assert!(BlobKey::parse(bad).is_err());
    }
    // A result whose media source names a malformed key is not stored.
    let result = ToolResult::success(
        CallRef::new("c1", "t"),
        Value::image(Source::blob("blake3:../../x", 3), "image/png"),
    );
    let err = stores
        .append(&session.id, Message::ToolResult(result))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidBlobKey { .. }), "{err}");
    // And one naming a well-formed key that is not stored is refused too.
    let missing = format!("blake3:{}", "0".repeat(64));
    let result = ToolResult::success(
        CallRef::new("c2", "t"),
        Value::image(Source::blob(&missing, 3), "image/png"),
    );
    let err = stores
        .append(&session.id, Message::ToolResult(result))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::MissingBlob { .. }), "{err}");
    assert!(stores.history().load(&session.id).await.unwrap().is_empty());
}

#[tokio::test]
async fn dot_dot_and_separators_in_ids_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let stores = small_stores(dir.path(), BlobLimits::default()).await;
    let session = stores.create_session(NewSession::default()).await.unwrap();
    let before = stores
        .history()
        .list_sessions(Page::default())
        .await
        .unwrap();
    for bad in ["../etc", "a/../b", "a/b", "a\\b", "x\0y", ""] {
        let new = NewSession {
            id: Some(bad.into()),
            ..NewSession::default()
        };
        let err = stores.create_session(new).await.unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::InvalidId {
                    what: "session id",
                    ..
                }
            ),
            "{bad:?}: {err}"
        );
        let err = stores.history().load(bad).await.unwrap_err();
        assert!(matches!(err, StoreError::InvalidId { .. }), "{err}");
        let r = ToolResult::success(CallRef::new(bad, "t"), Value::text("x"));
        let err = stores
            .append(&session.id, Message::ToolResult(r))
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::InvalidId {
                    what: "call id",
                    ..
                }
            ),
            "{bad:?}: {err}"
        );
        let err = stores
            .history()
            .find_result(&session.id, bad)
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::InvalidId { .. }), "{err}");
    }
    let child = NewSession {
        parent_id: Some("../up".into()),
        ..NewSession::default()
    };
    assert!(stores.create_session(child).await.is_err());
    assert_eq!(
        stores
            .history()
            .list_sessions(Page::default())
            .await
            .unwrap(),
        before
    );
    assert!(stores.history().load(&session.id).await.unwrap().is_empty());
    // Unknown but well-formed ids are a different, equally clear error.
    let err = stores.history().load("nope").await.unwrap_err();
    assert_eq!(err.to_string(), "session \"nope\" not found");
    let orphan = NewSession {
        parent_id: Some("nope".into()),
        ..NewSession::default()
    };
    let err = stores.create_session(orphan).await.unwrap_err();
    assert!(matches!(err, StoreError::ParentNotFound { .. }), "{err}");
    let err = stores
        .append("nope", Message::User { text: "hi".into() })
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::SessionNotFound { .. }), "{err}");
}

#[tokio::test]
async fn a_corrupt_database_is_reported_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.db");
    let garbage: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&path, &garbage).unwrap();
    let before = snapshot(dir.path());
    let err = SqliteHistory::open(&path).await.unwrap_err();
    assert!(matches!(err, StoreError::CorruptDatabase { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("corrupt or not a toolwire database"),
        "{err}"
    );
    assert_eq!(snapshot(dir.path()), before);
    let err = Stores::open(dir.path(), StoreConfig::default())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::CorruptDatabase { .. }), "{err}");
}

#[tokio::test]
async fn a_full_quota_refuses_the_blob_and_keeps_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let limits = BlobLimits {
        max_blob_size: 1 << 20,
        quota: 10_000,
    };
    let stores = small_stores(dir.path(), limits).await;
    stores
        .blobs()
        .put(&support::media_bytes(1, 8_000))
        .await
        .unwrap();
    let before = blob_files(dir.path());

    // Size known up front (persist knows the decoded length).
    let big = ToolResult::success(
        CallRef::new("c1", "t"),
        Value::file(
            Source::base64(support::b64(&support::media_bytes(2, 5_000))),
            "video/mp4",
            None,
        ),
    );
    let err = stores.persist(big, None).await.unwrap_err();
    assert!(
        matches!(err, StoreError::QuotaExceeded { quota: 10_000, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("quota exceeded"), "{err}");
    // Size unknown: the stream is cut when it crosses the quota.
    let mut w = stores.blobs().writer(None).await.unwrap();
    w.write(&support::media_bytes(3, 1_500)).await.unwrap();
    let err = w.write(&support::media_bytes(4, 1_500)).await.unwrap_err();
    assert!(matches!(err, StoreError::QuotaExceeded { .. }), "{err}");
    let err = stores
        .blobs()
        .put(&support::media_bytes(5, 3_000))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::QuotaExceeded { .. }), "{err}");
    assert_eq!(blob_files(dir.path()), before);
    // The same bytes again cost nothing and still succeed.
    assert!(
        stores
            .blobs()
            .put(&support::media_bytes(1, 8_000))
            .await
            .unwrap()
            .existed
    );
}

#[tokio::test]
async fn an_oversize_blob_is_refused_and_nothing_is_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    let limits = BlobLimits {
        max_blob_size: 4_096,
        quota: u64::MAX,
    };
    let stores = small_stores(dir.path(), limits).await;
    let before = blob_files(dir.path());
    let err = stores
        .blobs()
        .put(&support::media_bytes(1, 4_097))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "blob is 4097 bytes, over the limit of 4096 bytes per blob"
    );
    let img = ToolResult::success(
        CallRef::new("c1", "t"),
        Value::image(
            Source::base64(support::b64(&support::media_bytes(2, 10_000))),
            "image/png",
        ),
    );
    let err = stores.persist(img, None).await.unwrap_err();
    assert!(
        matches!(err, StoreError::BlobTooLarge { limit: 4_096, .. }),
        "{err}"
    );
    let mut w = stores.blobs().writer(None).await.unwrap();
    w.write(&[0; 4_000]).await.unwrap();
    let err = w.write(&[0; 200]).await.unwrap_err();
    assert!(
        matches!(err, StoreError::BlobTooLarge { size: 4_200, .. }),
        "{err}"
    );
    assert_eq!(blob_files(dir.path()), before);
}

#[tokio::test]
async fn invalid_base64_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let stores = small_stores(dir.path(), BlobLimits::default()).await;
    let bad = ToolResult::success(
        CallRef::new("c1", "t"),
        vec![
            Value::text("ok"),
            Value::file(Source::base64("!!!!not base64!!!!"), "audio/wav", None),
        ],
    );
    let err = stores.persist(bad, None).await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid base64 in output[1].data.source"),
        "{err}"
    );
    assert!(stores.blobs().list().await.unwrap().is_empty());
}

#[tokio::test]
async fn bad_store_urls_say_what_is_expected_and_never_show_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("h.db").display());
    let blobs = format!("file://{}", dir.path().join("b").display());
    let open = |history: String, blob: String| async move {
        Stores::open_urls(&history, &blob, StoreConfig::default())
            .await
            .unwrap_err()
            .to_string()
    };
    // Nothing listens on port 1: a clear error naming the server, password hidden.
    let err = open("postgres://me:hunter2@127.0.0.1:1/x".into(), blobs.clone()).await;
    assert!(
        err.starts_with("cannot open postgres://me:***@127.0.0.1:1/x"),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
    // A server that takes the connection and never answers: the open gives up after the
    // pool's acquire timeout (10 s), not the system's TCP timeout, and says so.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("postgres://me:hunter2@{}/x", silent.local_addr().unwrap());
    let started = std::time::Instant::now();
    let err = open(url, blobs.clone()).await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{err}"
    );
    assert!(err.contains("no answer within 10s"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    drop(silent);
    let err = open("mysql://db/x".into(), blobs.clone()).await;
    assert!(
        err.contains("expected sqlite://PATH or postgres://"),
        "{err}"
    );
    let err = open(db.clone(), "s3:///prefix".into()).await;
    assert!(err.contains("names no bucket"), "{err}");
    let err = open(
        db.clone(),
        "s3://b/p?secret_access_key=hunter2&colour=blue".into(),
    )
    .await;
    assert!(err.contains(r#"unknown S3 setting "colour""#), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    let err = open(db.clone(), "ftp://x".into()).await;
    assert!(err.contains("expected file:///DIR or s3://"), "{err}");
    let err = open(db.clone(), "file://relative/dir".into()).await;
    assert!(err.contains("needs an absolute path"), "{err}");
    let stores = Stores::open_urls(&db, &blobs, StoreConfig::default())
        .await
        .unwrap();
    assert!(stores.blobs().list().await.unwrap().is_empty());
}
