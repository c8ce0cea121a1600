//! What the binary's MCP tests share (`mcp_cli.rs`, `mcp_matrix.rs`, the gateway's): running the binary
//! with no terminal, reading what it printed, and finding a tool in `tools --json`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The binary with its data in `data`. Stdin is closed: no terminal, as in CI, so a
/// call that needs approval is refused unless `--yes` or the config approves it.
pub(crate) fn toolwire(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env("TOOLWIRE_MCP_TIMEOUT", "30s")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

pub(crate) fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(crate) fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The session a `call` printed on stderr ("stored in session S (toolwire show S)").
pub(crate) fn session_of(out: &Output) -> String {
    let stderr = stderr_of(out);
    stderr
        .split("toolwire show ")
        .nth(1)
        .unwrap_or_else(|| panic!("no session in {stderr}"))
        .trim_end_matches([')', '\n'])
        .to_owned()
}

/// Tool `name` in a `tools --json` (or `GET /api/tools`) list.
pub(crate) fn tool_named<'a>(tools: &'a Value, name: &str) -> &'a Value {
    tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {tools}"))
}

/// The keys of a JSON object, in the order they came.
pub(crate) fn keys(object: &Value) -> Vec<&str> {
    object
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

/// `toolwire gateway --http 127.0.0.1:0` with its data in `data`, its URL (said on
/// stderr, which a thread keeps draining) and the token its callers must send (made in
/// `data`'s `gateway-token`).
pub(crate) fn spawn_http_gateway(
    data: &Path,
    gateway: &[&str],
) -> (super::peers::Child, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args(["--data-dir", data.to_str().unwrap()])
        .args(["gateway", "--host", "claude-code", "--http", "127.0.0.1:0"])
        .args(gateway)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let child = super::peers::Child(child);
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the gateway ended without listening"
        );
        if let Some(url) = line.trim().strip_prefix("toolwire gateway: listening on ") {
            let url = url.to_owned();
            std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
            return (child, url, http_token(data));
        }
    }
}

/// The token of the HTTP gateway on `data`, as a host's entry carries it.
pub(crate) fn http_token(data: &Path) -> String {
    let text = std::fs::read_to_string(data.join("gateway-token")).unwrap();
    text.trim().to_owned()
}

/// The sessions in `data` (`toolwire sessions --json`) and the first one's messages
/// (`toolwire show --json`), as a person would read them after the host's calls.
pub(crate) fn first_session(data: &Path) -> (Value, Value) {
    let out = toolwire(data, &["sessions", "--json"]);
    let sessions: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = sessions[0]["id"].as_str().unwrap();
    let shown = toolwire(data, &["show", id, "--json"]);
    let messages: Value = serde_json::from_slice(&shown.stdout).unwrap();
    (sessions, messages)
}

/// Runs an MCP client script to its end; its stdout, once it succeeded (else its output
/// in the failure).
pub(crate) fn client_output(client: &mut Command) -> Vec<u8> {
    let out = client.output().expect("the client runs");
    assert!(
        out.status.success(),
        "client failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// [`client_output`] read as one JSON value a line.
pub(crate) fn client_lines(client: &mut Command) -> Vec<Value> {
    String::from_utf8(client_output(client))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A program of tests/mcp-hosts (`npm ci --prefix tests/mcp-hosts`, as .ci/run does), or
/// `None` after saying why; missing under CI is a failure.
pub(crate) fn mcp_host(bin: &str) -> Option<std::path::PathBuf> {
    let path = super::peers::peers_dir()
        .join("../mcp-hosts/node_modules/.bin")
        .join(bin);
    if path.exists() {
        return Some(path);
    }
    let why = format!(
        "{} is missing: run `npm ci --prefix tests/mcp-hosts`",
        path.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{why}");
    eprintln!("SKIPPED: {why}");
    None
}
