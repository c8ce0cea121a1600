//! Rendering cost must follow what is shown, not the input size: a 1,000,000-row table
//! and a 50 MB file_content, both cut to 40 lines, against a plain write of the same
//! shown bytes (the floor: the terminal has to receive them anyway).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolwire_core::Value;
use toolwire_term::{ColorMode, TermOptions, render};

fn big_table() -> Value {
    let rows = (0..1_000_000u64).map(|i| json!({"id": i, "path": format!("src/module_{i}.rs"), "bytes": i * 37 % 100_000, "ok": i % 3 != 0}));
    Value::table(["id", "path", "bytes", "ok"], rows).max_height(40)
}

fn big_file() -> Value {
    let line = "    let value = compute(&input, 42).unwrap_or_default(); // a comment\n";
    let content = line.repeat(50 * 1024 * 1024 / line.len());
    Value::file_content("src/big.rs", content).max_height(40)
}

fn opts() -> TermOptions {
    TermOptions::plain(100).with_color(ColorMode::Ansi256)
}

/// The floor: copying the shown bytes into an output buffer, as writing to a terminal would.
fn write_shown(shown: &str, buf: &mut Vec<u8>) {
    buf.clear();
    buf.write_all(shown.as_bytes()).unwrap();
}

fn median(mut f: impl FnMut(), runs: usize) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn report(name: &str, value: &Value) {
    let opts = opts();
    let shown = render(value, &opts);
    let _ = render(value, &opts); // warm the syntax set and regex caches
    let r = median(|| drop(black_box(render(black_box(value), &opts))), 21);
    let mut buf = Vec::with_capacity(shown.len());
    let w = median(|| write_shown(black_box(&shown), &mut buf), 21);
    println!(
        "{name}: render {:.2} ms, plain write of the {} shown bytes {:.2} µs, ratio {:.0}×",
        r.as_secs_f64() * 1e3,
        shown.len(),
        w.as_secs_f64() * 1e6,
        r.as_secs_f64() / w.as_secs_f64().max(1e-9)
    );
}

fn benches(c: &mut Criterion) {
    let table = big_table();
    let file = big_file();
    report("table 1,000,000 rows, maxHeight 40", &table);
    report("file_content 50 MB, maxHeight 40", &file);

    let opts = opts();
    let mut group = c.benchmark_group("render");
    group
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    group.bench_function("table_1m_rows_max_height_40", |b| {
        b.iter(|| render(black_box(&table), &opts))
    });
    let shown = render(&table, &opts);
    let mut buf = Vec::new();
    group.bench_function("table_write_shown_bytes", |b| {
        b.iter(|| write_shown(black_box(&shown), &mut buf))
    });
    group.bench_function("file_content_50mb_max_height_40", |b| {
        b.iter(|| render(black_box(&file), &opts))
    });
    let shown = render(&file, &opts);
    group.bench_function("file_content_write_shown_bytes", |b| {
        b.iter(|| write_shown(black_box(&shown), &mut buf))
    });
    group.finish();
}

criterion_group!(render_benches, benches);
criterion_main!(render_benches);
