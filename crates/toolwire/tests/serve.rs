//! `toolwire serve` as a person runs it: it prints its URL, answers, refuses a public
//! address without a token in one line, and stops cleanly on SIGTERM.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use support::{
    Running, approve, free_port, http, json, scale_out_args, scale_out_services, start_serve,
    start_serve_with,
};

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn serve_prints_its_url_answers_and_stops_on_sigterm() {
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args([
            "--data-dir",
            data.path().to_str().unwrap(),
            "serve",
            "--addr",
        ])
        .arg(format!("127.0.0.1:{port}"))
        .env_remove("TOOLWIRE_TOKEN")
        .env_remove("TOOLWIRE_PROVIDER")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert_eq!(
        line.trim(),
        format!("toolwire is serving at http://127.0.0.1:{port}/")
    );

    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        tcp,
        "GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut bytes = Vec::new();
    tcp.read_to_end(&mut bytes).unwrap();
    // Media bodies are not text; they are only checked by status and length here.
    let answer = String::from_utf8_lossy(&bytes).into_owned();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("stopped"), "{rest}");
}

#[test]
fn a_public_address_without_a_token_is_one_line_error() {
    let data = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args([
            "--data-dir",
            data.path().to_str().unwrap(),
            "serve",
            "--addr",
            "0.0.0.0:0",
        ])
        .env_remove("TOOLWIRE_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("token"), "{stderr}");
}

/// Fault: the server is SIGKILLed while an approved call runs. After a restart nothing
/// is lost or renumbered: the call is still in the history, the model view answers it
/// (as interrupted), its event numbers go on from where they were, and new calls work.
#[test]
fn a_server_killed_mid_call_loses_nothing_after_a_restart() {
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "still here\n").unwrap();
    let port = free_port();
    let mut server = start_serve(data.path(), ws.path(), port);
    let (status, body) = http(port, "POST", "/api/sessions", Some(r#"{"title":"fault"}"#));
    assert_eq!(status, 201, "{body}");
    let id = json(&body)["id"].as_str().unwrap().to_owned();
    let (status, body) = http(
        port,
        "POST",
        &format!("/api/sessions/{id}/calls"),
        Some(r#"{"tool":"run","input":{"command":"sleep 3; echo finished"}}"#),
    );
    assert_eq!(status, 202, "{body}");
    let call_id = json(&body)["callId"].as_str().unwrap().to_owned();
    let mut pending = serde_json::Value::Null;
    for _ in 0..100 {
        let (_, body) = http(
            port,
            "GET",
            &format!("/api/sessions/{id}/suspensions"),
            None,
        );
        pending = json(&body);
        if pending.as_array().is_some_and(|p| !p.is_empty()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let suspension = pending[0]["suspension"]["id"].as_str().unwrap().to_owned();
    approve(port, &id, &suspension);
    std::thread::sleep(Duration::from_millis(500));
    let (_, before) = http(port, "GET", &format!("/api/sessions/{id}"), None);
    let last_seq = json(&before)["lastEventSeq"].as_u64().unwrap();
    server.kill().unwrap();
    server.wait().unwrap();

    let port = free_port();
    let mut server = start_serve(data.path(), ws.path(), port);
    let (status, body) = http(port, "GET", &format!("/api/sessions/{id}"), None);
    assert_eq!(status, 200, "{body}");
    let session = json(&body);
    assert!(
        session["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["content"]["toolCalls"][0]["id"] == call_id.as_str()),
        "the call is in the history: {body}"
    );
    assert_eq!(session["lastEventSeq"].as_u64().unwrap(), last_seq);
    // The model view pairs the interrupted call with an answer.
    let (status, body) = http(
        port,
        "GET",
        &format!("/api/sessions/{id}/export?provider=anthropic"),
        None,
    );
    assert_eq!(status, 200, "{body}");
    let export = json(&body);
    let answered = export["messages"].as_array().unwrap().iter().any(|m| {
        m["content"].as_array().is_some_and(|blocks| {
            blocks
                .iter()
                .any(|b| b["type"] == "tool_result" && b["tool_use_id"] == call_id.as_str())
        })
    });
    assert!(answered, "the call is answered in the model view: {body}");
    // Work goes on, numbered after what was there.
    let (status, _) = http(
        port,
        "POST",
        &format!("/api/sessions/{id}/calls"),
        Some(r#"{"tool":"read_file","input":{"path":"a.txt"}}"#),
    );
    assert_eq!(status, 202);
    let mut after = 0;
    for _ in 0..100 {
        let (_, body) = http(port, "GET", &format!("/api/sessions/{id}"), None);
        after = json(&body)["lastEventSeq"].as_u64().unwrap();
        if after > last_seq + 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        after > last_seq + 1,
        "events go on after {last_seq}: {after}"
    );
    server.kill().unwrap();
    server.wait().unwrap();
}

/// An SSE feed read by `curl -N` (which undoes the chunked encoding): `(id, event)` pairs.
struct Feed {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Feed {
    fn open(port: u16, session: &str, last_event_id: Option<u64>) -> Feed {
        let mut cmd = Command::new("curl");
        cmd.args(["-sN", "--max-time", "120"]);
        if let Some(id) = last_event_id {
            cmd.args(["-H", &format!("Last-Event-ID: {id}")]);
        }
        let mut child = cmd
            .arg(format!(
                "http://127.0.0.1:{port}/api/sessions/{session}/events"
            ))
            .stdout(Stdio::piped())
            .spawn()
            .expect("curl runs");
        let out = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Feed { child, lines }
    }

    /// Events until `results` tool results have come: each `(id, event name, data)`.
    fn until_results(&self, results: usize) -> Vec<(u64, String, serde_json::Value)> {
        let mut out = Vec::new();
        let (mut id, mut name) = (None, String::new());
        let mut seen = 0;
        while seen < results {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(20))
                .unwrap_or_else(|_| panic!("{seen} of {results} results after 20 s: {out:?}"));
            let field = |name: &str| {
                line.strip_prefix(name)
                    .and_then(|rest| rest.strip_prefix(':'))
                    .map(str::trim)
            };
            if let Some(v) = field("id") {
                id = v.parse().ok();
            } else if let Some(v) = field("event") {
                name = v.to_owned();
            } else if let Some(v) = field("data") {
                let data = json(v);
                if name == "tool_result" {
                    seen += 1;
                }
                out.push((
                    id.take().expect("every event has an id"),
                    name.clone(),
                    data,
                ));
            }
        }
        out
    }

    /// Whether the server ended the feed (curl exits) within `wait`.
    fn ends_within(&mut self, wait: Duration) -> bool {
        let until = std::time::Instant::now() + wait;
        while std::time::Instant::now() < until {
            if self.child.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Waits for the feed's first line (its replay has begun: it follows the session).
    fn started(&self) {
        self.lines
            .recv_timeout(Duration::from_secs(20))
            .expect("the feed answers");
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Scale-out: two instances on one Postgres and one S3 bucket. A subscriber on A sees, in
/// order and without gaps, the results B produces (media stored in S3 included), also
/// after A is killed and restarted and the subscriber resumes with Last-Event-ID.
#[test]
fn a_subscriber_on_one_instance_sees_another_instances_results_across_a_restart() {
    let Some((pg, s3)) = scale_out_services() else {
        return;
    };
    let args = scale_out_args(&pg, &s3, "serve");
    let global: Vec<&str> = args.iter().map(String::as_str).collect();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "from instance B\n").unwrap();
    // An image big enough to be stored as a blob (in S3), not inline.
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend((0..20_000u32).map(|i| (i % 251) as u8));
    std::fs::write(ws.path().join("pic.png"), &png).unwrap();
    let (data_a, data_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (port_a, port_b) = (free_port(), free_port());
    let mut a = Running(start_serve_with(data_a.path(), ws.path(), port_a, &global));
    let _b = Running(start_serve_with(data_b.path(), ws.path(), port_b, &global));

    let (status, body) = http(port_b, "POST", "/api/sessions", Some(r#"{"title":"two"}"#));
    assert_eq!(status, 201, "{body}");
    let id = json(&body)["id"].as_str().unwrap().to_owned();
    let call = |input: &str| {
        let (status, body) = http(
            port_b,
            "POST",
            &format!("/api/sessions/{id}/calls"),
            Some(input),
        );
        assert_eq!(status, 202, "{body}");
        json(&body)["callId"].as_str().unwrap().to_owned()
    };
    let feed = Feed::open(port_a, &id, None);
    let mut calls = Vec::new();
    for i in 0..5 {
        calls.push(if i == 2 {
            call(r#"{"tool":"view_image","input":{"path":"pic.png"}}"#)
        } else {
            call(r#"{"tool":"read_file","input":{"path":"a.txt"}}"#)
        });
    }
    let first = feed.until_results(5);
    drop(feed);
    let ids: Vec<u64> = first.iter().map(|e| e.0).collect();
    assert_eq!(
        ids,
        (1..=ids.len() as u64).collect::<Vec<_>>(),
        "in order, no gaps"
    );
    let results: Vec<&serde_json::Value> = first
        .iter()
        .filter(|e| e.1 == "tool_result")
        .map(|e| &e.2["result"])
        .collect();
    let got: Vec<&str> = results
        .iter()
        .map(|r| r["callId"].as_str().unwrap())
        .collect();
    let mut want = calls.clone();
    want.sort();
    let mut sorted = got.clone();
    sorted.sort();
    assert_eq!(sorted, want, "every call's result once");
    // The blob B stored (the event carries the result before it is persisted; the
    // history has it as stored) is served by A, from the shared bucket.
    let stored_blob = || {
        let (status, body) = http(port_a, "GET", &format!("/api/sessions/{id}"), None);
        assert_eq!(status, 200, "{body}");
        json(&body)["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|m| {
                m["content"]["resources"][0]["uri"]
                    .as_str()
                    .map(str::to_owned)
            })
    };
    let mut blob = None;
    for _ in 0..100 {
        blob = stored_blob();
        if blob.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let blob = blob.expect("the image is stored as a blob");

    // A dies and comes back on another port; the subscriber resumes where it was.
    // B goes on while A is down: those results reach the resumed feed from the log.
    a.0.kill().unwrap();
    a.0.wait().unwrap();
    for _ in 0..2 {
        calls.push(call(r#"{"tool":"read_file","input":{"path":"a.txt"}}"#));
    }
    let port_a = free_port();
    let _a = Running(start_serve_with(data_a.path(), ws.path(), port_a, &global));
    let last = *ids.last().unwrap();
    let feed = Feed::open(port_a, &id, Some(last));
    calls.push(call(r#"{"tool":"read_file","input":{"path":"a.txt"}}"#));
    let second = feed.until_results(3);
    let ids: Vec<u64> = second.iter().map(|e| e.0).collect();
    assert_eq!(
        ids,
        ((last + 1)..=(last + ids.len() as u64)).collect::<Vec<_>>(),
        "resumed after {last}, no gap and no repeat"
    );
    let (status, body) = http(
        port_a,
        "GET",
        &format!("/api/resources/{blob}/content"),
        None,
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.starts_with("\u{fffd}PNG"), "the image's bytes");

    // B deletes the session: its feed on A ends at once (Postgres's word names the
    // session; a feed used to wait for its next look, up to 5 s after it opened), and a
    // feed of another session on A goes on.
    let (status, body) = http(
        port_b,
        "POST",
        "/api/sessions",
        Some(r#"{"title":"stays"}"#),
    );
    assert_eq!(status, 201, "{body}");
    let other = json(&body)["id"].as_str().unwrap().to_owned();
    let mut stays = Feed::open(port_a, &other, None);
    let mut ends = Feed::open(port_a, &id, None);
    ends.started();
    let (status, body) = http(port_b, "DELETE", &format!("/api/sessions/{id}"), None);
    assert_eq!(status, 204, "{body}");
    assert!(
        ends.ends_within(Duration::from_secs(3)),
        "the deleted session's feed on the other instance still open after 3 s"
    );
    assert!(
        !stays.ends_within(Duration::from_millis(500)),
        "another session's feed ended"
    );
}

/// The first line `serve` prints on stderr, then the server is stopped.
fn first_line_of_serve(args: &[&str], token_env: Option<&str>) -> String {
    let data = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolwire"));
    cmd.args([
        "--data-dir",
        data.path().to_str().unwrap(),
        "serve",
        "--addr",
    ])
    .arg(format!("127.0.0.1:{}", free_port()))
    .args(args)
    .env_remove("TOOLWIRE_TOKEN")
    .env_remove("TOOLWIRE_PROVIDER")
    .stderr(Stdio::piped());
    if let Some(token) = token_env {
        cmd.env("TOOLWIRE_TOKEN", token);
    }
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    line
}

/// A token given by the environment or a file is never printed (stderr lands in
/// journald and docker logs) unless the person asks for the login URL.
#[test]
fn a_given_token_is_not_printed_unless_asked() {
    let token = "env-token-0123456789abcdef";
    let line = first_line_of_serve(&[], Some(token));
    assert!(line.contains("toolwire is serving at"), "{line}");
    assert!(!line.contains(token), "{line}");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, "file-token-0123456789abcdef\n").unwrap();
    let file = file.to_str().unwrap();
    let line = first_line_of_serve(&["--token-file", file], None);
    assert!(!line.contains("file-token"), "{line}");
    let line = first_line_of_serve(&["--token-file", file, "--print-login-url"], None);
    assert!(
        line.contains("?token=file-token-0123456789abcdef"),
        "{line}"
    );
}
