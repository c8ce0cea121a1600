//! Scale-out under load (issue 15): 200 concurrent sessions post 50,000 tool calls (small
//! text files, and every 50th a unique 1 MB image) to 4 `toolwire serve` instances on one
//! Postgres and one S3 bucket, and the same load to one instance on the SQLite + local
//! files default. Each session posts to one instance and follows its feed on another, so
//! every result crosses instances. Figures: results/s, and latency from the POST to the
//! result's event reaching that other instance's subscriber (the event is a durable write
//! of the store, made after the media is stored). Then every call id must have exactly one
//! stored result and one result event, and every image blob must hash to its address.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::{Value as Json, json};
use sqlx::Connection;
use toolwire_core::{EventKind, Message};
use toolwire_store::{BlobKey, StoreConfig, Stores};

use crate::Ctx;
use crate::measure::{ms, percentile};
use crate::report::{Row, Unit};

const SESSIONS: usize = 200;
const INSTANCES: usize = 4;
/// Results at size 1, as the issue names.
const RESULTS: f64 = 50_000.0;
/// Every 50th call reads an image: 2% of the results, 1 GB of blobs at size 1.
const IMAGE_EVERY: usize = 50;
const IMAGE_BYTES: usize = 1 << 20;
const TEXTS: usize = 20;
/// A result later than this is a failure, not a slow figure.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, Clone)]
enum Planned {
    Text(usize),
    Image(usize),
}

impl Planned {
    fn body(&self) -> String {
        match self {
            Planned::Text(k) => {
                json!({"tool": "read_file", "input": {"path": format!("t{k}.txt")}})
            }
            Planned::Image(k) => {
                json!({"tool": "view_image", "input": {"path": format!("img/{k}.png")}})
            }
        }
        .to_string()
    }
}

/// Where the instances keep their data.
#[derive(Debug, Clone)]
pub(crate) enum Backend {
    /// The default: one data directory (SQLite history + local blobs).
    Sqlite(PathBuf),
    /// `--database-url` + `--blob-url`.
    Shared { database: String, blobs: String },
}

impl Backend {
    async fn open(&self) -> anyhow::Result<Stores> {
        Ok(match self {
            Backend::Sqlite(dir) => Stores::open(dir, StoreConfig::default()).await?,
            Backend::Shared { database, blobs } => {
                Stores::open_urls(database, blobs, StoreConfig::default()).await?
            }
        })
    }
}

/// One call as the driver saw it: its id, what it asked for, its latency in ms.
type Done = (String, Planned, f64);

/// One run's figures.
#[derive(Debug)]
struct Outcome {
    per_sec: f64,
    p50: f64,
    p99: f64,
    /// p99 of the image results alone (1 MB each, a blob write on the way).
    image_p99: f64,
    results: usize,
}

impl Outcome {
    fn note(&self) -> String {
        format!(
            "p50 {:.0} ms; images alone p99 {:.0} ms",
            self.p50, self.image_p99
        )
    }
}

/// `toolwire serve` processes, stopped when dropped.
pub(crate) struct Instances(Vec<Child>);

impl Drop for Instances {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        for child in &mut self.0 {
            let _ = child.wait();
        }
    }
}

impl Instances {
    /// The instances' CPU time so far (user + system, summed), from /proc.
    pub(crate) fn cpu(&self) -> anyhow::Result<Duration> {
        let mut total = Duration::ZERO;
        for child in &self.0 {
            let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id()))?;
            // Fields after the command's closing parenthesis; utime and stime are 14 and 15.
            let rest = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest)
                .context("no /proc stat")?;
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let ticks: u64 = fields.get(11).context("no utime")?.parse::<u64>()?
                + fields.get(12).context("no stime")?.parse::<u64>()?;
            // Linux's USER_HZ is 100 on every architecture it reports it for.
            total += Duration::from_millis(ticks * 10);
        }
        Ok(total)
    }

    /// The instances' resident sets, summed, KiB.
    pub(crate) fn rss_kb(&self) -> anyhow::Result<u64> {
        let mut total = 0;
        for child in &self.0 {
            let status = std::fs::read_to_string(format!("/proc/{}/status", child.id()))?;
            total += status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|l| l.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                // A process that exited and is not reaped yet has a status but no memory.
                .with_context(|| format!("instance pid {} has exited (no VmRSS)", child.id()))?;
        }
        Ok(total)
    }
}

fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

