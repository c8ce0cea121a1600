//! Two event buses on one history database (as `toolwire chat` and `toolwire call
//! --session` in two processes): numbering recovers when the other one has logged events.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use toolwire_core::{Event, EventKind};
use toolwire_runtime::EventBus;
use toolwire_store::{EventLog, EventWake, StoreConfig, StoreError, Stores};

/// Two stores on one temp dir, as two processes have, each with its own bus.
async fn two_buses() -> (tempfile::TempDir, Stores, Arc<EventBus>, Arc<EventBus>) {
    let dir = tempfile::tempdir().unwrap();
    let a = Stores::open(dir.path(), StoreConfig::default())
        .await
        .unwrap();
    let b = Stores::open(dir.path(), StoreConfig::default())
        .await
        .unwrap();
    let bus_a = EventBus::new(Arc::clone(a.events()));
    let bus_b = EventBus::new(Arc::clone(b.events()));
    (dir, a, bus_a, bus_b)
}

#[tokio::test]
async fn numbering_recovers_after_another_process_logs_to_the_session() {
    let (_dir, a, bus_a, bus_b) = two_buses().await;
    assert_eq!(
        bus_a
            .emit("s1", EventKind::TurnStarted { turn: 1 })
            .await
            .unwrap()
            .seq,
        1
    );
    assert_eq!(
        bus_b
            .emit("s1", EventKind::TurnStarted { turn: 9 })
            .await
            .unwrap()
            .seq,
        2
    );
    let mut seqs = Vec::new();
    for i in 0..5 {
        seqs.push(
            bus_a
                .emit("s1", EventKind::TurnStarted { turn: i })
                .await
                .unwrap()
                .seq,
        );
    }
    assert_eq!(seqs, [3, 4, 5, 6, 7]);
    // The log holds all seven, numbered without gaps.
    let all: Vec<u64> = a
        .events()
        .events_since("s1", 0)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(all, (1..=7).collect::<Vec<_>>());
}

/// A live subscriber on one bus gets events the other process logged, although they
/// never pass its broadcast: the log's word of another writer's commit brings them.
#[tokio::test]
async fn a_subscriber_sees_events_another_process_logged() {
    let (_dir, _a, bus_a, bus_b) = two_buses().await;
    let mut sub = bus_a.subscribe("s1", 0).await.unwrap();
    for turn in 1..=3 {
        bus_b
            .emit("s1", EventKind::TurnStarted { turn })
            .await
            .unwrap();
    }
    let mut got = Vec::new();
    while got.len() < 3 {
        let next = tokio::time::timeout(std::time::Duration::from_secs(5), sub.next())
            .await
            .expect("the other process's events arrive")
            .unwrap()
            .unwrap();
        got.push(next.seq);
    }
    assert_eq!(got, [1, 2, 3]);
}

/// An event log that counts its reads (what feeds cost the store), over a real one; its
/// word of other writers is the real log's, or what the test sends on `told`.
#[derive(Debug)]
struct CountingReads {
    log: Arc<dyn EventLog>,
    reads: AtomicU64,
    told: Option<tokio::sync::broadcast::Sender<EventWake>>,
}

#[async_trait::async_trait]
impl EventLog for CountingReads {
    async fn append_event(
        &self,
        session_id: &str,
        at: String,
        kind: EventKind,
    ) -> Result<Event, StoreError> {
        self.log.append_event(session_id, at, kind).await
    }
    async fn events_since(&self, session_id: &str, after: u64) -> Result<Vec<Event>, StoreError> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.log.events_since(session_id, after).await
    }
    async fn last_event_seq(&self, session_id: &str) -> Result<u64, StoreError> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.log.last_event_seq(session_id).await
    }
    fn wakeups(&self) -> Option<tokio::sync::broadcast::Receiver<EventWake>> {
        match &self.told {
            Some(told) => Some(told.subscribe()),
            None => self.log.wakeups(),
        }
    }
}

