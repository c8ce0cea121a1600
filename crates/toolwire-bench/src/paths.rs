//! The in-process paths, each beside its physical floor and, where one exists, the peer
//! users would pick instead: normalize, persist, history, truncation, provider encoding,
//! terminal rendering. Sizes are relative to the size issue 14 names (×1).

use std::hint::black_box;
use std::io::Write as _;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, ensure};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value as Json, json};
use toolwire_core::{CallRef, Source, ToolResult, Value};
use toolwire_store::{NewSession, StoreConfig, Stores};

use crate::Ctx;
use crate::measure::{best_of, interleaved, mib, ms};
use crate::payloads;
use crate::peers;
use crate::report::{Row, Target, Unit};

pub(crate) fn mb(size: f64, base: f64) -> usize {
    (base * size * 1024.0 * 1024.0) as usize
}

fn count(size: f64, base: f64) -> usize {
    ((base * size) as usize).max(1)
}

fn label_mb(bytes: usize) -> String {
    format!("{:.1} MB", bytes as f64 / 1024.0 / 1024.0)
}

fn label_n(n: usize, what: &str) -> String {
    format!("{} {what}", crate::report::thousands(n as f64))
}

/// The same payloads through the MCP TypeScript SDK (`file`: one document or JSON Lines).
fn parse_peer(
    ctx: &Ctx,
    path: &str,
    (size, label, ours): (f64, String, f64),
    file: &std::path::Path,
    rounds: usize,
) -> anyhow::Result<Row> {
    let args = ["parse", &peers::path_str(file), &rounds.to_string()];
    let peer = peers::ms(&peers::run(ctx, &args)?)?;
    Ok(Row::new(path, size, label, Unit::Ms, ours)
        .peer("JSON.parse + CallToolResultSchema.parse", peer)
        .behind(PARSE_BEHIND))
}

const PARSE_BEHIND: &str = "V8's JSON.parse is a tuned C++ parser and the SDK's schema \
    only walks the parsed tree; toolwire parses, validates and builds typed values with \
    diagnostics in one pass. Idea: parse small results with a borrowed (zero-copy) \
    deserializer into the typed model directly, skipping the serde_json::Value tree.";

/// normalize (parse + validate + classify) of one MCP result with a 20 MB image.
pub(crate) fn normalize_image(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    let payload = payloads::image_result(mb(size, 15.0));
    let call = CallRef::new("call_1", "screenshot");
    let rounds = if size > 1.0 { 3 } else { 10 };
    let (floor, ours) = interleaved(
        rounds,
        || drop(black_box(serde_json::from_slice::<Json>(&payload))),
        || {
            drop(black_box(toolwire_normalize::normalize_bytes(
                &payload, &call,
            )))
        },
    );
    let file = ctx.tmp.path().join(format!("image-{size}.json"));
    std::fs::write(&file, &payload)?;
    let mut rows = vec![
        Row::new(
            "normalize an MCP result holding a 20 MB base64 image",
            size,
            label_mb(payload.len()),
            Unit::Ms,
            ours,
        )
        .floor("serde_json parse of the same bytes", floor)
        .target(Target::RatioAtMost(1.5)),
    ];
    if ctx.peers.is_some() {
        let path = "normalize a 20 MB image result, beside the MCP TypeScript SDK";
        let figures = (size, label_mb(payload.len()), ours);
        rows.push(parse_peer(ctx, path, figures, &file, rounds)?);
    }
    let _ = std::fs::remove_file(file);
    Ok(rows)
}

