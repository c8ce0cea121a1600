//! `toolwire chat` end to end: the binary against a local server speaking the OpenAI chat
//! and Anthropic formats (`--base-url`), one-shot with `-p` and interactive over stdin with
//! approvals; and the one-line message when no API key is set.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use support::provider::{chunk, server, sse};
use support::with_stdin;

use std::process::{Command, Output};

use serde_json::{Value as Json, json};
use wiremock::{MockServer, Request, ResponseTemplate};

/// Runs the binary with no provider variables from the outer environment.
fn toolwire(args: &[String], stdin: &str, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolwire"));
    cmd.args(args).env("RUST_BACKTRACE", "1");
    for var in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "GEMINI_API_KEY",
        "GEMINI_BASE_URL",
        "TOOLWIRE_PROVIDER",
        "TOOLWIRE_MODEL",
        "TOOLWIRE_DATA_DIR",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    with_stdin(&mut cmd, stdin)
}

/// Runs the binary off the runtime, so the mock server keeps answering meanwhile.
async fn toolwire_async(
    args: Vec<String>,
    stdin: &str,
    env: Vec<(&'static str, &'static str)>,
) -> Output {
    let stdin = stdin.to_owned();
    tokio::task::spawn_blocking(move || toolwire(&args, &stdin, &env))
        .await
        .unwrap()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn no_key_names_the_variable_to_set() {
    for (provider, var) in [
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("openai-chat", "OPENAI_API_KEY"),
        ("openai-responses", "OPENAI_API_KEY"),
        ("gemini", "GEMINI_API_KEY"),
    ] {
        let data = tempfile::tempdir().unwrap();
        let out = toolwire(
            &strings(&[
                "--data-dir",
                data.path().to_str().unwrap(),
                "chat",
                "--provider",
                provider,
                "-p",
                "hi",
            ]),
            "",
            &[],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{provider}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "not one line: {stderr}");
        assert_eq!(
            stderr.trim_end(),
            format!(
                "error: no API key for {provider}: set {var} (or pass --base-url for a local server)"
            )
        );
    }
    // Without --provider and without any key, the default provider's variable is named.
    let data = tempfile::tempdir().unwrap();
    let out = toolwire(
        &strings(&[
            "--data-dir",
            data.path().to_str().unwrap(),
            "chat",
            "-p",
            "hi",
        ]),
        "",
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("set ANTHROPIC_API_KEY"));
}

#[test]
fn unknown_provider_is_a_clear_error() {
    let out = toolwire(
        &strings(&["chat", "--provider", "bard", "-p", "hi"]),
        "",
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unknown provider `bard`"), "{stderr}");
}

async fn bodies(server: &MockServer) -> Vec<Json> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.body_json().unwrap())
        .collect()
}

/// `-p` against a local OpenAI-compatible server without a key: text streams to stdout,
/// the tool result is rendered, the next request carries it, the session is stored.
#[tokio::test]
async fn one_shot_against_a_local_openai_compatible_server() {
    let replies = vec![
        sse(&[
            chunk(json!({"role": "assistant", "content": "Reading "})),
            chunk(json!({"content": "the notes."})),
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "read_file", "arguments": "{\"path\":\"notes.txt\"}"}}]}),
            ),
        ]),
        sse(&[chunk(json!({"content": "They say hello."}))]),
    ];
    let srv = server("/v1/chat/completions", replies).await;
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "hello from the notes\n").unwrap();
    let data = tempfile::tempdir().unwrap();
    let base = format!("{}/v1", srv.uri());
    let out = toolwire_async(
        strings(&[
            "--data-dir",
            data.path().to_str().unwrap(),
            "chat",
            "--provider",
            "openai-chat",
            "--model",
            "local-model",
            "--base-url",
            &base,
            "--workspace",
            ws.path().to_str().unwrap(),
            "-p",
            "What do my notes say?",
        ]),
        "",
        vec![],
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(stdout.starts_with("Reading the notes.\n"), "{stdout}");
    assert!(stdout.contains("read_file"), "{stdout}");
    assert!(stdout.contains("hello from the notes"), "{stdout}");
    assert!(stdout.trim_end().ends_with("They say hello."), "{stdout}");
    let requests = server_requests(&srv).await;
    assert_eq!(requests.len(), 2);
    // No key: no Authorization header.
    assert!(
        requests
            .iter()
            .all(|r| !r.headers.contains_key("authorization"))
    );
    let bodies = bodies(&srv).await;
    assert_eq!(bodies[0]["model"], "local-model");
    assert_eq!(bodies[0]["stream"], true);
    let messages = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("## Task Tool Usage (Subagents)")
    );
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": "What do my notes say?"})
    );
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_1",
               "content": "File: notes.txt\nhello from the notes\n"})
    );
    // The session is stored and named on stderr.
    let session = stderr
        .lines()
        .find_map(|l| l.strip_prefix("session "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_owned();
    let show = toolwire(
        &strings(&[
            "--data-dir",
            data.path().to_str().unwrap(),
            "show",
            &session,
        ]),
        "",
        &[],
    );
    let shown = String::from_utf8_lossy(&show.stdout);
    assert_eq!(show.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("What do my notes say?") && shown.contains("hello from the notes"),
        "{shown}"
    );
}

async fn server_requests(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.unwrap()
}

fn anthropic_reply(content: Json) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "msg", "type": "message", "role": "assistant", "model": "m",
        "content": content, "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1}
    }))
}