/// Reads of the log by `subscribers` idle feeds on one bus over 1.5 s, then by the
/// same feeds while another process logs `foreign` events to their sessions, which
/// every feed must get.
async fn reads_of_idle_feeds(subscribers: usize, foreign: u32) -> (u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let a = Stores::open(dir.path(), StoreConfig::default())
        .await
        .unwrap();
    let b = Stores::open(dir.path(), StoreConfig::default())
        .await
        .unwrap();
    let counting = Arc::new(CountingReads {
        log: Arc::clone(a.events()),
        reads: AtomicU64::new(0),
        told: None,
    });
    let bus_a = EventBus::new(Arc::clone(&counting) as Arc<dyn EventLog>);
    let bus_b = EventBus::new(Arc::clone(b.events()));
    // Every feed waiting for its next event, as a server's open feeds do; two sessions,
    // each with half the feeds; those of s0 get the other process's events.
    let (got_tx, mut got_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut feeds = Vec::new();
    for i in 0..subscribers {
        let mut sub = bus_a.subscribe(&format!("s{}", i % 2), 0).await.unwrap();
        let got_tx = got_tx.clone();
        feeds.push(tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(Ok(event)) = sub.next().await {
                got.push(event.seq);
                if got.len() == foreign as usize {
                    let _ = got_tx.send(std::mem::take(&mut got));
                }
            }
        }));
    }
    let opened = counting.reads.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let idle = counting.reads.load(Ordering::Relaxed) - opened;
    for turn in 1..=foreign {
        bus_b
            .emit("s0", EventKind::TurnStarted { turn })
            .await
            .unwrap();
    }
    for _ in 0..subscribers.div_ceil(2) {
        let got = tokio::time::timeout(Duration::from_secs(5), got_rx.recv())
            .await
            .expect("the other process's events arrive")
            .unwrap();
        assert_eq!(got, (1..=u64::from(foreign)).collect::<Vec<_>>());
    }
    for feed in feeds {
        feed.abort();
    }
    let after_foreign = counting.reads.load(Ordering::Relaxed) - opened - idle;
    (idle, after_foreign)
}

/// Idle feeds cost the log nothing: no feed polls it. Another process's events reach
/// every feed, read from the log once per look for the session, not once per feed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_feeds_do_not_read_the_log_and_another_writer_costs_one_read_per_session() {
    let (idle_few, foreign_few) = reads_of_idle_feeds(2, 3).await;
    let (idle_many, foreign_many) = reads_of_idle_feeds(100, 3).await;
    assert_eq!(
        (idle_few, idle_many),
        (0, 0),
        "idle feeds read the log (2 feeds, then 100)"
    );
    // Two sessions followed: one look at both, then a read of the one with events, per
    // round of word (the three events may come in up to three rounds).
    assert!(foreign_many <= 3 * 3, "{foreign_many} reads for 100 feeds");
    assert!(
        foreign_many <= foreign_few + 3,
        "reads grew with the feeds: {foreign_few} for 2, {foreign_many} for 100"
    );
}

/// Postgres's periodic look for lost word (`Resync`) is no reason for feeds to look for
/// their sessions, nor is a deletion the log names (`Deleted`): that one reaches the
/// deleted session's subscribers alone, as a deletion through this process does, and no
/// other session's. A change SQLite saw (`Changed`), which does not say what changed,
/// moves what every feed watches, and a feed watching wakes at the word (no timer).
#[tokio::test]
async fn only_a_change_that_names_nothing_moves_what_feeds_watch_and_a_deletion_is_its_sessions() {
    let told = tokio::sync::broadcast::channel(16).0;
    let log = Arc::new(CountingReads {
        log: Arc::new(toolwire_store::MemoryEventLog::default()),
        reads: AtomicU64::new(0),
        told: Some(told.clone()),
    });
    let bus = EventBus::new(Arc::clone(&log) as Arc<dyn EventLog>);
    let (one, two, three) = (
        bus.subscribe("s1", 0).await.unwrap(),
        bus.subscribe("s2", 0).await.unwrap(),
        bus.subscribe("s3", 0).await.unwrap(),
    );
    let (mut gone1, mut gone2, gone3) = (one.deleted(), two.deleted(), three.deleted());
    let mut changes = bus.changes_elsewhere();
    let still = |changes: &tokio::sync::watch::Receiver<u64>, why: &str| {
        assert!(
            !changes.has_changed().unwrap(),
            "{why} moved what feeds watch"
        );
    };
    told.send(EventWake::Resync).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    still(&changes, "the periodic look");

    told.send(EventWake::Deleted {
        session_id: "s1".into(),
    })
    .unwrap();
    tokio::time::timeout(Duration::from_secs(5), gone1.wait_for(|gone| *gone))
        .await
        .expect("the deletion elsewhere reaches its session's subscribers")
        .unwrap();
    still(&changes, "a deletion the log named");

    bus.announce_deleted("s2");
    assert!(*gone2.wait_for(|gone| *gone).await.unwrap());
    still(&changes, "a deletion through this process");
    // Another session's subscribers heard neither.
    assert!(!*gone3.borrow(), "a deletion reached another session");
    assert!(!gone3.has_changed().unwrap());

    told.send(EventWake::Changed).unwrap();
    tokio::time::timeout(Duration::from_secs(5), changes.changed())
        .await
        .expect("a change that names nothing moves what feeds watch")
        .unwrap();
}