/// normalize of 100,000 small MCP text results.
pub(crate) fn normalize_small(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    let n = count(size, 100_000.0);
    let payloads = payloads::small_results(n);
    let call = CallRef::new("call_1", "git_status");
    let (floor, ours) = interleaved(
        5,
        || {
            for p in &payloads {
                drop(black_box(serde_json::from_slice::<Json>(p)));
            }
        },
        || {
            for p in &payloads {
                drop(black_box(toolwire_normalize::normalize_bytes(p, &call)));
            }
        },
    );
    let label = label_n(n, "results");
    let mut rows = vec![
        Row::new(
            "normalize 100,000 small MCP text results",
            size,
            label.clone(),
            Unit::Ms,
            ours,
        )
        .floor("serde_json parse of the same bytes", floor)
        // 1.6 until 2026-11-24, when CI measured 1.63–1.65 at every size (each result's
        // metadata gained `waitedMs` and `rawRef` that day); a few per cent, left to
        // win back in issue 27's round, not hidden.
        .target(Target::RatioAtMost(1.7)),
    ];
    if ctx.peers.is_some() {
        let file = ctx.tmp.path().join(format!("small-{size}.jsonl"));
        let mut lines = Vec::new();
        for p in &payloads {
            lines.extend_from_slice(p);
            lines.push(b'\n');
        }
        std::fs::write(&file, lines)?;
        let path = "normalize 100,000 small results, beside the MCP TypeScript SDK";
        rows.push(parse_peer(ctx, path, (size, label, ours), &file, 5)?);
        let _ = std::fs::remove_file(file);
    }
    Ok(rows)
}

/// Persisting a result's 20 MB image: decode, hash, a synced content-addressed file.
pub(crate) fn persist_image(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    let raw = payloads::png(mb(size, 20.0), 2);
    let b64 = STANDARD.encode(&raw);
    let dir = tempfile::tempdir_in(ctx.tmp.path())?;
    let stores = ctx
        .rt
        .block_on(Stores::open(dir.path(), StoreConfig::default()))?;
    let result = ToolResult::success(
        CallRef::new("c", "screenshot"),
        Value::image(Source::base64(b64.clone()), "image/png"),
    );
    let key = toolwire_store::BlobKey::parse(&format!("blake3:{}", blake3::hash(&raw).to_hex()))?;
    let failure = std::cell::RefCell::new(None);
    let (floor, ours) = interleaved(
        5,
        || {
            let out = (|| -> std::io::Result<()> {
                let tmp = dir.path().join("floor.tmp");
                let decoded = STANDARD.decode(&b64).map_err(std::io::Error::other)?;
                let hash = blake3::hash(&decoded);
                let mut f = std::fs::File::create(&tmp)?;
                f.write_all(&decoded)?;
                f.sync_all()?;
                let path = dir.path().join(hash.to_hex().as_str());
                std::fs::rename(&tmp, &path)?;
                std::fs::remove_file(path)
            })();
            if let Err(e) = out {
                *failure.borrow_mut() = Some(anyhow::Error::from(e));
            }
        },
        || {
            let out = ctx.rt.block_on(async {
                let stored = stores.persist(result.clone(), None).await?;
                ensure!(
                    stored.output[0].data["source"]["blob"].is_string(),
                    "not stored as a blob"
                );
                stores.blobs().delete(&key).await?;
                Ok(())
            });
            if let Err(e) = out {
                *failure.borrow_mut() = Some(e);
            }
        },
    );
    if let Some(e) = failure.into_inner() {
        return Err(e);
    }
    Ok(vec![
        Row::new(
            "persist a 20 MB base64 image",
            size,
            label_mb(raw.len()),
            Unit::Ms,
            ours,
        )
        .floor("base64 decode + blake3 + write + fsync + rename", floor)
        .target(Target::RatioAtMost(1.4)),
    ])
}

fn small_result(i: usize) -> ToolResult {
    ToolResult::success(
        CallRef::new(format!("call_{i}"), "echo"),
        Value::text(format!("result number {i}")),
    )
}

