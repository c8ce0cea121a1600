//! Two event buses on one history database (as `toolwire chat` and `toolwire call
//! --session` in two processes): numbering recovers when the other one has logged events.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use toolwire_core::EventKind;
use toolwire_runtime::EventBus;
use toolwire_store::{StoreConfig, Stores};

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
/// never pass its broadcast: an idle subscriber looks in the log.
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
