//! Benchmarks, each beside a floor measured in the same run: cutting a 100 MB text result to
//! 60,000 chars (O(budget), beside memcpy of the 100 MB and of the 60 KB kept), and encoding
//! a 200-turn session for each provider (beside a memcpy of the session's bytes and
//! serde_json serializing the same session).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolwire_core::{CallRef, ToolResult, Value};
use toolwire_model::truncate::{CutContext, Weight, cut_text};
use toolwire_model::{
    Conversation, EncodeOptions, Message, NoBlobs, Provider, ToolCall, encode_request,
};

fn truncation(c: &mut Criterion) {
    let line = "2026-01-01T00:00:00Z INFO compiling crate number 12345 of the build — ok\n";
    let big: String = line.repeat(100_000_000 / line.len());
    let ctx = CutContext {
        call_id: "call_1",
        part: 0,
    };
    let mut g = c.benchmark_group("truncate_100MB_to_60k");
    g.sample_size(20);
    g.bench_function("cut_text", |b| {
        b.iter(|| black_box(cut_text("", black_box(&big), 60_000, Weight::Tail, ctx)).len())
    });
    g.bench_function("floor: memcpy 100 MB", |b| {
        b.iter(|| black_box(big.as_bytes().to_vec()).len())
    });
    g.bench_function("floor: memcpy 60 KB", |b| {
        b.iter(|| black_box(big.as_bytes()[..60_000].to_vec()).len())
    });
    g.finish();
}

fn session(turns: usize) -> Conversation {
    let mut messages = vec![
        Message::system("You are a coding agent."),
        Message::user("Fix the build."),
    ];
    for t in 0..turns {
        let calls: Vec<ToolCall> = (0..2)
            .map(|i| ToolCall::new(format!("c{t}_{i}"), "bash", json!({"cmd": "cargo build"})))
            .collect();
        messages.push(Message::assistant(format!("Step {t}."), calls));
        for i in 0..2 {
            let out = format!(
                "{}error[E0308]: mismatched types\n",
                "   Compiling toolwire v0.1.0\n".repeat(40)
            );
            messages.push(Message::tool(ToolResult::success(
                CallRef::new(format!("c{t}_{i}"), "bash"),
                Value::text(out),
            )));
        }
    }
    Conversation::new(messages)
}

fn encoding(c: &mut Criterion) {
    let conv = session(200);
    let options = EncodeOptions::for_model("m");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut g = c.benchmark_group("encode_200_turns");
    g.sample_size(20);
    for provider in Provider::ALL {
        g.bench_function(provider.name(), |b| {
            b.iter(|| {
                rt.block_on(encode_request(
                    provider,
                    black_box(&conv),
                    &options,
                    &NoBlobs,
                ))
                .unwrap()
            })
        });
    }
    g.bench_function("floor: serde_json serialize session", |b| {
        b.iter(|| serde_json::to_vec(black_box(&conv)).unwrap().len())
    });
    // The physical floor: copying the session's bytes once.
    let bytes = serde_json::to_vec(&conv).unwrap();
    let mut dst = vec![0u8; bytes.len()];
    g.bench_function("floor: memcpy of the session's bytes", |b| {
        b.iter(|| {
            dst.copy_from_slice(black_box(&bytes));
            black_box(dst.len())
        })
    });
    g.finish();
}

criterion_group!(benches, truncation, encoding);
criterion_main!(benches);
