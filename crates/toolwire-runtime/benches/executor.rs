//! Executor overhead per call for a no-op tool, beside calling the same function directly,
//! in the same run; and 10,000 parallel no-op calls with bounded concurrency.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use futures::future::BoxFuture;
use serde_json::{Value as Json, json};
use toolwire_core::Value;
use toolwire_runtime::{
    Event, EventBus, EventKind, EventLog, Executor, ExecutorConfig, MemorySuspensions, Output,
    Registry, Scope, Tool, ToolCall, ToolContext, ToolError, ToolSchema,
};
use toolwire_store::StoreError;

struct Noop(ToolSchema);

fn noop_body() -> Output {
    Output::Values(vec![Value::text("ok")])
}

impl Tool for Noop {
    fn schema(&self) -> &ToolSchema {
        &self.0
    }
    fn execute(
        &self,
        _input: Json,
        _ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Output, ToolError>> {
        Box::pin(async { Ok(noop_body()) })
    }
}

/// Keeps only a count, so the 10,000-call run measures the executor, not a growing log.
#[derive(Debug, Default)]
struct CountingLog(std::sync::atomic::AtomicU64);

#[async_trait::async_trait]
impl EventLog for CountingLog {
    async fn append_event(
        &self,
        session_id: &str,
        at: String,
        kind: EventKind,
    ) -> Result<Event, StoreError> {
        let seq = 1 + self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Event {
            session_id: session_id.to_owned(),
            seq,
            at,
            kind,
        })
    }
    async fn events_since(&self, _s: &str, _after: u64) -> Result<Vec<Event>, StoreError> {
        Ok(Vec::new())
    }
    async fn last_event_seq(&self, _s: &str) -> Result<u64, StoreError> {
        Ok(self.0.load(std::sync::atomic::Ordering::Relaxed))
    }
}

fn executor(concurrency: usize) -> Executor {
    let mut registry = Registry::new();
    let schema = ToolSchema::new("noop", "Does nothing.", json!({"type": "object"}));
    registry.register(Noop(schema)).unwrap();
    let config = ExecutorConfig {
        concurrency,
        ..ExecutorConfig::default()
    };
    Executor::with(
        Arc::new(registry),
        EventBus::new(Arc::new(CountingLog::default())),
        Arc::new(MemorySuspensions::default()),
        config,
    )
}

/// Resident set size in KiB, from /proc (Linux).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS:")).map(|l| {
                l.split_whitespace()
                    .nth(1)
                    .unwrap_or("0")
                    .parse()
                    .unwrap_or(0)
            })
        })
        .unwrap_or(0)
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ex = executor(64);
    let scope = Scope::new("bench");
    let call = ToolCall::new("c1", "noop", json!({}));

    let mut g = c.benchmark_group("per_call");
    g.bench_function("direct_fn", |b| b.iter(|| black_box(noop_body())));
    g.bench_function("executor", |b| {
        b.to_async(&rt).iter(|| ex.execute(&scope, call.clone()))
    });
    g.finish();

    // Interleaved min-of-N, robust to a noisy shared machine.
    let n = 20_000;
    let (mut direct, mut via) = (Duration::MAX, Duration::MAX);
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..n {
            black_box(noop_body());
        }
        direct = direct.min(t.elapsed() / n);
        let t = Instant::now();
        rt.block_on(async {
            for _ in 0..n {
                black_box(ex.execute(&scope, call.clone()).await);
            }
        });
        via = via.min(t.elapsed() / n);
    }
    println!(
        "SUMMARY per_call: executor {via:.2?} vs direct fn {direct:.2?}; overhead {:.2?} per call (target < 20 µs)",
        via.saturating_sub(direct)
    );

    let calls: Vec<ToolCall> = (0..10_000)
        .map(|i| ToolCall::new(format!("c{i}"), "noop", json!({})))
        .collect();
    let ex = executor(64);
    let before = rss_kib();
    let t = Instant::now();
    let results = rt.block_on(ex.execute_all(&scope, calls.clone()));
    let took = t.elapsed();
    let after = rss_kib();
    assert_eq!(results.len(), 10_000);
    assert!(
        results
            .iter()
            .enumerate()
            .all(|(i, r)| r.call_id == format!("c{i}"))
    );
    let result_bytes: usize = results
        .iter()
        .map(|r| serde_json::to_vec(r).unwrap().len())
        .sum();
    println!(
        "SUMMARY parallel_10k: {took:.2?} ({:.2?}/call), RSS +{} KiB while holding the 10,000 results ({} KiB as JSON); at most 64 in flight",
        took / 10_000,
        after.saturating_sub(before),
        result_bytes / 1024
    );

    event_emit(&rt);
}

/// Event emit latency on the embedded store: each `emit` is one durable SQLite commit
/// (the number assigned inside the INSERT), beside the floor of one small file write +
/// fdatasync in the same directory; and 1,000 text deltas coalesced the way the agent loop
/// does (one event per batch) beside emitting each.
fn event_emit(rt: &tokio::runtime::Runtime) {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let (bus, _history) = rt.block_on(async {
        let history = Arc::new(
            toolwire_store::SqliteHistory::open(&dir.path().join("history.db"))
                .await
                .unwrap(),
        );
        (EventBus::new(Arc::clone(&history) as _), history)
    });
    let n = 300u32;
    let (mut emit, mut floor) = (Duration::MAX, Duration::MAX);
    for round in 0..3 {
        let t = Instant::now();
        rt.block_on(async {
            for turn in 0..n {
                bus.emit(&format!("s{round}"), EventKind::TurnStarted { turn })
                    .await
                    .unwrap();
            }
        });
        emit = emit.min(t.elapsed() / n);
        let mut f = std::fs::File::create(dir.path().join(format!("floor{round}"))).unwrap();
        let t = Instant::now();
        for _ in 0..n {
            f.write_all(br#"{"type":"turn_started","turn":1}"#).unwrap();
            f.sync_data().unwrap();
        }
        floor = floor.min(t.elapsed() / n);
    }
    println!(
        "SUMMARY event_emit: {emit:.2?} per durable event vs write+fdatasync {floor:.2?} = {:.2}x",
        emit.as_secs_f64() / floor.as_secs_f64()
    );
}

criterion_group!(executor_benches, benches);
criterion_main!(executor_benches);
