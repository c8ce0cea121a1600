//! A team's server (issue 47): 1,000 sessions receiving calls and 10,000 SSE subscribers
//! spread over them (10 each), on one release `toolwire serve` over SQLite, loopback only.
//! Measured: the server's CPU per call with 10 other feeds open and with all of them (an
//! event must cost the same whoever else is watching), its CPU while every feed is idle,
//! its memory per open feed, and the p99 from a call's POST to its result event at each of
//! its session's subscribers, with nothing lost or doubled at any subscriber.

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail, ensure};
use serde_json::json;
use tokio::net::TcpStream;

use crate::Ctx;
use crate::load::{create_session, ids, post_for};
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
/// Calls in flight while every session gets one.
const IN_FLIGHT: usize = 8;
/// How long the server's CPU is watched while every feed is idle.
const IDLE_WINDOW: Duration = Duration::from_secs(5);
/// Connections left under the server's cap for the calls themselves.
const SPARE: usize = 16;
/// Feeds being opened at once (the listen backlog is finite).
const OPENING: usize = 256;
/// How long all the deliveries of one step may take before the run fails.
const DELIVERY_LIMIT: Duration = Duration::from_secs(120);

/// One `toolwire serve`, stopped when dropped.
struct Serve {
    child: Child,
    port: u16,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.child.wait();
    }
}

impl Serve {
    /// The server's CPU time so far (user + system), from /proc.
    fn cpu(&self) -> anyhow::Result<Duration> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()))?;
        // Fields after the command's closing parenthesis; utime and stime are 14 and 15.
        let rest = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest)
            .context("no /proc stat")?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks: u64 = fields.get(11).context("no utime")?.parse::<u64>()?
            + fields.get(12).context("no stime")?.parse::<u64>()?;
        // Linux's USER_HZ is 100 on every architecture it reports it for.
        Ok(Duration::from_millis(ticks * 10))
    }

    /// The server's resident set, KiB.
    fn rss_kb(&self) -> anyhow::Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|l| l.trim().trim_end_matches("kB").trim().parse().ok())
            .context("no VmRSS")
    }
}