/// Interactive over stdin, Anthropic format, no streaming: the first write is approved
/// with `y` (after `d` shows details), the second refused with `n <reason>`.
#[tokio::test]
async fn interactive_approval_and_denial_over_stdin() {
    let write = |id: &str, path: &str| {
        json!({"type": "tool_use", "id": id, "name": "write_file",
               "input": {"path": path, "content": "written"}})
    };
    let replies = vec![
        anthropic_reply(json!([write("w1", "a.txt")])),
        anthropic_reply(json!([{"type": "text", "text": "Wrote a.txt."}])),
        anthropic_reply(json!([write("w2", "b.txt")])),
        anthropic_reply(json!([{"type": "text", "text": "Left b.txt alone."}])),
    ];
    let srv = server("/v1/messages", replies).await;
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let out = toolwire_async(
        strings(&[
            "--data-dir",
            data.path().to_str().unwrap(),
            "chat",
            "--provider",
            "anthropic",
            "--base-url",
            &srv.uri(),
            "--workspace",
            ws.path().to_str().unwrap(),
            "--no-stream",
        ]),
        "Write a.txt\nd\ny\nWrite b.txt\nn not that one\n",
        vec![("ANTHROPIC_API_KEY", "sk-test")],
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "written"
    );
    assert!(!ws.path().join("b.txt").exists());
    assert!(
        stderr.contains("Allow write_file({\"path\":\"a.txt\",\"content\":\"written\"})? [y/n/d]"),
        "{stderr}"
    );
    // `d` printed the whole input, pretty.
    assert!(
        stderr.contains("write_file w1\n{\n  \"path\": \"a.txt\",\n  \"content\": \"written\"\n}"),
        "{stderr}"
    );
    assert!(
        stdout.contains("Wrote a.txt.") && stdout.contains("Left b.txt alone."),
        "{stdout}"
    );
    let requests = server_requests(&srv).await;
    assert_eq!(requests[0].headers.get("x-api-key").unwrap(), "sk-test");
    let bodies = bodies(&srv).await;
    assert_eq!(bodies.len(), 4);
    let approved = &bodies[1]["messages"][2]["content"][0];
    assert_eq!(approved["tool_use_id"], "w1");
    assert_eq!(approved.get("is_error"), None);
    assert_eq!(
        bodies[3]["messages"][6],
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "w2", "is_error": true,
            "content": [{"type": "text", "text": "The user denied this call to write_file: not that one."}]}]})
    );
    // The second message continued the same conversation.
    assert_eq!(
        bodies[3]["messages"][4],
        json!({"role": "user", "content": [{"type": "text", "text": "Write b.txt"}]})
    );
}

