//! The binary with MCP servers: `tools --mcp ... [--json]`, `call --mcp NAME=CMD NAME__TOOL`,
//! `--mcp-config` with the `mcpServers` JSON other hosts write, and clear one-line errors
//! for bad flags and servers that cannot start.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use support::mcp::{keys, session_of, stderr_of, stdout_of, tool_named, toolwire};

use std::process::{Command, Output};

fn everything_flag() -> Option<String> {
    let script = support::peers::everything()?;
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
    // Each server's state closes the list.
    let servers = text.split("MCP servers:\n").nth(1).unwrap_or_default();
    assert!(
        servers.trim().starts_with("ev  ready (20") && servers.contains(" tools)"),
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
    let session = session_of(&out);
    let shown = toolwire(data.path(), &["show", &session, "--json"]);
    assert!(String::from_utf8_lossy(&shown.stdout).contains("hi from the CLI"));
}

#[test]
fn mcp_config_files_are_read() {
    let Some(script) = support::peers::everything() else {
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
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("read_file"), "{stdout}");
    assert!(
        stdout.contains("  gone  failed: command \"toolwire-no-such-server\" was not found"),
        "{stdout}"
    );

    // Calling a tool of a server that did not start names the server and why.
    let out = toolwire(
        data.path(),
        &[
            "call",
            "--mcp",
            "gone=toolwire-no-such-server",
            "gone__x",
            "{}",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains("gone__x is not available")
            && last.contains("MCP server `gone`")
            && last.contains("not found"),
        "{stderr}"
    );
}

/// `call TOOL INPUT` on server-filesystem (`flag`) with `ws` as the workspace, which the
/// server takes as its root.
fn call_fs(data: &std::path::Path, ws: &str, flag: &str, tool: &str, input: &str) -> Output {
    toolwire(
        data,
        &["call", "--workspace", ws, "--mcp", flag, tool, input],
    )
}

/// [`call_fs`] with `--yes`.
fn call_fs_approved(
    data: &std::path::Path,
    ws: &str,
    flag: &str,
    tool: &str,
    input: &str,
) -> Output {
    toolwire(
        data,
        &[
            "call",
            "--yes",
            "--workspace",
            ws,
            "--mcp",
            flag,
            tool,
            input,
        ],
    )
}

fn filesystem_flag(root: &std::path::Path) -> Option<String> {
    let script = support::peers::filesystem()?;
    Some(format!("fs=node {} {}", script.display(), root.display()))
}

/// server-filesystem's tools declare an `outputSchema`; its errors (`isError: true`)
/// carry no structured content. The server's own text must survive, not become
/// `invalid_output`.
#[test]
fn an_error_from_a_tool_with_an_output_schema_keeps_the_server_text() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let Some(flag) = filesystem_flag(&root) else {
        return;
    };
    // server-filesystem takes the client's roots over its arguments: the workspace.
    let ws = root.to_str().unwrap();
    let data = tempfile::tempdir().unwrap();
    let out = call_fs(
        data.path(),
        ws,
        &flag,
        "fs__read_text_file",
        r#"{"path":"/etc/passwd"}"#,
    );
    let shown = format!("{}{}", stdout_of(&out), stderr_of(&out));
    assert!(!out.status.success(), "{shown}");
    assert!(shown.contains("Access denied"), "{shown}");
    assert!(!shown.contains("invalid output"), "{shown}");
    // The stored result keeps it too.
    let session = session_of(&out);
    let stored = toolwire(data.path(), &["show", &session, "--json"]);
    let stored = stdout_of(&stored);
    assert!(stored.contains("Access denied"), "{stored}");
    assert!(!stored.contains("invalid_output"), "{stored}");
}

/// server-filesystem marks `write_file` `readOnlyHint: false`: it asks first, and
/// without a terminal to ask on, it does not run. `--yes` and the config's
/// `"approval": "never"` let it run; its read tools never ask.
#[test]
fn tools_not_marked_read_only_ask_first() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let Some(flag) = filesystem_flag(&root) else {
        return;
    };
    // server-filesystem takes the client's roots over its arguments: the workspace.
    let ws = root.to_str().unwrap();
    let data = tempfile::tempdir().unwrap();
    let target = root.join("new.txt");
    let write = serde_json::json!({"path": target, "content": "written"}).to_string();
    let out = call_fs(data.path(), ws, &flag, "fs__write_file", &write);
    assert!(!out.status.success(), "{}", stdout_of(&out));
    assert!(
        format!("{}{}", stdout_of(&out), stderr_of(&out)).contains("--yes"),
        "{}",
        stderr_of(&out)
    );
    assert!(!target.exists(), "written without approval");

    let out = call_fs_approved(data.path(), ws, &flag, "fs__write_file", &write);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "written");

    let read = serde_json::json!({"path": target}).to_string();
    let out = call_fs(data.path(), ws, &flag, "fs__read_text_file", &read);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(stdout_of(&out).contains("written"));

    // Per-server rule in the mcpServers JSON.
    let script = support::peers::filesystem().unwrap();
    let config = data.path().join("mcp.json");
    let doc = serde_json::json!({"mcpServers": {"fs": {
        "command": "node", "args": [script.display().to_string(), root.display().to_string()],
        "approval": "never",
    }}});
    std::fs::write(&config, doc.to_string()).unwrap();
    let again = serde_json::json!({"path": target, "content": "again"}).to_string();
    let out = toolwire(
        data.path(),
        &[
            "call",
            "--workspace",
            ws,
            "--mcp-config",
            config.to_str().unwrap(),
            "fs__write_file",
            &again,
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "again");

    // `tools` says which ask, and shows the annotations.
    let out = toolwire(data.path(), &["tools", "--mcp", &flag]);
    let listing = stdout_of(&out);
    let line = |name: &str| {
        listing
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        line("fs__write_file").contains("asks for approval"),
        "{listing}"
    );
    assert!(line("fs__write_file").contains("destructive"), "{listing}");
    assert!(
        line("fs__read_text_file").contains("read-only"),
        "{listing}"
    );
    assert!(!line("fs__read_text_file").contains("asks"), "{listing}");
}

