//! A team's server (issue 47): 1,000 sessions receiving calls and 10,000 SSE subscribers
//! spread over them (10 each), on one release `toolwire serve` over SQLite and on 4 over
//! Postgres + S3 (a session's feeds spread over the instances), loopback only. Measured:
//! the servers' CPU per call with 10 other feeds open and with all of them (an event must
//! cost the same whoever else is watching), their CPU while every feed is idle, memory per
//! open feed, and the p99 from a call's POST to its result event at each of its session's
//! subscribers with every session called at a team's pace, with nothing lost or doubled.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, ensure};
use serde_json::json;
use tokio::net::TcpStream;

use crate::Ctx;
use crate::load::{
    Backend, Instances, create_session, drop_database, fresh_database, ids, post_for, services,
    start_capped,
};
use crate::measure::{ms, percentile};
use crate::report::{Row, Target, Unit, thousands};
use crate::serve::{find, open_feed, read_stamped, readers_runtime, result_call_id};

/// Sessions at size 1, as the issue names; each has `PER_SESSION` subscribers.
const SESSIONS: f64 = 1000.0;
const PER_SESSION: usize = 10;
/// Calls to the measured session, one after another, with few and with all feeds open.
const CALLS: usize = 300;
/// Calls made first and not counted: the session's first writes and frames.
const WARM: usize = 10;
/// Calls a second while every session gets one (a team's thousand agents, each making a
/// tool call every ten seconds), on every backend.
const PACE_PER_SEC: f64 = 100.0;
/// Posts still unanswered past which the paced run waits for one (the server fell behind).
const BEHIND: usize = 64;
/// Instances over Postgres + S3, as the issue names.
const INSTANCES: usize = 4;
/// How long the server's CPU is watched while every feed is idle.
const IDLE_WINDOW: Duration = Duration::from_secs(5);
/// Connections left under the server's cap for the calls themselves.
const SPARE: usize = 16;
/// Feeds being opened at once (the listen backlog is finite).
const OPENING: usize = 256;
/// How long all the deliveries of one step may take before the run fails.
const DELIVERY_LIMIT: Duration = Duration::from_secs(120);
/// When set, the paced run's deliveries are written to this file, one line each (call's
/// session, feed, POST sent, POST answered, delivered: Unix ns): where a tail's time goes.
const TRACE_ENV: &str = "TOOLWIRE_BENCH_TEAM_TRACE";

/// Where a run's instances are and what they were started with.
struct Cluster {
    instances: Instances,
    ports: Vec<u16>,
}

/// `count` release `toolwire serve` instances over `backend`, room for `feeds_total`
/// feeds among them, over a workspace with a small file.
fn start(
    ctx: &Ctx,
    backend: &Backend,
    count: usize,
    run: &Path,
    feeds_total: usize,
) -> anyhow::Result<Cluster> {
    let ws = run.join("ws");
    std::fs::create_dir_all(&ws)?;
    std::fs::write(ws.join("note.txt"), "a short note\n".repeat(20))?;
    // Beside its share, each instance after the first has room for the feed of its warm
    // calls (`warm_instances`).
    let per = feeds_total.div_ceil(count) + usize::from(count > 1);
    let (instances, ports) = start_capped(ctx, backend, count, &ws, run, (per, per + SPARE))?;
    Ok(Cluster { instances, ports })
}

/// The last lines each instance's `serve.log` under `run` holds, for an error's context.
fn instance_logs(run: &Path, count: usize) -> String {
    let mut out = String::from("the instances' logs:");
    for i in 0..count {
        let path = run.join(format!("instance-{i}")).join("serve.log");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| format!("({e})"));
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(15)..].join("\n    ");
        out.push_str(&format!("\n  instance {i}:\n    {tail}"));
    }
    out
}

/// Every call the workload makes: the workspace's small file read.
fn read_note() -> serde_json::Value {
    json!({"tool": "read_file", "input": {"path": "note.txt"}})
}

/// The kernel's fan-out floor (p99, ms) for one session's feeds and for `all_n` sockets.
struct KernelFloor {
    one: f64,
    all_n: usize,
    all: f64,
}

