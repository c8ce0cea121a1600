//! The Node.js peers (scripts/bench-peers): the MCP TypeScript SDK and the Vercel AI SDK
//! doing the same work, run as child processes; each answers one JSON line.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::Value as Json;

use crate::Ctx;

/// `node peers.mjs ARGS`: its answer, `{"ms", "peak_rss_kb", ...}`.
pub fn run(ctx: &Ctx, args: &[&str]) -> anyhow::Result<Json> {
    let dir = ctx.peers()?;
    let out = Command::new("node")
        .arg(dir.join("peers.mjs"))
        .args(args)
        .current_dir(dir)
        .output()
        .context("running node (Node.js 20+ must be on PATH)")?;
    if !out.status.success() {
        bail!(
            "peers.mjs {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    serde_json::from_slice(&out.stdout).context("peers.mjs answered something that is not JSON")
}

/// The peer's best time, in ms.
pub fn ms(answer: &Json) -> anyhow::Result<f64> {
    answer["ms"].as_f64().context("the peer's answer has no ms")
}

/// The peer's `peers.mjs` path, for whole-process runs.
pub fn script(ctx: &Ctx) -> anyhow::Result<String> {
    Ok(ctx.peers()?.join("peers.mjs").display().to_string())
}

pub fn path_str(path: &Path) -> String {
    path.display().to_string()
}
