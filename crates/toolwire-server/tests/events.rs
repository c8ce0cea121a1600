//! The event feeds: every event once, in order, whatever the disconnects; many
//! subscribers at once; resume across a restart; the WebSocket as well as SSE.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use rand::Rng;
use serde_json::{Value as Json, json};
use support::{Running, sse_events, start, start_host, start_in};
use toolwire_agent::Host;
use toolwire_core::{Event, EventKind, Message};
use toolwire_store::{
    BlobKey, EventLog, EventWake, HistoryReader, HistoryStore, NewSession, Page, QueuedEvent,
    Result as StoreResult, Session, StoreConfig, StoredMessage, StoredResult, Stores,
};

/// Emits `n` text deltas into `session`, a few at a time, as a turn would.
fn emit(server: &Running, session: &str, n: u64) -> tokio::task::JoinHandle<()> {
    let events = std::sync::Arc::clone(server.host.events());
    let session = session.to_owned();
    tokio::spawn(async move {
        for i in 0..n {
            events
                .emit(
                    &session,
                    EventKind::AssistantDelta {
                        text: format!("d{i}"),
                    },
                )
                .await
                .unwrap();
            if i % 50 == 0 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    })
}

fn seqs(events: &[Json]) -> Vec<u64> {
    events.iter().map(|e| e["seq"].as_u64().unwrap()).collect()
}

#[tokio::test]
async fn a_subscriber_that_drops_100_times_gets_every_event_once_in_order() {
    let f = start().await;
    let s = &f.server;
    let id = s.session().await;
    const N: u64 = 1000;
    let emitter = emit(s, &id, N);
    let mut rng = rand::rng();
    let mut got: Vec<u64> = Vec::new();
    let mut reconnects = 0;
    while (got.len() as u64) < N {
        let last = got.last().copied().unwrap_or(0);
        let mut req = s.get(&format!("/api/sessions/{id}/events"));
        // Half the time by header, half by query: both resume.
        req = if reconnects % 2 == 0 {
            req.header("last-event-id", last.to_string())
        } else {
            s.get(&format!("/api/sessions/{id}/events?after={last}"))
        };
        let response = req.send().await.unwrap();
        assert_eq!(response.status(), 200);
        let take = if reconnects < 100 {
            rng.random_range(1..=15)
        } else {
            usize::MAX
        };
        let events = sse_events(response, take.min((N as usize) - got.len())).await;
        got.extend(seqs(&events));
        reconnects += 1;
    }
    emitter.await.unwrap();
    assert!(reconnects >= 100, "{reconnects} reconnects");
    assert_eq!(
        got,
        (1..=N).collect::<Vec<_>>(),
        "every event once, in order"
    );
}

#[tokio::test]
async fn a_hundred_subscribers_all_receive_a_thousand_event_turn() {
    let f = start().await;
    let s = &f.server;
    let id = s.session().await;
    const N: usize = 1000;
    let mut readers = Vec::new();
    for _ in 0..100 {
        let response = s
            .get(&format!("/api/sessions/{id}/events"))
            .send()
            .await
            .unwrap();
        readers.push(tokio::spawn(sse_events(response, N)));
    }
    emit(s, &id, N as u64).await.unwrap();
    for reader in readers {
        let events = tokio::time::timeout(Duration::from_secs(60), reader)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(seqs(&events), (1..=N as u64).collect::<Vec<_>>());
    }
}

#[tokio::test]
async fn the_feed_resumes_across_a_restart() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let s = start_in(data.path(), ws.path(), None, None).await;
    let id = s.session().await;
    emit(&s, &id, 10).await.unwrap();
    let first = sse_events(
        s.get(&format!("/api/sessions/{id}/events"))
            .send()
            .await
            .unwrap(),
        4,
    )
    .await;
    assert_eq!(seqs(&first), [1, 2, 3, 4]);
    s.stop().await;

    let s = start_in(data.path(), ws.path(), None, None).await;
    emit(&s, &id, 5).await.unwrap();
    let rest = s
        .get(&format!("/api/sessions/{id}/events"))
        .header("last-event-id", "4")
        .send()
        .await
        .unwrap();
    assert_eq!(
        seqs(&sse_events(rest, 11).await),
        (5..=15).collect::<Vec<_>>()
    );
    let bad = s
        .get(&format!("/api/sessions/{id}/events"))
        .header("last-event-id", "x")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let none = s.get("/api/sessions/s_none/events").send().await.unwrap();
    assert_eq!(none.status(), 404);
    s.stop().await;
}

