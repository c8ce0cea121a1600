//! The workloads' inputs, generated deterministically so every run (and every peer)
//! measures the same bytes.

use base64::Engine as _;
use serde_json::json;

/// Incompressible filler bytes behind a PNG signature (xorshift: cheap, deterministic).
pub(crate) fn png(len: usize, seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 8);
    out.extend_from_slice(b"\x89PNG\r\n\x1a\n");
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// An MCP `CallToolResult` with a caption and one PNG of `bytes` bytes, base64 inline.
pub(crate) fn image_result(bytes: usize) -> Vec<u8> {
    let b64 = base64::engine::general_purpose::STANDARD.encode(png(bytes, 1));
    json!({
        "content": [
            {"type": "text", "text": "Here is the screenshot:"},
            {"type": "image", "data": b64, "mimeType": "image/png"}
        ]
    })
    .to_string()
    .into_bytes()
}

/// `n` small MCP text results.
pub(crate) fn small_results(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            format!(r#"{{"content":[{{"type":"text","text":"result {i}: 3 files changed, 12 insertions(+)"}}]}}"#)
                .into_bytes()
        })
        .collect()
}

/// One coding-agent turn's tool output: a build log ending in the error that matters.
pub(crate) fn build_log(turn: usize) -> String {
    format!(
        "{}error[E0308]: mismatched types (turn {turn})\n",
        "   Compiling toolwire v0.1.0\n".repeat(40)
    )
}

/// A conversation of `turns` turns, two calls each, in the neutral form both toolwire
/// and the AI SDK peer build their messages from (scripts/bench-peers/README.md).
pub(crate) fn conversation(turns: usize) -> serde_json::Value {
    let turns: Vec<_> = (0..turns)
        .map(|t| {
            let calls: Vec<_> = (0..2)
                .map(|i| {
                    json!({"id": format!("c{t}_{i}"), "name": "bash", "input": {"cmd": "cargo build"},
                           "output": build_log(t), "is_error": false})
                })
                .collect();
            json!({"user": format!("Fix the build, step {t}."), "assistant": format!("Step {t}."), "calls": calls})
        })
        .collect();
    json!({"system": "You are a coding agent.", "turns": turns})
}
