//! Faults, each through the binary as a person runs it, and after each: no lost result,
//! no dangling blob reference, every call paired.
//! - the disk fills up during a blob write while `serve` runs;
//! - the provider's stream is cut in the middle of a tool call;
//! - `serve` is killed in the middle of an agent turn and started again.
//!
//! The provider is a scripted loopback HTTP server speaking the OpenAI chat format; a
//! cut is a real one: the connection closes inside a chunked body.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value as Json, json};
use support::{Running, approve, free_port, http, json, png, spawn_serve, try_http, with_stdin};

/// What the provider answers to one request.
enum Reply {
    /// These stream events, then `[DONE]`.
    Whole(Vec<Json>),
    /// These events, then the start of one more, then the connection closes.
    Cut(Vec<Json>, &'static str),
}

/// A provider on loopback that answers each request with the next scripted reply and
/// keeps every request body.
struct Provider {
    port: u16,
    bodies: Arc<Mutex<Vec<Json>>>,
}

impl Provider {
    fn start(script: Vec<Reply>) -> Provider {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&bodies);
        let script = Mutex::new(VecDeque::from(script));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let Some(body) = read_request(&stream) else {
                    continue;
                };
                kept.lock().unwrap().push(body);
                let reply = script.lock().unwrap().pop_front();
                answer(stream, reply);
            }
        });
        Provider { port, bodies }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn bodies(&self) -> Vec<Json> {
        self.bodies.lock().unwrap().clone()
    }
}

