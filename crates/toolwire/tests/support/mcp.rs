//! What the binary's MCP tests share (`mcp_cli.rs`, `mcp_matrix.rs`): running the binary
//! with no terminal, reading what it printed, and finding a tool in `tools --json`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// The binary with its data in `data`. Stdin is closed: no terminal, as in CI, so a
/// call that needs approval is refused unless `--yes` or the config approves it.
pub fn toolwire(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env("TOOLWIRE_MCP_TIMEOUT", "30s")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

pub fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The session a `call` printed on stderr ("stored in session S (toolwire show S)").
pub fn session_of(out: &Output) -> String {
    let stderr = stderr_of(out);
    stderr
        .split("toolwire show ")
        .nth(1)
        .unwrap_or_else(|| panic!("no session in {stderr}"))
        .trim_end_matches([')', '\n'])
        .to_owned()
}

/// Tool `name` in a `tools --json` (or `GET /api/tools`) list.
pub fn tool_named<'a>(tools: &'a Value, name: &str) -> &'a Value {
    tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {tools}"))
}

/// The keys of a JSON object, in the order they came.
pub fn keys(object: &Value) -> Vec<&str> {
    object
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}
