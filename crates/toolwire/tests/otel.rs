//! OpenTelemetry traces end to end: `toolwire chat` against a scripted provider, with
//! calls through a real MCP server (the Python SDK), an approval and a subagent, exports
//! its spans to a loopback OTLP receiver that decodes them with the official
//! `opentelemetry-proto` package (tests/otel). One trace, with the GenAI conventions'
//! spans, attributes and parent links, and the MCP server got the call's `traceparent`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use support::provider::server;
use support::with_stdin;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value as Json, json};
use wiremock::ResponseTemplate;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A Python with `venv`'s packages, or a skip (a failure under CI) naming the fix.
fn python(venv: &str, requirements: &str) -> Option<PathBuf> {
    let path = repo().join(venv).join("bin/python");
    if path.exists() {
        return Some(path);
    }
    let why = format!(
        "{} is missing: run `python3 -m venv {venv} && {venv}/bin/pip install -r \
         {requirements}` (.ci/run does)",
        path.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{why}");
    eprintln!("SKIPPED: {why}");
    None
}

/// The receiver, killed when the test ends.
struct Receiver {
    child: Child,
    port: u16,
    out: tempfile::TempDir,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Receiver {
    fn start(python: &Path) -> Receiver {
        let out = tempfile::tempdir().unwrap();
        let mut child = Command::new(python)
            .arg(repo().join("tests/otel/receiver.py"))
            .arg(out.path().join("spans.jsonl"))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("port: {line:?}"));
        Receiver { child, port, out }
    }

    /// Every span received, as the receiver decoded it.
    fn spans(&self) -> Vec<Json> {
        let text = std::fs::read_to_string(self.out.path().join("spans.jsonl")).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// An Anthropic Messages reply with usage and a stop reason.
fn reply(content: Json, stop: &str, input: u64, output: u64) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "test-model",
        "content": content, "stop_reason": stop,
        "usage": {"input_tokens": input, "output_tokens": output},
    }))
}

fn toolwire(args: &[&str], stdin: &str, env: &[(&str, String)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolwire"));
    cmd.args(args).env("TOOLWIRE_MCP_TIMEOUT", "30s");
    for var in [
        "ANTHROPIC_BASE_URL",
        "TOOLWIRE_PROVIDER",
        "TOOLWIRE_MODEL",
        "TOOLWIRE_DATA_DIR",
        "OTEL_SDK_DISABLED",
        "OTEL_TRACES_EXPORTER",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_SERVICE_NAME",
        "OTEL_RESOURCE_ATTRIBUTES",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    with_stdin(&mut cmd, stdin)
}

fn attr<'a>(span: &'a Json, key: &str) -> &'a Json {
    &span["attributes"][key]
}

fn named<'a>(spans: &'a [Json], name: &str) -> Vec<&'a Json> {
    spans.iter().filter(|s| s["name"] == name).collect()
}

fn one<'a>(spans: &'a [Json], name: &str) -> &'a Json {
    let found = named(spans, name);
    assert_eq!(found.len(), 1, "spans named {name:?}: {spans:#?}");
    found[0]
}

fn child_of(span: &Json, parent: &Json) {
    assert_eq!(
        span["parentSpanId"], parent["spanId"],
        "{} should be a child of {}",
        span["name"], parent["name"]
    );
}

