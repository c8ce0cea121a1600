//! Two server figures, each beside its floor measured in the same run, loopback only and
//! bounded in time:
//! - event latency: from the start of storing a tool result (`EventBus::emit`, a durable
//!   write) to its arrival at each of 100 SSE subscribers; the floor is the durable emit
//!   alone. Target: p99 under 50 ms.
//! - `GET /api/sessions/{id}` of a session holding 1,000 results, in requests/s with a few
//!   requests in flight, beside a plain `SELECT` of the same rows from the same SQLite file
//!   with as many queries in flight.
//!
//! Run: `cargo bench -p toolwire-server --bench serve`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;
use support::{Running, start};
use toolwire_agent::AutoApprove;
use toolwire_core::EventKind;

const SUBSCRIBERS: usize = 100;
const EVENTS: usize = 200;
/// The time between two stored results: a busy turn, not a flood.
const PACE: Duration = Duration::from_millis(5);
const RESULTS: usize = 1000;
const IN_FLIGHT: usize = 4;
const WINDOW: Duration = Duration::from_secs(3);

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Stores `n` read_file results in `session` through the host, as `POST /calls` does.
async fn fill(server: &Running, session: &str, n: usize) {
    for _ in 0..n {
        let mut running = server
            .host
            .call(
                session,
                "read_file",
                json!({"path": "note.txt"}),
                Arc::new(AutoApprove),
            )
            .await
            .unwrap();
        while running.next().await.is_some() {}
        running.finish().await.unwrap().unwrap();
    }
}

/// Reads SSE frames and notes when each sequence number arrived.
async fn subscriber(response: reqwest::Response, want: usize) -> Vec<(u64, Instant)> {
    let mut body = response.bytes_stream();
    let mut buf = String::new();
    let mut got = Vec::with_capacity(want);
    while got.len() < want {
        let Some(Ok(chunk)) = body.next().await else {
            break;
        };
        let now = Instant::now();
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let frame: String = buf.drain(..end + 2).collect();
            if let Some(id) = frame.lines().find_map(|l| l.strip_prefix("id: ")) {
                got.push((id.trim().parse().unwrap(), now));
            }
        }
    }
    got
}

async fn event_latency(server: &Running) {
    let session = server.session().await;
    let filled = server.session().await;
    fill(server, &filled, 1).await;
    let result = server
        .host
        .stores()
        .events
        .events_since(&filled, 0)
        .await
        .unwrap()
        .into_iter()
        .find_map(|e| match e.kind {
            EventKind::ToolResult { result, .. } => Some(result),
            _ => None,
        })
        .unwrap();

    let mut readers = Vec::new();
    for _ in 0..SUBSCRIBERS {
        let response = server
            .get(&format!("/api/sessions/{session}/events"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        readers.push(tokio::spawn(subscriber(response, EVENTS)));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;

    let bus = Arc::clone(server.host.events());
    let mut sent = Vec::with_capacity(EVENTS);
    let mut emit_only = Vec::with_capacity(EVENTS);
    for _ in 0..EVENTS {
        let kind = EventKind::ToolResult {
            result: result.clone(),
            raw: None,
        };
        let start = Instant::now();
        let event = bus.emit(&session, kind).await.unwrap();
        emit_only.push(ms(start.elapsed()));
        sent.push((event.seq, start));
        tokio::time::sleep(PACE).await;
    }
    let mut latencies = Vec::with_capacity(EVENTS * SUBSCRIBERS);
    for reader in readers {
        let got = tokio::time::timeout(Duration::from_secs(60), reader)
            .await
            .expect("every subscriber gets every event")
            .unwrap();
        assert_eq!(got.len(), EVENTS, "a subscriber missed events");
        for ((seq, at), (sent_seq, start)) in got.iter().zip(&sent) {
            assert_eq!(seq, sent_seq);
            latencies.push(ms(at.duration_since(*start)));
        }
    }
    latencies.sort_by(f64::total_cmp);
    emit_only.sort_by(f64::total_cmp);
    let (p50, p99, max) = (
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        percentile(&latencies, 1.0),
    );
    let floor = percentile(&emit_only, 0.5);
    println!(
        "event latency, stored result -> {SUBSCRIBERS} SSE subscribers ({} samples): \
         p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms (target p99 < 50 ms)",
        latencies.len()
    );
    println!(
        "  floor: the durable emit alone, p50 {floor:.2} ms, p99 {:.2} ms; p50 ratio {:.1}x",
        percentile(&emit_only, 0.99),
        p50 / floor
    );
}

/// Runs `one` from `IN_FLIGHT` tasks for `WINDOW` and gives the completions per second.
async fn rate<F, Fut>(one: F) -> f64
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let end = Instant::now() + WINDOW;
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..IN_FLIGHT {
        let one = one.clone();
        tasks.push(tokio::spawn(async move {
            let mut n = 0u64;
            while Instant::now() < end {
                one().await;
                n += 1;
            }
            n
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap();
    }
    total as f64 / start.elapsed().as_secs_f64()
}

async fn session_reads(server: &Running, data: &std::path::Path) {
    let session = server.session().await;
    fill(server, &session, RESULTS).await;
    let url = server.url(&format!("/api/sessions/{session}"));
    let client = server.client.clone();
    let sample = client
        .get(&url)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let http = {
        let (client, url) = (client.clone(), url.clone());
        rate(move || {
            let (client, url) = (client.clone(), url.clone());
            async move {
                let r = client.get(&url).send().await.unwrap();
                assert_eq!(r.status(), 200);
                r.bytes().await.unwrap();
            }
        })
        .await
    };

    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(data.join("history.db"))
        .read_only(true);
    let pool = sqlx::sqlite::SqlitePoolOptions::new()
        .max_connections(IN_FLIGHT as u32)
        .connect_with(options)
        .await
        .unwrap();
    let select = {
        let (pool, session) = (pool.clone(), session.clone());
        rate(move || {
            let (pool, session) = (pool.clone(), session.clone());
            async move {
                let rows: Vec<(i64, i64, String, String, i64)> = sqlx::query_as(
                    "SELECT id, seq, role, body, created_at FROM messages \
                     WHERE session_id = $1 ORDER BY seq",
                )
                .bind(&session)
                .fetch_all(&pool)
                .await
                .unwrap();
                assert!(rows.len() >= RESULTS);
            }
        })
        .await
    };
    println!(
        "GET /api/sessions/{{id}}, {RESULTS} results ({} KB a response), {IN_FLIGHT} in flight: \
         {http:.0} req/s",
        sample.len() / 1000
    );
    println!(
        "  baseline: a plain SELECT of the same rows, same file: {select:.0} queries/s; \
         ratio {:.2}x",
        http / select
    );
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let f = start().await;
    std::fs::write(
        f.dirs.1.path().join("note.txt"),
        "a short note\n".repeat(20),
    )
    .unwrap();
    event_latency(&f.server).await;
    session_reads(&f.server, f.dirs.0.path()).await;
    f.server.stop().await;
}
