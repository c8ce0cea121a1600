//! The binary with MCP servers: `tools --mcp ... [--json]`, `call --mcp NAME=CMD NAME__TOOL`,
//! `--mcp-config` with the `mcpServers` JSON other hosts write, and clear one-line errors
//! for bad flags and servers that cannot start.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../toolwire-mcp/tests/peers/mod.rs"]
mod peers;

use std::process::{Command, Output};

fn toolwire(data: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env("TOOLWIRE_MCP_TIMEOUT", "20s")
        .output()
        .unwrap()
}

fn everything_flag() -> Option<String> {
    let script = peers::everything()?;
    Some(format!("ev=node {} stdio", script.display()))
}

#[test]
fn tools_lists_and_describes_mcp_tools() {
    let Some(flag) = everything_flag() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let out = toolwire(data.path(), &["tools", "--mcp", &flag, "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tools: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let echo = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "ev__echo")
        .expect("ev__echo listed");
    assert_eq!(
        echo["inputSchema"]["required"],
        serde_json::json!(["message"])
    );
    assert!(
        tools
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "read_file")
    );

    let out = toolwire(data.path(), &["tools", "--mcp", &flag]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l.starts_with("ev__get-tiny-image ")),
        "{text}"
    );
}

#[test]
fn call_runs_an_mcp_tool_and_stores_it() {
    let Some(flag) = everything_flag() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let out = toolwire(
        data.path(),
        &[
            "call",
            "--mcp",
            &flag,
            "ev__echo",
            r#"{"message":"hi from the CLI"}"#,
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("hi from the CLI"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let session = stderr
        .split("toolwire show ")
        .nth(1)
        .unwrap()
        .trim_end_matches([')', '\n']);
    let shown = toolwire(data.path(), &["show", session, "--json"]);
    assert!(String::from_utf8_lossy(&shown.stdout).contains("hi from the CLI"));
}

#[test]
fn mcp_config_files_are_read() {
    let Some(script) = peers::everything() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let config = data.path().join("claude_desktop_config.json");
    let doc = serde_json::json!({"mcpServers": {"ev": {"command": "node", "args": [script.display().to_string(), "stdio"]}}});
    std::fs::write(&config, doc.to_string()).unwrap();
    let out = toolwire(
        data.path(),
        &[
            "call",
            "--mcp-config",
            config.to_str().unwrap(),
            "ev__get-sum",
            r#"{"a":2,"b":40}"#,
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("42"));
}

#[test]
fn bad_mcp_flags_and_servers_are_one_line_errors() {
    let data = tempfile::tempdir().unwrap();
    let out = toolwire(data.path(), &["tools", "--mcp", "no-equals-sign"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("NAME=COMMAND"), "{stderr}");

    // A server that cannot start is named, and the built-in tools still work.
    let out = toolwire(
        data.path(),
        &["tools", "--mcp", "gone=toolwire-no-such-server"],
    );
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("gone") && stderr.contains("not found"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("read_file"));
}