fn read_request(stream: &TcpStream) -> Option<Json> {
    let mut reader = BufReader::new(stream);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

fn answer(mut stream: TcpStream, reply: Option<Reply>) {
    let event = |e: &Json| format!("data: {e}\n\n");
    match reply {
        Some(Reply::Whole(events)) => {
            let mut body: String = events.iter().map(event).collect();
            body.push_str("data: [DONE]\n\n");
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
        Some(Reply::Cut(events, partial)) => {
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                 Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            );
            let mut chunks: Vec<String> = events.iter().map(event).collect();
            chunks.push(partial.to_owned());
            for chunk in chunks {
                let _ = write!(stream, "{:x}\r\n{chunk}\r\n", chunk.len());
                let _ = stream.flush();
                std::thread::sleep(Duration::from_millis(50));
            }
            // No terminating chunk: the body is cut, as by a dropped connection.
            let _ = stream.shutdown(Shutdown::Both);
        }
        None => {
            let body = r#"{"error":{"message":"the test script has no more replies"}}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    }
}

fn text(content: &str) -> Json {
    json!({"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}]})
}

fn calls(calls: &[(&str, &str, Json)]) -> Json {
    let calls: Vec<Json> = calls
        .iter()
        .enumerate()
        .map(|(i, (id, name, input))| {
            json!({"index": i, "id": id, "type": "function",
                   "function": {"name": name, "arguments": input.to_string()}})
        })
        .collect();
    json!({"choices": [{"index": 0, "delta": {"tool_calls": calls}, "finish_reason": null}]})
}

fn finish(reason: &str) -> Json {
    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

/// The calls of every assistant message in a stored session, and the call ids that have
/// a stored result.
fn calls_and_results(session: &Json) -> (Vec<String>, Vec<String>) {
    let mut calls = Vec::new();
    let mut results = Vec::new();
    for m in session["messages"].as_array().unwrap() {
        let content = &m["content"];
        if let Some(list) = content["toolCalls"].as_array() {
            calls.extend(list.iter().map(|c| c["id"].as_str().unwrap().to_owned()));
        }
        if let Some(id) = content["callId"].as_str() {
            results.push(id.to_owned());
        }
    }
    (calls, results)
}

/// Every blob a stored result names is served whole.
fn assert_blobs_served(port: u16, session: &Json) {
    for m in session["messages"].as_array().unwrap() {
        for r in m["content"]["resources"].as_array().into_iter().flatten() {
            let key = r["uri"].as_str().unwrap();
            let (status, _) = http(port, "GET", &format!("/api/resources/{key}/content"), None);
            assert_eq!(status, 200, "{key} is named but not served");
        }
    }
}

fn wait_for<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn session(port: u16, id: &str) -> Json {
    let (status, body) = http(port, "GET", &format!("/api/sessions/{id}"), None);
    assert_eq!(status, 200, "{body}");
    json(&body)
}

fn new_session(port: u16) -> String {
    let (status, body) = http(port, "POST", "/api/sessions", Some(r#"{"title":"fault"}"#));
    assert_eq!(status, 201, "{body}");
    json(&body)["id"].as_str().unwrap().to_owned()
}

/// A tmpfs of `size` mounted at `dir`, unmounted when dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    /// `None` where mounting is not allowed (not root): the test is then skipped, saying
    /// so, except in CI, where it fails.
    fn mount(dir: &Path, size: &str) -> Option<SmallDisk> {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size}"),
                "toolwire-fault",
            ])
            .arg(dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(SmallDisk(dir.to_owned())),
            other => {
                let why = match other {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
                    Err(e) => e.to_string(),
                };
                assert!(
                    std::env::var_os("CI").is_none(),
                    "CI must be able to mount a small tmpfs (run as root): {why}"
                );
                eprintln!("skipped: cannot mount a small tmpfs here ({why})");
                None
            }
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Fault: the disk fills up while a blob is written. The result is stored as an error
/// naming the media, no partial file is left, no row names a missing blob, the server goes
/// on, and once there is room again media is stored as usual.
#[test]
fn a_full_disk_during_a_blob_write_is_an_error_result_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let Some(_disk) = SmallDisk::mount(&data, "3m") else {
        return;
    };
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("big.png"), png(6 << 20)).unwrap();
    std::fs::write(ws.join("small.png"), png(4_000)).unwrap();
    let port = free_port();
    let _server = Running(spawn_serve(&data, &ws, port, &[], &[]));
    let id = new_session(port);

    let (result, _) = call_and_wait(
        port,
        &id,
        r#"{"tool":"view_image","input":{"path":"big.png"}}"#,
    );
    assert_eq!(result["status"], "error", "{result}");
    let error = result["error"].to_string();
    assert!(
        error.contains("store_failed") && error.contains("output[0]"),
        "the error names the media that could not be stored: {error}"
    );
    assert!(
        result["resources"].as_array().is_none_or(Vec::is_empty),
        "no blob is named: {result}"
    );
    let leftovers: Vec<_> = walk(&data.join("blobs"))
        .into_iter()
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 1 << 20))
        .collect();
    assert!(
        leftovers.is_empty(),
        "partial blob files left: {leftovers:?}"
    );

    // The server still answers, and media that fits is stored and served.
    let (small, stored) = call_and_wait(
        port,
        &id,
        r#"{"tool":"view_image","input":{"path":"small.png"}}"#,
    );
    assert_eq!(small["status"], "success", "{small}");
    assert_eq!(
        small["resources"].as_array().map(Vec::len),
        Some(1),
        "{small}"
    );
    assert_blobs_served(port, &stored);
}

/// Runs one tool directly and waits for its stored result: the result, and the session.
fn call_and_wait(port: u16, id: &str, call: &str) -> (Json, Json) {
    let (status, body) = http(
        port,
        "POST",
        &format!("/api/sessions/{id}/calls"),
        Some(call),
    );
    assert_eq!(status, 202, "{body}");
    let call_id = json(&body)["callId"].as_str().unwrap().to_owned();
    let stored = wait_for("the call's result", || {
        let s = session(port, id);
        let (_, results) = calls_and_results(&s);
        results.contains(&call_id).then_some(s)
    });
    let result = stored["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["content"]["callId"] == call_id.as_str())
        .unwrap()["content"]
        .clone();
    (result, stored)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Runs `toolwire chat` with `stdin` as the person's lines, against `provider`.
fn chat(data: &Path, ws: &Path, provider: &Provider, stdin: &str) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolwire"));
    cmd.args(["--data-dir", data.to_str().unwrap(), "chat", "--yes"])
        .args(["--provider", "openai-chat", "--model", "mock-model"])
        .args(["--base-url", &provider.url()])
        .args(["--workspace", ws.to_str().unwrap()]);
    for var in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "TOOLWIRE_PROVIDER"] {
        cmd.env_remove(var);
    }
    with_stdin(&mut cmd, stdin)
}

/// The tool calls and tool answers of an OpenAI chat request body, in order.
fn sent_calls_and_answers(body: &Json) -> (Vec<String>, Vec<String>) {
    let mut calls = Vec::new();
    let mut answers = Vec::new();
    for m in body["messages"].as_array().unwrap() {
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            calls.push(c["id"].as_str().unwrap().to_owned());
        }
        if m["role"] == "tool" {
            answers.push(m["tool_call_id"].as_str().unwrap().to_owned());
        }
    }
    (calls, answers)
}

/// Fault: the provider's stream is cut in the middle of a tool call. The turn ends with a
/// clear error and stores nothing of the broken reply (no half call waiting for an answer
/// that never comes); the person's next message goes on in the same session and every
/// call the provider sees is answered.
#[test]
fn a_stream_cut_mid_tool_call_stores_no_half_call_and_the_chat_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (data, ws) = (dir.path().join("data"), dir.path().join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("small.png"), png(4_000)).unwrap();
    let provider = Provider::start(vec![
        Reply::Cut(
            vec![
                text("Let me look."),
                calls(&[("call_cut", "view_image", json!({}))]),
            ],
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\
             \"function\":{\"arguments\":\"{\\\"pa",
        ),
        Reply::Whole(vec![
            calls(&[("call_img", "view_image", json!({"path": "small.png"}))]),
            finish("tool_calls"),
        ]),
        Reply::Whole(vec![text("A small image."), finish("stop")]),
    ]);
    let out = chat(&data, &ws, &provider, "look at it\ntry again\n");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        stderr.contains("stream") || stdout.contains("stream"),
        "the cut is reported: {stdout} {stderr}"
    );
    assert!(
        stdout.contains("A small image."),
        "the next turn finished: {stdout} {stderr}"
    );

    let bodies = provider.bodies();
    assert_eq!(bodies.len(), 3, "one request per reply: {bodies:?}");
    for body in &bodies {
        let (calls, answers) = sent_calls_and_answers(body);
        assert_eq!(
            calls, answers,
            "every call sent is answered, in order: {body}"
        );
        assert!(
            !body.to_string().contains("call_cut"),
            "no half call: {body}"
        );
    }
    assert_eq!(
        sent_calls_and_answers(&bodies[2]).0,
        ["call_img"],
        "the image call reached the model with its result"
    );

    // The stored session agrees: one session, the image call paired, its blob stored.
    let list = Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args(["--data-dir", data.to_str().unwrap(), "sessions", "--json"])
        .output()
        .unwrap();
    let sessions: Json = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(sessions.as_array().map(Vec::len), Some(1), "{sessions}");
    let id = sessions[0]["id"].as_str().unwrap();
    let shown = Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args(["--data-dir", data.to_str().unwrap(), "show", "--json", id])
        .output()
        .unwrap();
    let messages: Json = serde_json::from_slice(&shown.stdout).unwrap();
    let stored = json!({ "messages": messages });
    let (calls, results) = calls_and_results(&stored);
    assert_eq!(calls, ["call_img"], "{stored}");
    assert_eq!(results, ["call_img"], "{stored}");
    let blobs = walk(&data.join("blobs"));
    assert!(
        blobs
            .iter()
            .any(|p| std::fs::metadata(p).is_ok_and(|m| m.len() == 4_000)),
        "the image is in the blob store: {blobs:?}"
    );
}

