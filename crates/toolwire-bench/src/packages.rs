//! The Python and npm packages (bindings/): their `normalize` beside each language's MCP
//! SDK, and their boundary beside its floor: the same call in Rust plus the language's
//! own parse of the result, or for a 20 MB string one copy of it each way.
//!
//! The payloads are the Rust rows' (payloads.rs), written to files that bindings/python/
//! bench.py and bindings/node/bench.js read before timing; each answers one JSON line.

use std::hint::black_box;
use std::path::Path;
use std::process::Command;

use anyhow::Context;
use serde_json::Value as Json;

use crate::measure::interleaved;
use crate::payloads;
use crate::peers::node_json;
use crate::report::{Row, Target, Unit, thousands};
use crate::{Ctx, paths};

const SMALL: usize = 10_000;
const ROUNDS: usize = 7;

/// What the Rust engine costs for the calls the packages make: `toolwire_bindings`'
/// normalize is `payload_call` then `normalize_value` on a value the binding built, so
/// that is timed here on values already built (their clone, timed alone, taken off).
fn rust_ms(values: &[Json], rounds: usize) -> f64 {
    let (clone, both) = interleaved(
        rounds,
        || {
            for v in values {
                drop(black_box(v.clone()));
            }
        },
        || {
            for v in values {
                let raw = v.clone();
                let call = toolwire_normalize::payload_call(&raw, None, None);
                drop(black_box(toolwire_normalize::normalize_value(raw, &call)));
            }
        },
    );
    (both - clone).max(0.0)
}

fn field(answer: &Json, part: &str, name: &str) -> anyhow::Result<f64> {
    answer[part][name]
        .as_f64()
        .with_context(|| format!("the package bench's answer has no {part}.{name}: {answer}"))
}

/// One language's rows from its bench script's `answer`; `parse` names the language's
/// own JSON parse, `peer` its SDK's validation, `peer_target` the ratio the issue sets.
struct Language {
    name: &'static str,
    parse: &'static str,
    parse_key: &'static str,
    peer: &'static str,
    peer_target: f64,
    behind_small: &'static str,
    behind_image: &'static str,
}

fn rows_of(
    lang: &Language,
    answer: &Json,
    rust_small: f64,
    rust_image: f64,
) -> anyhow::Result<Vec<Row>> {
    let n = answer["small"]["n"].as_f64().unwrap_or(0.0);
    let small_label = format!("{} results", thousands(n));
    let chars = answer["image"]["chars"].as_f64().unwrap_or(0.0);
    let image_label = format!("{:.1} MB", chars / 1024.0 / 1024.0);
    let (small, image) = (
        field(answer, "small", "ours_ms")?,
        field(answer, "image", "ours_ms")?,
    );
    let name = lang.name;
    let (small_peer, image_peer) = (
        field(answer, "small", "peer_ms")?,
        field(answer, "image", "peer_ms")?,
    );
    let (parse, copy) = (
        field(answer, "small", lang.parse_key)?,
        field(answer, "image", "copy_ms")?,
    );
    // What any answer in plain values costs by itself, beside the peer: the target is
    // judged against the peer (the issue's), and these show where its floor is.
    Ok(vec![
        Row::new(
            &format!("{name} normalize of small MCP results, beside the {name} MCP SDK"),
            1.0,
            small_label.clone(),
            Unit::Ms,
            small,
        )
        .note(format!(
            "{} of each result alone, the least a ToolResult handed back as plain values \
             costs: {parse:.1} ms, {:.1}× the peer",
            lang.parse,
            parse / small_peer
        ))
        .peer(lang.peer, small_peer)
        .target(Target::RatioAtMost(lang.peer_target))
        .behind(lang.behind_small),
        Row::new(
            &format!("{name} normalize of a 20 MB image result, beside the {name} MCP SDK"),
            1.0,
            image_label.clone(),
            Unit::Ms,
            image,
        )
        .note(format!(
            "the engine's own check of the base64 (the call in Rust) {rust_image:.1} ms and \
             one copy of the string each way {copy:.1} ms: {:.1}× the peer by themselves",
            (rust_image + copy) / image_peer
        ))
        .peer(lang.peer, image_peer)
        .target(Target::RatioAtMost(lang.peer_target))
        .behind(lang.behind_image),
        Row::new(
            &format!("{name} boundary: normalize of small results, each a call"),
            1.0,
            small_label,
            Unit::Ms,
            small,
        )
        .floor(
            &format!(
                "the same calls in Rust {rust_small:.1} ms + {} of each result",
                lang.parse
            ),
            rust_small + field(answer, "small", lang.parse_key)?,
        )
        .target(Target::RatioAtMost(2.0)),
        Row::new(
            &format!("{name} boundary: a 20 MB base64 string in and out"),
            1.0,
            image_label,
            Unit::Ms,
            image,
        )
        .floor(
            &format!("the same call in Rust {rust_image:.1} ms + one copy of the string each way"),
            rust_image + field(answer, "image", "copy_ms")?,
        )
        .target(Target::RatioAtMost(1.5)),
    ])
}