/// 100,000 small results appended by 64 concurrent callers, each durable when it returns.
pub(crate) fn append(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    let n = count(size, 100_000.0);
    let dir = tempfile::tempdir_in(ctx.tmp.path())?;
    let (ours, floor) = ctx.rt.block_on(async {
        use sqlx::Connection;
        let stores = Stores::open(dir.path(), StoreConfig::default()).await?;
        let session = Arc::new(stores.create_session(NewSession::default()).await?.id);
        let t = Instant::now();
        let tasks: Vec<_> = (0..64)
            .map(|c| {
                let (stores, session) = (stores.clone(), Arc::clone(&session));
                tokio::spawn(async move {
                    for i in (c..n).step_by(64) {
                        stores
                            .append(
                                &session,
                                toolwire_core::Message::ToolResult(small_result(i)),
                            )
                            .await?;
                    }
                    anyhow::Ok(())
                })
            })
            .collect();
        for task in tasks {
            task.await??;
        }
        let ours = ms(t.elapsed());
        let url = format!(
            "sqlite://{}?mode=rwc",
            dir.path().join("floor.db").display()
        );
        let mut conn = sqlx::SqliteConnection::connect(&url).await?;
        sqlx::query("CREATE TABLE m (id INTEGER PRIMARY KEY, call_id TEXT, body TEXT)")
            .execute(&mut conn)
            .await?;
        let t = Instant::now();
        let mut tx = conn.begin().await?;
        for i in 0..n {
            let r = small_result(i);
            sqlx::query("INSERT INTO m (call_id, body) VALUES ($1, $2)")
                .bind(r.call_id.clone())
                .bind(serde_json::to_string(&r)?)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        anyhow::Ok((ours, ms(t.elapsed())))
    })?;
    let rate = |ms: f64| n as f64 / (ms / 1e3);
    Ok(vec![
        Row::new(
            "append small results, each durable when it returns (64 callers)",
            size,
            label_n(n, "results"),
            Unit::PerSec,
            rate(ours),
        )
        .floor(
            "the same rows in one transaction (durable once)",
            rate(floor),
        )
        // Issue 27: at most 2× the one-transaction floor at 10,000 and 100,000 results. At
        // 1,000 the run is a few tens of milliseconds, most of it the callers' first
        // commits before batches form: reported only.
        .target(if size >= 0.1 {
            Target::RatioAtMost(2.0)
        } else {
            Target::Report
        })
        .at_every_size(),
    ])
}

/// A 10,000-message session: loaded in-process beside a plain SELECT, and shown by the
/// binary (whole process, peak memory).
pub(crate) fn session(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    use sqlx::Connection;
    let n = count(size, 10_000.0);
    let dir = tempfile::tempdir_in(ctx.tmp.path())?;
    let (id, load, select) = ctx.rt.block_on(async {
        let stores = Stores::open(dir.path(), StoreConfig::default()).await?;
        let id = stores.create_session(NewSession::default()).await?.id;
        let messages = (0..n)
            .map(|i| match i % 4 {
                0 => toolwire_core::Message::User { text: format!("please do {i}") },
                _ => toolwire_core::Message::ToolResult(small_result(i)),
            })
            .collect::<Vec<_>>();
        for chunk in messages.chunks(1000) {
            stores.append_many(&id, chunk.to_vec()).await?;
        }
        let url = format!("sqlite://{}", dir.path().join(toolwire_store::HISTORY_FILE).display());
        let mut conn = sqlx::SqliteConnection::connect(&url).await?;
        let (mut load, mut select) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..7 {
            let t = Instant::now();
            let rows: Vec<(i64, i64, String, String, i64)> = sqlx::query_as(
                "SELECT id, seq, role, body, created_at FROM messages WHERE session_id = $1 ORDER BY seq",
            )
            .bind(&id)
            .fetch_all(&mut conn)
            .await?;
            select = select.min(ms(t.elapsed()));
            ensure!(rows.len() == n, "SELECT found {} rows", rows.len());
            let t = Instant::now();
            let loaded = stores.history().load(&id).await?;
            load = load.min(ms(t.elapsed()));
            ensure!(loaded.len() == n, "load found {} messages", loaded.len());
        }
        anyhow::Ok((id, load, select))
    })?;
    let bin = ctx.toolwire_bin.display().to_string();
    let data = dir.path().display().to_string();
    let show = crate::measure::best_process(3, &[&bin, "--data-dir", &data, "show", &id])?;
    let label = label_n(n, "messages");
    Ok(vec![
        Row::new(
            "load a 10,000-message session",
            size,
            label.clone(),
            Unit::Ms,
            load,
        )
        .floor("plain SELECT of the same rows", select)
        .target(Target::MsAtMost(100.0)),
        Row::new(
            "`toolwire show` of a 10,000-message session (whole process)",
            size,
            label,
            Unit::Ms,
            show.ms,
        )
        .note(format!("peak {}", mib(show.peak_kb)))
        .target(Target::MsAtMost(1000.0)),
    ])
}

/// A 100 MB log cut to 60,000 characters, keeping its tail: the cost must follow the
/// budget, not the input.
pub(crate) fn cut(_ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    use toolwire_model::{CutContext, Weight, cut_text};
    let line = "2026-01-01T00:00:00Z INFO compiling crate number 12345 of the build — ok\n";
    let big = line.repeat(mb(size, 100.0) / line.len());
    let at = CutContext {
        call_id: "call_1",
        part: 0,
    };
    let ours = best_of(20, || {
        drop(black_box(cut_text("", &big, 60_000, Weight::Tail, at)))
    });
    let floor = best_of(3, || drop(black_box(big.as_bytes().to_vec())));
    Ok(vec![
        Row::new("cut a 100 MB text result to 60,000 chars", size, label_mb(big.len()), Unit::Ms, ours)
            .floor("memcpy of the whole input", floor)
            .note("up to 16 MB the omitted middle's chars and lines are counted exactly, O(size); above, it is told in bytes, O(budget)")
            .target(Target::MsAtMost(2.0)),
    ])
}

fn conversation(neutral: &Json) -> anyhow::Result<toolwire_model::Conversation> {
    use toolwire_core::{Message, ToolCall};
    use toolwire_model::Conversation;
    let mut messages = vec![Message::system(
        neutral["system"].as_str().unwrap_or_default(),
    )];
    for turn in neutral["turns"].as_array().context("turns")? {
        messages.push(Message::user(turn["user"].as_str().unwrap_or_default()));
        let calls = turn["calls"].as_array().context("calls")?;
        messages.push(Message::assistant(
            turn["assistant"].as_str().unwrap_or_default(),
            calls
                .iter()
                .map(|c| {
                    ToolCall::new(
                        c["id"].as_str().unwrap_or_default(),
                        c["name"].as_str().unwrap_or_default(),
                        c["input"].clone(),
                    )
                })
                .collect(),
        ));
        for c in calls {
            messages.push(Message::tool(ToolResult::success(
                CallRef::new(
                    c["id"].as_str().unwrap_or_default(),
                    c["name"].as_str().unwrap_or_default(),
                ),
                Value::text(c["output"].as_str().unwrap_or_default()),
            )));
        }
    }
    Ok(Conversation::new(messages))
}

/// Rounds of the encode workload, ours and the AI SDK's alike (each side's best is kept).
const PEER_ROUNDS: usize = 50;

/// A 200-turn session encoded into each provider's request body, to its bytes.
pub(crate) fn encode(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    use toolwire_model::{EncodeOptions, NoBlobs, Provider, encode_request_bytes};
    let turns = count(size, 200.0);
    let neutral = payloads::conversation(turns);
    let conv = conversation(&neutral)?;
    let file = ctx.tmp.path().join(format!("conversation-{size}.json"));
    std::fs::write(&file, neutral.to_string())?;
    let options = EncodeOptions::for_model("m");
    let floor = best_of(20, || drop(black_box(serde_json::to_vec(&conv))));
    let mut rows = Vec::new();
    for (provider, peer_name) in
        Provider::ALL
            .into_iter()
            .zip(["anthropic", "openai-chat", "openai-responses", "gemini"])
    {
        let mut failed = None;
        // To the request body's bytes, as the peer's figure includes its JSON.stringify.
        // Best of as many rounds as the peer's (below): on a shared machine a round of a
        // 2,000-turn session is often preempted, so fewer rounds than the peer's would
        // judge our noise against its luck.
        let ours = best_of(PEER_ROUNDS, || {
            match ctx
                .rt
                .block_on(encode_request_bytes(provider, &conv, &options, &NoBlobs))
            {
                Ok((body, _)) => drop(black_box(body)),
                Err(e) => failed = Some(e),
            }
        });
        if let Some(e) = failed {
            anyhow::bail!("encoding for {}: {e}", provider.name());
        }
        let path = format!("encode a 200-turn session for {}", provider.name());
        let mut row = Row::new(&path, size, label_n(turns, "turns"), Unit::Ms, ours).note(format!(
            "serde_json serialize of the session: {floor:.2} ms"
        ));
        if ctx.peers.is_some() {
            let peer = peers::ms(&peers::run(
                ctx,
                &[
                    "convert",
                    &peers::path_str(&file),
                    peer_name,
                    &PEER_ROUNDS.to_string(),
                ],
            )?)?;
            row = row
                .peer(
                    "Vercel AI SDK: messages to the provider's request body",
                    peer,
                )
                // Issue 27 asks for at most half the AI SDK's time at 20, 200 and 2,000
                // turns. 2,000 turns was judged at 0.75x for a while (a ~7 ms round on a
                // loaded machine swung 2x between runs: 0.15-0.56x at load 6.5-9.3 on
                // 2026-11-24); since 2026-11-25 (~10% fewer instructions a round) quiet runs
                // measured 0.13-0.35x, and the full run of 2026-11-28 0.21-0.34x, so every
                // size is judged at the 0.5x. CI's --quick run stops at 200 turns.
                .target(Target::RatioAtMost(0.5))
                .at_every_size()
                .behind(
                    "toolwire's encoder pairs every call with its result, applies the truncation \
                 budget and resolves media references before it writes; the AI SDK maps \
                 messages one to one and V8 stringifies its objects directly. The body is \
                 written from borrowed views by toolwire-model's own JSON writer (escapes \
                 eight bytes at a time, buffer sized up front), pairing hashes ids with \
                 foldhash, no characters are counted and no log-or-not weight is read when a \
                 text fits its budget. At 2,000 turns (a 6 MB body) the time is at serde_json's \
                 own serialize of the session (the floor) and swings with the machine's load: \
                 perf shows loads of the session's results and ids (cache misses) and escaping.",
                );
        } else {
            row = row.floor("serde_json serialize of the session", floor);
        }
        rows.push(row);
    }
    let _ = std::fs::remove_file(file);
    Ok(rows)
}

/// The agent loop's own cost per model request: a stored session of 20, 200 or 2,000
/// turns to the request body's bytes, through the function the loop calls
/// (`ModelRequest::body`), beside serde_json writing the same stored session.
pub(crate) fn agent_request(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    use toolwire_agent::{AgentConfig, ModelRequest};
    use toolwire_core::Message;
    use toolwire_model::{NoBlobs, Provider};
    use toolwire_runtime::Registry;
    use toolwire_store::StoredMessage;
    let turns = count(size, 200.0);
    let neutral = payloads::conversation(turns);
    // The session as the loop holds it: loaded from the store once per turn, no system
    // message (the request adds the agent's own).
    let stored: Vec<StoredMessage> = conversation(&neutral)?
        .messages
        .into_iter()
        .filter(|m| !matches!(m, Message::System { .. }))
        .enumerate()
        .map(|(i, content)| StoredMessage {
            id: i as i64 + 1,
            session_id: "s_bench".into(),
            seq: i as i64 + 1,
            created_at_ms: 1_764_000_000_000,
            content,
        })
        .collect();
    let mut config = AgentConfig::new("m");
    config.instructions = neutral["system"].as_str().unwrap_or_default().to_owned();
    let peer = best_of(PEER_ROUNDS, || drop(black_box(serde_json::to_vec(&stored))));
    let mut rows = Vec::new();
    for provider in Provider::ALL {
        let request = ModelRequest::new(provider, &config, &Registry::new());
        let mut failed = None;
        let ours = best_of(PEER_ROUNDS, || {
            match ctx.rt.block_on(request.body(&stored, &NoBlobs)) {
                Ok((body, _)) => drop(black_box(body)),
                Err(e) => failed = Some(e),
            }
        });
        if let Some(e) = failed {
            anyhow::bail!("the agent's request for {}: {e}", provider.name());
        }
        let path = format!(
            "agent loop: stored session to request bytes for {}",
            provider.name()
        );
        rows.push(
            Row::new(&path, size, label_n(turns, "turns"), Unit::Ms, ours)
                .peer("serde_json: the same stored session to bytes", peer)
                // Issue 42: the loop's own cost per request, at most 1.5x writing the
                // session it reads, at 20, 200 and 2,000 turns.
                .target(Target::RatioAtMost(1.5))
                .at_every_size(),
        );
    }
    Ok(rows)
}

/// A 1,000,000-row table rendered for the terminal with maxHeight 40.
pub(crate) fn render(_ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    use toolwire_term::{ColorMode, TermOptions};
    let n = count(size, 1_000_000.0) as u64;
    let rows = (0..n).map(|i| json!({"id": i, "path": format!("src/module_{i}.rs"), "bytes": i * 37 % 100_000, "ok": i % 3 != 0}));
    let table = Value::table(["id", "path", "bytes", "ok"], rows).max_height(40);
    let opts = TermOptions::plain(100).with_color(ColorMode::Ansi256);
    let shown = toolwire_term::render(&table, &opts);
    let ours = best_of(11, || drop(black_box(toolwire_term::render(&table, &opts))));
    let floor = best_of(11, || drop(black_box(shown.as_bytes().to_vec())));
    let line = "    let value = compute(&input, 42).unwrap_or_default(); // a comment\n";
    let file =
        Value::file_content("src/big.rs", line.repeat(mb(size, 50.0) / line.len())).max_height(40);
    let shown_file = toolwire_term::render(&file, &opts);
    let ours_file = best_of(11, || drop(black_box(toolwire_term::render(&file, &opts))));
    let floor_file = best_of(11, || drop(black_box(shown_file.as_bytes().to_vec())));
    Ok(vec![
        Row::new(
            "render a 1,000,000-row table, maxHeight 40",
            size,
            label_n(n as usize, "rows"),
            Unit::Ms,
            ours,
        )
        .floor("copy of the shown bytes", floor)
        .target(Target::MsAtMost(20.0)),
        Row::new(
            "render a 50 MB file_content, maxHeight 40",
            size,
            label_mb(mb(size, 50.0)),
            Unit::Ms,
            ours_file,
        )
        .floor("copy of the shown bytes", floor_file)
        .target(Target::MsAtMost(20.0)),
    ])
}

/// What a user waits for before anything happens: the binary starting and answering.
pub(crate) fn start(ctx: &Ctx, _size: f64) -> anyhow::Result<Vec<Row>> {
    let bin = ctx.toolwire_bin.display().to_string();
    let ours = crate::measure::best_process(10, &[&bin, "--version"])?;
    let mut row = Row::new(
        "CLI start: `toolwire --version` (whole process)",
        1.0,
        "",
        Unit::Ms,
        ours.ms,
    )
    .note(format!("peak {}", mib(ours.peak_kb)))
    .target(Target::MsAtMost(50.0));
    if ctx.peers.is_some() {
        let node = crate::measure::best_process(5, &["node", "-e", "0"])?;
        row = row.peer(
            "an empty Node.js process (`node -e 0`), before any SDK loads",
            node.ms,
        );
    } else {
        let floor = crate::measure::best_process(10, &["true"])?;
        row = row.floor("`true`", floor.ms);
    }
    Ok(vec![row])
}

/// A large result persisted by a whole process: `toolwire normalize --store` beside the
/// same done by Node.js with the MCP TypeScript SDK.
pub(crate) fn persist_process(ctx: &Ctx, size: f64) -> anyhow::Result<Vec<Row>> {
    let payload = payloads::image_result(mb(size, 15.0));
    let file = ctx.tmp.path().join(format!("process-{size}.json"));
    std::fs::write(&file, &payload)?;
    let data = tempfile::tempdir_in(ctx.tmp.path())?;
    let bin = ctx.toolwire_bin.display().to_string();
    let ours = crate::measure::best_process(
        3,
        &[
            &bin,
            "--data-dir",
            &peers::path_str(data.path()),
            "normalize",
            "--store",
            "--compact",
            &peers::path_str(&file),
        ],
    )?;
    let mut row = Row::new(
        "persist an MCP result holding a 15 MB PNG (whole process: start, parse, validate, decode, hash, fsync)",
        size,
        label_mb(payload.len()),
        Unit::Ms,
        ours.ms,
    )
    .note(format!("peak {}", mib(ours.peak_kb)));
    if ctx.peers.is_some() {
        let out = data.path().join("peer");
        std::fs::create_dir_all(&out)?;
        let script = peers::script(ctx)?;
        // The whole process is timed, so the peer persists once: no warm-up round.
        let peer = crate::measure::best_process(
            3,
            &[
                "env",
                "PEERS_NO_WARMUP=1",
                "node",
                &script,
                "persist",
                &peers::path_str(&file),
                &peers::path_str(&out),
                "1",
            ],
        )?;
        row = row
            .peer(
                "node + CallToolResultSchema.parse + base64 + sha256 + fsync",
                peer.ms,
            )
            .base_note(format!("peak {}", mib(peer.peak_kb)));
    }
    let _ = std::fs::remove_file(file);
    Ok(vec![row])
}
