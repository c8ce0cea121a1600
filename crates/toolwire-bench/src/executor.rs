//! The executor's own cost: a no-op tool called through it beside the same function called
//! directly; many no-op calls at once with bounded concurrency, and the memory they hold;
//! and one durable event on the embedded store beside one small write + fdatasync.

use std::hint::black_box;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::ensure;
use futures::future::BoxFuture;
use serde_json::{Value as Json, json};
use toolwire_core::{Event, EventKind, ToolCall, Value};
use toolwire_runtime::{EventBus, Executor, ExecutorConfig, Registry, Scope};
use toolwire_store::{EventLog, StoreError};
use toolwire_tool::{Output, Tool, ToolContext, ToolError, ToolSchema};

use crate::Ctx;
use crate::measure::{mib, ms};
use crate::report::{Row, Target, Unit, thousands};

/// Calls at size 1.
const CALLS: f64 = 10_000.0;
const IN_FLIGHT: usize = 64;

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

/// Keeps only a count, so the figures are the executor's, not a growing event log's.
#[derive(Debug, Default)]
struct CountingLog(AtomicU64);

#[async_trait::async_trait]
impl EventLog for CountingLog {
    async fn append_event(
        &self,
        session_id: &str,
        at: String,
        kind: EventKind,
    ) -> Result<Event, StoreError> {
        let seq = 1 + self.0.fetch_add(1, Ordering::Relaxed);
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
        Ok(self.0.load(Ordering::Relaxed))
    }
}

fn executor() -> anyhow::Result<Executor> {
    let mut registry = Registry::new();
    let schema = ToolSchema::new("noop", "Does nothing.", json!({"type": "object"}));
    registry.register(Noop(schema))?;
    let config = ExecutorConfig {
        concurrency: IN_FLIGHT,
        ..ExecutorConfig::default()
    };
    Ok(Executor::builder(registry)
        .events(EventBus::new(Arc::new(CountingLog::default())))
        .config(config)
        .build())
}

/// Resident set size in KiB, from /proc (Linux).
fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|l| l.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

pub(crate) fn run(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    let n = (CALLS * size) as usize;
    let label = format!("{} calls", thousands(n as f64));
    let ex = executor()?;
    let scope = Scope::new("bench");
    let call = ToolCall::new("c1", "noop", json!({}));

    // Interleaved, best of 5: robust to a noisy shared machine.
    let (mut direct, mut via) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..n {
            black_box(noop_body());
        }
        direct = direct.min(ms(t.elapsed()));
        let t = Instant::now();
        ctx.rt.block_on(async {
            for _ in 0..n {
                black_box(ex.execute(&scope, call.clone()).await.into_result());
            }
        });
        via = via.min(ms(t.elapsed()));
    }
    let per = |total: f64| total / n as f64;
    let overhead = Row::new(
        "executor: one no-op tool call, through the executor, per call",
        size,
        label.clone(),
        Unit::Ms,
        per(via),
    )
    .floor("the same function called directly", per(direct))
    .note(format!(
        "{:.2} µs overhead a call",
        (per(via) - per(direct)) * 1000.0
    ))
    .target(Target::MsAtMost(0.020));

    let calls: Vec<ToolCall> = (0..n)
        .map(|i| ToolCall::new(format!("c{i}"), "noop", json!({})))
        .collect();
    let ex = executor()?;
    let before = rss_kb();
    let t = Instant::now();
    let results = ctx.rt.block_on(ex.execute_all(&scope, calls));
    let took = ms(t.elapsed());
    let held = rss_kb().saturating_sub(before);
    ensure!(
        results.len() == n,
        "{} results for {n} calls",
        results.len()
    );
    ensure!(
        results
            .iter()
            .enumerate()
            .all(|(i, r)| r.result().call_id == format!("c{i}")),
        "results out of call order"
    );
    let as_json: usize = results
        .iter()
        .map(|r| serde_json::to_vec(r.result()).map_or(0, |v| v.len()))
        .sum();
    drop(results);
    let parallel = Row::new(
        "executor: no-op calls at once, 64 in flight, results in call order",
        size,
        label,
        Unit::Ms,
        took,
    )
    .floor("the same calls one after another", via)
    .note(format!(
        "RSS +{} holding the results ({} as JSON)",
        mib(held),
        mib(as_json as u64 / 1024)
    ));
    let mut rows = vec![overhead, parallel];
    if size == 1.0 {
        rows.push(event_emit(ctx)?);
    }
    Ok(rows)
}

/// One durable event on the embedded store (one SQLite commit, the number assigned in the
/// INSERT), beside one small write + fdatasync in the same directory.
fn event_emit(ctx: &Ctx) -> anyhow::Result<Row> {
    let dir = tempfile::tempdir_in(ctx.tmp.path())?;
    let history = ctx.rt.block_on(toolwire_store::SqliteHistory::open(
        &dir.path().join("history.db"),
    ))?;
    let bus = EventBus::new(Arc::new(history));
    let n = 300u32;
    let (mut emit, mut floor) = (f64::INFINITY, f64::INFINITY);
    for round in 0..3 {
        let t = Instant::now();
        ctx.rt.block_on(async {
            for turn in 0..n {
                bus.emit(&format!("s{round}"), EventKind::TurnStarted { turn })
                    .await?;
            }
            Ok::<_, StoreError>(())
        })?;
        emit = emit.min(ms(t.elapsed()) / f64::from(n));
        let mut f = std::fs::File::create(dir.path().join(format!("floor{round}")))?;
        let t = Instant::now();
        for _ in 0..n {
            f.write_all(br#"{"type":"turn_started","turn":1}"#)?;
            f.sync_data()?;
        }
        floor = floor.min(ms(t.elapsed()) / f64::from(n));
    }
    Ok(Row::new(
        "emit one durable event (SQLite commit)",
        1.0,
        "",
        Unit::Ms,
        emit,
    )
    .floor("one small write + fdatasync", floor))
}
