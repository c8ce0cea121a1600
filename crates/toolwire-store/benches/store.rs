//! Criterion benches of toolwire-store, each beside its physical floor measured in the same
//! run; the ratios are printed at the end and recorded in README.md.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use criterion::{Criterion, Throughput};
use sqlx::Connection;
use toolwire_core::Message;
use toolwire_core::{CallRef, Source, ToolResult, Value};
use toolwire_store::{BlobKey, NewSession, StoreConfig, Stores};

/// Total time and iterations of each measured function (warm-up included), for the
/// ratio table: a mean over everything criterion ran.
static TOTALS: Mutex<BTreeMap<&'static str, (Duration, u64)>> = Mutex::new(BTreeMap::new());

fn record(name: &'static str, total: Duration, iters: u64) {
    let mut totals = TOTALS.lock().unwrap();
    let entry = totals.entry(name).or_default();
    entry.0 += total;
    entry.1 += iters;
}

fn bytes(len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn persist_20mb(c: &mut Criterion) {
    let rt = rt();
    let dir = tempfile::tempdir().unwrap();
    let stores = rt
        .block_on(Stores::open(dir.path(), StoreConfig::default()))
        .unwrap();
    let raw = bytes(20 << 20);
    let b64 = STANDARD.encode(&raw);
    let result = ToolResult::success(
        CallRef::new("c", "t"),
        Value::image(Source::base64(b64.clone()), "image/png"),
    );
    let key = BlobKey::parse(&format!("blake3:{}", blake3::hash(&raw).to_hex())).unwrap();

    let mut g = c.benchmark_group("persist_20mb_base64_image");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    g.throughput(Throughput::Bytes(raw.len() as u64));
    g.bench_function("floor: decode + blake3 + write + fsync + rename", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let tmp = dir.path().join("floor.tmp");
                let start = Instant::now();
                let decoded = STANDARD.decode(&b64).unwrap();
                let hash = blake3::hash(&decoded);
                let mut f = std::fs::File::create(&tmp).unwrap();
                f.write_all(&decoded).unwrap();
                f.sync_all().unwrap();
                std::fs::rename(&tmp, dir.path().join(hash.to_hex().as_str())).unwrap();
                total += start.elapsed();
                std::fs::remove_file(dir.path().join(hash.to_hex().as_str())).unwrap();
            }
            record("persist floor", total, iters);
            total
        })
    });
    g.bench_function("toolwire persist", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let (stores, result, key) = (stores.clone(), result.clone(), key.clone());
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let input = result.clone();
                    let start = Instant::now();
                    let out = stores.persist(input, None).await.unwrap();
                    total += start.elapsed();
                    assert!(out.output[0].data["source"]["blob"].is_string());
                    stores.blobs.delete(&key).await.unwrap();
                }
                record("persist", total, iters);
                total
            }
        })
    });
    g.finish();
}

const APPENDS: usize = 100_000;
/// Callers appending at once, as tasks of a busy host would.
const CALLERS: usize = 64;

fn small_result(i: usize) -> ToolResult {
    ToolResult::success(
        CallRef::new(format!("call_{i}"), "echo"),
        Value::text(format!("result number {i}")),
    )
}

fn append_100k(c: &mut Criterion) {
    let rt = rt();
    let mut g = c.benchmark_group("append_100k_small_results");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Elements(APPENDS as u64));
    g.bench_function("floor: serialize + INSERT in one transaction", |b| {
        b.to_async(&rt).iter_custom(|iters| async move {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let dir = tempfile::tempdir().unwrap();
                let url = format!(
                    "sqlite://{}?mode=rwc",
                    dir.path().join("floor.db").display()
                );
                let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
                sqlx::query("CREATE TABLE m (id INTEGER PRIMARY KEY, call_id TEXT, body TEXT)")
                    .execute(&mut conn)
                    .await
                    .unwrap();
                let start = Instant::now();
                let mut tx = conn.begin().await.unwrap();
                for i in 0..APPENDS {
                    let r = small_result(i);
                    let body = serde_json::to_string(&r).unwrap();
                    sqlx::query("INSERT INTO m (call_id, body) VALUES ($1, $2)")
                        .bind(&r.call_id)
                        .bind(body)
                        .execute(&mut *tx)
                        .await
                        .unwrap();
                }
                tx.commit().await.unwrap();
                total += start.elapsed();
            }
            record("append floor", total, iters);
            total
        })
    });
    g.bench_function(
        "toolwire append (64 concurrent callers, durable each)",
        |b| {
            b.to_async(&rt).iter_custom(|iters| async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let dir = tempfile::tempdir().unwrap();
                    let stores = Stores::open(dir.path(), StoreConfig::default())
                        .await
                        .unwrap();
                    let session = stores
                        .history
                        .create_session(NewSession::default())
                        .await
                        .unwrap();
                    let session = Arc::new(session.id);
                    let start = Instant::now();
                    let mut tasks = Vec::new();
                    for t in 0..CALLERS {
                        let (history, session) = (stores.history.clone(), session.clone());
                        tasks.push(tokio::spawn(async move {
                            for i in (t..APPENDS).step_by(CALLERS) {
                                history
                                    .append(&session, Message::ToolResult(small_result(i)))
                                    .await
                                    .unwrap();
                            }
                        }));
                    }
                    for task in tasks {
                        task.await.unwrap();
                    }
                    total += start.elapsed();
                }
                record("append", total, iters);
                total
            })
        },
    );
    g.bench_function(
        "toolwire append_many (batches of 1000, durable each batch)",
        |b| {
            b.to_async(&rt).iter_custom(|iters| async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let dir = tempfile::tempdir().unwrap();
                    let stores = Stores::open(dir.path(), StoreConfig::default())
                        .await
                        .unwrap();
                    let session = stores
                        .history
                        .create_session(NewSession::default())
                        .await
                        .unwrap();
                    let start = Instant::now();
                    for batch in (0..APPENDS).collect::<Vec<_>>().chunks(1000) {
                        let contents = batch
                            .iter()
                            .map(|&i| Message::ToolResult(small_result(i)))
                            .collect();
                        stores
                            .history
                            .append_many(&session.id, contents)
                            .await
                            .unwrap();
                    }
                    total += start.elapsed();
                }
                record("append_many", total, iters);
                total
            })
        },
    );
    g.finish();
}

