//! Normalize vs. the floor: `serde_json::from_slice` of the same bytes, in the same run.
//!
//! Targets: normalizing an MCP payload with one 20 MB base64 image, and 100,000
//! small text results, each within 1.5× of parsing alone. Besides criterion's report,
//! a summary line per case prints the ratio from interleaved runs (min of N), which is
//! robust on a shared, noisy machine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use base64::Engine;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::Value as Json;
use toolwire_core::CallRef;
use toolwire_normalize::normalize_bytes;

/// An MCP CallToolResult carrying one PNG-headed image of `b64_len` base64 characters.
fn image_payload(b64_len: usize) -> Vec<u8> {
    let raw_len = b64_len / 4 * 3;
    let mut bytes = Vec::with_capacity(raw_len);
    bytes.extend_from_slice(&[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a]);
    // A cheap deterministic filler (xorshift) so the data is not trivially compressible.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    while bytes.len() < raw_len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    bytes.truncate(raw_len);
    let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
    serde_json::to_vec(&serde_json::json!({
        "content": [
            {"type": "text", "text": "Here is the screenshot:"},
            {"type": "image", "data": b64, "mimeType": "image/png"}
        ]
    }))
    .unwrap()
}

fn small_payloads(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!(r#"{{"content":[{{"type":"text","text":"result {i}: 3 files changed, 12 insertions(+)"}}]}}"#).into_bytes())
        .collect()
}

fn parse_all(payloads: &[Vec<u8>]) {
    for p in payloads {
        black_box(serde_json::from_slice::<Json>(p).unwrap());
    }
}

fn normalize_all(payloads: &[Vec<u8>], call: &CallRef) {
    for p in payloads {
        black_box(normalize_bytes(p, call));
    }
}

/// Min-of-`rounds` timing of two closures run alternately, so drift hits both alike.
fn ratio(name: &str, rounds: usize, mut floor: impl FnMut(), mut subject: impl FnMut()) {
    let (mut best_floor, mut best_subject) = (Duration::MAX, Duration::MAX);
    for _ in 0..rounds {
        let t = Instant::now();
        floor();
        best_floor = best_floor.min(t.elapsed());
        let t = Instant::now();
        subject();
        best_subject = best_subject.min(t.elapsed());
    }
    println!(
        "SUMMARY {name}: normalize {:.2?} vs serde_json::from_slice {:.2?} = {:.2}x",
        best_subject,
        best_floor,
        best_subject.as_secs_f64() / best_floor.as_secs_f64()
    );
}

fn benches(c: &mut Criterion) {
    let call = CallRef::new("call_1", "screenshot");
    let image = image_payload(20 * 1024 * 1024);
    let mut g = c.benchmark_group("mcp_image_20mb");
    g.throughput(Throughput::Bytes(image.len() as u64));
    g.sample_size(10);
    g.bench_function("serde_json_from_slice", |b| {
        b.iter(|| serde_json::from_slice::<Json>(black_box(&image)).unwrap())
    });
    g.bench_function("normalize_bytes", |b| {
        b.iter(|| normalize_bytes(black_box(&image), &call))
    });
    g.finish();

    let small = small_payloads(100_000);
    let mut g = c.benchmark_group("small_text_x100k");
    g.throughput(Throughput::Elements(small.len() as u64));
    g.sample_size(10);
    g.bench_function("serde_json_from_slice", |b| {
        b.iter(|| parse_all(black_box(&small)))
    });
    g.bench_function("normalize_bytes", |b| {
        b.iter(|| normalize_all(black_box(&small), &call))
    });
    g.finish();

    ratio(
        "mcp_image_20mb",
        15,
        || drop(black_box(serde_json::from_slice::<Json>(&image).unwrap())),
        || drop(black_box(normalize_bytes(&image, &call))),
    );
    ratio(
        "small_text_x100k",
        10,
        || parse_all(&small),
        || normalize_all(&small, &call),
    );
}

criterion_group!(normalize_benches, benches);
criterion_main!(normalize_benches);