/// Escape sequences and invisible characters from the model never reach the terminal raw:
/// not while `chat` streams the reply, not when `show` replays it, not in a session title
/// (`sessions`); `show --json` keeps the text exact, escaped.
#[tokio::test]
async fn hostile_model_text_is_sanitized_everywhere_it_is_printed() {
    let hostile = "clip\u{1b}]52;c;ZXZpbA==\u{7} clear\u{1b}[2J rtl\u{202e}gnp.exe zw\u{200b}x";
    let replies = vec![sse(&[chunk(
        json!({"role": "assistant", "content": hostile}),
    )])];
    let srv = server("/v1/chat/completions", replies).await;
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().to_str().unwrap().to_owned();
    let base = format!("{}/v1", srv.uri());
    let out = toolwire_async(
        strings(&[
            "--data-dir",
            &dir,
            "chat",
            "--provider",
            "openai-chat",
            "--model",
            "m",
            "--base-url",
            &base,
            "-p",
            hostile,
        ]),
        "",
        vec![],
    )
    .await;
    let raw = |bytes: &[u8]| {
        let s = String::from_utf8_lossy(bytes).into_owned();
        for bad in ['\u{7}', '\u{202e}', '\u{200b}'] {
            assert!(!s.contains(bad), "{bad:?} reached the terminal: {s:?}");
        }
        // Our own colour codes are allowed; no other escape sequence is.
        for (i, _) in s.match_indices('\u{1b}') {
            assert!(s[i..].starts_with("\u{1b}["), "{s:?}");
            assert!(!s[i..].starts_with("\u{1b}[2J"), "{s:?}");
        }
        s
    };
    let stdout = raw(&out.stdout);
    raw(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("clip␛]52;c;ZXZpbA==␇"), "{stdout:?}");

    let sessions = toolwire_async(strings(&["--data-dir", &dir, "sessions"]), "", vec![]).await;
    raw(&sessions.stdout);
    let id = sessions_json(&dir).await;
    let show = toolwire_async(strings(&["--data-dir", &dir, "show", &id]), "", vec![]).await;
    let shown = raw(&show.stdout);
    assert!(shown.contains("rtl�gnp.exe"), "{shown:?}");
    let json_out = toolwire_async(
        strings(&["--data-dir", &dir, "show", &id, "--json"]),
        "",
        vec![],
    )
    .await;
    let text = raw(&json_out.stdout);
    let messages: Json = serde_json::from_str(&text).unwrap();
    assert_eq!(messages[1]["content"]["text"], hostile, "exact in JSON");
}

async fn sessions_json(dir: &str) -> String {
    let out = toolwire_async(
        strings(&["--data-dir", dir, "sessions", "--json"]),
        "",
        vec![],
    )
    .await;
    let list: Json = serde_json::from_slice(&out.stdout).unwrap();
    list[0]["id"].as_str().unwrap().to_owned()
}

/// The reply each API sends (not streamed) calling `name` with `args` as `id`, or saying
/// `text` when there is no call.
fn reply_for(provider: &str, call: Option<(&str, &str, &Json)>, text: &str) -> ResponseTemplate {
    let body = match (provider, call) {
        ("anthropic", Some((id, name, args))) => json!({
            "id": "msg", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "tool_use", "id": id, "name": name, "input": args}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}}),
        ("openai-chat", Some((id, name, args))) => json!({
            "id": "c", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": text, "tool_calls": [{"id": id, "type": "function",
                "function": {"name": name, "arguments": args.to_string()}}]}}]}),
        ("openai-responses", Some((id, name, args))) => json!({
            "id": "r", "status": "completed", "output": [{"type": "function_call",
            "call_id": id, "name": name, "arguments": args.to_string()}]}),
        ("gemini", Some((id, name, args))) => json!({"candidates": [{"finishReason": "STOP",
            "content": {"role": "model", "parts": [{"functionCall": {"id": id, "name": name, "args": args}}]}}]}),
        (other, call) => panic!("no reply for {other} {call:?}"),
    };
    ResponseTemplate::new(200).set_body_json(body)
}