/// Fault: `serve` is SIGKILLed in the middle of an agent turn, while one call of the batch
/// has finished and another (approved) still runs. After a restart the finished call's
/// result and media are there, the interrupted call is answered in every provider's view,
/// and the next message's request to the model pairs every call.
#[test]
fn a_server_killed_mid_turn_keeps_finished_results_and_pairs_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let (data, ws) = (dir.path().join("data"), dir.path().join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("small.png"), png(4_000)).unwrap();
    let provider = Provider::start(vec![
        Reply::Whole(vec![
            calls(&[
                ("call_img", "view_image", json!({"path": "small.png"})),
                ("call_run", "run", json!({"command": "sleep 30"})),
            ]),
            finish("tool_calls"),
        ]),
        Reply::Whole(vec![text("Back again."), finish("stop")]),
    ]);
    let port = free_port();
    let mut server = serve_with(&data, &ws, port, &provider);
    let (id, suspension) = turn_waiting_on(port, port);
    approve(port, &id, &suspension);
    std::thread::sleep(Duration::from_millis(500));
    server.0.kill().unwrap();
    server.0.wait().unwrap();

    let port = free_port();
    let _server = serve_with(&data, &ws, port, &provider);
    let stored = session(port, &id);
    let (calls, results) = calls_and_results(&stored);
    assert_eq!(calls, ["call_img", "call_run"], "{stored}");
    assert!(
        results.contains(&"call_img".to_owned()),
        "the finished call's result survived the kill: {stored}"
    );
    assert_blobs_served(port, &stored);
    for provider in ["anthropic", "openai-chat", "openai-responses", "gemini"] {
        let (status, body) = http(
            port,
            "GET",
            &format!("/api/sessions/{id}/export?provider={provider}"),
            None,
        );
        assert_eq!(status, 200, "{provider}: {body}");
        for call in ["call_img", "call_run"] {
            assert!(
                body.matches(call).count() >= 2,
                "{provider}: {call} is called and answered: {body}"
            );
        }
    }

    let last = next_turn(port, &id, "and now?", &provider, "Back again.");
    let (calls, answers) = sent_calls_and_answers(&last);
    assert_eq!(calls, ["call_img", "call_run"], "{last}");
    assert_eq!(
        answers, calls,
        "every call is answered, in call order: {last}"
    );
}