/// server-everything's `get-env` prints the server's environment: provider keys must
/// not be in it unless the config passes them on purpose.
#[test]
fn servers_do_not_receive_toolwires_secrets() {
    let Some(script) = support::peers::everything() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_toolwire"))
            .arg("--data-dir")
            .arg(data.path())
            .args(args)
            .env("TOOLWIRE_MCP_TIMEOUT", "20s")
            .env("ANTHROPIC_API_KEY", "sk-ant-toolwire-test-secret")
            .env("OPENAI_API_KEY", "sk-openai-toolwire-test-secret")
            .output()
            .unwrap()
    };
    let flag = format!("ev=node {} stdio", script.display());
    let out = run(&["call", "--mcp", &flag, "ev__get-env", "{}"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let env = stdout_of(&out);
    assert!(env.contains("PATH"), "{env}");
    assert!(!env.contains("toolwire-test-secret"), "{env}");

    let config = data.path().join("mcp.json");
    let doc = serde_json::json!({"mcpServers": {"ev": {
        "command": "node", "args": [script.display().to_string(), "stdio"],
        "inheritEnv": ["OPENAI_API_KEY"], "env": {"SET_BY_CONFIG": "yes-it-is"},
    }}});
    std::fs::write(&config, doc.to_string()).unwrap();
    let out = run(&[
        "call",
        "--mcp-config",
        config.to_str().unwrap(),
        "ev__get-env",
        "{}",
    ]);
    let env = stdout_of(&out);
    assert!(env.contains("sk-openai-toolwire-test-secret"), "{env}");
    assert!(!env.contains("sk-ant-toolwire-test-secret"), "{env}");
    assert!(env.contains("yes-it-is"), "{env}");
}

/// Claude Desktop accepts any server name; toolwire derives a valid tool prefix from it,
/// unique across servers (`a` with tool `_x` and `a_` with tool `x` used to both be
/// `a___x`).
#[test]
fn server_names_other_hosts_accept_work() {
    let Some(script) = support::peers::everything() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let config = data.path().join("claude_desktop_config.json");
    let server =
        serde_json::json!({"command": "node", "args": [script.display().to_string(), "stdio"]});
    let doc = serde_json::json!({"mcpServers": {"trial py": server, "trial_py": server}});
    std::fs::write(&config, doc.to_string()).unwrap();
    let out = toolwire(
        data.path(),
        &["tools", "--json", "--mcp-config", config.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let tools: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .filter(|n| n.ends_with("__echo"))
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.contains(&"trial_py__echo"), "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("trial_py")), "{names:?}");
    let hashed = names.iter().find(|n| **n != "trial_py__echo").unwrap();
    let out = toolwire(
        data.path(),
        &[
            "call",
            "--mcp-config",
            config.to_str().unwrap(),
            hashed,
            r#"{"message":"from the spaced server"}"#,
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(stdout_of(&out).contains("from the spaced server"));
}

/// Where `needles` first appear in `text`, which must be in the order given.
fn assert_in_order(text: &str, needles: &[&str]) {
    let at: Vec<usize> = needles
        .iter()
        .map(|n| text.find(n).unwrap_or_else(|| panic!("{n} not in {text}")))
        .collect();
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "{needles:?} out of order in {text}"
    );
}

/// JSON keeps its key order end to end: server-filesystem's `read_text_file` declares
/// `path, tail, head` (not alphabetical), server-everything's `get-structured-content`
/// returns `temperature, conditions, humidity`; both come out as written, from
/// `tools --json` and from the store.
#[test]
fn key_order_is_kept_as_the_server_wrote_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (Some(fs), Some(ev)) = (filesystem_flag(&root), everything_flag()) else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let out = toolwire(data.path(), &["tools", "--json", "--mcp", &fs]);
    let tools: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let read = tool_named(&tools, "fs__read_text_file");
    assert_eq!(
        keys(&read["inputSchema"]["properties"]),
        ["path", "tail", "head"]
    );

    let out = toolwire(
        data.path(),
        &[
            "call",
            "--mcp",
            &ev,
            "ev__get-structured-content",
            r#"{"location":"New York"}"#,
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let session = session_of(&out);
    let stored = stdout_of(&toolwire(data.path(), &["show", &session, "--json"]));
    assert_in_order(
        &stored,
        &["\"temperature\"", "\"conditions\"", "\"humidity\""],
    );
}

/// server-filesystem's listing comes as text and as `{"content": <the listing>}`, and
/// `read_media_file`'s image as a block and again inside `structuredContent`: stored
/// both, shown once, sent to the model once (docs/contracts.md, "Twins").
#[test]
fn twins_are_stored_both_but_shown_and_sent_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("a-file.txt"), "x").unwrap();
    std::fs::write(
        root.join("pic.png"),
        base64_decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="),
    )
    .unwrap();
    let Some(flag) = filesystem_flag(&root) else {
        return;
    };
    // server-filesystem takes the client's roots over its arguments: the workspace.
    let ws = root.to_str().unwrap();
    let data = tempfile::tempdir().unwrap();
    let list = serde_json::json!({"path": root}).to_string();
    let out = call_fs(data.path(), ws, &flag, "fs__list_directory", &list);
    assert!(
        out.status.success(),
        "{}{}",
        stdout_of(&out),
        stderr_of(&out)
    );
    assert_eq!(
        stdout_of(&out).matches("[FILE] a-file.txt").count(),
        1,
        "{}",
        stdout_of(&out)
    );
    let session = session_of(&out);
    let stored = stdout_of(&toolwire(data.path(), &["show", &session, "--json"]));
    assert_eq!(
        stored.matches("[FILE] a-file.txt").count(),
        2,
        "both channels: {stored}"
    );
    let export = stdout_of(&toolwire(
        data.path(),
        &["export", &session, "--provider", "anthropic"],
    ));
    assert_eq!(export.matches("[FILE] a-file.txt").count(), 1, "{export}");

    let media = serde_json::json!({"path": root.join("pic.png")}).to_string();
    let out = call_fs(data.path(), ws, &flag, "fs__read_media_file", &media);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let session = session_of(&out);
    let shown = stdout_of(&toolwire(data.path(), &["show", &session]));
    assert_eq!(
        shown.matches("image/png").count(),
        1,
        "one image shown: {shown}"
    );
}

fn base64_decode(text: &str) -> Vec<u8> {
    let out = Command::new("base64")
        .arg("-d")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(text.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    out.stdout
}

/// The terminal says how to get stored media out, and `toolwire blob` writes it back
/// byte for byte; a bad or unknown key is one clear line.
#[test]
fn stored_media_is_saved_with_toolwire_blob() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    // A PNG signature and 300 KB more: big enough to be stored as a blob.
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x01\0\0\0\x01\0\x08\x02\0\0\0".to_vec();
    png.extend((0..300_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8));
    std::fs::write(root.join("big.png"), &png).unwrap();
    let Some(flag) = filesystem_flag(&root) else {
        return;
    };
    // server-filesystem takes the client's roots over its arguments: the workspace.
    let ws = root.to_str().unwrap();
    let data = tempfile::tempdir().unwrap();
    let input = serde_json::json!({"path": root.join("big.png")}).to_string();
    let out = call_fs(data.path(), ws, &flag, "fs__read_media_file", &input);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let stderr = stderr_of(&out);
    let hints: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("toolwire blob "))
        .collect();
    assert_eq!(hints.len(), 1, "one hint for the one image shown: {stderr}");
    let key = hints[0]
        .split_whitespace()
        .find(|w| w.starts_with("blake3:"))
        .unwrap();
    let file = data.path().join("saved.png");
    let saved = toolwire(data.path(), &["blob", key, "-o", file.to_str().unwrap()]);
    assert!(saved.status.success(), "{}", stderr_of(&saved));
    assert_eq!(std::fs::read(&file).unwrap(), png);

    for bad in ["blake3:00", "nothing"] {
        let out = toolwire(data.path(), &["blob", bad, "-o", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(stderr_of(&out).lines().count(), 1, "{}", stderr_of(&out));
    }
    let unknown = format!("blake3:{}", "0".repeat(64));
    let out = toolwire(
        data.path(),
        &["blob", &unknown, "-o", file.to_str().unwrap()],
    );
    assert!(stderr_of(&out).contains("no blob"), "{}", stderr_of(&out));
}

/// toolwire declares the workspace as its roots: server-everything then offers
/// `get-roots-list`, and it answers with the workspace's `file://` URI.
#[test]
fn the_workspace_is_declared_as_roots() {
    let Some(flag) = everything_flag() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let spaced = ws.path().join("my work");
    std::fs::create_dir(&spaced).unwrap();
    let spaced = spaced.canonicalize().unwrap();
    let out = toolwire(
        data.path(),
        &[
            "call",
            "--workspace",
            spaced.to_str().unwrap(),
            "--mcp",
            &flag,
            "ev__get-roots-list",
            "{}",
        ],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let expected = format!("file://{}", spaced.display()).replace(' ', "%20");
    assert!(stdout_of(&out).contains(&expected), "{}", stdout_of(&out));
}

/// The state of every server of a `serve` on `port`, by name.
fn server_states(port: u16) -> std::collections::HashMap<String, serde_json::Value> {
    let (status, body) = support::http(port, "GET", "/api/servers", None);
    assert_eq!(status, 200, "{body}");
    support::json(&body)["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap().to_owned(), s.clone()))
        .collect()
}

/// Polls until server `name` of a `serve` on `port` is in `state` (a minute at most).
fn wait_for_state(port: u16, name: &str, state: &str) -> serde_json::Value {
    let mut last = serde_json::Value::Null;
    for _ in 0..600 {
        last = server_states(port).remove(name).unwrap();
        if last["state"] == state {
            return last;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("server {name} never became {state}: {last}");
}

/// `serve` listens at once and connects its MCP servers in the background: one that
/// never answers holds up nobody. `GET /api/servers` shows each one: server-everything
/// ready with its tools offered and callable, the silent one still connecting, a missing
/// command failed with why. Killed, server-everything is started again (restarting, then
/// ready) and its tools work as before.
#[test]
fn serve_connects_servers_in_the_background_and_shows_their_state() {
    let Some(script) = support::peers::everything() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let config = ws.path().join("servers.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {
            "ev": {"command": "node", "args": [script, "stdio"], "approval": "never"},
            // Started, but never says a word: the handshake waits its whole timeout.
            "silent": {"command": "sleep", "args": ["600"]},
            "gone": {"command": "/nonexistent/toolwire-test-command"},
        }})
        .to_string(),
    )
    .unwrap();
    let port = support::free_port();
    let serve = support::Running(support::spawn_serve_listening(
        data.path(),
        ws.path(),
        port,
        &[],
        &["--mcp-config", config.to_str().unwrap()],
    ));

    // The port is open while the silent server's handshake still runs (30 s).
    let states = server_states(port);
    assert_eq!(states["silent"]["state"], "connecting", "{states:?}");
    let gone = wait_for_state(port, "gone", "failed");
    assert!(
        gone["reason"].as_str().unwrap().contains("was not found"),
        "{gone}"
    );
    let ev = wait_for_state(port, "ev", "ready");
    assert!(ev["protocol"].is_string(), "{ev}");
    assert!(
        ev["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "ev__echo"),
        "{ev}"
    );
    let (_, tools) = support::http(port, "GET", "/api/tools", None);
    tool_named(&support::json(&tools), "ev__echo");
    echo_through_serve(port, "before");

    // Kill server-everything behind toolwire's back: it is noticed and started again.
    let pid = ev_pid(serve.0.id());
    assert!(
        Command::new("kill")
            .args(["-9", &pid])
            .status()
            .unwrap()
            .success()
    );
    wait_for_state(port, "ev", "restarting");
    wait_for_state(port, "ev", "ready");
    assert_ne!(
        ev_pid(serve.0.id()),
        pid,
        "server-everything was not started again"
    );
    echo_through_serve(port, "after");
    assert_eq!(server_states(port)["silent"]["state"], "connecting");
}

/// The pid of the one server-everything process (`node`) that `serve` (`parent`) started.
fn ev_pid(parent: u32) -> String {
    let out = Command::new("pgrep")
        .args(["-x", "node", "-P", &parent.to_string()])
        .output()
        .unwrap();
    let pids = stdout_of(&out);
    let pids: Vec<&str> = pids.split_whitespace().collect();
    assert_eq!(pids.len(), 1, "server-everything processes: {pids:?}");
    pids[0].to_owned()
}

/// Calls `ev__echo` through the API and waits for its result to be stored.
fn echo_through_serve(port: u16, message: &str) {
    let (status, body) = support::http(port, "POST", "/api/sessions", Some(r#"{"title":"echo"}"#));
    assert_eq!(status, 201, "{body}");
    let id = support::json(&body)["id"].as_str().unwrap().to_owned();
    let input = serde_json::json!({"tool": "ev__echo", "input": {"message": message}});
    let (status, body) = support::http(
        port,
        "POST",
        &format!("/api/sessions/{id}/calls"),
        Some(&input.to_string()),
    );
    assert_eq!(status, 202, "{body}");
    for _ in 0..300 {
        let (_, session) = support::http(port, "GET", &format!("/api/sessions/{id}"), None);
        if session.contains(&format!("Echo: {message}")) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("no echo of {message:?} stored");
}

/// Every file under `dir`, at any depth.
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// An MCP App's HTML (the FastMCP fixture's `chart`) is stored once, in the blob store,
/// however many calls show it: each stored result names it by its key. It was kept
/// inline in every result row (4.4 MB per call of server-pdf's `display_pdf`).
#[test]
fn an_apps_html_is_stored_once_by_its_key() {
    let Some(python) = support::peers::peer("venv/bin/python") else {
        return;
    };
    let script = support::peers::peers_dir().join("fastmcp_server.py");
    let flag = format!("py={} {}", python.display(), script.display());
    let html = "<!doctype html><title>chart</title><p>the fixture's app</p>";
    let data = tempfile::tempdir().unwrap();
    let first = toolwire(
        data.path(),
        &["call", "-y", "--mcp", &flag, "py__chart", r#"{"points":3}"#],
    );
    assert!(first.status.success(), "{}", stderr_of(&first));
    let session = session_of(&first);
    let again = toolwire(
        data.path(),
        &[
            "call",
            "-y",
            "--session",
            &session,
            "--mcp",
            &flag,
            "py__chart",
            r#"{"points":4}"#,
        ],
    );
    assert!(again.status.success(), "{}", stderr_of(&again));

    let blobs = files_under(&data.path().join("blobs"));
    let pages: Vec<_> = blobs
        .iter()
        .filter(|p| std::fs::read(p).unwrap() == html.as_bytes())
        .collect();
    assert_eq!(pages.len(), 1, "the page is one blob: {blobs:?}");
    // No row holds the page itself: every file of the history is free of it.
    for file in files_under(data.path()) {
        if file.starts_with(data.path().join("blobs")) {
            continue;
        }
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !bytes.windows(html.len()).any(|w| w == html.as_bytes()),
            "{} holds the app's HTML",
            file.display()
        );
    }
    // Both results name it by its key.
    let shown = toolwire(data.path(), &["show", &session, "--json"]);
    let messages: serde_json::Value = serde_json::from_str(&stdout_of(&shown)).unwrap();
    let text = messages.to_string();
    let keys: Vec<&str> = text
        .match_indices("\"htmlBlob\":\"blake3:")
        .map(|(i, _)| &text[i + 12..i + 83])
        .collect();
    assert_eq!(keys.len(), 2, "{text}");
    assert_eq!(keys[0], keys[1]);
    // It is referenced: `gc` keeps it.
    let gc = toolwire(data.path(), &["gc"]);
    assert!(gc.status.success(), "{}", stderr_of(&gc));
    let kept = files_under(&data.path().join("blobs"));
    assert!(
        kept.iter()
            .any(|p| std::fs::read(p).unwrap() == html.as_bytes()),
        "gc removed the page: {}",
        stdout_of(&gc)
    );
}

/// In a terminal of 60 columns (`COLUMNS`), `tools` wraps each description beside the
/// names, at spaces: no line is wider, and what wraps is indented under the description.
#[test]
fn tools_wraps_descriptions_to_the_terminal() {
    let data = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .arg("--data-dir")
        .arg(data.path())
        .arg("tools")
        .env("COLUMNS", "60")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = stdout_of(&out);
    let width = |l: &str| l.chars().count();
    assert!(text.lines().all(|l| width(l) <= 60), "{text}");
    let wrapped: Vec<&str> = text.lines().filter(|l| l.starts_with("   ")).collect();
    assert!(!wrapped.is_empty(), "nothing wrapped: {text}");
    let column = text
        .lines()
        .find(|l| l.starts_with("read_file "))
        .and_then(|l| l[9..].find(|c: char| c != ' ').map(|i| i + 9))
        .unwrap();
    assert!(
        wrapped
            .iter()
            .all(|l| l.len() - l.trim_start().len() == column),
        "{text}"
    );
    // Without a terminal or COLUMNS, each tool stays one line, for scripts.
    let piped = toolwire(data.path(), &["tools"]);
    assert!(
        !stdout_of(&piped).lines().any(|l| l.starts_with("   ")),
        "{}",
        stdout_of(&piped)
    );
}

/// A server slow to start is not a silent wait: `call` says on stderr which server it is
/// waiting for, and what it runs.
#[test]
fn call_says_which_server_it_waits_for() {
    let Some((python, mut args)) = support::peers::python_mrtr() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    args.extend(["--slow-start".into(), "3".into()]);
    args.push(data.path().join("starts").display().to_string());
    let flag = format!("slow={python} {}", args.join(" "));
    let out = toolwire(
        data.path(),
        &["call", "-y", "--mcp", &flag, "slow__two_rounds", "{}"],
    );
    let stderr = stderr_of(&out);
    assert!(
        stderr.contains("waiting for MCP server `slow` (")
            && stderr.contains("mrtr_server.py --slow-start 3")
            && stderr.contains("to start…"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("waiting for").count(),
        1,
        "said once: {stderr}"
    );
}