/// The kernel's own p99 for one SSE-sized frame written to `n` loopback sockets and read
/// in another process, ms (`scripts/probes/fan_floor.c`, built with `cc`): what no server
/// can beat, beside which the rows' own floors (the server's quiet path) are read.
fn kernel_floor(ctx: &Ctx, n: usize) -> anyhow::Result<f64> {
    let bin = ctx.tmp.path().join("fan_floor");
    if !bin.exists() {
        let built = Command::new("cc")
            .args(["-O2", "-pthread", "-o"])
            .arg(&bin)
            .arg(ctx.root.join("scripts/probes/fan_floor.c"))
            .status()
            .context("building scripts/probes/fan_floor.c with cc")?;
        ensure!(
            built.success(),
            "cc could not build scripts/probes/fan_floor.c"
        );
    }
    let out = Command::new(&bin).arg(n.to_string()).output()?;
    ensure!(
        out.status.success(),
        "fan_floor {n}: {}",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .find_map(|w| w.strip_prefix("p99="))
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("fan_floor {n} printed no p99: {text}"))
}

/// Lowers the calling thread to nice 19 with util-linux's `renice` (the workspace forbids
/// `unsafe`); whether it did.
fn lowest_priority() -> bool {
    let tid = nix::unistd::gettid().to_string();
    Command::new("renice")
        .args(["-n", "19", "-p", &tid])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// One subscriber: each result event it got (call id, the kernel's receive time), in
/// order, until it has `want` of them; doubles are kept, so that they show.
async fn subscriber(
    stream: TcpStream,
    mut buf: Vec<u8>,
    want: usize,
    delivered: Arc<AtomicUsize>,
) -> anyhow::Result<Vec<(String, SystemTime)>> {
    nix::sys::socket::setsockopt(
        &stream,
        nix::sys::socket::sockopt::ReceiveTimestampns,
        &true,
    )
    .context("SO_TIMESTAMPNS on a feed's socket")?;
    let mut got = Vec::with_capacity(want);
    let mut chunk = vec![0u8; 16 * 1024];
    while got.len() < want {
        let (n, at) = read_stamped(&stream, &mut chunk).await?;
        ensure!(
            n > 0,
            "the feed ended after {} of {want} results",
            got.len()
        );
        let at = at.context("the kernel gave a feed's read no receive timestamp")?;
        buf.extend_from_slice(&chunk[..n]);
        while let Some(end) = find(&buf, b"\n\n") {
            if let Some(id) = result_call_id(&buf[..end]) {
                got.push((String::from_utf8_lossy(id).into_owned(), at));
                delivered.fetch_add(1, Ordering::Release);
            }
            buf.drain(..end + 2);
        }
    }
    Ok(got)
}

/// Waits until `delivered` reaches `want`.
async fn delivered_to(delivered: &AtomicUsize, want: usize, what: &str) -> anyhow::Result<()> {
    let waited = Instant::now();
    while delivered.load(Ordering::Acquire) < want {
        ensure!(
            waited.elapsed() < DELIVERY_LIMIT,
            "{what}: {} of {want} deliveries in {} s",
            delivered.load(Ordering::Acquire),
            DELIVERY_LIMIT.as_secs()
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    Ok(())
}

type Feed = tokio::task::JoinHandle<anyhow::Result<Vec<(String, SystemTime)>>>;

/// Opens `count` feeds on `session` on the readers' runtime, each reading `want` results,
/// the `i`th on instance `(first + i) % n`; returns once every one is subscribed.
#[allow(clippy::too_many_arguments)]
async fn open_feeds(
    ports: &[u16],
    first: usize,
    session: &str,
    count: usize,
    want: usize,
    readers: &tokio::runtime::Handle,
    delivered: &Arc<AtomicUsize>,
    opening: &Arc<tokio::sync::Semaphore>,
) -> anyhow::Result<Vec<Feed>> {
    let (opened_tx, mut opened) = tokio::sync::mpsc::channel::<anyhow::Result<()>>(count.max(1));
    let mut feeds = Vec::with_capacity(count);
    for i in 0..count {
        let port = ports[(first + i) % ports.len()];
        let (session, opened_tx) = (session.to_owned(), opened_tx.clone());
        let (delivered, opening) = (Arc::clone(delivered), Arc::clone(opening));
        feeds.push(readers.spawn(async move {
            let permit = opening.acquire_owned().await?;
            let (stream, rest) = match open_feed(port, &session).await {
                Ok(feed) => feed,
                Err(e) => {
                    let _ = opened_tx.send(Err(anyhow::anyhow!("{e:#}"))).await;
                    return Err(e);
                }
            };
            drop(permit);
            let _ = opened_tx.send(Ok(())).await;
            subscriber(stream, rest, want, delivered).await
        }));
    }
    drop(opened_tx);
    for _ in 0..count {
        opened
            .recv()
            .await
            .context("a subscriber ended before its feed opened")??;
    }
    Ok(feeds)
}

/// `WARM` calls on each instance but the first (which made the measured session's), on a
/// session of its own followed by one feed there, each once its event reached the feed: an
/// instance's first calls are its first writes, statements and frames (on four instances
/// the paced run's first calls on the three others came 27-48 ms late), which the quiet
/// and crowded runs leave out on the first instance by their own warm calls.
async fn warm_instances(
    ports: &[u16],
    http: &reqwest::Client,
    readers: &tokio::runtime::Handle,
    opening: &Arc<tokio::sync::Semaphore>,
) -> anyhow::Result<()> {
    for (j, &port) in ports.iter().enumerate().skip(1) {
        let session = create_session(http, port).await?;
        let delivered = Arc::new(AtomicUsize::new(0));
        let feed = open_feeds(ports, j, &session, 1, WARM, readers, &delivered, opening).await?;
        let url = format!("http://127.0.0.1:{port}/api/sessions/{session}/calls");
        let body = read_note();
        for i in 0..WARM {
            post_for(http, &url, &body, "callId").await?;
            delivered_to(&delivered, i + 1, "an instance's warm call").await?;
        }
        for handle in feed {
            handle.await??;
        }
    }
    Ok(())
}

/// `CALLS` calls to `session` (made on the first instance) one after another, each once its
/// event reached all of the session's `PER_SESSION` feeds: the servers' CPU per call, and
/// each call's POST time.
async fn calls_to_one(
    cluster: &Cluster,
    http: &reqwest::Client,
    session: &str,
    delivered: &AtomicUsize,
) -> anyhow::Result<(Duration, HashMap<String, SystemTime>)> {
    let url = format!(
        "http://127.0.0.1:{}/api/sessions/{session}/calls",
        cluster.ports[0]
    );
    let serve = &cluster.instances;
    let body = read_note();
    let mut sent = HashMap::with_capacity(CALLS);
    let mut cpu_from = serve.cpu()?;
    for i in 0..WARM + CALLS {
        if i == WARM {
            cpu_from = serve.cpu()?;
        }
        // Counted before the POST: the event may reach every feed before it answers.
        let before = delivered.load(Ordering::Acquire);
        let start = SystemTime::now();
        let id = post_for(http, &url, &body, "callId").await?;
        if i >= WARM {
            sent.insert(id, start);
        }
        delivered_to(delivered, before + PER_SESSION, "one session's call").await?;
    }
    let cpu = serve.cpu()?.saturating_sub(cpu_from);
    Ok((cpu / CALLS as u32, sent))
}

/// The latencies (ms) of `sent`'s calls at the feeds of `feeds` that got them.
fn latencies(
    got: &[Vec<(String, SystemTime)>],
    sent: &HashMap<String, SystemTime>,
) -> anyhow::Result<Vec<f64>> {
    let mut out = Vec::new();
    for feed in got {
        for (id, at) in feed {
            if let Some(start) = sent.get(id) {
                let took = at
                    .duration_since(*start)
                    .context("an event reached a feed before its call was posted")?;
                out.push(ms(took));
            }
        }
    }
    Ok(out)
}

/// Adds to `path` a header (the run's instances and feeds), then each delivery of `sent`'s
/// calls as a line: call, feed, POST sent, POST answered, delivered, in Unix nanoseconds
/// ([`TRACE_ENV`]).
fn trace(
    path: &Path,
    instances: usize,
    got: &[Vec<(String, SystemTime)>],
    sent: &HashMap<String, SystemTime>,
    answered: &HashMap<String, SystemTime>,
) -> anyhow::Result<()> {
    use std::fmt::Write as _;
    let ns = |t: &SystemTime| {
        t.duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    };
    let mut out = format!("# instances {instances} feeds {}\n", got.len());
    for (f, feed) in got.iter().enumerate() {
        for (id, at) in feed {
            if let (Some(start), Some(back)) = (sent.get(id), answered.get(id)) {
                // Writing to a String cannot fail.
                let _ = writeln!(out, "{id} {f} {} {} {}", ns(start), ns(back), ns(at));
            }
        }
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    std::io::Write::write_all(&mut file, out.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

/// Every call of `expected` once at each of `got`'s feeds, and nothing else.
fn exactly_once(got: &[Vec<(String, SystemTime)>], expected: &[String]) -> anyhow::Result<()> {
    for feed in got {
        let mut seen: Vec<&str> = feed.iter().map(|(id, _)| id.as_str()).collect();
        seen.sort_unstable();
        let mut want: Vec<&str> = expected.iter().map(String::as_str).collect();
        want.sort_unstable();
        ensure!(
            seen == want,
            "a subscriber got {} results where {} were sent (lost or doubled)",
            seen.len(),
            want.len()
        );
    }
    Ok(())
}

/// The team workload at `size` (1: 1,000 sessions, 10,000 subscribers): on one instance
/// over the SQLite + files default, then on `INSTANCES` over Postgres + S3.
pub(crate) fn run(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    let sessions = (SESSIONS * size).round().max(2.0) as usize;
    let (pg, s3) = services()?;
    // The subscribers' own runtime, at the lowest priority (nice 19): subscribers are other
    // machines, and their receive timestamps come from the kernel, so reading late costs
    // the figure nothing. Not the idle class the fan-out row uses: on a machine busy with
    // anything else (a build), idle-class threads do not run at all, and the run stalls.
    let (readers, not_niced) = readers_runtime("team-reader", lowest_priority)?;
    // The kernel's floor is the machine's, not a backend's: measured once, for one
    // session's fan-out and for every feed at once (each end of every socket in one
    // process, so at most half the open-file limit).
    let (soft, _) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)?;
    let soft = usize::try_from(soft).unwrap_or(usize::MAX);
    let all_n = (sessions * PER_SESSION).min(soft.saturating_sub(4 * SPARE) / 2);
    let kernel = KernelFloor {
        one: kernel_floor(ctx, PER_SESSION)?,
        all_n,
        all: kernel_floor(ctx, all_n)?,
    };

    let sqlite_run = ctx.tmp.path().join(format!("team-sqlite-{}", ids()));
    let sqlite = Backend::Sqlite(sqlite_run.join("data"));
    let mut rows = one_backend(
        ctx,
        size,
        sessions,
        &sqlite,
        1,
        &sqlite_run,
        &readers,
        &kernel,
        "",
    )?;

    let name = format!("toolwire_team_{}", ids());
    let (bucket, query) = s3.split_once('?').unwrap_or((&s3, ""));
    let shared = Backend::Shared {
        database: ctx.rt.block_on(fresh_database(&pg, &name))?,
        blobs: format!("{}/team-{}?{query}", bucket.trim_end_matches('/'), ids()),
    };
    let shared_run = ctx.tmp.path().join(format!("team-shared-{}", ids()));
    let scaled = one_backend(
        ctx,
        size,
        sessions,
        &shared,
        INSTANCES,
        &shared_run,
        &readers,
        &kernel,
        ", 4 instances over Postgres + S3",
    );
    // Leave the services as they were (small text results: no blobs were written).
    let _ = ctx.rt.block_on(drop_database(&pg, &name));
    rows.extend(scaled?);
    drop(readers);
    ensure!(
        not_niced.load(Ordering::Relaxed) == 0,
        "`renice` could not lower the team workload's reader threads' priority"
    );
    Ok(rows)
}

/// The workload's rows on `count` instances over `backend`; `which` names them.
#[allow(clippy::too_many_arguments)]
fn one_backend(
    ctx: &Ctx,
    size: f64,
    sessions: usize,
    backend: &Backend,
    count: usize,
    run: &Path,
    readers: &tokio::runtime::Runtime,
    kernel: &KernelFloor,
    which: &str,
) -> anyhow::Result<Vec<Row>> {
    // The open-file limit bounds both ends: each serve keeps its connections under half
    // of its own, and this process holds the other end of every feed.
    let (soft, _) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)?;
    let soft = usize::try_from(soft).unwrap_or(usize::MAX);
    let room = (soft / 2)
        .saturating_sub(SPARE)
        .saturating_mul(count)
        .min(soft.saturating_sub(4 * SPARE));
    let feeds_total = (sessions * PER_SESSION).min(room);
    ensure!(
        feeds_total >= 2 * PER_SESSION,
        "an open-file limit of {soft} leaves room for {room} feeds"
    );
    let cluster = start(ctx, backend, count, run, feeds_total)?;
    let figures = ctx
        .rt
        .block_on(measure(&cluster, sessions, feeds_total, readers.handle()));
    drop(cluster);
    // An instance that stopped mid-run (its process gone) shows only as a failed read or
    // request here: what it printed says why.
    let figures = figures.map_err(|e| e.context(instance_logs(run, count)));
    let Figures {
        mut quiet,
        mut crowded,
        mut spread,
        cpu_quiet,
        cpu_crowded,
        idle_core,
        per_feed_kb,
        deliveries,
        paced_per_sec,
    } = figures?;
    let label = format!(
        "{} sessions, {} feeds",
        thousands(sessions as f64),
        thousands(feeds_total as f64)
    );
    let capped = if feeds_total < sessions * PER_SESSION {
        format!(
            "; {} feeds, not {}: the open-file limit ({soft}) caps serve at half of it",
            thousands(feeds_total as f64),
            thousands((sessions * PER_SESSION) as f64)
        )
    } else {
        String::new()
    };
    let spread_feeds = if count > 1 {
        "; each session's feeds spread over every instance, its calls made on one"
    } else {
        ""
    };
    Ok(vec![
        Row::new(
            &format!("team server{which}: server CPU per call (its result event to its session's 10 SSE subscribers), all feeds open"),
            size,
            label.clone(),
            Unit::Ms,
            ms(cpu_crowded),
        )
        .note(format!(
            "idle with every feed open: {:.2}% of a core; {} KiB of memory per open feed{capped}{spread_feeds}",
            idle_core * 100.0,
            per_feed_kb
        ))
        .floor("the same with 10 other feeds open", ms(cpu_quiet))
        // Issue 47: within 20% between 10 and 10,000 other sessions' feeds.
        .target(Target::RatioAtMost(1.2)),
        Row::new(
            &format!("team server{which}: POST of a call to its result event at each of its session's subscribers, p99, every session called at {PACE_PER_SEC:.0} calls/s"),
            size,
            label,
            Unit::Ms,
            percentile(&mut spread, 0.99),
        )
        .note(format!(
            "p50 {:.2} ms; {paced_per_sec:.0} calls/s reached; one session called with all feeds open: p99 {:.2} ms; {} deliveries, none lost or doubled; kernel floor (fan_floor.c, one frame to N sockets) p99: N=10 {:.2} ms, N={} {:.2} ms",
            percentile(&mut spread, 0.5),
            percentile(&mut crowded, 0.99),
            thousands(deliveries as f64),
            kernel.one,
            thousands(kernel.all_n as f64),
            kernel.all
        ))
        .floor(
            "one session called, 10 other feeds open",
            percentile(&mut quiet, 0.99),
        )
        .base_note(format!("p50 {:.2} ms", percentile(&mut quiet, 0.5)))
        .target(Target::RatioAtMost(3.0)),
    ])
}

struct Figures {
    quiet: Vec<f64>,
    crowded: Vec<f64>,
    spread: Vec<f64>,
    cpu_quiet: Duration,
    cpu_crowded: Duration,
    idle_core: f64,
    per_feed_kb: String,
    deliveries: usize,
    paced_per_sec: f64,
}

/// What the paced run did: each session's call id, each call's POST time and the time its
/// answer came, and the rate reached.
struct Paced {
    ids: Vec<String>,
    sent: HashMap<String, SystemTime>,
    answered: HashMap<String, SystemTime>,
    rate: f64,
}

/// Every session gets one call, at `PACE_PER_SEC` in all, whatever the answers: a team's
/// calls arrive when their agents make them, not when the server has answered the last
/// one. Should the server fall `BEHIND` calls back, the next waits for one to answer (and
/// the rate reached says so). Returns each call's id (by session) and POST time, and the
/// rate reached.
async fn paced_calls(
    cluster: &Cluster,
    http: &reqwest::Client,
    ids: &[String],
) -> anyhow::Result<Paced> {
    let body = Arc::new(read_note());
    let gap = Duration::from_secs_f64(1.0 / PACE_PER_SEC);
    let mut posts = tokio::task::JoinSet::new();
    let mut done = Vec::with_capacity(ids.len());
    let begin = tokio::time::Instant::now();
    for (k, session) in ids.iter().enumerate() {
        tokio::time::sleep_until(begin + gap * k as u32).await;
        while let Some(posted) = posts.try_join_next() {
            done.push(posted??);
        }
        if posts.len() >= BEHIND
            && let Some(posted) = posts.join_next().await
        {
            done.push(posted??);
        }
        let url = format!(
            "http://127.0.0.1:{}/api/sessions/{session}/calls",
            cluster.ports[k % cluster.ports.len()]
        );
        let (http, body) = (http.clone(), Arc::clone(&body));
        posts.spawn(async move {
            let start = SystemTime::now();
            let id = post_for(&http, &url, &body, "callId").await?;
            Ok::<_, anyhow::Error>((k, id, start, SystemTime::now()))
        });
    }
    let posted_in = begin.elapsed();
    while let Some(posted) = posts.join_next().await {
        done.push(posted??);
    }
    let mut by_session = vec![String::new(); ids.len()];
    let mut sent = HashMap::with_capacity(ids.len());
    let mut answered = HashMap::with_capacity(ids.len());
    for (k, id, start, back) in done {
        sent.insert(id.clone(), start);
        answered.insert(id.clone(), back);
        by_session[k] = id;
    }
    let rate = ids.len().saturating_sub(1) as f64 / posted_in.as_secs_f64().max(1e-9);
    Ok(Paced {
        ids: by_session,
        sent,
        answered,
        rate,
    })
}

async fn measure(
    cluster: &Cluster,
    sessions: usize,
    feeds_total: usize,
    readers: &tokio::runtime::Handle,
) -> anyhow::Result<Figures> {
    let (serve, ports) = (&cluster.instances, &cluster.ports[..]);
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(SPARE / 2)
        .build()?;
    // Session k lives on instance k mod n (where its calls are made); its feeds start on
    // the next one, so with several instances most of its events cross to another.
    let mut ids = Vec::with_capacity(sessions);
    for chunk in (0..sessions).collect::<Vec<_>>().chunks(16) {
        let made = chunk
            .iter()
            .map(|&k| create_session(&http, ports[k % ports.len()]));
        for id in futures::future::join_all(made).await {
            ids.push(id?);
        }
    }
    let delivered = Arc::new(AtomicUsize::new(0));
    let opening = Arc::new(tokio::sync::Semaphore::new(OPENING));
    // The measured session's feeds get both runs of calls and their share of the spread.
    let measured_want = 2 * (WARM + CALLS) + 1;
    let mut feeds = open_feeds(
        ports,
        1,
        &ids[0],
        PER_SESSION,
        measured_want,
        readers,
        &delivered,
        &opening,
    )
    .await?;
    // Quiet: 10 other feeds, on another session.
    let per_other = (feeds_total - PER_SESSION) / (sessions - 1);
    let extra = (feeds_total - PER_SESSION) % (sessions - 1);
    let count_for = |k: usize| per_other + usize::from(k - 1 < extra);
    feeds.extend(
        open_feeds(
            ports,
            2,
            &ids[1],
            count_for(1),
            1,
            readers,
            &delivered,
            &opening,
        )
        .await?,
    );
    let (cpu_quiet, sent_quiet) = calls_to_one(cluster, &http, &ids[0], &delivered).await?;

    // Crowded: every other session's feeds, then the same calls.
    let rss_before = serve.rss_kb()?;
    let opened_before = PER_SESSION + count_for(1);
    for (k, session) in ids.iter().enumerate().skip(2) {
        feeds.extend(
            open_feeds(
                ports,
                k + 1,
                session,
                count_for(k),
                1,
                readers,
                &delivered,
                &opening,
            )
            .await?,
        );
    }
    let opened = feeds.len() - opened_before;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_after = serve.rss_kb()?;
    let per_feed_kb = format!(
        "{:.1}",
        rss_after.saturating_sub(rss_before) as f64 / opened.max(1) as f64
    );
    let idle_from = serve.cpu()?;
    let idle_start = Instant::now();
    tokio::time::sleep(IDLE_WINDOW).await;
    let idle_core =
        serve.cpu()?.saturating_sub(idle_from).as_secs_f64() / idle_start.elapsed().as_secs_f64();
    let (cpu_crowded, sent_crowded) = calls_to_one(cluster, &http, &ids[0], &delivered).await?;

    // Spread: every session gets one call, paced, on instances that have all made calls
    // before (the first has: the measured session's).
    warm_instances(ports, &http, readers, &opening).await?;
    let before = delivered.load(Ordering::Acquire);
    let Paced {
        ids: spread_ids,
        sent: sent_spread,
        answered,
        rate: paced_per_sec,
    } = paced_calls(cluster, &http, &ids).await?;
    delivered_to(&delivered, before + feeds.len(), "every session's call").await?;
    let mut got = Vec::with_capacity(feeds.len());
    for feed in feeds {
        got.push(
            tokio::time::timeout(Duration::from_secs(60), feed)
                .await
                .context("a subscriber waited 60 s for its events")???,
        );
    }
    // Nothing lost or doubled: each feed has exactly its session's calls.
    let mut measured: Vec<String> = sent_quiet.keys().cloned().collect();
    measured.extend(sent_crowded.keys().cloned());
    measured.push(spread_ids[0].clone());
    let warm_measured: Vec<&Vec<(String, SystemTime)>> = got[..PER_SESSION].iter().collect();
    for feed in &warm_measured {
        // The warm calls are not in `sent`: only the counted ones are compared.
        let counted: Vec<(String, SystemTime)> = feed
            .iter()
            .filter(|(id, _)| measured.contains(id))
            .cloned()
            .collect();
        exactly_once(&[counted], &measured)?;
        ensure!(
            feed.len() == measured_want,
            "a subscriber of the measured session got {} results, not {measured_want}",
            feed.len()
        );
    }
    let mut at = PER_SESSION;
    for (k, id) in spread_ids.iter().enumerate().skip(1) {
        let n = count_for(k);
        exactly_once(&got[at..at + n], std::slice::from_ref(id))?;
        at += n;
    }
    let deliveries = got.iter().map(Vec::len).sum();
    if let Some(path) = std::env::var_os(TRACE_ENV) {
        trace(Path::new(&path), ports.len(), &got, &sent_spread, &answered)?;
    }
    Ok(Figures {
        quiet: latencies(&got[..PER_SESSION], &sent_quiet)?,
        crowded: latencies(&got[..PER_SESSION], &sent_crowded)?,
        spread: latencies(&got, &sent_spread)?,
        cpu_quiet,
        cpu_crowded,
        idle_core,
        per_feed_kb,
        deliveries,
        paced_per_sec,
    })
}