pub(crate) fn start(
    ctx: &Ctx,
    backend: &Backend,
    count: usize,
    ws: &Path,
    run: &Path,
) -> anyhow::Result<(Instances, Vec<u16>)> {
    // A load test is many clients at once: past serve's default caps (128 feeds, 512
    // connections) its clients would be refused, not measured.
    start_capped(ctx, backend, count, ws, run, (4000, 8000))
}

/// [`start`] with each instance's `--max-feeds` and `--max-connections`.
pub(crate) fn start_capped(
    ctx: &Ctx,
    backend: &Backend,
    count: usize,
    ws: &Path,
    run: &Path,
    (feeds, connections): (usize, usize),
) -> anyhow::Result<(Instances, Vec<u16>)> {
    let mut instances = Instances(Vec::new());
    let mut ports = Vec::new();
    for i in 0..count {
        let port = free_port()?;
        let data = run.join(format!("instance-{i}"));
        std::fs::create_dir_all(&data)?;
        let mut cmd = Command::new(&ctx.toolwire_bin);
        let data_dir = match backend {
            Backend::Sqlite(dir) => dir.clone(),
            Backend::Shared { database, blobs } => {
                cmd.args(["--database-url", database, "--blob-url", blobs]);
                data.clone()
            }
        };
        let log = std::fs::File::create(data.join("serve.log"))?;
        let child = cmd
            .arg("--data-dir")
            .arg(&data_dir)
            .args([
                "serve",
                "--addr",
                &format!("127.0.0.1:{port}"),
                "--max-feeds",
                &feeds.to_string(),
                "--max-connections",
                &connections.to_string(),
                "--workspace",
            ])
            .arg(ws)
            .env_remove("TOOLWIRE_TOKEN")
            .env_remove("TOOLWIRE_PROVIDER")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .context("starting toolwire serve")?;
        instances.0.push(child);
        ports.push(port);
    }
    for (i, &port) in ports.iter().enumerate() {
        let up = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if up.elapsed() > Duration::from_secs(30) {
                bail!(
                    "instance {i} did not listen within 30 s (see its serve.log under {})",
                    run.display()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    Ok((instances, ports))
}

/// Writes the workspace; returns each image's expected blob key.
fn workspace(ws: &Path, images: usize) -> anyhow::Result<Vec<String>> {
    std::fs::create_dir_all(ws.join("img"))?;
    for k in 0..TEXTS {
        let text = format!(
            "file {k}\n{}",
            "src/lib.rs: 3 files changed, 12 insertions(+)\n".repeat(4)
        );
        std::fs::write(ws.join(format!("t{k}.txt")), text)?;
    }
    (0..images)
        .map(|k| {
            // Distinct seeds: every image is its own blob.
            let bytes = crate::payloads::png(IMAGE_BYTES, k as u64 + 3);
            std::fs::write(ws.join(format!("img/{k}.png")), &bytes)?;
            Ok(format!("blake3:{}", blake3::hash(&bytes).to_hex()))
        })
        .collect()
}

pub(crate) async fn create_session(http: &reqwest::Client, port: u16) -> anyhow::Result<String> {
    let url = format!("http://127.0.0.1:{port}/api/sessions");
    post_for(http, &url, &json!({"title": "load"}), "id").await
}

/// POSTs `body` as JSON to `url`; the answer's string `field` (a session or call id).
pub(crate) async fn post_for(
    http: &reqwest::Client,
    url: &str,
    body: &Json,
    field: &str,
) -> anyhow::Result<String> {
    let answer: Json = http
        .post(url)
        .json(body)
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    answer[field]
        .as_str()
        .map(str::to_owned)
        .with_context(|| format!("{url} answered no {field}"))
}

/// One session: follows its feed on `feed_port`, posts its calls one after another to
/// `post_port`, each waiting for its result event. Returns (call id, plan, latency ms).
async fn session(
    http: reqwest::Client,
    id: String,
    post_port: u16,
    feed_port: u16,
    plan: Vec<Planned>,
    go: Arc<tokio::sync::Barrier>,
) -> anyhow::Result<Vec<Done>> {
    let feed = http
        .get(format!(
            "http://127.0.0.1:{feed_port}/api/sessions/{id}/events"
        ))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status);
    // Every session reaches the start line, its feed open or not: the others and the
    // clock wait there for all of them, so one that failed must still arrive (it then
    // fails the run instead of hanging it).
    go.wait().await;
    let mut events = feed?.bytes_stream().eventsource();
    let mut done = Vec::with_capacity(plan.len());
    for planned in plan {
        let t = Instant::now();
        let accepted: Json = http
            .post(format!(
                "http://127.0.0.1:{post_port}/api/sessions/{id}/calls"
            ))
            .header("content-type", "application/json")
            .body(planned.body())
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let call_id = accepted["callId"].as_str().context("no callId")?.to_owned();
        let wait = async {
            while let Some(event) = events.next().await {
                let event = event.context("the feed broke")?;
                if event.event == "tool_result" {
                    let data: Json = serde_json::from_str(&event.data)?;
                    if data["result"]["callId"] == call_id.as_str() {
                        return Ok(());
                    }
                }
            }
            bail!("the feed ended before {call_id}'s result")
        };
        tokio::time::timeout(CALL_TIMEOUT, wait)
            .await
            .with_context(|| format!("no result for {call_id} within {CALL_TIMEOUT:?}"))??;
        done.push((call_id, planned, ms(t.elapsed())));
    }
    Ok(done)
}

/// Nothing lost, nothing duplicated: every call one stored result and one result event,
/// successful; every image result names its image's blob, whose bytes hash to that name.
async fn verify(
    stores: &Stores,
    sessions: &[(String, Vec<Done>)],
    keys: &[String],
) -> anyhow::Result<()> {
    for (id, calls) in sessions {
        let mut stored: HashMap<String, Vec<toolwire_core::ToolResult>> = HashMap::new();
        for m in stores.history().load(id).await? {
            if let Message::ToolResult(r) = m.content {
                stored.entry(r.call_id.clone()).or_default().push(r);
            }
        }
        let mut events: HashMap<String, usize> = HashMap::new();
        for e in stores.events().events_since(id, 0).await? {
            if let EventKind::ToolResult { result, .. } = e.kind {
                *events.entry(result.call_id.clone()).or_default() += 1;
            }
        }
        ensure!(
            stored.len() == calls.len(),
            "session {id}: {} calls posted, {} results stored",
            calls.len(),
            stored.len()
        );
        for (call_id, planned, _) in calls {
            let results = stored.get(call_id).map(Vec::as_slice).unwrap_or_default();
            ensure!(
                results.len() == 1,
                "{call_id}: {} stored results",
                results.len()
            );
            ensure!(
                events.get(call_id) == Some(&1),
                "{call_id}: {:?} result events",
                events.get(call_id)
            );
            let result = &results[0];
            ensure!(
                result.status == toolwire_core::Status::Success,
                "{call_id}: {:?}",
                result.error
            );
            if let Planned::Image(k) = planned {
                let refs = toolwire_store::result_blob_refs(result);
                ensure!(
                    refs.contains(&keys[*k]),
                    "{call_id}: stored {refs:?}, expected {}",
                    keys[*k]
                );
            }
        }
    }
    for key in keys {
        let bytes = stores.blob(key).await?;
        let actual = format!("blake3:{}", blake3::hash(&bytes).to_hex());
        ensure!(&actual == key, "blob {key} reads back as {actual}");
    }
    Ok(())
}

async fn drive(
    ctx: &Ctx,
    backend: &Backend,
    count: usize,
    ws: &Path,
    plans: &[Vec<Planned>],
    keys: &[String],
) -> anyhow::Result<Outcome> {
    let run = ctx.tmp.path().join(format!("load-run-{}", ids()));
    let (instances, ports) = start(ctx, backend, count, ws, &run)?;
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(SESSIONS)
        .build()?;
    let mut ids = Vec::new();
    for s in 0..plans.len() {
        ids.push(create_session(&http, ports[s % count]).await?);
    }
    let go = Arc::new(tokio::sync::Barrier::new(plans.len() + 1));
    let tasks: Vec<_> = ids
        .iter()
        .zip(plans)
        .enumerate()
        .map(|(s, (id, plan))| {
            tokio::spawn(session(
                http.clone(),
                id.clone(),
                ports[s % count],
                ports[(s + 1) % count],
                plan.clone(),
                Arc::clone(&go),
            ))
        })
        .collect();
    go.wait().await;
    let t = Instant::now();
    let mut sessions = Vec::new();
    for (id, task) in ids.into_iter().zip(tasks) {
        sessions.push((id, task.await??));
    }
    let elapsed = t.elapsed();
    drop(instances);
    let stores = backend.open().await?;
    verify(&stores, &sessions, keys).await?;
    let calls = || sessions.iter().flat_map(|(_, c)| c.iter());
    let mut latencies: Vec<f64> = calls().map(|x| x.2).collect();
    let mut images: Vec<f64> = calls()
        .filter(|x| matches!(x.1, Planned::Image(_)))
        .map(|x| x.2)
        .collect();
    let results = latencies.len();
    Ok(Outcome {
        per_sec: results as f64 / elapsed.as_secs_f64(),
        p50: percentile(&mut latencies, 0.5),
        p99: percentile(&mut latencies, 0.99),
        image_p99: percentile(&mut images, 0.99),
        results,
    })
}

/// A name unique to this run, for a database, a bucket prefix, a folder.
pub(crate) fn ids() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("{}_{now}", std::process::id())
}

/// The Postgres and S3 of `tests/services/start`.
pub(crate) fn services() -> anyhow::Result<(String, String)> {
    let get = |var: &str| std::env::var(var).ok().filter(|v| !v.is_empty());
    match (
        get("TOOLWIRE_TEST_POSTGRES_URL"),
        get("TOOLWIRE_TEST_S3_URL"),
    ) {
        (Some(pg), Some(s3)) => Ok((pg, s3)),
        _ => bail!("needs Postgres and S3: eval \"$(tests/services/start)\" (scripts/bench does)"),
    }
}

/// A fresh database beside the services' one, dropped by [`drop_database`].
pub(crate) async fn fresh_database(pg: &str, name: &str) -> anyhow::Result<String> {
    let mut admin = sqlx::PgConnection::connect(pg).await?;
    // `name` is made by `ids()` from digits: nothing to inject.
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await?;
    let (base, _) = pg
        .rsplit_once('/')
        .context("a Postgres URL ends with /DATABASE")?;
    Ok(format!("{base}/{name}"))
}

pub(crate) async fn drop_database(pg: &str, name: &str) -> anyhow::Result<()> {
    let mut admin = sqlx::PgConnection::connect(pg).await?;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
    )))
    .execute(&mut admin)
    .await?;
    Ok(())
}