const PYTHON: Language = Language {
    name: "Python",
    parse: "json.loads",
    parse_key: "loads_ms",
    peer: "CallToolResult.model_validate (pydantic-core)",
    peer_target: 1.0,
    behind_small: "",
    behind_image: "The SDK's model keeps `data` as the str it was given: pydantic checks its \
        type, not its bytes (a few microseconds for 20 MB). toolwire checks the base64 (a bad \
        image is refused with a clear message, never stored) and hands back a ToolResult, so \
        it reads the 20 MB at least once: the check alone, in Rust, is hundreds of times the \
        peer (the note), and no package that checks the bytes can be ahead of a check that \
        reads none of them. Held instead: one copy each way (the boundary row).",
};

const NODE: Language = Language {
    name: "Node",
    parse: "JSON.parse",
    parse_key: "parse_ms",
    peer: "CallToolResultSchema.parse (zod)",
    peer_target: 0.5,
    behind_small: "zod walks an object V8 already built, in V8 (under 0.1 µs a result), and \
        hands the same object back. A ToolResult is a new value, and building it in V8 costs \
        at least what JSON.parse of it costs (the note: several times the peer alone), \
        whichever way it is built (values made one by one from Rust measured slower still); \
        a batch of results in one call would save the crossing, not that. Held instead: the \
        boundary row (at most 2× the same call in Rust plus that parse).",
    behind_image: "zod checks `data` with atob and keeps the string; toolwire checks the base64 \
        and returns a ToolResult, so the string is copied into Rust (napi has no way to read \
        a V8 string without copying it) and back out. Even handing the caller's own string \
        back, the copy in (half the note's copy) and the check are more than half the peer \
        by themselves. Held instead: one copy each way (the boundary row).",
};

/// Both packages at the bench's sizes; needs `--python` (a Python with the package and
/// `mcp`), the npm package built in bindings/node, and tests/mcp's SDK. scripts/bench's
/// full run builds both (release) and passes the Python.
pub(crate) fn run(ctx: &Ctx, _size: f64) -> anyhow::Result<Vec<Row>> {
    let python = ctx
        .python
        .as_deref()
        .context("needs --python: a Python with the toolwire package and mcp installed")?;
    let small: Vec<Vec<u8>> = payloads::small_results(SMALL);
    let image = payloads::image_result(paths::mb(1.0, 15.0));
    let small_file = ctx.tmp.path().join("packages-small.jsonl");
    let image_file = ctx.tmp.path().join("packages-image.json");
    std::fs::write(&small_file, small.join(&b'\n'))?;
    std::fs::write(&image_file, &image)?;
    let small_values = small
        .iter()
        .map(|p| serde_json::from_slice(p))
        .collect::<Result<Vec<Json>, _>>()?;
    let image_value: Json = serde_json::from_slice(&image)?;
    let rust_small = rust_ms(&small_values, ROUNDS);
    let rust_image = rust_ms(std::slice::from_ref(&image_value), ROUNDS);
    let files = |cmd: &mut Command| {
        cmd.arg(&small_file)
            .arg(&image_file)
            .arg(ROUNDS.to_string());
    };

    let mut py = Command::new(python);
    py.arg(ctx.root.join("bindings/python/bench.py"));
    files(&mut py);
    let py = node_json(&mut py, "bindings/python/bench.py")?;

    let sdk = ctx
        .root
        .join("tests/mcp/node_modules/@modelcontextprotocol/sdk/dist/cjs/types.js");
    let mut node = Command::new("node");
    node.arg(ctx.root.join("bindings/node/bench.js"));
    files(&mut node);
    node.arg(exists(&sdk)?);
    let node = node_json(&mut node, "bindings/node/bench.js")?;

    let mut rows = rows_of(&PYTHON, &py, rust_small, rust_image)?;
    rows.extend(rows_of(&NODE, &node, rust_small, rust_image)?);
    Ok(rows)
}

fn exists(path: &Path) -> anyhow::Result<&Path> {
    anyhow::ensure!(
        path.exists(),
        "{} not found (npm ci --prefix tests/mcp)",
        path.display()
    );
    Ok(path)
}