#[tokio::test]
async fn a_chat_turn_is_one_trace_by_the_genai_conventions() {
    let Some(otel_python) = python("tests/otel/venv", "tests/otel/requirements.txt") else {
        return;
    };
    let Some(mcp_python) = python("tests/mcp/venv", "tests/mcp/requirements.txt") else {
        return;
    };
    let receiver = Receiver::start(&otel_python);
    let call = |id: &str, name: &str, input: Json| json!({"type": "tool_use", "id": id, "name": name, "input": input});
    // The turn's first reply asks for four calls: two on the MCP server (text, an image),
    // a write that needs approval, and a subagent; the subagent's own request comes
    // next (it runs while the parent's calls run), then the parent's final answer.
    let replies = vec![
        reply(
            json!([
                call("m1", "echo__echo_meta", json!({"note": "hi"})),
                call("m2", "echo__picture", json!({})),
                call("w1", "write_file", json!({"path": "a.txt", "content": "x"})),
                call(
                    "t1",
                    "task",
                    json!({"description": "quiet", "prompt": "Say nothing."}),
                ),
            ]),
            "tool_use",
            11,
            7,
        ),
        reply(
            json!([{"type": "text", "text": "Nothing."}]),
            "end_turn",
            3,
            2,
        ),
        reply(
            json!([{"type": "text", "text": "Done."}]),
            "end_turn",
            21,
            4,
        ),
    ];
    let srv = server("/v1/messages", replies).await;
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mcp = format!(
        "echo={} {}",
        mcp_python.display(),
        repo().join("tests/otel/meta_server.py").display()
    );
    let (data_dir, ws_dir, base) = (
        data.path().to_str().unwrap().to_owned(),
        ws.path().to_str().unwrap().to_owned(),
        srv.uri(),
    );
    let env = vec![
        ("ANTHROPIC_API_KEY", "sk-test".to_owned()),
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{}", receiver.port),
        ),
        ("OTEL_EXPORTER_OTLP_HEADERS", "x-test=yes".to_owned()),
        ("OTEL_SERVICE_NAME", "toolwire-otel-test".to_owned()),
        (
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
            "true".to_owned(),
        ),
    ];
    let out = tokio::task::spawn_blocking(move || {
        toolwire(
            &[
                "--data-dir",
                &data_dir,
                "chat",
                "--provider",
                "anthropic",
                "--model",
                "test-model",
                "--base-url",
                &base,
                "--workspace",
                &ws_dir,
                "--no-stream",
                "--mcp",
                &mcp,
            ],
            "Do the four things\ny\ny\ny\n",
            &env,
        )
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(stdout.contains("Done."), "{stdout}");
    assert!(!stderr.contains("traces:"), "spans were lost: {stderr}");

    // The process sent its spans before it exited; the receiver may still be writing.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut spans = receiver.spans();
    while spans.len() < 12 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        spans = receiver.spans();
    }
    for s in &spans {
        assert!(
            s.get("error").is_none(),
            "the receiver could not decode: {s}"
        );
        assert_eq!(s["resource"]["service.name"], "toolwire-otel-test");
        assert_eq!(s["headers"]["x-test"], "yes");
        assert_eq!(s["scope"], "toolwire");
        assert!(s["end"].as_u64() >= s["start"].as_u64(), "{s}");
    }
    let trace = &spans[0]["traceId"];
    assert!(
        spans.iter().all(|s| &s["traceId"] == trace),
        "not one trace: {spans:#?}"
    );

    // The turn: the root.
    let turn = one(&spans, "invoke_agent toolwire");
    assert_eq!(turn["parentSpanId"], "");
    assert_eq!(turn["kind"], 1);
    assert_eq!(attr(turn, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(attr(turn, "gen_ai.agent.name"), "toolwire");
    assert_eq!(attr(turn, "gen_ai.provider.name"), "anthropic");
    let session = attr(turn, "gen_ai.conversation.id").as_str().unwrap();
    assert!(session.starts_with("s_"), "{session}");

    // Its model requests: client spans with usage and finish reasons.
    let chats = named(&spans, "chat test-model");
    assert_eq!(chats.len(), 3, "{spans:#?}");
    let mut parent_chats: Vec<&Json> = chats
        .iter()
        .copied()
        .filter(|c| c["parentSpanId"] == turn["spanId"])
        .collect();
    parent_chats.sort_by_key(|c| c["start"].as_u64());
    assert_eq!(parent_chats.len(), 2);
    for c in &chats {
        assert_eq!(c["kind"], 3, "a provider request is a CLIENT span");
        assert_eq!(attr(c, "gen_ai.operation.name"), "chat");
        assert_eq!(attr(c, "gen_ai.provider.name"), "anthropic");
        assert_eq!(attr(c, "gen_ai.request.model"), "test-model");
    }
    assert_eq!(
        attr(parent_chats[0], "gen_ai.usage.input_tokens"),
        &json!({"int": 11})
    );
    assert_eq!(
        attr(parent_chats[0], "gen_ai.usage.output_tokens"),
        &json!({"int": 7})
    );
    assert_eq!(
        attr(parent_chats[0], "gen_ai.response.finish_reasons"),
        &json!(["tool_use"])
    );
    assert_eq!(
        attr(parent_chats[1], "gen_ai.usage.input_tokens"),
        &json!({"int": 21})
    );
    assert_eq!(
        attr(parent_chats[1], "gen_ai.response.finish_reasons"),
        &json!(["end_turn"])
    );

    // The calls, under the turn.
    let tools = [
        ("execute_tool echo__echo_meta", "m1", "extension"),
        ("execute_tool echo__picture", "m2", "extension"),
        ("execute_tool write_file", "w1", "function"),
        ("execute_tool task", "t1", "function"),
    ];
    for (name, id, kind) in tools {
        let s = one(&spans, name);
        child_of(s, turn);
        assert_eq!(attr(s, "gen_ai.operation.name"), "execute_tool");
        assert_eq!(attr(s, "gen_ai.tool.name"), &name["execute_tool ".len()..]);
        assert_eq!(attr(s, "gen_ai.tool.call.id"), id);
        assert_eq!(attr(s, "gen_ai.tool.type"), kind);
        assert_eq!(attr(s, "toolwire.result.status"), "success", "{s}");
        assert_eq!(s["status"]["code"], 0, "{s}");
        assert!(attr(s, "gen_ai.tool.call.arguments").is_string(), "{s}");
    }

    // The MCP server received the call's span as `traceparent` in `_meta`: its answer
    // (recorded inline, being small) says so.
    let echo = one(&spans, "execute_tool echo__echo_meta");
    assert_eq!(attr(echo, "gen_ai.tool.call.arguments"), r#"{"note":"hi"}"#);
    let result: Json =
        serde_json::from_str(attr(echo, "gen_ai.tool.call.result").as_str().unwrap()).unwrap();
    let echoed: Json =
        serde_json::from_str(result[0]["data"]["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        echoed["meta"]["traceparent"],
        format!(
            "00-{}-{}-01",
            trace.as_str().unwrap(),
            echo["spanId"].as_str().unwrap()
        ),
        "{echoed}"
    );

    // The image is referenced by its blob, not inlined.
    let picture = one(&spans, "execute_tool echo__picture");
    let refs = attr(picture, "toolwire.result.ref").as_array().unwrap();
    assert_eq!(refs.len(), 1);
    assert!(
        refs[0].as_str().unwrap().starts_with("blake3:"),
        "{picture}"
    );
    assert!(
        attr(picture, "toolwire.result.bytes")["int"]
            .as_u64()
            .unwrap()
            > 1000
    );
    assert!(
        attr(picture, "gen_ai.tool.call.result").is_null(),
        "{picture}"
    );

    // Each approval wait (the write, and the MCP server's tools, which are not marked
    // read-only) is its own span under its call.
    for tool in ["write_file", "echo__echo_meta", "echo__picture"] {
        let call = one(&spans, &format!("execute_tool {tool}"));
        let wait = one(&spans, &format!("await_approval {tool}"));
        child_of(wait, call);
        assert_eq!(attr(wait, "toolwire.resolution"), "approved");
        assert_eq!(attr(wait, "toolwire.suspension.reason"), "approval");
        assert_eq!(
            attr(wait, "gen_ai.tool.call.id"),
            attr(call, "gen_ai.tool.call.id")
        );
        assert!(
            call["events"]
                .as_array()
                .unwrap()
                .contains(&json!("toolwire.resolved"))
        );
        assert!(wait["end"].as_u64() <= call["end"].as_u64());
    }

    // The subagent: its turn under the task call, its request under its turn.
    let task = one(&spans, "execute_tool task");
    let sub = one(&spans, "invoke_agent subagent");
    child_of(sub, task);
    assert_eq!(attr(sub, "gen_ai.agent.name"), "subagent");
    assert_eq!(attr(sub, "toolwire.parent_call.id"), "t1");
    assert_ne!(attr(sub, "gen_ai.conversation.id"), session);
    let sub_chat: Vec<&&Json> = chats
        .iter()
        .filter(|c| c["parentSpanId"] == sub["spanId"])
        .collect();
    assert_eq!(sub_chat.len(), 1);
    assert_eq!(
        attr(sub_chat[0], "gen_ai.usage.input_tokens"),
        &json!({"int": 3})
    );

    // Nothing else: 1 turn + 3 requests + 4 calls + 3 waits + 1 subagent turn.
    assert_eq!(spans.len(), 12, "{spans:#?}");
}

/// Tracing is off without an endpoint, and a dead collector neither fails a call nor
/// holds the process up.
#[test]
fn a_dead_collector_costs_a_call_nothing() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("n.txt"), "hello\n").unwrap();
    // A port nothing listens on.
    let port = support::free_port();
    let started = Instant::now();
    let out = toolwire(
        &[
            "--data-dir",
            data.path().to_str().unwrap(),
            "call",
            "--workspace",
            ws.path().to_str().unwrap(),
            "read_file",
            r#"{"path":"n.txt"}"#,
        ],
        "",
        &[(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{port}"),
        )],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("hello"));
    // The lost span is reported, in one line, at exit.
    assert!(
        stderr.contains("warning: traces: 1 span(s) not exported"),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// `toolwire gateway` on stdio with `meta_server.py` behind it, with `env`: answers one
/// `tools/call` of `echo__echo_meta` carrying `meta` and returns the `_meta` the server
/// received; the gateway has exited (and exported its spans) when this returns.
fn gateway_call_meta(mcp_python: &Path, meta: Json, env: &[(&str, String)]) -> Json {
    use std::io::Write as _;
    let data = tempfile::tempdir().unwrap();
    // The server's tools carry no annotations, so they would ask first; this one is
    // trusted here, as a person may trust a server.
    let config = data.path().join("mcp.json");
    let server = json!({"mcpServers": {"echo": {
        "command": mcp_python,
        "args": [repo().join("tests/otel/meta_server.py")],
        "approval": "never",
    }}});
    std::fs::write(&config, server.to_string()).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolwire"));
    cmd.arg("--data-dir")
        .arg(data.path())
        .arg("gateway")
        .arg("--mcp-config")
        .arg(&config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for var in [
        "OTEL_SDK_DISABLED",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "trace-host", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "echo__echo_meta", "arguments": {"note": "hi"}, "_meta": meta}}),
    ];
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut answer = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line: Json = serde_json::from_str(&line.unwrap()).unwrap();
        if line["id"] == 2 {
            answer = Some(line);
            break;
        }
        assert!(Instant::now() < deadline, "no answer to the call");
    }
    // The host goes away: the gateway stores what it answered, exports, and exits.
    drop(stdin);
    assert!(child.wait().unwrap().success());
    let answer = answer.expect("the gateway closed without answering the call");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"));
    serde_json::from_str::<Json>(text).unwrap()["meta"].clone()
}

/// A host's trace reaches through the gateway: without a tracer of its own the gateway
/// passes the host's `traceparent` and `tracestate` to the server as they came; with
/// one, its `execute_tool` span is a child of the host's span, in the host's trace, and
/// the server gets that span as its parent.
#[test]
fn the_gateway_joins_the_hosts_trace() {
    let Some(otel_python) = python("tests/otel/venv", "tests/otel/requirements.txt") else {
        return;
    };
    let Some(mcp_python) = python("tests/mcp/venv", "tests/mcp/requirements.txt") else {
        return;
    };
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent = "00f067aa0ba902b7";
    let host_meta = json!({
        "traceparent": format!("00-{trace}-{parent}-01"),
        "tracestate": "host=1",
    });

    let passed = gateway_call_meta(&mcp_python, host_meta.clone(), &[]);
    assert_eq!(passed["traceparent"], host_meta["traceparent"], "{passed}");
    assert_eq!(passed["tracestate"], host_meta["tracestate"], "{passed}");

    let receiver = Receiver::start(&otel_python);
    let endpoint = format!("http://127.0.0.1:{}", receiver.port);
    let joined = gateway_call_meta(
        &mcp_python,
        host_meta,
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)],
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let spans = loop {
        let spans = receiver.spans();
        if !named(&spans, "execute_tool echo__echo_meta").is_empty() || Instant::now() > deadline {
            break spans;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let call = one(&spans, "execute_tool echo__echo_meta");
    assert_eq!(call["traceId"], trace, "{call}");
    assert_eq!(call["parentSpanId"], parent, "{call}");
    assert_eq!(
        joined["traceparent"],
        format!("00-{trace}-{}-01", call["spanId"].as_str().unwrap()),
        "{joined}"
    );
}
