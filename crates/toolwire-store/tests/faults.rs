//! Faults of the shared backends, made real by a TCP relay in front of the S3 server that
//! the test can cut: when the blob store goes away mid-run, a result with media is stored
//! as a `store_failed` error naming the media (never a row pointing at a missing blob),
//! and once the store is back, results store normally again.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use toolwire_core::{CallRef, Message, Source, Status, ToolResult, Value};
use toolwire_store::{NewSession, StoreConfig, Stores, message_blob_refs};

/// Forwards connections to `upstream` while up; cut, it drops every open connection and
/// every new one.
struct Relay {
    port: u16,
    up: Arc<AtomicBool>,
    open: Arc<tokio::sync::Mutex<JoinSet<()>>>,
}

impl Relay {
    async fn start(upstream: String) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = Arc::new(AtomicBool::new(true));
        let open = Arc::new(tokio::sync::Mutex::new(JoinSet::new()));
        let (up2, open2) = (Arc::clone(&up), Arc::clone(&open));
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if !up2.load(Ordering::SeqCst) {
                    continue; // dropped at once
                }
                let upstream = upstream.clone();
                open2.lock().await.spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        });
        Relay { port, up, open }
    }

    async fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        self.open.lock().await.abort_all();
    }

    fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

/// The stores at these URLs, and a new session in them.
async fn open_with_session(history: &str, blobs: &str) -> (Stores, toolwire_store::Session) {
    let stores = Stores::open_urls(history, blobs, StoreConfig::default())
        .await
        .unwrap();
    let session = stores.create_session(NewSession::default()).await.unwrap();
    (stores, session)
}

fn image_result(call: &str, seed: u64) -> ToolResult {
    let bytes = support::media_bytes(seed, 40_000);
    ToolResult::success(
        CallRef::new(call, "view_image"),
        Value::image(Source::base64(support::b64(&bytes)), "image/png"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s3_going_away_mid_run_stores_an_error_naming_the_media_and_no_dangling_reference() {
    let Some(s3) = support::backends::server_url(support::backends::S3_ENV, "S3") else {
        return;
    };
    // The S3 URL with its endpoint swapped for the relay's.
    let endpoint = s3
        .split(['?', '&'])
        .find_map(|kv| kv.strip_prefix("endpoint="))
        .expect("the test S3 URL names its endpoint");
    let upstream = endpoint.trim_start_matches("http://").to_owned();
    let relay = Relay::start(upstream).await;
    let (base, query) = s3.split_once('?').unwrap();
    let query = query.replace(endpoint, &format!("http://127.0.0.1:{}", relay.port));
    let prefix = toolwire_core::new_id("fault");
    let blob_url = format!("{base}/{prefix}?{query}");
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}", dir.path().join("history.db").display());
    let (stores, session) = open_with_session(&db, &blob_url).await;
    let ok = stores
        .record_result_or_failure(&session.id, image_result("before", 1), None, Vec::new())
        .await
        .unwrap();
    assert_eq!(ok.result.status, Status::Success);

    relay.cut().await;
    let failed = stores
        .record_result_or_failure(&session.id, image_result("during", 2), None, Vec::new())
        .await
        .unwrap();
    let failed = failed.result;
    assert_eq!(failed.status, Status::Error);
    let error = failed.error.as_ref().unwrap();
    assert_eq!(error.code.as_deref(), Some("store_failed"));
    assert!(
        error
            .message
            .contains("could not store the media at output[0]"),
        "{}",
        error.message
    );
    assert!(message_blob_refs(&Message::ToolResult(failed.clone())).is_empty());

    relay.restore();
    let again = stores
        .record_result_or_failure(&session.id, image_result("after", 3), None, Vec::new())
        .await
        .unwrap();
    assert_eq!(again.result.status, Status::Success);
    // Every stored reference resolves: nothing points at the blob that was never written.
    for m in stores.history().load(&session.id).await.unwrap() {
        for key in message_blob_refs(&m.content) {
            assert!(stores.blob(&key).await.is_ok(), "{key}");
        }
    }
}

/// Postgres going away mid-run (as in a restart): appends fail with a clear error and
/// leave nothing half-written; once it is back, the pool reconnects and the session goes
/// on from the next number, with no gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_going_away_mid_run_fails_appends_cleanly_and_recovers() {
    let Some(pg) = support::backends::server_url(support::backends::POSTGRES_ENV, "Postgres")
    else {
        return;
    };
    let (scheme, rest) = pg.split_once("://").unwrap();
    let (user, rest) = rest.split_once('@').unwrap();
    let (authority, path) = rest.split_once('/').unwrap();
    let relay = Relay::start(authority.to_owned()).await;
    let url = format!("{scheme}://{user}@127.0.0.1:{}/{path}", relay.port);
    let dir = tempfile::tempdir().unwrap();
    let blobs = format!("file://{}", dir.path().join("blobs").display());
    let (stores, session) = open_with_session(&url, &blobs).await;
    let text = |n: usize| Message::User {
        text: format!("message {n}"),
    };
    for n in 1..=3 {
        stores.append(&session.id, text(n)).await.unwrap();
    }
    relay.cut().await;
    let err = stores
        .append(&session.id, text(99))
        .await
        .expect_err("no database, no append");
    assert!(err.to_string().starts_with("database error"), "{err}");
    relay.restore();
    // The pool notices its connections died and opens new ones.
    let mut appended = None;
    for _ in 0..50 {
        if let Ok(m) = stores.append(&session.id, text(4)).await {
            appended = Some(m);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(appended.expect("appends work again").seq, 4);
    let loaded = stores.history().load(&session.id).await.unwrap();
    let texts: Vec<String> = loaded
        .iter()
        .map(|m| match &m.content {
            Message::User { text } => text.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        texts,
        ["message 1", "message 2", "message 3", "message 4"],
        "nothing half-written, no gap"
    );
}
