//! AG-UI in: toolwire follows AG-UI agents it did not write (tests/agui/agents.py, on
//! PyPI's Pydantic AI AG-UI adapter and ag-ui-protocol's encoder) and records their runs
//! as sessions. Through `toolwire serve --agui-follow`'s proxy, AG-UI's own client
//! (`@ag-ui/client`'s HttpAgent, tests/agui/follow.mjs) runs a Pydantic AI agent whose
//! tools return text, JSON and an image, and a front-end tool whose result comes back in
//! the next run; the session's live feed shows the run as it goes, and the calls, the
//! results with their kinds and the image in the blob store are there after a restart, in
//! the API and in `toolwire show`. `toolwire agui run` follows a scripted run with an AG-UI
//! 1.0 image part, a malformed event and a dropped stream, and a LangGraph graph served
//! by ag-ui-langgraph's own endpoint (tests/agui/langgraph_agent.py: failures flagged only
//! in its snapshot, an answer only there, interleaved calls, a LangChain image block); a
//! hostile agent written here meets the bounds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value as Json, json};

fn agui_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/agui")
}

/// Fails under CI, else skips saying why.
fn missing(why: &str) -> Option<PathBuf> {
    if std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("SKIPPED: {why}");
    None
}

/// The python of the venv `venv` (under tests/agui) when it imports `imports`, or `None`
/// (after saying how to install `requirements`, which .ci/run does).
fn python_with(venv: &str, imports: &str, requirements: &str) -> Option<PathBuf> {
    let python = agui_dir().join(venv).join("bin/python");
    let ok = python.exists()
        && Command::new(&python)
            .args(["-c", &format!("import {imports}")])
            .status()
            .is_ok_and(|s| s.success());
    if ok {
        return Some(python);
    }
    missing(&format!(
        "tests/agui/{venv} cannot import {imports}: python3 -m venv tests/agui/{venv} && \
         tests/agui/{venv}/bin/pip install -r tests/agui/{requirements} (.ci/run does)"
    ))
}

/// The venv's python with the AG-UI agents' packages (Pydantic AI's adapter).
fn agents_python() -> Option<PathBuf> {
    python_with(
        "venv",
        "pydantic_ai.ui.ag_ui, ag_ui.encoder, uvicorn",
        "requirements.txt",
    )
}

fn agui_client() -> Option<PathBuf> {
    let dir = agui_dir();
    if dir.join("node_modules/@ag-ui/client").exists() {
        return Some(dir.join("follow.mjs"));
    }
    missing("tests/agui/node_modules is missing: run `npm ci --prefix tests/agui` (.ci/run does)")
}

/// tests/agui/agents.py on a free loopback port, once it accepts connections.
fn spawn_agents(python: &Path) -> (support::Running, u16) {
    spawn_script(python, "agents.py")
}

/// The venv's Python when it has the LangGraph agent's packages.
fn langgraph_python() -> Option<PathBuf> {
    python_with(
        "venv",
        "ag_ui_langgraph, langgraph, langchain_core, fastapi",
        "requirements.txt",
    )
}

/// A script of tests/agui on a free loopback port, once it accepts connections.
fn spawn_script(python: &Path, script: &str) -> (support::Running, u16) {
    let mut child = Command::new(python)
        .arg(agui_dir().join(script))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let running = support::Running(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the AG-UI agents start within a minute");
    let port = line
        .trim()
        .strip_prefix("listening on ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("agents.py said {line:?}"));
    (running, port)
}

fn toolwire(data: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args(["--data-dir", data.to_str().unwrap()])
        .args(args)
        .env_remove("TOOLWIRE_TOKEN")
        .output()
        .unwrap()
}

/// The stored results of a session, by tool name.
fn results(messages: &Json) -> Vec<&Json> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool_result")
        .map(|m| &m["content"])
        .collect()
}

fn result_of<'a>(messages: &'a Json, tool: &str) -> &'a Json {
    results(messages)
        .into_iter()
        .find(|r| r["toolName"] == tool)
        .unwrap_or_else(|| panic!("no result of {tool}: {messages}"))
}

