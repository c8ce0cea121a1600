//! What a user of `toolwire serve` waits for, on the release binary over loopback: a tool
//! result's event reaching 100 SSE subscribers (beside one subscriber), `GET` of a
//! 1,000-result session (beside a plain SELECT of the same rows), and the web app's first
//! render in Chromium (beside the same text as a static page, tests/web/bench_render.mjs).

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, ensure};
use serde_json::{Value as Json, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::Ctx;
use crate::load::{Backend, Instances, create_session, ids, post_for, start};
use crate::measure::{ms, percentile};
use crate::report::{Row, Target, Unit, thousands};

/// Subscribers at size 1, as the issue names.
const SUBSCRIBERS: f64 = 100.0;
/// Calls whose result events are timed, each made `PACE` after the previous one's event
/// reached every subscriber: a busy turn, not a flood (see `fanout_latencies`). As many
/// with one subscriber as with many: a p99 over 100 calls was their second slowest, which
/// one slow commit (an fsync, a WAL checkpoint) moved by half, on either side.
const EVENTS: usize = 1000;
/// Calls made first and not timed: the session's first writes and the feeds' first frames.
const WARM: usize = 10;
const PACE: Duration = Duration::from_millis(5);
/// How long one event may take to reach every subscriber before the run fails.
const DELIVERY_LIMIT: Duration = Duration::from_secs(60);
/// Results in the session read back, at size 1.
const RESULTS: f64 = 1000.0;
const IN_FLIGHT: usize = 4;
const WINDOW: Duration = Duration::from_secs(3);

/// One release `serve` on the SQLite + files default, over a workspace with a small file.
struct Server {
    _instance: Instances,
    port: u16,
    data: std::path::PathBuf,
    http: reqwest::Client,
}

impl Server {
    fn start(ctx: &Ctx) -> anyhow::Result<Server> {
        let run = ctx.tmp.path().join(format!("serve-{}", ids()));
        let (ws, data) = (run.join("ws"), run.join("data"));
        std::fs::create_dir_all(&ws)?;
        std::fs::write(ws.join("note.txt"), "a short note\n".repeat(20))?;
        let (instance, ports) = start(ctx, &Backend::Sqlite(data.clone()), 1, &ws, &run)?;
        Ok(Server {
            _instance: instance,
            port: ports[0],
            data,
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(64)
                .build()?,
        })
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Posts a read_file call; returns its call id once accepted.
    async fn call(&self, session: &str) -> anyhow::Result<String> {
        post_for(
            &self.http,
            &self.url(&format!("/api/sessions/{session}/calls")),
            &json!({"tool": "read_file", "input": {"path": "note.txt"}}),
            "callId",
        )
        .await
    }

    /// A session holding `n` read_file results, posted 50 at a time.
    async fn filled(&self, n: usize) -> anyhow::Result<String> {
        let session = create_session(&self.http, self.port).await?;
        for start in (0..n).step_by(50) {
            let posts = (start..n.min(start + 50)).map(|_| self.call(&session));
            for posted in futures::future::join_all(posts).await {
                posted?;
            }
        }
        let end = Instant::now() + Duration::from_secs(600);
        loop {
            let got: Json = self
                .http
                .get(self.url(&format!("/api/sessions/{session}")))
                .send()
                .await?
                .error_for_status()?
                .json()
                .await?;
            let results = got["messages"].as_array().map_or(0, |m| {
                m.iter().filter(|m| m["role"] == "tool_result").count()
            });
            if results == n {
                return Ok(session);
            }
            ensure!(Instant::now() < end, "{results} of {n} results after 600 s");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Opens one event feed over a bare socket and waits for its answer's head (which means
/// the server has subscribed it); returns the socket and any bytes read past the head.
pub(crate) async fn open_feed(port: u16, session: &str) -> anyhow::Result<(TcpStream, Vec<u8>)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
    stream.set_nodelay(true)?;
    let request = format!(
        "GET /api/sessions/{session}/events HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n\
         accept: text/event-stream\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await?;
    let mut buf = Vec::with_capacity(16 * 1024);
    loop {
        let n = stream.read_buf(&mut buf).await?;
        ensure!(n > 0, "the feed closed before its answer's head");
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            ensure!(
                buf.starts_with(b"HTTP/1.1 200"),
                "the feed answered {:?}",
                String::from_utf8_lossy(&buf[..end])
            );
            buf.drain(..end + 4);
            return Ok((stream, buf));
        }
        ensure!(buf.len() < 64 * 1024, "the feed's answer head is too long");
    }
}

pub(crate) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The call id of a `tool_result` event's block (the SSE fields, perhaps after a chunk
/// header): the first `"callId"` of its data, which is the result's.
pub(crate) fn result_call_id(block: &[u8]) -> Option<&[u8]> {
    find(block, b"event: tool_result\n")?;
    const KEY: &[u8] = b"\"callId\":\"";
    let at = find(block, KEY)? + KEY.len();
    let len = block[at..].iter().position(|&b| b == b'"')?;
    Some(&block[at..at + len])
}

/// One subscriber: when each result event (by call id) reached its socket, by the
/// kernel's receive timestamp (`SO_TIMESTAMPNS`: the moment the server's write put the
/// bytes there), so that when this reader gets to run does not count. It does as little
/// as a client can besides: the bytes are only scanned for each event's end and call id
/// (no SSE or JSON parser). With 1,000 subscribers on the server's own two cores, the
/// figure is the server's fan-out, not the readers' (see `fanout`).
async fn subscriber(
    stream: TcpStream,
    mut buf: Vec<u8>,
    want: usize,
    delivered: &AtomicUsize,
) -> anyhow::Result<HashMap<String, SystemTime>> {
    nix::sys::socket::setsockopt(
        &stream,
        nix::sys::socket::sockopt::ReceiveTimestampns,
        &true,
    )
    .context("SO_TIMESTAMPNS on a feed's socket")?;
    let mut got = HashMap::with_capacity(want);
    // Bytes of `buf` known to hold no event's end.
    let mut scanned: usize = 0;
    let mut chunk = vec![0u8; 64 * 1024];
    while got.len() < want {
        let (n, at) = read_stamped(&stream, &mut chunk).await?;
        ensure!(
            n > 0,
            "the feed ended after {} of {want} results",
            got.len()
        );
        let at = at.context("the kernel gave a feed's read no receive timestamp")?;
        buf.extend_from_slice(&chunk[..n]);
        // SSE blocks end in a blank line; the JSON data holds no raw newline.
        while let Some(end) = find(&buf[scanned.saturating_sub(1)..], b"\n\n") {
            let end = scanned.saturating_sub(1) + end;
            if let Some(id) = result_call_id(&buf[..end]) {
                got.insert(String::from_utf8_lossy(id).into_owned(), at);
                delivered.fetch_add(1, Ordering::Release);
            }
            buf.drain(..end + 2);
            scanned = 0;
        }
        scanned = buf.len();
    }
    Ok(got)
}

/// One read of `stream` into `chunk`: its length, and the kernel's receive time of the
/// last bytes read (a read holds one call's events: calls are made one at a time, each
/// after the previous one's events reached every feed). None at the end of the stream.
pub(crate) async fn read_stamped(
    stream: &TcpStream,
    chunk: &mut [u8],
) -> anyhow::Result<(usize, Option<SystemTime>)> {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
    use std::os::fd::AsRawFd;
    loop {
        stream.readable().await?;
        let read = stream.try_io(tokio::io::Interest::READABLE, || {
            let mut space = nix::cmsg_space!(nix::sys::time::TimeSpec);
            let mut iov = [std::io::IoSliceMut::new(&mut *chunk)];
            let msg = recvmsg::<()>(
                stream.as_raw_fd(),
                &mut iov,
                Some(&mut space),
                MsgFlags::empty(),
            )?;
            let mut at = None;
            for c in msg.cmsgs()? {
                if let ControlMessageOwned::ScmTimestampns(ts) = c {
                    let since = Duration::new(
                        u64::try_from(ts.tv_sec()).unwrap_or(0),
                        u32::try_from(ts.tv_nsec()).unwrap_or(0),
                    );
                    at = Some(SystemTime::UNIX_EPOCH + since);
                }
            }
            Ok((msg.bytes, at))
        });
        match read {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            read => return Ok(read?),
        }
    }
}

/// Latencies (ms) from each POST to its result event at each of `subscribers` feeds.
/// The feeds are opened and read on `readers`, a runtime of their own: on the driver's
/// runtime, 1,000 ready readers queued ahead of the HTTP client's connection task held
/// back the next POST itself, so the figure counted the bench's own queue as well.
///
/// Each call is made `PACE` after the previous call's event reached every feed. A fixed
/// pace alone (until 2026-11-28) measured a queue at 1,000 subscribers: on 2 cores one
/// event takes the server and the readers longer than 5 ms to deliver 1,000 times, so
/// every event waited behind the ones before it, and the p99 grew with the number of
/// events in the run (p50 8.9 ms, p99 64 ms): the backlog's length, not the fan-out's.
async fn fanout_latencies(
    server: &Server,
    subscribers: usize,
    readers: &tokio::runtime::Handle,
) -> anyhow::Result<Vec<f64>> {
    let session = create_session(&server.http, server.port).await?;
    let (opened_tx, mut opened) = tokio::sync::mpsc::channel::<anyhow::Result<()>>(64);
    // Result events read so far, over every feed.
    let delivered = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::with_capacity(subscribers);
    for _ in 0..subscribers {
        let (port, session, opened_tx) = (server.port, session.clone(), opened_tx.clone());
        let delivered = Arc::clone(&delivered);
        tasks.push(readers.spawn(async move {
            let (feed, rest) = match open_feed(port, &session).await {
                Ok(feed) => feed,
                Err(e) => {
                    let _ = opened_tx.send(Err(anyhow::anyhow!("{e:#}"))).await;
                    return Err(e);
                }
            };
            let _ = opened_tx.send(Ok(())).await;
            subscriber(feed, rest, WARM + EVENTS, &delivered).await
        }));
    }
    drop(opened_tx);
    // Every feed subscribed before the first call, as the server's answer head says.
    for _ in 0..subscribers {
        opened
            .recv()
            .await
            .context("a subscriber ended before its feed opened")??;
    }
    let mut sent = HashMap::with_capacity(EVENTS);
    for i in 0..WARM + EVENTS {
        // The wall clock, as the kernel's receive timestamps are.
        let start = SystemTime::now();
        let id = server.call(&session).await?;
        if i >= WARM {
            sent.insert(id, start);
        }
        // Every feed has this call's event before the next call (the timer's 1 ms
        // granularity only delays the next call, not what is measured).
        let everywhere = (i + 1) * subscribers;
        let waited = Instant::now();
        while delivered.load(Ordering::Acquire) < everywhere {
            ensure!(
                waited.elapsed() < DELIVERY_LIMIT,
                "call {i}'s event reached {} of {subscribers} feeds in {} s",
                delivered
                    .load(Ordering::Acquire)
                    .saturating_sub(i * subscribers),
                DELIVERY_LIMIT.as_secs()
            );
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        tokio::time::sleep(PACE).await;
    }
    let mut latencies = Vec::with_capacity(EVENTS * subscribers);
    for task in tasks {
        let got = tokio::time::timeout(Duration::from_secs(120), task)
            .await
            .context("a subscriber waited 120 s for its events")???;
        for (id, start) in &sent {
            let at = got
                .get(id)
                .with_context(|| format!("a subscriber missed {id}"))?;
            let took = at
                .duration_since(*start)
                .context("an event reached a feed before its call was posted (clock step?)")?;
            latencies.push(ms(took));
        }
    }
    Ok(latencies)
}

/// A tool result's event reaching `100 × size` SSE subscribers, beside one subscriber.
pub(crate) fn fanout(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    let n = (SUBSCRIBERS * size).round().max(1.0) as usize;
    let server = Server::start(ctx)?;
    // The subscribers' own runtime (see `fanout_latencies`), as many threads as the
    // driver's; the same for the one-subscriber floor. Its threads run only when the
    // cores are otherwise idle (SCHED_IDLE): subscribers are other machines in use, and
    // here, on the server's two cores, 1,000 readers took ~40% of the fan-out's CPU at
    // the server's priority, slowing the very writes they timed. Their receive
    // timestamps come from the kernel, so reading late costs the figure nothing.
    let (readers, not_idle) = readers_runtime("fanout-reader", idle_class)?;
    let (mut one, mut many) = ctx.rt.block_on(async {
        let one = fanout_latencies(&server, 1, readers.handle()).await?;
        let many = fanout_latencies(&server, n, readers.handle()).await?;
        Ok::<_, anyhow::Error>((one, many))
    })?;
    drop(readers);
    ensure!(
        not_idle.load(Ordering::Relaxed) == 0,
        "`chrt --idle` could not move the fan-out's reader threads to SCHED_IDLE"
    );
    let samples = many.len();
    let (p50, max) = (percentile(&mut many, 0.5), percentile(&mut many, 1.0));
    Ok(vec![
        Row::new(
            "event fan-out: POST of a tool call to its result event at every SSE subscriber, p99",
            size,
            format!("{n} subscribers"),
            Unit::Ms,
            percentile(&mut many, 0.99),
        )
        .note(format!(
            "p50 {p50:.2} ms, max {max:.1} ms, {} samples",
            thousands(samples as f64)
        ))
        .floor("the same with 1 subscriber", percentile(&mut one, 0.99))
        .base_note(format!("p50 {:.2} ms", percentile(&mut one, 0.5)))
        // Issue 27: p99 at most 3× one subscriber's, at every size.
        .target(Target::RatioAtMost(3.0))
        .at_every_size(),
    ])
}

/// The subscribers' own runtime (two threads named `name`), each thread lowered by
/// `lower` as it starts, and the count of threads `lower` failed on (checked after the
/// run, so that a figure is never taken at the server's priority unawares).
pub(crate) fn readers_runtime(
    name: &str,
    lower: fn() -> bool,
) -> anyhow::Result<(tokio::runtime::Runtime, Arc<AtomicUsize>)> {
    let failed = Arc::new(AtomicUsize::new(0));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(name)
        .on_thread_start({
            let failed = Arc::clone(&failed);
            move || {
                if !lower() {
                    failed.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
        .enable_all()
        .build()?;
    Ok((runtime, failed))
}

/// Moves the calling thread to the idle scheduling class, with util-linux's `chrt` (the
/// workspace forbids `unsafe`, and nix has no `sched_setscheduler`); whether it moved.
pub(crate) fn idle_class() -> bool {
    let tid = nix::unistd::gettid().to_string();
    Command::new("chrt")
        .args(["--idle", "--pid", "0", &tid])
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `one` from `IN_FLIGHT` tasks for `WINDOW`; completions per second.
async fn rate<F, Fut>(one: F) -> anyhow::Result<f64>
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = anyhow::Result<()>> + Send,
{
    let start = Instant::now();
    let end = start + WINDOW;
    let tasks: Vec<_> = (0..IN_FLIGHT)
        .map(|_| {
            let one = one.clone();
            tokio::spawn(async move {
                let mut n = 0u64;
                while Instant::now() < end {
                    one().await?;
                    n += 1;
                }
                Ok::<_, anyhow::Error>(n)
            })
        })
        .collect();
    let mut total = 0;
    for t in tasks {
        total += t.await??;
    }
    Ok(total as f64 / start.elapsed().as_secs_f64())
}

/// `GET /api/sessions/{id}` of a session of `1,000 × size` results, 4 in flight, beside a
/// plain SELECT of the same rows from the same SQLite file.
pub(crate) fn session_get(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    let n = (RESULTS * size) as usize;
    let server = Server::start(ctx)?;
    ctx.rt.block_on(async {
        let session = server.filled(n).await?;
        let url = server.url(&format!("/api/sessions/{session}"));
        let bytes = server.http.get(&url).send().await?.bytes().await?.len();
        let http = {
            let client = server.http.clone();
            rate(move || {
                let (client, url) = (client.clone(), url.clone());
                async move {
                    client
                        .get(&url)
                        .send()
                        .await?
                        .error_for_status()?
                        .bytes()
                        .await?;
                    Ok(())
                }
            })
            .await?
        };
        let select = select_rate(&server.data.join("history.db"), &session, n).await?;
        // Rates of whole responses, shown as time per response (4 in flight) so that
        // growth reads against the session's size.
        Ok(vec![
            Row::new(
                "`GET /api/sessions/{id}` of a 1,000-result session, 4 in flight, per response",
                size,
                format!("{} results", thousands(n as f64)),
                Unit::Ms,
                1000.0 / http,
            )
            .note(format!(
                "{http:.0} responses/s, {:.2} MB each",
                bytes as f64 / 1e6
            ))
            .floor(
                "a plain SELECT of the same rows, same file, 4 in flight",
                1000.0 / select,
            )
            .base_note(format!("{select:.0} queries/s"))
            // Issue 27's target is for the 1,000-result session; at 100 results the
            // request's fixed cost (HTTP both ways, the session and event lookups) is most
            // of the time, so the smaller size only reports.
            .target(if size >= 1.0 {
                Target::RatioAtMost(1.5)
            } else {
                Target::Report
            }),
        ])
    })
}

async fn select_rate(db: &Path, session: &str, results: usize) -> anyhow::Result<f64> {
    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(db)
        .read_only(true);
    let pool = sqlx::sqlite::SqlitePoolOptions::new()
        .max_connections(IN_FLIGHT as u32)
        .connect_with(options)
        .await?;
    let session = session.to_owned();
    rate(move || {
        let (pool, session) = (pool.clone(), session.clone());
        async move {
            let rows: Vec<(i64, i64, String, String, i64)> = sqlx::query_as(
                "SELECT id, seq, role, body, created_at FROM messages \
                 WHERE session_id = $1 ORDER BY seq",
            )
            .bind(&session)
            .fetch_all(&pool)
            .await?;
            ensure!(rows.len() >= results, "{} rows", rows.len());
            Ok(())
        }
    })
    .await
}

/// The web app's first render of `1,000 × size` results and of a `100,000 × size`-row
/// table in Chromium, beside the same content as a static page with no script.
pub(crate) fn web_render(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    let web = ctx.root.join("tests/web");
    ensure!(
        web.join("node_modules/playwright-core").exists(),
        "needs tests/web installed (npm ci --prefix tests/web) and Debian's chromium"
    );
    let (results, rows) = ((RESULTS * size) as usize, (100_000.0 * size) as usize);
    let m = crate::peers::node_json(
        Command::new("node")
            .arg(web.join("bench_render.mjs"))
            .args([results.to_string(), rows.to_string()])
            .env("TOOLWIRE_BIN", &ctx.toolwire_bin),
        "tests/web/bench_render.mjs",
    )?;
    let figure = |key: &str, part: &str| m[key][part].as_f64().unwrap_or(f64::NAN);
    let row = |path: &str, label: String, key: &str, statics: &str, target: Target| {
        Row::new(path, size, label, Unit::Ms, figure(key, "total"))
            .note(format!(
                "{:.0} ms of it after the session's data arrived",
                figure(key, "page")
            ))
            .floor(
                "the same text as a static HTML page, no script",
                figure(statics, "total"),
            )
            .target(target)
    };
    Ok(vec![
        row(
            "web app first render of a 1,000-result session in Chromium (navigation to drawn, best of 5)",
            format!("{} results", thousands(results as f64)),
            "results",
            "resultsStatic",
            // Issue 25 (and 27) ask for at most 1.5× the same text as a static page at
            // 1,000 results. On 2026-11-24: 1.20-1.55× on a quiet machine, so this was
            // judged at 1.8× for a while. On 2026-11-25, with the first chunk laid out for
            // real before the mark and 3 cards drawn before the first layout (not 5; the
            // layout had read squeezed cards and drawn more than the window holds): five
            // runs at load 6-7 gave 1.10×, 1.15×, 1.26×, 1.27×, 1.22× (100-114 ms beside
            // 79-94 ms), the build before it 1.12-1.72× alternating with them. Below
            // 1,000 results the app's fixed start-up dominates the ratio: judged in ms.
            if size >= 1.0 {
                Target::RatioAtMost(1.5)
            } else {
                Target::MsAtMost(1000.0)
            },
        ),
        row(
            "web app first render of a 100,000-row table in Chromium (navigation to drawn, best of 5)",
            format!("{} rows", thousands(rows as f64)),
            "table",
            "tableStatic",
            Target::MsAtMost(1000.0),
        ),
    ])
}
