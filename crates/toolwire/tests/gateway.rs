//! `toolwire gateway` driven by a real MCP client, the TypeScript SDK's
//! (tests/mcp/gateway_client.mjs), as a host would: the configured servers' tools listed,
//! called through toolwire (text, an image as an image block, structured content, an
//! unknown tool, approvals through the host's elicitation or refused when it cannot ask),
//! every call stored in the connection's session, and a 5 MB result cut for the host and
//! read back whole through `read_result`; and the same gateway over streamable HTTP
//! (`--http`), a toolwire session per MCP session, loopback names only.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod mcp_common;
#[path = "../../toolwire-mcp/tests/peers/mod.rs"]
mod peers;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// Runs the client against a gateway it starts on stdio; one JSON value per step.
fn drive(data: &Path, host: &str, gateway: &[&str], steps: Value, answers: Value) -> Vec<Value> {
    let mut client = Command::new("node");
    client
        .arg(env!("CARGO_BIN_EXE_toolwire"))
        .arg(data)
        .arg(host)
        .args(gateway);
    run_client(client, steps, answers)
}

/// Runs the client against the `--http` gateway at `url`, as client `name`.
fn drive_http(url: &str, name: &str, steps: Value) -> Vec<Value> {
    let mut client = Command::new("node");
    client
        .env("GATEWAY_URL", url)
        .env("GATEWAY_CLIENT_NAME", name);
    run_client(client, steps, json!([]))
}

fn run_client(client: Command, steps: Value, answers: Value) -> Vec<Value> {
    let script = peers::peer("gateway_client.mjs").unwrap();
    // The script goes first: `client` was given the script's own arguments.
    let args: Vec<_> = client.get_args().map(ToOwned::to_owned).collect();
    let mut node = Command::new("node");
    node.arg(&script).args(args);
    for (key, value) in client.get_envs() {
        if let Some(value) = value {
            node.env(key, value);
        }
    }
    let out = node
        .current_dir(peers::peers_dir())
        .env("GATEWAY_STEPS", steps.to_string())
        .env("GATEWAY_ANSWERS", answers.to_string())
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "client failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn everything() -> Option<String> {
    let script = peers::everything()?;
    peers::peer("gateway_client.mjs")?;
    Some(format!("ev=node {} stdio", script.display()))
}

#[test]
fn a_host_calls_tools_through_the_gateway_and_every_call_is_stored() {
    let Some(ev) = everything() else { return };
    let data = tempfile::tempdir().unwrap();
    let steps = json!([
        {"tool": "ev__echo", "args": {"message": "through the gateway"}},
        {"tool": "ev__get-tiny-image"},
        {"tool": "ev__get-structured-content", "args": {"location": "New York"}},
        {"tool": "ev__no-such-tool"},
        // Not read-only, so toolwire asks; this host cannot, so it is refused.
        {"tool": "ev__toggle-simulated-logging"},
    ]);
    let got = drive(
        data.path(),
        "claude-code",
        &["--mcp", &ev],
        steps,
        json!([]),
    );
    let names: Vec<&str> = got[0]["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(names.contains(&"ev__echo") && names.contains(&"read_result"));
    // The built-ins only with --builtins.
    assert!(
        !names.contains(&"run") && !names.contains(&"read_file"),
        "{names:?}"
    );

    let echo = &got[1]["result"];
    assert_eq!(echo["content"][0]["text"], "Echo: through the gateway");
    assert!(
        echo["_meta"]["toolwire/callId"]
            .as_str()
            .unwrap()
            .starts_with("call_")
    );

    // The image stays an image block, its bytes base64 in `data`, never text.
    let image = &got[2]["result"]["content"];
    let block = image
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .expect("an image block");
    assert_eq!(block["mimeType"], "image/png");
    assert!(block["data"].as_str().unwrap().starts_with("iVBOR"));
    assert!(!image.to_string().contains("\"text\":\"iVBOR"));

    let structured = &got[3]["result"];
    assert!(
        structured["structuredContent"]["temperature"].is_number(),
        "{structured}"
    );

    assert_eq!(got[4]["step"], "error");
    assert!(
        got[4]["message"]
            .as_str()
            .unwrap()
            .contains("no tool \"ev__no-such-tool\""),
        "{}",
        got[4]
    );

    let refused = &got[5]["result"];
    assert_eq!(refused["isError"], true);
    assert!(
        refused["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("this MCP host cannot ask"),
        "{refused}"
    );

    // Every call is in one session of this connection, with its stored result.
    let out = mcp_common::toolwire(data.path(), &["sessions", "--json"]);
    let sessions: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sessions.as_array().unwrap().len(), 1, "{sessions}");
    assert_eq!(sessions[0]["title"], "gateway: gateway-test-host");
    let id = sessions[0]["id"].as_str().unwrap();
    let shown = mcp_common::toolwire(data.path(), &["show", id, "--json"]);
    let messages: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let results: Vec<&Value> = messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 4, "{messages}");
    // The image went to the blob store, not into the history as base64.
    assert!(!messages.to_string().contains("iVBOR"));
}