const SESSION_LEN: usize = 10_000;

fn load_10k(c: &mut Criterion) {
    let rt = rt();
    let dir = tempfile::tempdir().unwrap();
    let stores = rt
        .block_on(Stores::open(dir.path(), StoreConfig::default()))
        .unwrap();
    let session = rt.block_on(async {
        let session = stores
            .history
            .create_session(NewSession::default())
            .await
            .unwrap();
        let mut tasks = Vec::new();
        for t in 0..CALLERS {
            let (history, id) = (stores.history.clone(), session.id.clone());
            tasks.push(tokio::spawn(async move {
                for i in (t..SESSION_LEN).step_by(CALLERS) {
                    let content = match i % 4 {
                        0 => Message::User {
                            text: format!("please do {i}"),
                        },
                        _ => Message::ToolResult(small_result(i)),
                    };
                    history.append(&id, content).await.unwrap();
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        session.id
    });
    let url = format!("sqlite://{}", dir.path().join("history.db").display());
    let mut g = c.benchmark_group("load_10k_message_session");
    g.sample_size(20).measurement_time(Duration::from_secs(5));
    g.throughput(Throughput::Elements(SESSION_LEN as u64));
    g.bench_function("floor: plain SELECT of the same rows", |b| {
        let mut conn = rt.block_on(sqlx::SqliteConnection::connect(&url)).unwrap();
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                let rows: Vec<(i64, i64, String, String, i64)> = rt
                    .block_on(
                        sqlx::query_as(
                            "SELECT id, seq, role, body, created_at FROM messages WHERE session_id = $1 ORDER BY seq",
                        )
                        .bind(&session)
                        .fetch_all(&mut conn),
                    )
                    .unwrap();
                total += start.elapsed();
                assert_eq!(rows.len(), SESSION_LEN);
            }
            record("load floor", total, iters);
            total
        })
    });
    g.bench_function("toolwire load (parsed messages)", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                let messages = rt.block_on(stores.history.load(&session)).unwrap();
                total += start.elapsed();
                assert_eq!(messages.len(), SESSION_LEN);
            }
            record("load", total, iters);
            total
        })
    });
    g.finish();
}

fn print_ratios() {
    let totals = TOTALS.lock().unwrap();
    let get = |k: &str| totals.get(k).map(|(t, n)| *t / (*n).max(1) as u32);
    println!("\n== toolwire-store: measured beside floors (same run) ==");
    if let (Some(p), Some(f)) = (get("persist"), get("persist floor")) {
        println!(
            "persist 20 MB base64 image: {:.1} ms; floor {:.1} ms; ratio {:.2}x (target <= 1.3x)",
            ms(p),
            ms(f),
            p.as_secs_f64() / f.as_secs_f64()
        );
    }
    if let (Some(a), Some(f)) = (get("append"), get("append floor")) {
        println!(
            "append 100k small results: {:.0} results/s ({:.2} s); floor (one transaction, not durable per row) {:.0} rows/s; ratio {:.2}x",
            APPENDS as f64 / a.as_secs_f64(),
            a.as_secs_f64(),
            APPENDS as f64 / f.as_secs_f64(),
            a.as_secs_f64() / f.as_secs_f64()
        );
    }
    if let (Some(a), Some(f)) = (get("append_many"), get("append floor")) {
        println!(
            "append_many 100k small results in batches of 1000: {:.0} results/s; ratio to floor {:.2}x",
            APPENDS as f64 / a.as_secs_f64(),
            a.as_secs_f64() / f.as_secs_f64()
        );
    }
    if let (Some(l), Some(f)) = (get("load"), get("load floor")) {
        println!(
            "load 10k-message session: {:.1} ms (target < 100 ms); plain SELECT {:.1} ms; ratio {:.2}x",
            ms(l),
            ms(f),
            l.as_secs_f64() / f.as_secs_f64()
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    persist_20mb(&mut c);
    append_100k(&mut c);
    load_10k(&mut c);
    c.final_summary();
    print_ratios();
}