/// Two `serve` instances on one store: a turn on A waits for approval of a call, the
/// person answers on B. B runs the call (its claim wins) and stores its result; A's wait
/// sees the claim, takes that result, and the turn goes on there. The call runs once and
/// has exactly one result, and the model sees it.
#[test]
fn a_call_waiting_on_one_instance_is_answered_on_another_and_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let (data, ws, provider) = run_call_script(dir.path(), "It ran.");
    let (_a, port_a, _b, port_b) = two_instances(&data, &ws, &provider);
    let (id, suspension) = turn_waiting_on(port_a, port_b);
    approve(port_b, &id, &suspension);
    let stored = wait_for("the turn to finish on A", || {
        let s = session(port_a, &id);
        s.to_string().contains("It ran.").then_some(s)
    });
    let (calls, results) = calls_and_results(&stored);
    assert_eq!(calls, ["call_run"], "{stored}");
    assert_eq!(results, ["call_run"], "exactly one result: {stored}");
    assert_eq!(
        std::fs::read_to_string(ws.join("runs.txt")).unwrap(),
        "ran\n",
        "the call ran once"
    );
    let bodies = provider.bodies();
    let last = bodies.last().unwrap();
    assert_eq!(sent_calls_and_answers(last).1, ["call_run"], "{last}");
    assert!(
        last.to_string().contains("done"),
        "the model sees B's output: {last}"
    );
}

/// Two `serve` instances on one data directory (one SQLite file and blob directory; the
/// same holds on Postgres + S3), both talking to `provider`.
fn two_instances(data: &Path, ws: &Path, provider: &Provider) -> (Running, u16, Running, u16) {
    let (port_a, port_b) = (free_port(), free_port());
    let a = serve_with(data, ws, port_a, provider);
    let b = serve_with(data, ws, port_b, provider);
    (a, port_a, b, port_b)
}

