//! `toolwire serve`'s AG-UI endpoint driven by AG-UI's own client (`@ag-ui/client`'s
//! HttpAgent, tests/agui/run.mjs), every event checked against `@ag-ui/core`'s schemas: a
//! turn against a scripted OpenAI-compatible provider that reads an image (its result an
//! image part by URL, and toolwire's own result in a CUSTOM event) and runs a command
//! that needs approval (the run ends with an interrupt; the next run's resume approves it
//! and the turn goes on to its end).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value as Json, json};
use support::provider::{chunk, server, sse};

/// tests/agui with AG-UI's packages, or `None` (after saying why) when not installed.
fn agui_client() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/agui");
    if dir.join("node_modules/@ag-ui/client").exists() {
        return Some(dir.join("run.mjs"));
    }
    let why = "tests/agui/node_modules is missing: run `npm ci --prefix tests/agui` (.ci/run does)";
    if std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("SKIPPED: {why}");
    None
}

/// `toolwire serve` on a free port, its model the scripted `provider`.
fn serve_with(
    provider: &wiremock::MockServer,
    data: &std::path::Path,
    ws: &std::path::Path,
) -> (support::peers::Child, u16) {
    let port = support::free_port();
    let base = format!("{}/v1", provider.uri());
    let serve = support::spawn_serve(
        data,
        ws,
        port,
        &[],
        &[
            "--provider",
            "openai-chat",
            "--model",
            "m",
            "--base-url",
            &base,
        ],
    );
    (support::peers::Child(serve), port)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agui_client_runs_a_turn_with_an_image_and_an_approval() {
    let Some(client) = agui_client() else { return };
    let replies = vec![
        sse(&[
            chunk(json!({"role": "assistant", "content": "Looking at the pixel."})),
            chunk(json!({"tool_calls": [
                {"index": 0, "id": "call_img", "type": "function",
                 "function": {"name": "view_image", "arguments": "{\"path\":\"pixel.png\"}"}},
                {"index": 1, "id": "call_bad", "type": "function",
                 "function": {"name": "view_image", "arguments": "{\"path\":\"missing.png\"}"}},
                {"index": 2, "id": "call_run", "type": "function",
                 "function": {"name": "run", "arguments": "{\"command\":\"echo approved\"}"}},
            ]})),
        ]),
        sse(&[chunk(json!({"content": "All done."}))]),
    ];
    let provider = server("/v1/chat/completions", replies).await;
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("pixel.png"), support::png(4096)).unwrap();
    let (_serve, port) = serve_with(&provider, data.path(), ws.path());
    let url = format!("http://127.0.0.1:{port}/api/agui");
    let out = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .arg(&client)
            .arg(&url)
            .arg("What is in pixel.png? Then run the check.")
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
    // Every event is valid AG-UI 1.0.
    assert_eq!(got["invalid"], json!([]), "{got}");
    let runs = got["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{got}");
    let first: Vec<&str> = runs[0]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert_eq!(first[0], "RUN_STARTED");
    for kind in [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "CUSTOM",
    ] {
        assert!(first.contains(&kind), "{kind} missing: {first:?}");
    }
    assert_eq!(first.last(), Some(&"RUN_FINISHED"));
    let interrupt = &runs[0]["outcome"];
    assert_eq!(interrupt["type"], "interrupt", "{got}");
    assert_eq!(interrupt["interrupts"][0]["reason"], "tool_approval");
    assert_eq!(interrupt["interrupts"][0]["toolCallId"], "call_run");
    // The resumed run: a snapshot first, then the approved call and the turn's end.
    let second: Vec<&str> = runs[1]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert_eq!(
        &second[..3],
        ["RUN_STARTED", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"]
    );
    assert!(second.contains(&"TOOL_CALL_RESULT"), "{second:?}");
    assert_eq!(runs[1]["outcome"]["type"], "success", "{got}");
    // The resumed run's snapshot keeps the ids the client and the stream used: every
    // message the client had after the first run is still there, under its id, and the
    // model's text and calls are one message, as stored.
    let ids = |run: &Json| -> Vec<String> {
        run["messageIds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_str().unwrap().to_owned())
            .collect()
    };
    let (before, after) = (ids(&runs[0]), ids(&runs[1]));
    assert_eq!(before.first().map(String::as_str), Some("u1"), "{got}");
    for id in &before {
        assert!(after.contains(id), "{id} renamed: {before:?} → {after:?}");
    }
    assert_eq!(
        before.len(),
        4,
        "the user's, one assistant message with the three calls, two results (the third \
         waits): {before:?}"
    );
    // After the resumed run, the state no longer lists the answered approval as waiting.
    assert_eq!(got["state"]["toolwire"]["waiting"], json!([]), "{got}");

    // The image result is an image part by URL to this server, never inline base64.
    let results = got["toolResults"].as_array().unwrap();
    let image = results
        .iter()
        .find(|r| r["toolCallId"] == "call_img")
        .expect("the image's result");
    let part = image["content"]
        .as_array()
        .unwrap_or_else(|| panic!("{image}"))
        .iter()
        .find(|p| p["type"] == "image")
        .expect("an image part");
    let src = part["source"]["value"].as_str().unwrap();
    assert!(
        src.starts_with(&format!("http://127.0.0.1:{port}/api/resources/blake3:")),
        "{src}"
    );
    let (status, _) = support::http(
        port,
        "GET",
        src.split_once(&format!("{port}")).unwrap().1,
        None,
    );
    assert_eq!(status, 200);
    assert!(!got.to_string().contains("iVBORw0KGgo"), "no inline base64");
    assert_eq!(part["source"]["mimeType"], "image/png");
    let approved = results
        .iter()
        .find(|r| r["toolCallId"] == "call_run")
        .expect("the approved call's result");
    assert!(
        approved["content"].to_string().contains("approved"),
        "{approved}"
    );
    // A text-only result is a plain string (AG-UI 0.x clients accept nothing else); only a
    // result with media is a list of parts.
    assert!(approved["content"].is_string(), "{approved}");
    // The resumed run's snapshot tells a plain client which call failed, and why.
    let tool_messages = got["toolMessages"].as_array().unwrap();
    let failed = tool_messages
        .iter()
        .find(|m| m["toolCallId"] == "call_bad")
        .unwrap_or_else(|| panic!("{got}"));
    assert!(
        failed["error"]
            .as_str()
            .is_some_and(|e| e.contains("missing.png")),
        "{failed}"
    );
    let fine = tool_messages
        .iter()
        .find(|m| m["toolCallId"] == "call_img")
        .unwrap_or_else(|| panic!("{got}"));
    assert!(fine["error"].is_null(), "{fine}");
    // The conversation the client kept ends with the model's words after the tools.
    let messages = got["messages"].as_array().unwrap();
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "assistant" && m["content"] == "All done."),
        "{got}"
    );
}