/// `toolwire export` is byte for byte the body `toolwire chat` sent, for every provider,
/// streamed or not: the same tools, the same system prompt, and an MCP tool's own result
/// size from the person's `mcpServers` config (`maxResultChars`) cutting its result in
/// both. The script ends after one call, so the last request is the session as stored.
#[tokio::test]
async fn export_is_the_body_chat_sent_for_every_provider() {
    let Some(script) = support::peers::everything() else {
        return;
    };
    let message: String = (0..400).map(|i| format!("word{i} ")).collect();
    let args = json!({"message": message});
    for (provider, path, base, stream) in [
        ("anthropic", "/v1/messages", "", false),
        ("openai-chat", "/v1/chat/completions", "/v1", false),
        ("openai-chat", "/v1/chat/completions", "/v1", true),
        ("openai-responses", "/v1/responses", "/v1", false),
        ("gemini", "/v1beta/models/m:generateContent", "", false),
    ] {
        let first = if stream {
            sse(&[chunk(
                json!({"tool_calls": [{"index": 0, "id": "e1", "type": "function",
                "function": {"name": "ev__echo", "arguments": args.to_string()}}]}),
            )])
        } else {
            reply_for(provider, Some(("e1", "ev__echo", &args)), "")
        };
        let srv = server(path, vec![first]).await;
        let ws = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let config = data.path().join("servers.json");
        let doc = json!({"mcpServers": {"ev": {
            "command": "node", "args": [script, "stdio"],
            "tools": {"echo": {"maxResultChars": 800}},
        }}});
        std::fs::write(&config, doc.to_string()).unwrap();
        let dir = data.path().to_str().unwrap();
        let common = [
            "--provider",
            provider,
            "--model",
            "m",
            "--workspace",
            ws.path().to_str().unwrap(),
            "--mcp-config",
            config.to_str().unwrap(),
        ];
        let mut chat = strings(&["--data-dir", dir, "chat", "-y", "-p", "Echo it."]);
        chat.extend(strings(&common));
        chat.extend(strings(&["--base-url", &format!("{}{base}", srv.uri())]));
        if !stream {
            chat.push("--no-stream".into());
        }
        let out = toolwire_async(chat, "", vec![]).await;
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let requests = server_requests(&srv).await;
        assert_eq!(requests.len(), 2, "{provider}: {stderr}");
        let sent = &requests[1].body;
        let session = stderr
            .lines()
            .find_map(|l| l.strip_prefix("session "))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("{provider}: no session in {stderr}"))
            .to_owned();
        let mut export = strings(&["--data-dir", dir, "export", &session]);
        export.extend(strings(&common));
        if !stream {
            export.push("--no-stream".into());
        }
        let out = toolwire_async(export, "", vec![]).await;
        assert_eq!(
            out.status.code(),
            Some(0),
            "{provider}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let printed = out.stdout.strip_suffix(b"\n").unwrap();
        assert_eq!(
            String::from_utf8_lossy(printed),
            String::from_utf8_lossy(sent),
            "{provider} (stream: {stream}): export differs from the body sent"
        );
        // The tool's own size cut the 3,000 characters in both.
        let sent = String::from_utf8_lossy(sent);
        assert!(sent.contains("omitted by toolwire"), "{provider}: {sent}");
        assert!(
            sent.contains("ev__echo") && sent.contains("read_file"),
            "{sent}"
        );
    }
}

/// Ctrl-C during a turn (here SIGINT while the model has not answered) stops the turn, not
/// the process: chat says so, stores the turn as cancelled and exits on its own, where the
/// signal's default would have killed it mid-write.
#[tokio::test]
async fn ctrl_c_stops_the_turn_not_the_process() {
    let slow = sse(&[chunk(json!({"role": "assistant", "content": "too late"}))])
        .set_delay(std::time::Duration::from_secs(60));
    let srv = server("/v1/chat/completions", vec![slow]).await;
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let base = format!("{}/v1", srv.uri());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolwire"));
    cmd.args([
        "--data-dir",
        data.path().to_str().unwrap(),
        "chat",
        "--provider",
        "openai-chat",
        "--model",
        "m",
        "--base-url",
        &base,
        "--workspace",
        ws.path().to_str().unwrap(),
        "-p",
        "Take your time.",
    ])
    .env_remove("OPENAI_API_KEY")
    .env_remove("TOOLWIRE_PROVIDER")
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let child = support::Running(cmd.spawn().unwrap());
    // The model was asked: the turn is under way.
    let asked = std::time::Instant::now();
    while server_requests(&srv).await.is_empty() {
        assert!(
            asked.elapsed() < std::time::Duration::from_secs(30),
            "chat never asked the model"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let pid = child.0.id().to_string();
    let sent = Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(sent.success(), "kill -INT {pid}");
    // It ends by itself, long before the model's answer would have come.
    let mut child = child;
    let stopped = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            stopped.elapsed() < std::time::Duration::from_secs(20),
            "chat did not stop after Ctrl-C"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.0.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(0), "killed by the signal? {stderr}");
    assert!(stderr.contains("^C: stopping the turn"), "{stderr}");
    assert!(stderr.contains("(turn cancelled)"), "{stderr}");
}
