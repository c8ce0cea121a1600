//! `toolwire gateway`'s tasks, driven by the official Python SDK's client
//! (tests/mcp/gateway_tasks.py) as a 2026-07-28 host that declares the tasks extension:
//! server-everything's long `simulate-research-query` (a task on the server too) comes
//! back as a task of the gateway's, polled through `tasks/get` from working (with the
//! server's status messages) to completed with the result inline, and stored in the
//! history; `tasks/cancel` cancels it (and the call behind it); an unknown id, or
//! another client's, is refused; a quick call is still answered inline.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

/// server-everything as the gateway's one server `ev`, asking no approval (only calls
/// that ask nobody become tasks).
fn everything_config(dir: &Path) -> Option<String> {
    let script = support::peers::everything()?;
    support::peers::peer("venv/bin/python")?;
    let config = json!({"mcpServers": {"ev": {
        "command": "node",
        "args": [script, "stdio"],
        "approval": "never",
    }}});
    let path = dir.join("mcp.json");
    std::fs::write(&path, config.to_string()).unwrap();
    Some(path.to_str().unwrap().to_owned())
}

/// Runs tests/mcp/gateway_tasks.py with `steps`, against a gateway it starts on stdio
/// (`url` none) or the one at `url`; one JSON value per step.
fn drive(data: &Path, config: &str, url: Option<&str>, steps: Value) -> Vec<Value> {
    let peers = support::peers::peers_dir();
    let mut client = Command::new(peers.join("venv/bin/python"));
    client
        .current_dir(&peers)
        .arg(peers.join("gateway_tasks.py"))
        .env("GATEWAY_STEPS", steps.to_string());
    match url {
        Some(url) => client
            .env("GATEWAY_URL", url)
            .env("GATEWAY_TOKEN", support::mcp::http_token(data)),
        None => client
            .arg(env!("CARGO_BIN_EXE_toolwire"))
            .arg(data)
            .arg("claude-code")
            .args(["--mcp-config", config]),
    };
    support::mcp::client_lines(&mut client)
}

#[test]
fn a_long_call_becomes_a_task_the_host_polls_cancels_and_finds_stored() {
    let dir = tempfile::tempdir().unwrap();
    let Some(config) = everything_config(dir.path()) else {
        return;
    };
    let data = dir.path().join("data");
    let steps = json!([
        {"task": "ev__simulate-research-query", "args": {"topic": "tides"}},
        {"task": "ev__simulate-research-query", "args": {"topic": "waves"}, "cancel": true},
        {"get": "task_0123456789abcdef0123456789abcdef"},
        {"tool": "ev__echo", "args": {"message": "still inline"}},
    ]);
    let got = drive(&data, &config, None, steps);
    assert_eq!(got[0]["version"], "2026-07-28", "{}", got[0]);

    // The call is answered at once with the gateway's own task, not the server's.
    let done = &got[1];
    let created = &done["created"];
    assert_eq!(created["resultType"], "task", "{done}");
    assert_eq!(created["status"], "working", "{done}");
    let id = created["taskId"].as_str().unwrap();
    assert!(id.starts_with("task_") && id.len() == 37, "{id}");
    assert!(created["ttlMs"].as_u64().unwrap() > 0, "{done}");
    assert!(created["pollIntervalMs"].as_u64().unwrap() > 0, "{done}");
    // Polled: working, with the server's own status messages, then completed.
    let statuses = done["statuses"].as_array().unwrap();
    assert_eq!(statuses[0], "working", "{done}");
    assert_eq!(statuses.last().unwrap(), "completed", "{done}");
    let messages = done["messages"].to_string();
    assert!(
        messages.contains("Analyzing content...") || messages.contains("Synthesizing findings..."),
        "{done}"
    );
    // The result as the host would have had it inline: budgeted, kept, tied to the task.
    let result = &done["final"]["result"];
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("# Research Report: tides"), "{done}");
    assert_ne!(result["isError"], true, "{done}");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], id,
        "{done}"
    );
    let call_id = result["_meta"]["toolwire/callId"].as_str().unwrap();

    // Cancelled while the server works on it: cancelled at once, and for good.
    let cancelled = &got[2];
    assert_eq!(cancelled["before"]["status"], "working", "{cancelled}");
    assert_eq!(cancelled["after"]["status"], "cancelled", "{cancelled}");
    assert!(
        cancelled["againError"]
            .as_str()
            .unwrap()
            .contains("has ended already"),
        "{cancelled}"
    );

    // An id the gateway never gave: a clear error, not a hang or a crash.
    assert_eq!(got[3]["step"], "error", "{}", got[3]);
    assert!(
        got[3]["message"]
            .as_str()
            .unwrap()
            .contains("no task \"task_0123456789abcdef0123456789abcdef\""),
        "{}",
        got[3]
    );
    // A quick call of the same host is answered inline.
    assert_eq!(
        got[4]["result"]["content"][0]["text"], "Echo: still inline",
        "{}",
        got[4]
    );
    assert!(
        got[4]["result"]["_meta"]
            .get("io.modelcontextprotocol/related-task")
            .is_none()
    );

    // Stored like any call: the task's result under its call id, the cancelled call
    // ended as cancelled.
    let messages = support::mcp::first_session(&data).1;
    let results: Vec<&Value> = messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 3, "{messages}");
    let stored = results
        .iter()
        .find(|m| m.to_string().contains(call_id))
        .unwrap_or_else(|| panic!("{call_id} not stored: {messages}"));
    assert!(
        stored.to_string().contains("Research Report: tides"),
        "{stored}"
    );
    let waves = results
        .iter()
        .find(|m| !m.to_string().contains(call_id) && !m.to_string().contains("Echo:"))
        .unwrap();
    assert!(
        waves.to_string().to_lowercase().contains("cancel"),
        "{waves}"
    );
}