/// A call a person makes in the session while an AG-UI run goes on (the web app's; an MCP
/// App polls its tool every 2 s) is not the run's: it is left out of the run's stream, and
/// the run still ends when the model answers. Before, the person's call, landing while the
/// model thought, was streamed as the run's, and counted as the model's: when it landed
/// after the model's request began, the answer's end no longer ended the run, which stayed
/// open with nothing left to come.
#[tokio::test(flavor = "multi_thread")]
async fn a_persons_call_during_a_run_is_not_the_runs() {
    // The model thinks for two seconds: the person's call lands meanwhile.
    let replies = vec![
        sse(&[chunk(
            json!({"role": "assistant", "content": "Nothing to run."}),
        )])
        .set_delay(std::time::Duration::from_secs(2)),
    ];
    let provider = server("/v1/chat/completions", replies).await;
    let data = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("note.txt"), "hello").unwrap();
    let (_serve, port) = serve_with(&provider, data.path(), ws.path());
    let thread = "agui-beside-a-person";
    let input = json!({
        "threadId": thread,
        "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": "Anything to do?"}],
    })
    .to_string();
    let run = tokio::task::spawn_blocking(move || {
        support::try_http(
            port,
            "POST",
            "/api/agui",
            Some(&input),
            std::time::Duration::from_secs(20),
        )
    });
    // The run made the session; the person calls a tool in it while the model thinks.
    let calls = format!("/api/sessions/{thread}/calls");
    let body = r#"{"tool": "list_dir", "input": {"path": "."}}"#;
    let mut status = 0;
    for _ in 0..40 {
        status = support::http(port, "POST", &calls, Some(body)).0;
        if status == 202 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(status, 202, "the person's call was not taken");
    // Bounded as a whole: the stream's keep-alives would hold each read open for ever.
    let (status, stream) = tokio::time::timeout(std::time::Duration::from_secs(30), run)
        .await
        .expect("the run ended within 30 s (before the fix it could stay open for good)")
        .unwrap()
        .expect("the run answered");
    assert_eq!(status, 200, "{stream}");
    let events: Vec<Json> = stream
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"RUN_STARTED"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"RUN_FINISHED"), "{kinds:?}");
    assert_eq!(events.last().unwrap()["outcome"]["type"], "success");
    assert!(kinds.contains(&"TEXT_MESSAGE_CONTENT"), "{kinds:?}");
    assert!(
        !kinds.iter().any(|k| k.starts_with("TOOL_CALL")),
        "the person's call is not the run's: {kinds:?}"
    );
    // The session holds both: the person's call, recorded as theirs, and the answer.
    let (_, session) = support::http(port, "GET", &format!("/api/sessions/{thread}"), None);
    let session = support::json(&session);
    let messages = session["messages"].as_array().unwrap();
    assert!(
        messages
            .iter()
            .any(|m| m["content"]["toolCalls"][0]["byPerson"]["via"] == "web"),
        "{session}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m["content"]["toolName"] == "list_dir"),
        "{session}"
    );
    assert_eq!(
        messages.last().unwrap()["content"]["text"],
        "Nothing to run.",
        "{session}"
    );
}
