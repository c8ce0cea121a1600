//! 1,000 sequential `tools/call` round trips to server-everything's `echo` over stdio,
//! through toolwire's executor (normalize included), beside the official TypeScript SDK
//! client doing the same in the same run (tests/mcp/bench_echo.mjs). Prints both and the
//! ratio; the target is to be faster than the TypeScript client.
//!
//! Needs tests/mcp installed (`npm ci --prefix tests/mcp`). Run:
//! `cargo bench -p toolwire-mcp --bench echo`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/support/mod.rs"]
mod support;

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use serde_json::json;
use toolwire_mcp::Limits;
use toolwire_runtime::{Scope, ToolCall};

const CALLS: usize = 1000;
const ROUNDS: usize = 3;

fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp")
}

async fn toolwire_ms() -> f64 {
    let script = peers().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let config = support::stdio(
        "ev",
        "node",
        &[script.display().to_string(), "stdio".into()],
    );
    let (ex, _) = support::executor(vec![config], Limits::default()).await;
    let scope = Scope::new("bench");
    let call = |i: usize| {
        ToolCall::new(
            format!("c{i}"),
            "ev__echo",
            json!({"message": format!("call {i}")}),
        )
    };
    for i in 0..20 {
        ex.execute(&scope, call(i)).await;
    }
    let start = Instant::now();
    for i in 0..CALLS {
        let r = ex.execute(&scope, call(i)).await;
        assert_eq!(r.status, toolwire_core::Status::Success);
    }
    start.elapsed().as_secs_f64() * 1e3
}

fn typescript_ms() -> f64 {
    let out = Command::new("node")
        .arg(peers().join("bench_echo.mjs"))
        .arg(CALLS.to_string())
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    line["ms"].as_f64().expect("ms")
}

fn main() {
    // `cargo test --benches` runs benches with --bench absent: nothing to measure then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    // Interleaved rounds, best of each: the machine is shared and noisy.
    for _ in 0..ROUNDS {
        ours.push(rt.block_on(toolwire_ms()));
        theirs.push(typescript_ms());
    }
    let best = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let (o, t) = (best(&ours), best(&theirs));
    println!("mcp echo over stdio, {CALLS} sequential tools/call (best of {ROUNDS}):");
    println!(
        "  toolwire (executor + rmcp + normalize): {o:8.1} ms  ({:.1} µs/call)",
        o * 1e3 / CALLS as f64
    );
    println!(
        "  TypeScript SDK client (same server):    {t:8.1} ms  ({:.1} µs/call)",
        t * 1e3 / CALLS as f64
    );
    println!("  ratio toolwire/TypeScript: {:.2}", o / t);
}