/// Over HTTP a task is its client's: another client, given its id, can neither read nor
/// cancel it, while its own client polls it to the end.
#[test]
fn over_http_a_task_is_only_its_own_clients() {
    let dir = tempfile::tempdir().unwrap();
    let Some(config) = everything_config(dir.path()) else {
        return;
    };
    let data = dir.path().join("data");
    let (_gateway, url, _) = support::mcp::spawn_http_gateway(&data, &["--mcp-config", &config]);
    let steps = json!([{"foreign": "ev__simulate-research-query", "args": {"topic": "reefs"}}]);
    let got = drive(&data, &config, Some(&url), steps);
    let foreign = &got[1];
    assert!(
        foreign["taskId"].as_str().unwrap().starts_with("task_"),
        "{foreign}"
    );
    for key in ["otherError", "otherCancelError"] {
        assert!(
            foreign[key].as_str().unwrap().contains("not yours"),
            "{foreign}"
        );
    }
    assert_eq!(foreign["ownFinal"]["status"], "completed", "{foreign}");
    let text = foreign["ownFinal"]["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("# Research Report: reefs"), "{foreign}");
}

/// Runs tests/mcp/gateway_tasks.mjs (the TypeScript SDK client, 2025-11-25, on stdio)
/// with `steps`; one JSON value per step.
fn drive_ts(data: &Path, config: &str, steps: Value) -> Vec<Value> {
    let peers = support::peers::peers_dir();
    support::mcp::client_lines(
        Command::new("node")
            .current_dir(&peers)
            .arg(peers.join("gateway_tasks.mjs"))
            .arg(env!("CARGO_BIN_EXE_toolwire"))
            .arg(data)
            .arg("claude-code")
            .args(["--mcp-config", config])
            .env("GATEWAY_STEPS", steps.to_string()),
    )
}

/// A 2025-11-25 host asks for tasks itself (`params.task`), with the TypeScript SDK's
/// own task API: the gateway says it takes them (`capabilities.tasks`,
/// `execution.taskSupport`), streams a task through `tasks/get` to `tasks/result`, lists
/// the connection's tasks, cancels one, and refuses an unknown id.
#[test]
fn a_2025_11_25_host_runs_calls_as_tasks_with_the_typescript_sdk() {
    let dir = tempfile::tempdir().unwrap();
    let Some(config) = everything_config(dir.path()) else {
        return;
    };
    support::peers::peer("gateway_tasks.mjs").unwrap();
    let data = dir.path().join("data");
    let steps = json!([
        {"stream": "ev__simulate-research-query", "args": {"topic": "tides"}},
        {"cancel": "ev__simulate-research-query", "args": {"topic": "waves"}},
        {"list": true},
        {"get": "task_0123456789abcdef0123456789abcdef"},
        {"tool": "ev__echo", "args": {"message": "no task asked"}},
    ]);
    let got = drive_ts(&data, &config, steps);
    let listed = &got[0];
    let tasks = &listed["capabilities"]["tasks"];
    assert!(tasks["requests"]["tools"]["call"].is_object(), "{tasks}");
    assert!(
        tasks["list"].is_object() && tasks["cancel"].is_object(),
        "{tasks}"
    );
    let support = |name: &str| {
        let tool = listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap();
        tool["execution"]["taskSupport"].clone()
    };
    assert_eq!(support("ev__simulate-research-query"), "optional");
    assert_eq!(support("read_result"), Value::Null);

    // The SDK's stream: the task made, its statuses polled, then the result.
    let messages = got[1]["messages"].as_array().unwrap();
    assert_eq!(messages[0]["type"], "taskCreated", "{}", got[1]);
    let id = messages[0]["task"]["taskId"].as_str().unwrap();
    assert_eq!(messages[0]["task"]["ttl"], 120_000, "{}", got[1]);
    assert!(
        messages.iter().any(|m| m["type"] == "taskStatus"
            && m["task"]["statusMessage"]
                .as_str()
                .is_some_and(|s| s.ends_with("..."))),
        "{}",
        got[1]
    );
    let last = messages.last().unwrap();
    assert_eq!(last["type"], "result", "{}", got[1]);
    let result = &last["result"];
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("# Research Report: tides"), "{result}");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], id,
        "{result}"
    );

    // Cancelled while it works: cancelled at once, and its result is an error.
    let cancel = &got[2];
    assert!(cancel["created"]["task"]["taskId"].is_string(), "{cancel}");
    assert_eq!(cancel["before"]["status"], "working", "{cancel}");
    assert_eq!(cancel["cancelled"]["status"], "cancelled", "{cancel}");
    assert_eq!(cancel["after"]["status"], "cancelled", "{cancel}");
    assert!(
        cancel["resultError"]
            .as_str()
            .unwrap()
            .contains("cancelled"),
        "{cancel}"
    );

    // This connection's tasks, both.
    let listed: Vec<&str> = got[3]["listed"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["status"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["completed", "cancelled"], "{}", got[3]);

    assert_eq!(got[4]["step"], "error", "{}", got[4]);
    assert!(
        got[4]["message"].as_str().unwrap().contains("-32602"),
        "{}",
        got[4]
    );
    // No task asked: answered inline, as ever.
    assert_eq!(
        got[5]["result"]["content"][0]["text"], "Echo: no task asked",
        "{}",
        got[5]
    );

    // Stored like any call.
    let stored = support::mcp::first_session(&data).1.to_string();
    assert!(stored.contains("Research Report: tides"), "{stored}");
}