fn start(ctx: &Ctx, feeds: usize) -> anyhow::Result<Serve> {
    let run = ctx.tmp.path().join(format!("team-{}", ids()));
    let (ws, data) = (run.join("ws"), run.join("data"));
    std::fs::create_dir_all(&ws)?;
    std::fs::create_dir_all(&data)?;
    std::fs::write(ws.join("note.txt"), "a short note\n".repeat(20))?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let log = std::fs::File::create(run.join("serve.log"))?;
    let child = Command::new(&ctx.toolwire_bin)
        .arg("--data-dir")
        .arg(&data)
        .args([
            "serve",
            "--addr",
            &format!("127.0.0.1:{port}"),
            "--max-feeds",
            &feeds.to_string(),
            "--max-connections",
            &(feeds + SPARE).to_string(),
            "--workspace",
        ])
        .arg(&ws)
        .env_remove("TOOLWIRE_TOKEN")
        .env_remove("TOOLWIRE_PROVIDER")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .context("starting toolwire serve")?;
    let serve = Serve { child, port };
    let up = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if up.elapsed() > Duration::from_secs(30) {
            bail!("serve did not listen within 30 s (see {})", run.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(serve)
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

/// Opens `count` feeds on `session` on the readers' runtime, each reading `want` results;
/// returns once every one is subscribed.
async fn open_feeds(
    port: u16,
    session: &str,
    count: usize,
    want: usize,
    readers: &tokio::runtime::Handle,
    delivered: &Arc<AtomicUsize>,
    opening: &Arc<tokio::sync::Semaphore>,
) -> anyhow::Result<Vec<Feed>> {
    let (opened_tx, mut opened) = tokio::sync::mpsc::channel::<anyhow::Result<()>>(count.max(1));
    let mut feeds = Vec::with_capacity(count);
    for _ in 0..count {
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

/// `CALLS` calls to `session` one after another, each once its event reached all of the
/// session's `PER_SESSION` feeds: the server's CPU per call, and each call's POST time.
async fn calls_to_one(
    serve: &Serve,
    http: &reqwest::Client,
    session: &str,
    delivered: &AtomicUsize,
) -> anyhow::Result<(Duration, HashMap<String, SystemTime>)> {
    let url = format!(
        "http://127.0.0.1:{}/api/sessions/{session}/calls",
        serve.port
    );
    let body = json!({"tool": "read_file", "input": {"path": "note.txt"}});
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

/// The team workload at `size` (1: 1,000 sessions, 10,000 subscribers).
pub(crate) fn run(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    let sessions = (SESSIONS * size).round().max(2.0) as usize;
    // The open-file limit bounds both ends: serve keeps its connections under half of
    // it, and this process holds the other end of every feed.
    let (soft, _) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)?;
    let room = usize::try_from(soft / 2)
        .unwrap_or(usize::MAX)
        .saturating_sub(SPARE);
    let feeds_total = (sessions * PER_SESSION).min(room);
    ensure!(
        feeds_total >= 2 * PER_SESSION,
        "an open-file limit of {soft} leaves room for {room} feeds"
    );
    let serve = start(ctx, feeds_total)?;
    // The subscribers' own runtime, at the lowest priority (nice 19): subscribers are other
    // machines, and their receive timestamps come from the kernel, so reading late costs
    // the figure nothing. Not the idle class the fan-out row uses: on a machine busy with
    // anything else (a build), idle-class threads do not run at all, and the run stalls.
    let (readers, not_niced) = readers_runtime("team-reader", lowest_priority)?;
    let figures = ctx
        .rt
        .block_on(measure(&serve, sessions, feeds_total, readers.handle()));
    drop(readers);
    let figures = figures?;
    ensure!(
        not_niced.load(Ordering::Relaxed) == 0,
        "`renice` could not lower the team workload's reader threads' priority"
    );
    let label = format!(
        "{} sessions, {} feeds",
        thousands(sessions as f64),
        thousands(feeds_total as f64)
    );
    let Figures {
        mut quiet,
        mut crowded,
        mut spread,
        cpu_quiet,
        cpu_crowded,
        idle_core,
        per_feed_kb,
        deliveries,
    } = figures;
    let capped = if feeds_total < sessions * PER_SESSION {
        format!(
            "; {} feeds, not {}: the open-file limit ({soft}) caps serve at half of it",
            thousands(feeds_total as f64),
            thousands((sessions * PER_SESSION) as f64)
        )
    } else {
        String::new()
    };
    Ok(vec![
        Row::new(
            "team server: server CPU per call (its result event to its session's 10 SSE subscribers), all feeds open",
            size,
            label.clone(),
            Unit::Ms,
            ms(cpu_crowded),
        )
        .note(format!(
            "idle with every feed open: {:.2}% of a core; {} KiB of memory per open feed{capped}",
            idle_core * 100.0,
            per_feed_kb
        ))
        .floor("the same with 10 other feeds open", ms(cpu_quiet))
        // Issue 47: within 20% between 10 and 10,000 other sessions' feeds.
        .target(Target::RatioAtMost(1.2)),
        Row::new(
            "team server: POST of a call to its result event at each of its session's subscribers, p99, every session called",
            size,
            label,
            Unit::Ms,
            percentile(&mut spread, 0.99),
        )
        .note(format!(
            "p50 {:.2} ms; one session called with all feeds open: p99 {:.2} ms; {} deliveries, none lost or doubled",
            percentile(&mut spread, 0.5),
            percentile(&mut crowded, 0.99),
            thousands(deliveries as f64)
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
}

async fn measure(
    serve: &Serve,
    sessions: usize,
    feeds_total: usize,
    readers: &tokio::runtime::Handle,
) -> anyhow::Result<Figures> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(SPARE / 2)
        .build()?;
    let mut ids = Vec::with_capacity(sessions);
    for chunk in (0..sessions).collect::<Vec<_>>().chunks(16) {
        let made = chunk.iter().map(|_| create_session(&http, serve.port));
        for id in futures::future::join_all(made).await {
            ids.push(id?);
        }
    }
    let delivered = Arc::new(AtomicUsize::new(0));
    let opening = Arc::new(tokio::sync::Semaphore::new(OPENING));
    // The measured session's feeds get both runs of calls and their share of the spread.
    let measured_want = 2 * (WARM + CALLS) + 1;
    let mut feeds = open_feeds(
        serve.port,
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
            serve.port,
            &ids[1],
            count_for(1),
            1,
            readers,
            &delivered,
            &opening,
        )
        .await?,
    );
    let (cpu_quiet, sent_quiet) = calls_to_one(serve, &http, &ids[0], &delivered).await?;

    // Crowded: every other session's feeds, then the same calls.
    let rss_before = serve.rss_kb()?;
    let opened_before = PER_SESSION + count_for(1);
    for (k, session) in ids.iter().enumerate().skip(2) {
        feeds.extend(
            open_feeds(
                serve.port,
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
    let (cpu_crowded, sent_crowded) = calls_to_one(serve, &http, &ids[0], &delivered).await?;

    // Spread: every session gets one call, `IN_FLIGHT` at a time.
    let before = delivered.load(Ordering::Acquire);
    let body = json!({"tool": "read_file", "input": {"path": "note.txt"}});
    let mut sent_spread = HashMap::with_capacity(sessions);
    let mut spread_ids = vec![String::new(); sessions];
    for chunk in (0..sessions).collect::<Vec<_>>().chunks(IN_FLIGHT) {
        let posts = chunk.iter().map(|&k| {
            let url = format!(
                "http://127.0.0.1:{}/api/sessions/{}/calls",
                serve.port, ids[k]
            );
            let (http, body) = (&http, &body);
            async move {
                let start = SystemTime::now();
                let id = post_for(http, &url, body, "callId").await?;
                Ok::<_, anyhow::Error>((k, id, start))
            }
        });
        for posted in futures::future::join_all(posts).await {
            let (k, id, start) = posted?;
            sent_spread.insert(id.clone(), start);
            spread_ids[k] = id;
        }
    }
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
    Ok(Figures {
        quiet: latencies(&got[..PER_SESSION], &sent_quiet)?,
        crowded: latencies(&got[..PER_SESSION], &sent_crowded)?,
        spread: latencies(&got, &sent_spread)?,
        cpu_quiet,
        cpu_crowded,
        idle_core,
        per_feed_kb,
        deliveries,
    })
}