pub(crate) fn run(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    let (pg, s3) = services()?;
    let per_session = ((RESULTS * size) as usize / SESSIONS).max(1);
    // Each session's images fall at its own offsets, so they spread over the run
    // instead of arriving all at once.
    let mut images = 0;
    let plans: Vec<Vec<Planned>> = (0..SESSIONS)
        .map(|s| {
            (0..per_session)
                .map(|j| {
                    if (s + j) % IMAGE_EVERY == 0 {
                        images += 1;
                        Planned::Image(images - 1)
                    } else {
                        Planned::Text((s + j) % TEXTS)
                    }
                })
                .collect()
        })
        .collect();
    let ws = ctx.tmp.path().join(format!("load-ws-{}", ids()));
    let keys = workspace(&ws, images)?;

    let sqlite = Backend::Sqlite(ctx.tmp.path().join(format!("load-sqlite-{}", ids())));
    let default = ctx
        .rt
        .block_on(drive(ctx, &sqlite, 1, &ws, &plans, &keys))?;

    let name = format!("toolwire_load_{}", ids());
    let (bucket, query) = s3.split_once('?').unwrap_or((&s3, ""));
    let shared = Backend::Shared {
        database: ctx.rt.block_on(fresh_database(&pg, &name))?,
        blobs: format!("{}/load-{}?{query}", bucket.trim_end_matches('/'), ids()),
    };
    let scaled = ctx.rt.block_on(async {
        let outcome = drive(ctx, &shared, INSTANCES, &ws, &plans, &keys).await;
        // Leave the services as they were: the database goes, and the blobs with it.
        if let Ok(stores) = shared.open().await {
            for key in &keys {
                if let Ok(key) = BlobKey::parse(key) {
                    let _ = stores.blobs().delete(&key).await;
                }
            }
        }
        let _ = drop_database(&pg, &name).await;
        outcome
    })?;
    let _ = std::fs::remove_dir_all(&ws);

    let label = format!("{} results, {images} of them 1 MB images", scaled.results);
    let base = "1 instance on the SQLite + files default";
    Ok(vec![
        Row::new(
            "load: 200 concurrent sessions on 4 instances over Postgres + S3, results stored per second",
            size,
            label.clone(),
            Unit::PerSec,
            scaled.per_sec,
        )
        .floor(base, default.per_sec)
        .note("every call id once, every blob hash verified"),
        Row::new(
            "load: latency from POST to the durable result event on another instance's feed, p99",
            size,
            label,
            Unit::Ms,
            scaled.p99,
        )
        .note(scaled.note())
        .floor(base, default.p99)
        .base_note(default.note()),
    ])
}
