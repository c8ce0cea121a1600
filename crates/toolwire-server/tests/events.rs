//! The event feeds: every event once, in order, whatever the disconnects; many
//! subscribers at once; resume across a restart; the WebSocket as well as SSE.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use rand::Rng;
use serde_json::{Value as Json, json};
use support::{Running, sse_events, start, start_in};
use toolwire_core::EventKind;

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
