//! The Node.js peers (scripts/bench-peers): the MCP TypeScript SDK and the Vercel AI SDK
//! doing the same work, run as child processes; each answers one JSON line.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::Value as Json;

use crate::Ctx;

/// Runs a Node.js script (`cmd`, named `what` in errors) and reads its answer: the last
/// line of its output that is a JSON object (the scripts may log before it).
pub(crate) fn node_json(cmd: &mut Command, what: &str) -> anyhow::Result<Json> {
    let out = cmd
        .output()
        .with_context(|| format!("running {what} (Node.js 20+ must be on PATH)"))?;
    if !out.status.success() {
        bail!(
            "{what} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().rfind(|l| l.starts_with('{')).unwrap_or("");
    serde_json::from_str(last)
        .with_context(|| format!("{what} answered no JSON object: {stdout:?}"))
}

/// `node peers.mjs ARGS`: its answer, `{"ms", "peak_rss_kb", ...}`.
pub(crate) fn run(ctx: &Ctx, args: &[&str]) -> anyhow::Result<Json> {
    let dir = ctx.peers()?;
    node_json(
        Command::new("node")
            .arg(dir.join("peers.mjs"))
            .args(args)
            .current_dir(dir),
        &format!("peers.mjs {args:?}"),
    )
}

/// The peer's best time, in ms.
pub(crate) fn ms(answer: &Json) -> anyhow::Result<f64> {
    answer["ms"].as_f64().context("the peer's answer has no ms")
}

/// The peer's `peers.mjs` path, for whole-process runs.
pub(crate) fn script(ctx: &Ctx) -> anyhow::Result<String> {
    Ok(ctx.peers()?.join("peers.mjs").display().to_string())
}

pub(crate) fn path_str(path: &Path) -> String {
    path.display().to_string()
}