/// Starts a turn on A and waits until B (or A itself) lists its call as waiting: the
/// session and the suspension id.
fn turn_waiting_on(port_a: u16, port_b: u16) -> (String, String) {
    let id = new_session(port_a);
    let (status, body) = http(
        port_a,
        "POST",
        &format!("/api/sessions/{id}/messages"),
        Some(r#"{"text":"run it"}"#),
    );
    assert_eq!(status, 202, "{body}");
    let suspension = wait_for("the call's approval request", || {
        let (_, body) = http(
            port_b,
            "GET",
            &format!("/api/sessions/{id}/suspensions"),
            None,
        );
        json(&body)[0]["suspension"]["id"]
            .as_str()
            .map(str::to_owned)
    });
    (id, suspension)
}

/// Fault: the instance running a turn is killed while a call waits for approval. The
/// call stays answerable on the other instance, which runs it once and stores its one
/// result; the conversation goes on there and the model sees every call answered.
#[test]
fn a_call_waiting_on_a_killed_instance_is_answered_and_run_on_another() {
    let dir = tempfile::tempdir().unwrap();
    let (data, ws, provider) = run_call_script(dir.path(), "Carried on.");
    let (mut a, port_a, _b, port_b) = two_instances(&data, &ws, &provider);
    let (id, suspension) = turn_waiting_on(port_a, port_b);
    a.0.kill().unwrap();
    a.0.wait().unwrap();

    approve(port_b, &id, &suspension);
    let stored = session(port_b, &id);
    let (calls, results) = calls_and_results(&stored);
    assert_eq!(calls, ["call_run"], "{stored}");
    assert_eq!(results, ["call_run"], "exactly one result: {stored}");
    assert_eq!(
        std::fs::read_to_string(ws.join("runs.txt")).unwrap(),
        "ran\n"
    );
    let (_, body) = http(
        port_b,
        "GET",
        &format!("/api/sessions/{id}/suspensions"),
        None,
    );
    assert_eq!(json(&body), json!([]), "nothing left waiting");

    let last = next_turn(port_b, &id, "and then?", &provider, "Carried on.");
    assert_eq!(sent_calls_and_answers(&last).1, ["call_run"], "{last}");
    assert!(last.to_string().contains("done"), "{last}");
}

/// Posts a message and waits until the model's `reply` is stored: the last request the
/// provider got.
fn next_turn(port: u16, id: &str, text: &str, provider: &Provider, reply: &str) -> Json {
    let (status, body) = http(
        port,
        "POST",
        &format!("/api/sessions/{id}/messages"),
        Some(&json!({ "text": text }).to_string()),
    );
    assert_eq!(status, 202, "{body}");
    wait_for(reply, || {
        session(port, id).to_string().contains(reply).then_some(())
    });
    provider.bodies().pop().unwrap()
}

/// A workspace and a provider that asks for one `run` call (which appends to
/// `runs.txt`, so a second run shows) and then answers `reply`.
fn run_call_script(dir: &Path, reply: &'static str) -> (PathBuf, PathBuf, Provider) {
    let (data, ws) = (dir.join("data"), dir.join("ws"));
    std::fs::create_dir_all(&ws).unwrap();
    let provider = Provider::start(vec![
        Reply::Whole(vec![
            calls(&[(
                "call_run",
                "run",
                json!({"command": "echo ran >> runs.txt; echo done"}),
            )]),
            finish("tool_calls"),
        ]),
        Reply::Whole(vec![text(reply), finish("stop")]),
    ]);
    (data, ws, provider)
}

/// `serve` on `port` with `provider` as its model.
fn serve_with(data: &Path, ws: &Path, port: u16, provider: &Provider) -> Running {
    let url = provider.url();
    let args = [
        "--provider",
        "openai-chat",
        "--model",
        "mock-model",
        "--base-url",
        url.as_str(),
    ];
    Running(spawn_serve(data, ws, port, &[], &args))
}

/// Long enough for a request that waits on the database pool while Postgres restarts.
const PATIENT: Duration = Duration::from_secs(30);

/// Restarts the services' Postgres for real: `pg_ctl restart` on the cluster
/// `tests/services/start` made (as the `postgres` user when run by root).
fn restart_postgres() {
    let dir =
        std::env::var("TOOLWIRE_SERVICES_DIR").unwrap_or_else(|_| "/tmp/toolwire-services".into());
    let pgdata = Path::new(&dir).join("pg");
    let pg_ctl = std::fs::read_dir("/usr/lib/postgresql")
        .unwrap()
        .filter_map(|v| v.ok().map(|v| v.path().join("bin/pg_ctl")))
        .find(|p| p.exists())
        .expect("Debian's PostgreSQL (apt-get install postgresql)");
    let id = Command::new("id").arg("-u").output().unwrap();
    // Postgres refuses to run as root; tests/services/start runs it as `postgres`.
    let mut cmd = if String::from_utf8_lossy(&id.stdout).trim() == "0" {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(&pg_ctl);
        c
    } else {
        Command::new(&pg_ctl)
    };
    // The new server logs to its file: given our pipes, it would hold them open and
    // `output()` would wait for it forever.
    let status = cmd
        .arg("-D")
        .arg(&pgdata)
        .arg("-l")
        .arg(pgdata.join("server.log"))
        .args(["-m", "fast", "-w", "-t", "60", "restart"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(
        status.success(),
        "pg_ctl restart failed: see {}/server.log",
        pgdata.display()
    );
}

/// Fault: Postgres restarted (a real `pg_ctl restart`) while two instances store results
/// from four clients. Every POST is answered, accepted or refused with an error that says
/// what failed; no result is stored twice or half; the instances live through it, and
/// calls made after the restart store normally.
#[test]
fn postgres_restarted_mid_load_fails_calls_clearly_and_stores_nothing_twice() {
    let Some((pg, s3)) = support::scale_out_services() else {
        return;
    };
    let args = support::scale_out_args(&pg, &s3, "restart");
    let global: Vec<&str> = args.iter().map(String::as_str).collect();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "a small result\n").unwrap();
    std::fs::write(ws.path().join("pic.png"), png(30_000)).unwrap();
    let (data_a, data_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ports = [free_port(), free_port()];
    let mut instances = [
        Running(spawn_serve(
            data_a.path(),
            ws.path(),
            ports[0],
            &global,
            &[],
        )),
        Running(spawn_serve(
            data_b.path(),
            ws.path(),
            ports[1],
            &global,
            &[],
        )),
    ];
    let sessions: Vec<(u16, String)> = (0..4)
        .map(|i| (ports[i % 2], new_session(ports[i % 2])))
        .collect();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let clients: Vec<_> = sessions
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, (port, id))| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut answers = Vec::new();
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    n += 1;
                    let file = if (i + n) % 5 == 0 {
                        r#"{"tool":"view_image","input":{"path":"pic.png"}}"#
                    } else {
                        r#"{"tool":"read_file","input":{"path":"a.txt"}}"#
                    };
                    answers.push(try_http(
                        port,
                        "POST",
                        &format!("/api/sessions/{id}/calls"),
                        Some(file),
                        PATIENT,
                    ));
                    std::thread::sleep(Duration::from_millis(20));
                }
                answers
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    let t = Instant::now();
    restart_postgres();
    eprintln!("Postgres restarted in {:?}", t.elapsed());
    std::thread::sleep(Duration::from_millis(2500));
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut accepted = Vec::new();
    let mut refused = 0;
    for (client, (_, id)) in clients.into_iter().zip(&sessions) {
        for answer in client.join().unwrap() {
            let (status, body) = answer.expect("every POST is answered, none dropped");
            if status == 202 {
                accepted.push((
                    id.clone(),
                    json(&body)["callId"].as_str().unwrap().to_owned(),
                ));
            } else {
                // Refused while the database was away: a JSON error that says so.
                assert!(status >= 500, "{status} {body}");
                let message = json(&body)["error"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                assert!(!message.is_empty(), "{status} {body}");
                if refused == 0 {
                    eprintln!("refused: {status} {message}");
                }
                refused += 1;
            }
        }
    }
    eprintln!("clients done after {:?}", t.elapsed());
    for instance in &mut instances {
        assert!(
            instance.0.try_wait().unwrap().is_none(),
            "an instance died with the database"
        );
    }
    // After the restart, both instances store again (their pools reconnect).
    for (port, id) in &sessions[..2] {
        wait_for("the instance reading the database again", || {
            try_http(*port, "GET", &format!("/api/sessions/{id}"), None, PATIENT)
                .filter(|a| a.0 == 200)
        });
        let (result, _) = call_and_wait(
            *port,
            id,
            r#"{"tool":"read_file","input":{"path":"a.txt"}}"#,
        );
        assert_eq!(result["status"], "success", "{result}");
    }
    // No call has two results; a call accepted just before the restart either finished
    // or had its result write refused by it: a few at most (clients post every 20 ms).
    let mut unanswered = 0;
    for (port, id) in &sessions {
        let stored = session(*port, id);
        let (_, results) = calls_and_results(&stored);
        let mut unique = results.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(
            unique.len(),
            results.len(),
            "a call stored twice: {results:?}"
        );
        unanswered += accepted
            .iter()
            .filter(|(s, c)| s == id && !results.contains(c))
            .count();
    }
    assert!(
        unanswered <= sessions.len(),
        "{unanswered} accepted calls without a result"
    );
    eprintln!(
        "{} calls accepted, {refused} refused while Postgres restarted, {unanswered} cut",
        accepted.len()
    );
}