#[tokio::test]
async fn the_websocket_carries_the_same_events_and_resumes() {
    let f = start().await;
    let s = &f.server;
    let id = s.session().await;
    emit(s, &id, 20).await.unwrap();
    let url = format!("ws://{}/api/ws", s.addr);
    let (mut socket, _) = tokio_tungstenite::connect_async(url.as_str())
        .await
        .unwrap();
    socket
        .send(tokio_tungstenite::tungstenite::Message::Text(
            json!({"sessionId": id, "after": 15}).to_string().into(),
        ))
        .await
        .unwrap();
    let mut got = Vec::new();
    while got.len() < 5 {
        let msg = tokio::time::timeout(Duration::from_secs(5), socket.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let event: Json = serde_json::from_str(msg.to_text().unwrap()).unwrap();
        got.push(event["seq"].as_u64().unwrap());
    }
    assert_eq!(got, [16, 17, 18, 19, 20]);
    // A session that does not exist is said, in the socket's own terms.
    let (mut socket, _) = tokio_tungstenite::connect_async(url.as_str())
        .await
        .unwrap();
    socket
        .send(tokio_tungstenite::tungstenite::Message::Text(
            json!({"sessionId": "s_none"}).to_string().into(),
        ))
        .await
        .unwrap();
    let msg = socket.next().await.unwrap().unwrap();
    let error: Json = serde_json::from_str(msg.to_text().unwrap()).unwrap();
    assert_eq!(error["error"]["code"], "not_found");
}

/// An open feed does not hold the server up: shutdown ends it, and the client sees the
/// stream close (to resume elsewhere) instead of hanging.
#[tokio::test]
async fn shutdown_ends_open_feeds() {
    let f = start().await;
    let s = f.server;
    let id = s.session().await;
    let response = s
        .get(&format!("/api/sessions/{id}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let reader = tokio::spawn(sse_events(response, usize::MAX));
    tokio::time::timeout(Duration::from_secs(10), s.stop())
        .await
        .expect("the server stops with a feed open");
    let events = tokio::time::timeout(Duration::from_secs(5), reader)
        .await
        .expect("the feed ends")
        .unwrap();
    assert!(events.is_empty());
}

/// The store's reads, counted: the history's session look-ups and loads, the event log's
/// reads.
#[derive(Debug)]
struct Counted<T: ?Sized> {
    inner: std::sync::Arc<T>,
    reads: std::sync::Arc<AtomicU64>,
}

impl<T: ?Sized> Counted<T> {
    fn read(&self) {
        self.reads.fetch_add(1, Ordering::Relaxed);
    }
}

#[async_trait::async_trait]
impl HistoryReader for Counted<dyn HistoryStore> {
    async fn session(&self, id: &str) -> StoreResult<Option<Session>> {
        self.read();
        self.inner.session(id).await
    }
    async fn list_sessions(&self, page: Page) -> StoreResult<Vec<Session>> {
        self.read();
        self.inner.list_sessions(page).await
    }
    async fn child_sessions(&self, parent_id: &str) -> StoreResult<Vec<Session>> {
        self.read();
        self.inner.child_sessions(parent_id).await
    }
    async fn load(&self, session_id: &str) -> StoreResult<Vec<StoredMessage>> {
        self.read();
        self.inner.load(session_id).await
    }
    async fn find_result(
        &self,
        session_id: &str,
        call_id: &str,
    ) -> StoreResult<Option<StoredResult>> {
        self.read();
        self.inner.find_result(session_id, call_id).await
    }
    async fn result_with_blob(
        &self,
        session_id: &str,
        key: &BlobKey,
    ) -> StoreResult<Option<StoredResult>> {
        self.read();
        self.inner.result_with_blob(session_id, key).await
    }
    async fn referenced_blobs(&self) -> StoreResult<BTreeSet<BlobKey>> {
        self.read();
        self.inner.referenced_blobs().await
    }
}

#[async_trait::async_trait]
impl HistoryStore for Counted<dyn HistoryStore> {
    async fn create_session(&self, new: NewSession) -> StoreResult<Session> {
        self.inner.create_session(new).await
    }
    async fn append_many(
        &self,
        session_id: &str,
        contents: Vec<Message>,
    ) -> StoreResult<Vec<StoredMessage>> {
        self.inner.append_many(session_id, contents).await
    }
    async fn delete_session(&self, id: &str) -> StoreResult<bool> {
        self.inner.delete_session(id).await
    }
}

#[async_trait::async_trait]
impl EventLog for Counted<dyn EventLog> {
    async fn append_event(
        &self,
        session_id: &str,
        at: String,
        kind: EventKind,
    ) -> StoreResult<Event> {
        self.inner.append_event(session_id, at, kind).await
    }
    async fn queue_event(
        &self,
        session_id: &str,
        at: String,
        kind: EventKind,
    ) -> StoreResult<QueuedEvent> {
        self.inner.queue_event(session_id, at, kind).await
    }
    async fn append_events(
        &self,
        session_id: &str,
        events: Vec<(String, EventKind)>,
    ) -> StoreResult<Vec<Event>> {
        self.inner.append_events(session_id, events).await
    }
    async fn events_since(&self, session_id: &str, after: u64) -> StoreResult<Vec<Event>> {
        self.read();
        self.inner.events_since(session_id, after).await
    }
    async fn last_event_seq(&self, session_id: &str) -> StoreResult<u64> {
        self.read();
        self.inner.last_event_seq(session_id).await
    }
    async fn last_event_seqs(&self, session_ids: &[String]) -> StoreResult<Vec<u64>> {
        self.read();
        self.inner.last_event_seqs(session_ids).await
    }
    fn wakeups(&self) -> Option<tokio::sync::broadcast::Receiver<EventWake>> {
        self.inner.wakeups()
    }
}

/// Open feeds that wait cost the store no reads, however many there are (no feed polls
/// the log or re-reads its session while nothing else writes); an event another process
/// logs reaches every feed of its session, read from the log once for all of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_feeds_cost_the_store_no_reads_and_another_writer_one_per_session() {
    const FEEDS: usize = 40;
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let reads = std::sync::Arc::new(AtomicU64::new(0));
    let (r1, r2) = (std::sync::Arc::clone(&reads), std::sync::Arc::clone(&reads));
    let stores = Stores::open(data.path(), StoreConfig::default())
        .await
        .unwrap()
        .map_history(|inner| std::sync::Arc::new(Counted { inner, reads: r1 }))
        .map_events(|inner| std::sync::Arc::new(Counted { inner, reads: r2 }));
    let host = Host::builder()
        .stores(stores)
        .workspace(ws.path())
        .build()
        .await
        .unwrap();
    let server = start_host(host, None, None).await;
    let sessions = [server.session().await, server.session().await];
    let mut feeds = Vec::new();
    for i in 0..FEEDS {
        let r = server
            .get(&format!("/api/sessions/{}/events", sessions[i % 2]))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        feeds.push(r);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = reads.load(Ordering::Relaxed);
    // Past a feed's session recheck (5 s) and many of its former polls (500 ms).
    tokio::time::sleep(Duration::from_millis(6000)).await;
    let idle = reads.load(Ordering::Relaxed) - before;
    assert_eq!(
        idle, 0,
        "{FEEDS} idle feeds read the store {idle} times in 6 s"
    );

    // Another process (its own stores and bus on the same data directory) logs an event
    // to the first session: each of that session's feeds gets it.
    let other = Stores::open(data.path(), StoreConfig::default())
        .await
        .unwrap();
    let other_bus = toolwire_runtime::EventBus::new(std::sync::Arc::clone(other.events()));
    other_bus
        .emit(&sessions[0], EventKind::TurnStarted { turn: 7 })
        .await
        .unwrap();
    let mut got = Vec::new();
    for feed in feeds.into_iter().step_by(2) {
        let events = tokio::time::timeout(Duration::from_secs(5), sse_events(feed, 1))
            .await
            .expect("the other process's event arrives");
        got.push(seqs(&events));
    }
    assert_eq!(got, vec![vec![1]; FEEDS / 2]);
    // One look at both sessions and one read of the first, maybe a second round, and
    // the feeds' session rechecks (due once the log said another writer changed it):
    // not one read of the log per feed.
    let foreign = reads.load(Ordering::Relaxed) - before - idle;
    assert!(
        foreign < 6 + FEEDS as u64,
        "{foreign} reads for {FEEDS} feeds"
    );
    server.stop().await;
}