#[test]
fn approvals_are_asked_through_the_hosts_elicitation() {
    let Some(ev) = everything() else { return };
    let data = tempfile::tempdir().unwrap();
    let steps = json!([
        {"tool": "ev__toggle-simulated-logging"},
        {"tool": "ev__toggle-simulated-logging"},
    ]);
    let answers = json!([
        {"action": "accept", "content": {"approve": true}},
        {"action": "decline"},
    ]);
    let got = drive(data.path(), "generic", &["--mcp", &ev], steps, answers);
    let approved = &got[1];
    assert!(approved["result"].get("isError").is_none(), "{approved}");
    let asked = approved["asked"][0].as_str().unwrap();
    assert!(
        asked.contains("toolwire asks before running ev__toggle-simulated-logging"),
        "{asked}"
    );
    let declined = &got[2]["result"];
    assert_eq!(declined["isError"], true, "{declined}");
}

#[test]
fn a_5_mb_result_is_cut_for_the_host_and_read_back_whole() {
    let Some(fs) = peers::filesystem() else {
        return;
    };
    if peers::peer("gateway_client.mjs").is_none() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut log = String::new();
    for i in 0..75_000 {
        log.push_str(&format!("line {i}: {}\n", "x".repeat(60)));
    }
    log.push_str("ERROR: the last line is the one that matters\n");
    let big = ws.path().join("big.log");
    std::fs::write(&big, &log).unwrap();
    assert!(log.len() > 5_000_000);
    let server = format!("fs=node {} {}", fs.display(), ws.path().display());
    let path = big.to_str().unwrap();
    let steps = json!([
        {"tool": "fs__read_text_file", "args": {"path": path}},
        {"follow": path, "tool": "fs__read_text_file", "args": {"path": path}},
    ]);
    let ws_arg = ws.path().to_str().unwrap();
    let got = drive(
        data.path(),
        "claude-code",
        &["--workspace", ws_arg, "--mcp", &server],
        steps,
        json!([]),
    );
    let text = got[1]["result"]["content"][0]["text"].as_str().unwrap();
    // Cut under Claude Code's warning threshold, head and tail kept, the error at the end
    // too, with a marker that says toolwire cut it and how to read the rest.
    assert!(text.len() < 34_000, "{} chars", text.len());
    assert!(text.starts_with("line 0: "));
    assert!(text.contains("ERROR: the last line is the one that matters"));
    assert!(text.contains("omitted by toolwire; read them with read_result {\"callId\":"));
    let follow = &got[2];
    assert_eq!(follow["firstMarker"], true, "{follow}");
    assert_eq!(follow["whole"], true, "{follow}");
    assert!(follow["pages"].as_u64().unwrap() > 100, "{follow}");
}

/// `toolwire gateway --http 127.0.0.1:0` with its data in `data`, and its URL (said on
/// stderr, which a thread keeps draining).
fn spawn_http_gateway(data: &Path, gateway: &[&str]) -> (peers::Child, String) {
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
    let child = peers::Child(child);
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
            return (child, url);
        }
    }
}

#[test]
fn over_http_each_mcp_session_is_a_toolwire_session() {
    let Some(ev) = everything() else { return };
    let data = tempfile::tempdir().unwrap();
    let (_gateway, url) = spawn_http_gateway(data.path(), &["--mcp", &ev]);
    let steps = json!([
        {"tool": "ev__echo", "args": {"message": "over HTTP"}},
        {"tool": "ev__get-tiny-image"},
    ]);
    let first = drive_http(&url, "host-one", steps.clone());
    let second = drive_http(&url, "host-two", steps);
    for got in [&first, &second] {
        assert!(got[0]["names"].to_string().contains("\"ev__echo\""));
        assert_eq!(got[1]["result"]["content"][0]["text"], "Echo: over HTTP");
        assert!(
            got[2]["result"]["content"]
                .to_string()
                .contains("\"type\":\"image\"")
        );
    }
    let out = mcp_common::toolwire(data.path(), &["sessions", "--json"]);
    let sessions: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut titles: Vec<&str> = sessions
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["title"].as_str().unwrap())
        .collect();
    titles.sort_unstable();
    assert_eq!(
        titles,
        ["gateway: host-one", "gateway: host-two"],
        "{sessions}"
    );

    // A name that is not loopback is refused (DNS rebinding); so is another site's page.
    let port = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp");
    for header in ["Host: evil.example", "Origin: https://evil.example"] {
        let mut conn = std::net::TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let host = if header.starts_with("Host") {
            ""
        } else {
            "Host: 127.0.0.1\r\n"
        };
        write!(
            conn,
            "POST /mcp HTTP/1.1\r\n{host}{header}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        conn.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 403"), "{header}: {answer}");
    }
}

#[test]
fn http_listens_on_loopback_only() {
    let data = tempfile::tempdir().unwrap();
    let out = mcp_common::toolwire(data.path(), &["gateway", "--http", "0.0.0.0:0"]);
    assert!(!out.status.success());
    assert!(
        mcp_common::stderr_of(&out).contains("listens on loopback only"),
        "{}",
        mcp_common::stderr_of(&out)
    );
}