fn kinds(result: &Json) -> Vec<&str> {
    result["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["kind"].as_str().unwrap())
        .collect()
}

/// Every file of the blob store under `data`.
fn blob_files(data: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![data.join("blobs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pydantic_ai_agent_followed_through_the_proxy_is_a_session_live_and_after_a_restart() {
    let Some(python) = agents_python() else {
        return;
    };
    let Some(client) = agui_client() else { return };
    let (_agents, agent_port) = spawn_agents(&python);
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let port = support::free_port();
    let agent_url = format!("http://127.0.0.1:{agent_port}/");
    let serve = support::spawn_serve(
        data.path(),
        ws.path(),
        port,
        &[],
        &["--agui-follow", &agent_url],
    );
    let serve = support::Running(serve);
    let thread = "thread-pydantic-1";
    let base = format!("http://127.0.0.1:{port}");
    let out = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .arg(&client)
            .arg(&base)
            .arg(thread)
            .arg("What is the weather in Paris?")
            .current_dir(client.parent().unwrap())
            .env("SUPPRESS_TRANSFORMATION_WARNINGS", "true")
            .output()
            .expect("node runs")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Json = serde_json::from_str(stdout.trim()).unwrap();
    // The front end got the agent's events, valid AG-UI 1.0, through the proxy.
    assert_eq!(got["invalid"], serde_json::json!([]), "{got}");
    let run1: Vec<&str> = got["runs"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert_eq!(run1.first(), Some(&"RUN_STARTED"), "{got}");
    assert_eq!(run1.last(), Some(&"RUN_FINISHED"), "{got}");
    assert_eq!(
        run1.iter().filter(|e| **e == "TOOL_CALL_RESULT").count(),
        3,
        "{got}"
    );
    assert_eq!(
        got["frontendCall"], "pyd_ai_tool_call_id__pick_color",
        "{got}"
    );
    // The session's live feed showed run 2 as it went: the front end's result, then the
    // agent's answer.
    let live: Vec<&str> = got["live"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(live.first(), Some(&"tool_result"), "{got}");
    assert!(live.contains(&"assistant_delta"), "{got}");
    assert_eq!(live.last(), Some(&"turn_ended"), "{got}");
    assert_eq!(got["live"][0]["kinds"], serde_json::json!(["text"]));

    // The record, as the web app loads it.
    let check = |port: u16| {
        let (status, body) = support::http(port, "GET", &format!("/api/sessions/{thread}"), None);
        assert_eq!(status, 200, "{body}");
        let session = support::json(&body);
        let messages = &session["messages"];
        let roles: Vec<&str> = messages
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles[0], "user", "{roles:?}");
        assert_eq!(roles.last(), Some(&"assistant"), "{roles:?}");
        // Exactly one result per call, each once.
        assert_eq!(results(messages).len(), 4, "{messages}");
        assert_eq!(kinds(result_of(messages, "weather")), ["text"]);
        assert_eq!(
            result_of(messages, "weather")["output"][0]["data"]["content"],
            "sunny in a"
        );
        assert_eq!(kinds(result_of(messages, "forecast")), ["structured"]);
        assert_eq!(
            result_of(messages, "forecast")["output"][0]["data"]["high"],
            21
        );
        assert_eq!(kinds(result_of(messages, "pick_color")), ["text"]);
        assert_eq!(
            result_of(messages, "pick_color")["output"][0]["data"]["content"],
            "blue"
        );
        let radar = result_of(messages, "radar");
        assert_eq!(kinds(radar), ["image"], "{radar}");
        assert_eq!(radar["output"][0]["mimeType"], "image/png");
        let key = radar["output"][0]["data"]["source"]["blob"]
            .as_str()
            .unwrap_or_else(|| panic!("the image is in the blob store: {radar}"))
            .to_owned();
        let (status, bytes) =
            support::http(port, "GET", &format!("/api/resources/{key}/content"), None);
        assert_eq!(status, 200);
        // The body as text (lossy): the PNG signature's text and header chunk are there.
        assert!(bytes.contains("PNG\r\n") && bytes.contains("IHDR"), "a PNG");
    };
    check(port);
    drop(serve);

    // After a restart: `toolwire show`, and the web app's API again.
    let shown = toolwire(data.path(), &["show", thread]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.status.success(), "{text}");
    for expected in [
        "What is the weather in Paris?",
        "weather · success",
        "sunny in a",
        "forecast · success",
        "high: 21",
        "radar · success",
        "[image image/png",
        "pick_color · success",
        "blue",
    ] {
        assert!(text.contains(expected), "{expected:?} missing:\n{text}");
    }
    assert_eq!(blob_files(data.path()).len(), 1, "the image, once");
    let port = support::free_port();
    let _serve = support::Running(support::spawn_serve(data.path(), ws.path(), port, &[], &[]));
    check(port);
    // Without --agui-follow, the proxy says what is missing.
    let (status, body) = support::http(
        port,
        "POST",
        "/api/agui/follow",
        Some(r#"{"threadId":"t","runId":"r","messages":[]}"#),
    );
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("--agui-follow"), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn agui_run_records_a_multimodal_image_and_closes_the_calls_of_a_dropped_stream() {
    let Some(python) = agents_python() else {
        return;
    };
    let (_agents, agent_port) = spawn_agents(&python);
    let data = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{agent_port}/encoder");
    let out = toolwire(
        data.path(),
        &["agui", "run", &url, "Draw the chart", "--thread", "enc-1"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // A run that did not finish is a failure, said plainly.
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("Here is the chart."), "{stdout}");
    assert!(
        stderr.contains("the agent's stream ended before its run did"),
        "{stderr}"
    );
    // The malformed event and the result for a call never made: reported, not recorded.
    assert!(stderr.contains("an event that is not JSON"), "{stderr}");
    assert!(
        stderr.contains("no call \"call-ghost\" was started"),
        "{stderr}"
    );
    assert!(stderr.contains("toolwire show enc-1"), "{stderr}");

    let shown = toolwire(data.path(), &["show", "enc-1"]);
    let text = String::from_utf8_lossy(&shown.stdout);
    for expected in [
        "Draw the chart",
        "chart {\"size\":32}",
        "chart · success",
        "the chart",
        "[image image/png",
        "slow · error (interrupted)",
        "ended before its run did",
    ] {
        assert!(text.contains(expected), "{expected:?} missing:\n{text}");
    }
    assert!(
        !text.contains("call-ghost") && !text.contains("boo"),
        "{text}"
    );
    // The AG-UI 1.0 image part is in the blob store, its bytes as sent.
    let blobs = blob_files(data.path());
    assert_eq!(blobs.len(), 1, "{blobs:?}");
    assert!(std::fs::read(&blobs[0]).unwrap().starts_with(b"\x89PNG"));
}

/// An agent that answers one POST with `body` as an SSE stream, then closes.
fn hostile_agent(body: Vec<u8>) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let Ok((mut tcp, _)) = listener.accept() else {
            return;
        };
        // The request: its head, then its body by Content-Length.
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && tcp.read(&mut byte).unwrap_or(0) == 1 {
            head.push(byte[0]);
        }
        let head = String::from_utf8_lossy(&head).to_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        let mut request = vec![0u8; len];
        let _ = tcp.read_exact(&mut request);
        let _ = write!(
            tcp,
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
        );
        let _ = tcp.write_all(&body);
    });
    port
}

/// A run the agent never took (nothing listens at its address) leaves no session and no
/// message: the prompt tried again is stored once.
#[test]
fn a_run_the_agent_never_took_leaves_nothing_behind() {
    let data = tempfile::tempdir().unwrap();
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{closed}/");
    let out = toolwire(
        data.path(),
        &["agui", "run", &url, "hello?", "--thread", "t1"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("cannot be reached"),
        "{stderr}"
    );
    let sessions = toolwire(data.path(), &["sessions", "--json"]);
    assert_eq!(String::from_utf8_lossy(&sessions.stdout).trim(), "[]");

    // The same thread on an agent that takes it: the prompt once.
    let mut body = Vec::new();
    body.extend_from_slice(
        b"data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t1\",\"runId\":\"r\"}\n\n",
    );
    body.extend_from_slice(
        b"data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t1\",\"runId\":\"r\"}\n\n",
    );
    let port = hostile_agent(body);
    let url = format!("http://127.0.0.1:{port}/");
    let out = toolwire(
        data.path(),
        &["agui", "run", &url, "hello?", "--thread", "t1"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown =
        String::from_utf8_lossy(&toolwire(data.path(), &["show", "t1"]).stdout).into_owned();
    assert_eq!(shown.matches("hello?").count(), 1, "{shown}");
}

#[test]
fn a_hostile_agent_meets_the_bounds_and_its_open_calls_are_closed() {
    let mut body = Vec::new();
    body.extend_from_slice(
        b"data: {\"type\":\"RUN_STARTED\",\"threadId\":\"h\",\"runId\":\"r\"}\n\n",
    );
    // More calls open at once than the follower holds (64).
    for i in 0..70 {
        body.extend_from_slice(
            format!("data: {{\"type\":\"TOOL_CALL_START\",\"toolCallId\":\"c{i}\",\"toolCallName\":\"t\"}}\n\n")
                .as_bytes(),
        );
    }
    // A line past the event bound (16 MiB), skipped; what follows it is still read.
    body.extend_from_slice(b"data: ");
    body.extend(std::iter::repeat_n(b'x', 17 * 1024 * 1024));
    body.extend_from_slice(b"\n\n");
    body.extend_from_slice(b"data: {\"type\":\"TOOL_CALL_END\",\"toolCallId\":\"c0\"}\n\n");
    body.extend_from_slice(
        b"data: {\"type\":\"TOOL_CALL_RESULT\",\"toolCallId\":\"c0\",\"content\":\"done\"}\n\n",
    );
    // An event with no type, then a call id that is no toolwire id.
    body.extend_from_slice(b"data: {\"toolCallId\":\"c1\"}\n\n");
    // And the stream ends mid-run.
    let port = hostile_agent(body);
    let data = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/");
    let out = toolwire(
        data.path(),
        &["agui", "run", &url, "go", "--thread", "hostile"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("more than 64 calls open at once"),
        "{stderr}"
    );
    assert!(
        stderr.contains("an SSE line or event longer than 16777216 bytes"),
        "{stderr}"
    );
    assert!(
        stderr.contains("an event without a string `type`"),
        "{stderr}"
    );
    let shown = toolwire(data.path(), &["show", "hostile"]);
    let text = String::from_utf8_lossy(&shown.stdout);
    // c0 has its result; the other 63 calls it accepted were closed as errors.
    assert_eq!(text.matches("t · success").count(), 1, "{text}");
    assert_eq!(
        text.matches("t · error (interrupted)").count(),
        63,
        "{text}"
    );
    assert!(
        !text.contains("[c64]"),
        "a call past the bound is not recorded"
    );
}

/// `serve` tells its operator what a followed agent did wrong, quoting the agent's event
/// type: sanitized as any printed text, so an agent cannot clear the screen or write the
/// clipboard (OSC 52) of the terminal `serve` runs in.
#[test]
fn a_followed_agents_event_type_reaches_serves_terminal_sanitized() {
    let mut body = Vec::new();
    body.extend_from_slice(
        b"data: {\"type\":\"RUN_STARTED\",\"threadId\":\"esc\",\"runId\":\"r\"}\n\n",
    );
    body.extend_from_slice(
        b"data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"esc\",\"runId\":\"r\"}\n\n",
    );
    // An event after the run ended is noted with its type, which here is escapes.
    body.extend_from_slice(
        b"data: {\"type\":\"\\u001b[2J\\u001b]52;c;aGVsbG8=\\u0007WIPED\\u202e\"}\n\n",
    );
    let agent = hostile_agent(body);
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let port = support::free_port();
    let log = data.path().join("serve.stderr");
    let serve = Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args([
            "--data-dir",
            data.path().to_str().unwrap(),
            "serve",
            "--addr",
        ])
        .arg(format!("127.0.0.1:{port}"))
        .args(["--workspace", ws.path().to_str().unwrap()])
        .args(["--agui-follow", &format!("http://127.0.0.1:{agent}/")])
        .env_remove("TOOLWIRE_TOKEN")
        .env_remove("TOOLWIRE_PROVIDER")
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let _serve = support::Running(serve);
    let mut listening = false;
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            listening = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(listening, "serve did not start");
    let (status, _) = support::http(
        port,
        "POST",
        "/api/agui/follow",
        Some(r#"{"threadId":"esc","runId":"r","messages":[]}"#),
    );
    assert_eq!(status, 200);
    // The diagnostics are printed once the agent's stream has ended.
    let mut stderr = String::new();
    for _ in 0..200 {
        stderr = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned();
        if stderr.contains("after the run ended") {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        stderr.contains("WIPED") && stderr.contains("after the run ended"),
        "{stderr:?}"
    );
    for raw in ['\u{1b}', '\u{7}', '\u{202e}'] {
        assert!(!stderr.contains(raw), "{raw:?} in {stderr:?}");
    }
}

/// What `toolwire export` sends Anthropic for `thread` (long results whole).
fn exported(data: &Path, thread: &str) -> Json {
    let export = toolwire(
        data,
        &[
            "export",
            thread,
            "--provider",
            "anthropic",
            "--max-chars",
            "300000",
        ],
    );
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    serde_json::from_slice(&export.stdout).unwrap()
}

/// How many calls each assistant message of an Anthropic request makes.
fn tool_uses(body: &Json) -> Vec<usize> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| {
            m["content"]
                .as_array()
                .map_or(0, |c| c.iter().filter(|b| b["type"] == "tool_use").count())
        })
        .collect()
}

/// The `tool_result` blocks of an Anthropic request.
fn tool_results(body: &Json) -> Vec<&Json> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .collect()
}

/// A LangGraph graph served by ag-ui-langgraph's own FastAPI endpoint
/// (tests/agui/langgraph_agent.py), with a model that streams its answer and one that does
/// not: what toolwire stores is what the agent did, one assistant message for the six
/// calls, each failure a failure with its message, the image a stored image, the long
/// result whole, and the answer once.
#[tokio::test]
async fn a_langgraph_agent_is_recorded_as_it_ran() {
    let Some(python) = langgraph_python() else {
        return;
    };
    let (_agent, port) = spawn_script(&python, "langgraph_agent.py");
    let data = tempfile::tempdir().unwrap();
    let answer = "It is sunny in Paris; the station is offline.";
    let long = long_result();
    for (path, thread) in [("", "lg-stream"), ("quiet", "lg-quiet")] {
        let text = run_and_show(data.path(), port, path, thread, answer);
        for expected in [
            "weather · success",
            "sunny in Paris",
            "forecast · success",
            "radar · success",
            "the radar",
            "[image image/png",
            "station · error",
            "the station in Paris is offline",
            "ratio · error",
            "ValueError('division by zero in ratio')",
            "archive · success",
        ] {
            assert!(
                text.contains(expected),
                "{thread}: {expected:?} missing:\n{text}"
            );
        }
        assert!(
            !text.contains("base64"),
            "{thread}: a stub of the image:\n{text}"
        );

        // What a model would be sent: one assistant turn with the six calls, the two
        // failures flagged, the image an image, the long result whole.
        let body = exported(data.path(), thread);
        assert_eq!(tool_uses(&body), [6, 0], "{thread}: {body}");
        let results = tool_results(&body);
        assert_eq!(results.len(), 6, "{thread}");
        let failed: Vec<&str> = results
            .iter()
            .filter(|r| r["is_error"] == true)
            .map(|r| r["tool_use_id"].as_str().unwrap())
            .collect();
        assert_eq!(failed, ["call_station", "call_ratio"], "{thread}");
        let radar = results
            .iter()
            .find(|r| r["tool_use_id"] == "call_radar")
            .unwrap();
        assert!(
            radar.to_string().contains("\"type\":\"image\""),
            "{thread}: {radar}"
        );
        assert!(
            !radar.to_string().contains("[image/png"),
            "{thread}: {radar}"
        );
        assert!(
            body.to_string().contains(&long),
            "{thread}: the long result is cut"
        );
    }
    assert!(
        blob_files(data.path())
            .iter()
            .any(|b| std::fs::read(b).unwrap().starts_with(b"\x89PNG"))
    );
}

/// An agent that streams only its answer and sends the calls it made before it, and their
/// results, only in the closing `MESSAGES_SNAPSHOT` (as a framework does when its calling
/// turn does not stream): the session holds them in the order the agent made them, the
/// calls and results before the answer, and `agui run` prints the session id on stdout.
#[test]
fn calls_and_results_only_in_the_closing_snapshot_are_stored_before_the_answer() {
    let events = [
        json!({"type": "RUN_STARTED", "threadId": "late", "runId": "r"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m-answer", "role": "assistant"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m-answer", "delta": "It is sunny."}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "m-answer"}),
        json!({"type": "MESSAGES_SNAPSHOT", "messages": [
            {"id": "u-late", "role": "user", "content": "weather?"},
            {"id": "m-call", "role": "assistant", "toolCalls": [{"id": "call_w", "type": "function",
                "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}]},
            {"id": "t-w", "role": "tool", "toolCallId": "call_w", "content": "sunny in Paris"},
            {"id": "m-answer", "role": "assistant", "content": "It is sunny."},
        ]}),
        json!({"type": "RUN_FINISHED", "threadId": "late", "runId": "r"}),
    ];
    let body: Vec<u8> = events
        .iter()
        .flat_map(|e| format!("data: {e}\n\n").into_bytes())
        .collect();
    let port = hostile_agent(body);
    let data = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/");
    let out = toolwire(
        data.path(),
        &["agui", "run", &url, "weather?", "--thread", "late"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    // The answer, then the session id alone on the last line, for `toolwire show`.
    assert_eq!(stdout.lines().last(), Some("late"), "{stdout}");
    assert_eq!(stdout.matches("It is sunny.").count(), 1, "{stdout}");

    let shown = toolwire(data.path(), &["show", "late"]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.status.success(), "{text}");
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("{needle:?} missing:\n{text}"))
    };
    assert!(at("weather?") < at("→ weather"), "{text}");
    assert!(at("→ weather") < at("weather · success"), "{text}");
    assert!(at("sunny in Paris") < at("It is sunny."), "{text}");
}

/// The venv of the Agent Framework agent (its own: agent-framework-ag-ui pins an older
/// ag-ui-protocol), or `None` (after saying why).
fn agent_framework_python() -> Option<PathBuf> {
    python_with(
        "venv-agent-framework",
        "agent_framework.ag_ui, uvicorn",
        "requirements-agent-framework.txt",
    )
}

/// A Microsoft Agent Framework agent served by agent-framework-ag-ui's own FastAPI endpoint
/// (tests/agui/agent_framework_agent.py), with a scripted client on the framework's own
/// tool-calling layer, streaming and not: what toolwire stores, `show` prints and `export`
/// sends is what the agent sent. Its quirks are kept as sent (docs/contracts.md): a failed
/// tool is the text "Error: Function failed." with no error flag, so a success; an image a
/// tool returns never reaches AG-UI (only the result's text does).
#[tokio::test]
async fn an_agent_framework_agent_is_recorded_as_it_ran() {
    let Some(python) = agent_framework_python() else {
        return;
    };
    let (_agent, port) = spawn_script(&python, "agent_framework_agent.py");
    let data = tempfile::tempdir().unwrap();
    let answer = "It is sunny in Paris; the ratio failed.";
    let long = long_result();
    for (path, thread) in [("", "af-stream"), ("quiet", "af-quiet")] {
        // After the run (a new process): the record, in the order the agent made it.
        let text = run_and_show(data.path(), port, path, thread, answer);
        assert_in_order(
            &text,
            thread,
            &[
                "weather?",
                "→ weather {\"city\":\"Paris\"}",
                "→ archive {}",
                "weather · success",
                "sunny in Paris",
                "forecast · success",
                "high: 21",
                "radar · success",
                "the radar",
                "ratio · success",
                "Error: Function failed.",
                "archive · success",
                answer,
            ],
        );
        assert!(
            !text.contains("[image"),
            "{thread}: no image was sent:\n{text}"
        );

        // What a model would be sent: one assistant turn with the five calls, the long
        // result whole.
        let body = exported(data.path(), thread);
        assert_eq!(tool_uses(&body), [5, 0], "{thread}: {body}");
        let results = tool_results(&body);
        assert_eq!(results.len(), 5, "{thread}");
        assert!(results.iter().all(|r| r["is_error"] != true), "{thread}");
        assert!(
            body.to_string().contains(&long),
            "{thread}: the long result is cut"
        );
    }
    assert!(blob_files(data.path()).is_empty());
}

/// An AWS Strands agent served by ag-ui-strands' own FastAPI endpoint
/// (tests/agui/strands_agent.py), with a scripted model in Converse stream events and
/// Strands' own tool loop, streaming and not: what toolwire stores, `show` prints and
/// `export` sends is what the agent sent. Its text results arrive JSON-encoded
/// (`"\"sunny in Paris\""`) and are read as the text they encode; its image is a Converse
/// image block, stored as an image with no stub beside it. Its quirks are kept as sent
/// (docs/contracts.md): each call is its own assistant message (so an early call's image is
/// past `export`'s inline window); a failed tool is the text "Error: …" with no error flag,
/// so a success.
#[tokio::test]
async fn a_strands_agent_is_recorded_as_it_ran() {
    let Some(python) = python_with(
        "venv",
        "ag_ui_strands, strands, fastapi, uvicorn",
        "requirements.txt",
    ) else {
        return;
    };
    let (_agent, port) = spawn_script(&python, "strands_agent.py");
    let data = tempfile::tempdir().unwrap();
    let answer = "It is sunny in Paris; the ratio failed.";
    let long = long_result();
    for (path, thread) in [("", "st-stream"), ("quiet", "st-quiet")] {
        let text = run_and_show(data.path(), port, path, thread, answer);
        assert_in_order(
            &text,
            thread,
            &[
                "weather?",
                "→ weather {\"city\":\"Paris\"}",
                "→ archive {}",
                "weather · success\nsunny in Paris",
                "forecast · success",
                "high: 21",
                "radar · success",
                "[image image/png",
                "ratio · success\nError: division by zero in ratio",
                "archive · success\nabcdefghij",
                answer,
            ],
        );
        assert!(
            !text.contains("[image/png →") && !text.contains("format: \"png\""),
            "{thread}: a stub of the image:\n{text}"
        );

        // What a model would be sent: the five calls, every result a success (as the agent
        // told its model), the long result whole and unquoted. The image is the stored
        // blob's placeholder: with each call its own message, its result is older than the
        // last two messages, past the window media goes inline in.
        let body = exported(data.path(), thread);
        assert_eq!(
            tool_uses(&body).iter().sum::<usize>(),
            5,
            "{thread}: {body}"
        );
        let results = tool_results(&body);
        assert_eq!(results.len(), 5, "{thread}");
        assert!(results.iter().all(|r| r["is_error"] != true), "{thread}");
        let radar = results
            .iter()
            .find(|r| r["tool_use_id"] == "call_radar")
            .unwrap();
        assert!(
            radar
                .to_string()
                .contains("[image: unnamed, image/png, 3.2 KB, blake3:"),
            "{thread}: {radar}"
        );
        assert!(
            body.to_string().contains(&format!("\"text\":\"{long}\"")),
            "{thread}: the long result is cut or quoted"
        );
    }
    let pngs = blob_files(data.path())
        .iter()
        .filter(|b| std::fs::read(b).unwrap().starts_with(b"\x89PNG"))
        .count();
    assert_eq!(pngs, 1, "the one image, stored once");
}

/// Each of `expected` in `text`, one after another.
fn assert_in_order(text: &str, thread: &str, expected: &[&str]) {
    let mut last = 0;
    for expected in expected {
        let at = text[last..]
            .find(expected)
            .unwrap_or_else(|| panic!("{thread}: {expected:?} missing or out of order:\n{text}"));
        last += at + expected.len();
    }
}

/// The 201,000 characters the framework agents' long tools return.
fn long_result() -> String {
    (0..201_000u32)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect()
}

/// Runs the agent at `path` on `port` through `toolwire agui run` as `thread`, checks what
/// it printed (the answer once, whether it streamed or came only in the snapshot; then the
/// session id, alone on the last line), and returns what `toolwire show` reads from the
/// store afterwards, in a new process (the answer in it once).
fn run_and_show(data: &Path, port: u16, path: &str, thread: &str, answer: &str) -> String {
    let url = format!("http://127.0.0.1:{port}/{path}");
    let out = toolwire(data, &["agui", "run", &url, "weather?", "--thread", thread]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{thread}: {stdout}\n{stderr}");
    assert!(!stderr.contains("warning"), "{thread}: {stderr}");
    assert_eq!(stdout.matches(answer).count(), 1, "{thread}: {stdout}");
    assert_eq!(stdout.lines().last(), Some(thread), "{thread}: {stdout}");
    let shown = toolwire(data, &["show", thread]);
    let text = String::from_utf8_lossy(&shown.stdout).into_owned();
    assert!(shown.status.success(), "{text}");
    assert_eq!(text.matches(answer).count(), 1, "{thread}:\n{text}");
    text
}
