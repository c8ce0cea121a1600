//! `toolwire gateway` driven by a real MCP client, the TypeScript SDK's
//! (tests/mcp/gateway_client.mjs), as a host would: the configured servers' tools listed,
//! called through toolwire (text, an image as an image block, structured content, an
//! unknown tool, approvals through the host's elicitation or refused when it cannot ask),
//! every call stored in the connection's session, and a 5 MB result cut for the host and
//! read back whole through `read_result`; and the same gateway over streamable HTTP
//! (`--http`), a toolwire session per MCP session, loopback names only. The Python SDK's
//! client (tests/mcp/gateway_client.py) holds it to the same, on both revisions, against
//! the FastMCP server of tests/mcp (audio, a 5 MB text, an outputSchema, a ToolError),
//! and asks its person through the 2026-07-28 input-required round trip (an answer bound
//! to its call), or, when it cannot ask, through the web app of a `toolwire serve` on the
//! same data directory (approved and denied through serve's API; tests/web's
//! gateway_approval.test.mjs clicks Approve in the page).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use support::mcp::mcp_host;

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

/// Runs the client against the `--http` gateway at `url`, as client `name`, with the
/// gateway's `token`.
fn drive_http(url: &str, token: &str, name: &str, steps: Value) -> Vec<Value> {
    let mut client = Command::new("node");
    client
        .env("GATEWAY_URL", url)
        .env("GATEWAY_TOKEN", token)
        .env("GATEWAY_CLIENT_NAME", name);
    run_client(client, steps, json!([]))
}

fn run_client(client: Command, steps: Value, answers: Value) -> Vec<Value> {
    let script = support::peers::peer("gateway_client.mjs").unwrap();
    // The script goes first: `client` was given the script's own arguments.
    let args: Vec<_> = client.get_args().map(ToOwned::to_owned).collect();
    let mut node = Command::new("node");
    node.arg(&script).args(args);
    for (key, value) in client.get_envs() {
        if let Some(value) = value {
            node.env(key, value);
        }
    }
    String::from_utf8(run(node, steps, answers))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Runs a client script with its steps and answers; what it printed, once it succeeded.
fn run(mut client: Command, steps: Value, answers: Value) -> Vec<u8> {
    client
        .current_dir(support::peers::peers_dir())
        .env("GATEWAY_STEPS", steps.to_string())
        .env("GATEWAY_ANSWERS", answers.to_string());
    support::mcp::client_output(&mut client)
}

fn everything() -> Option<String> {
    let script = support::peers::everything()?;
    support::peers::peer("gateway_client.mjs")?;
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
        // Not read-only, but the host approved it (by calling): it runs.
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

    let toggled = &got[5]["result"];
    assert!(toggled.get("isError").is_none(), "{toggled}");

    // Every call is in one session of this connection, with its stored result.
    let (sessions, messages) = support::mcp::first_session(data.path());
    assert_eq!(sessions.as_array().unwrap().len(), 1, "{sessions}");
    assert_eq!(sessions[0]["title"], "gateway: gateway-test-host");
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

/// Calls are answered before they are stored (the host waits on each one), but none is
/// lost: when the host disconnects, the gateway stores every call it answered before it
/// exits, each call followed by its result, in the order they were made.
/// A slow server behind the gateway holds up no host: `initialize` is answered at once,
/// the first `tools/list` after a short wait with what is ready, and the slow server's
/// tools arrive with `notifications/tools/list_changed`, callable. Codex lists once and never
/// again: its `tools/list` waits for every server, its `initialize` still does not.
#[test]
fn a_slow_server_does_not_hold_up_the_hosts_start() {
    let Some(ev) = everything() else { return };
    let script = support::peers::everything().unwrap();
    // It answers nothing (initialize included) for its first 9 seconds.
    let slow = format!("slow=sh -c 'sleep 9; exec node {} stdio'", script.display());
    let data = tempfile::tempdir().unwrap();
    let steps = json!([
        {"listUntil": ["slow__echo", "ev__echo"]},
        {"tool": "slow__echo", "args": {"message": "late but here"}},
    ]);
    let gateway = ["--mcp", &ev, "--mcp", &slow];
    let got = drive(data.path(), "claude-code", &gateway, steps, json!([]));
    let names = |step: &Value| -> Vec<String> {
        step["names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_owned())
            .collect()
    };
    let first = names(&got[0]);
    assert!(
        got[0]["listMs"].as_u64().unwrap() < 6_000,
        "the host waited for the slow server: {}",
        got[0]
    );
    assert!(first.iter().any(|n| n == "read_result"), "{first:?}");
    assert!(!first.iter().any(|n| n.starts_with("slow__")), "{first:?}");
    assert_eq!(got[1]["step"], "listUntil");
    assert!(got[1]["told"].as_u64().unwrap() >= 1, "{}", got[1]);
    let later = names(&got[1]);
    assert!(later.iter().any(|n| n == "slow__echo"), "{later:?}");
    assert!(later.iter().any(|n| n == "ev__echo"), "{later:?}");
    assert_eq!(
        got[2]["result"]["content"][0]["text"], "Echo: late but here",
        "{}",
        got[2]
    );

    // Codex: connected at once, its one listing holds every server's tools.
    let got = drive(data.path(), "codex", &gateway, json!([]), json!([]));
    assert!(
        got[0]["connectMs"].as_u64().unwrap() < 3_000,
        "initialize waited for the slow server: {}",
        got[0]
    );
    let listed = names(&got[0]);
    assert!(listed.iter().any(|n| n == "slow__echo"), "{listed:?}");
    assert!(listed.iter().any(|n| n == "ev__echo"), "{listed:?}");
}

/// What the servers behind offer besides tools reaches the host through the gateway,
/// named as their tools are: server-everything's resources (listed, its templates, one
/// read that only a template names, a subscription whose updates come back), its prompts
/// (listed, got with arguments), a prompt argument's completions, and its log messages at
/// the level the host set. Before, the gateway offered none of it.
#[test]
fn resources_prompts_completions_and_logging_pass_through() {
    let Some(ev) = everything() else { return };
    let data = tempfile::tempdir().unwrap();
    let text_1 = "demo://resource/dynamic/text/1";
    let steps = json!([
        {"mcp": "listResources"},
        {"mcp": "listResourceTemplates"},
        {"mcp": "readResource", "params": {"uri": text_1}},
        {"mcp": "listPrompts"},
        {"mcp": "getPrompt", "params": {"name": "ev__args-prompt", "arguments": {"city": "Lisbon"}}},
        {"mcp": "complete", "params": {
            "ref": {"type": "ref/prompt", "name": "ev__completable-prompt"},
            "argument": {"name": "department", "value": "S"},
        }},
        {"mcp": "setLoggingLevel", "params": "debug"},
        {"tool": "ev__toggle-simulated-logging"},
        {"notes": "log", "count": 1},
        {"mcp": "subscribeResource", "params": {"uri": text_1}},
        {"tool": "ev__toggle-subscriber-updates"},
        {"notes": "updated", "count": 1},
        {"mcp": "readResource", "params": {"uri": "demo://resource/nowhere"}},
    ]);
    let got = drive(
        data.path(),
        "claude-code",
        &["--mcp", &ev],
        steps,
        json!([]),
    );
    let result = |i: usize| -> &Value {
        assert_eq!(got[i]["step"], "mcp", "{}", got[i]);
        &got[i]["result"]
    };
    let resources = result(1)["resources"].as_array().unwrap();
    assert!(!resources.is_empty(), "{}", got[1]);
    assert!(
        resources.iter().all(|r| {
            r["name"].as_str().unwrap().starts_with("ev__")
                && r["uri"].as_str().unwrap().starts_with("demo://")
        }),
        "{resources:?}"
    );
    let templates = result(2)["resourceTemplates"].as_array().unwrap();
    assert!(
        templates.iter().any(
            |t| t["uriTemplate"] == "demo://resource/dynamic/text/{resourceId}"
                && t["name"].as_str().unwrap().starts_with("ev__")
        ),
        "{templates:?}"
    );
    let read = &result(3)["contents"][0];
    assert_eq!(read["uri"], text_1, "{read}");
    assert!(read["text"].as_str().unwrap().contains('1'), "{read}");
    let prompts: Vec<&str> = result(4)["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(prompts.contains(&"ev__simple-prompt"), "{prompts:?}");
    assert!(prompts.contains(&"ev__args-prompt"), "{prompts:?}");
    let asked = result(5)["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(asked.contains("Lisbon"), "{asked}");
    assert_eq!(
        result(6)["completion"]["values"],
        json!(["Sales", "Support"]),
        "{}",
        got[6]
    );
    assert_eq!(got[7]["step"], "mcp", "{}", got[7]);
    let logs = got[9]["notes"].as_array().unwrap();
    assert!(!logs.is_empty(), "no log message came: {}", got[9]);
    assert!(
        logs.iter()
            .all(|l| l["logger"].as_str().unwrap().starts_with("ev")),
        "{logs:?}"
    );
    assert_eq!(got[10]["step"], "mcp", "{}", got[10]);
    let updated = got[12]["notes"].as_array().unwrap();
    assert!(
        !updated.is_empty() && updated.iter().all(|u| u["uri"] == text_1),
        "{}",
        got[12]
    );
    // A URI no server knows is the server's own refusal, passed on.
    assert_eq!(got[13]["step"], "error", "{}", got[13]);
}

#[test]
fn every_call_answered_is_stored_when_the_host_disconnects() {
    let Some(ev) = everything() else { return };
    let data = tempfile::tempdir().unwrap();
    let calls = 300;
    let steps: Vec<Value> = (0..calls)
        .map(|i| json!({"tool": "ev__echo", "args": {"message": format!("m{i}")}}))
        .collect();
    let got = drive(
        data.path(),
        "generic",
        &["--mcp", &ev],
        json!(steps),
        json!([]),
    );
    assert_eq!(got.len(), calls + 1);
    let (_, messages) = support::mcp::first_session(data.path());
    let messages = messages.as_array().unwrap();
    assert_eq!(messages.len(), 2 * calls, "every call and every result");
    for (i, pair) in messages.chunks(2).enumerate() {
        let call = &pair[0]["content"]["toolCalls"][0];
        assert_eq!(call["input"]["message"], format!("m{i}"), "{}", pair[0]);
        assert_eq!(pair[1]["role"], "tool_result", "{}", pair[1]);
        assert_eq!(pair[1]["content"]["callId"], call["id"], "{}", pair[1]);
        let echoed = got[i + 1]["result"]["content"][0]["text"].as_str().unwrap();
        assert_eq!(echoed, format!("Echo: m{i}"));
        assert!(pair[1].to_string().contains(echoed), "{}", pair[1]);
    }
}

/// A call the host gives up (`notifications/cancelled`) stops then, not when it would
/// have ended: its result is stored as cancelled, a second after it began and before the
/// next call's, and the next call goes on as usual.
#[test]
fn a_call_the_host_gives_up_is_cancelled_then_and_stored_so() {
    let Some(ev) = everything() else { return };
    let data = tempfile::tempdir().unwrap();
    let steps = json!([
        {"cancel": "ev__trigger-long-running-operation",
         "args": {"duration": 30, "steps": 30}, "afterMs": 1000},
        {"tool": "ev__echo", "args": {"message": "after"}},
    ]);
    let got = drive(data.path(), "generic", &["--mcp", &ev], steps, json!([]));
    assert_eq!(got[1]["step"], "cancel", "{}", got[1]);
    assert!(got[1]["error"].is_string(), "{}", got[1]);
    assert_eq!(
        got[2]["result"]["content"][0]["text"], "Echo: after",
        "{}",
        got[2]
    );
    let (_, messages) = support::mcp::first_session(data.path());
    let messages = messages.as_array().unwrap();
    assert_eq!(messages.len(), 4, "{messages:?}");
    let given_up = &messages[1]["content"];
    assert_eq!(given_up["toolName"], "ev__trigger-long-running-operation");
    assert_eq!(given_up["status"], "error", "{given_up}");
    assert_eq!(given_up["error"]["code"], "cancelled", "{given_up}");
    let took = given_up["metadata"]["durationMs"].as_u64().unwrap();
    assert!(
        took < 10_000,
        "cancelled after {took} ms, not at the host's cancel"
    );
    assert_eq!(messages[3]["content"]["toolName"], "ev__echo");
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
    let gateway = ["--approvals", "toolwire", "--mcp", &ev];
    let got = drive(data.path(), "generic", &gateway, steps, answers);
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

/// The host asks its own person before it calls a tool (or was told not to): by default
/// the gateway runs what the host called, tools without annotations too. toolwire asks
/// only where the person set it up, in the config (`"approval": "always"`) or with
/// `--approvals toolwire`; a host that cannot ask is then refused in words that name
/// what to change, and never told that its person said no.
#[test]
fn a_call_the_host_approved_runs_and_a_refusal_says_what_to_change() {
    let Some(ev) = everything() else { return };
    let data = tempfile::tempdir().unwrap();
    let steps = json!([{"tool": "ev__toggle-simulated-logging"}]);
    let ran = drive(
        data.path(),
        "codex",
        &["--mcp", &ev],
        steps.clone(),
        json!([]),
    );
    let ran = &ran[1]["result"];
    assert!(ran.get("isError").is_none(), "{ran}");
    assert!(ran.to_string().contains("logging"), "{ran}");

    let text_of = |got: &[Value]| {
        got[1]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let flagged = ["--approvals", "toolwire", "--mcp", &ev];
    let got = drive(data.path(), "codex", &flagged, steps.clone(), json!([]));
    assert_eq!(got[1]["result"]["isError"], true, "{}", got[1]);
    let refused = text_of(&got);
    assert!(refused.contains("this MCP host cannot ask"), "{refused}");
    assert!(refused.contains("--approvals toolwire"), "{refused}");
    assert!(
        refused.contains("\"toggle-simulated-logging\""),
        "{refused}"
    );
    // Codex drops `isError`: the first line says the call failed, and how. Nobody said
    // no: the model is not told its person denied it.
    let (first, rest) = refused.split_once('\n').unwrap();
    assert_eq!(
        first,
        "Error: the call to ev__toggle-simulated-logging was refused, so it did not run."
    );
    assert!(rest.starts_with("toolwire refused this call"), "{refused}");
    assert!(!refused.contains("denied"), "{refused}");

    // The person's config asks for this one tool.
    let script = support::peers::everything().unwrap();
    let config = data.path().join("servers.json");
    let entry = json!({"mcpServers": {"ev": {
        "command": "node", "args": [script, "stdio"],
        "tools": {"toggle-simulated-logging": {"approval": "always"}},
    }}});
    std::fs::write(&config, entry.to_string()).unwrap();
    let configured = ["--mcp-config", config.to_str().unwrap()];
    let got = drive(data.path(), "codex", &configured, steps, json!([]));
    let refused = text_of(&got);
    assert!(refused.contains("your config says \"always\""), "{refused}");
    assert!(refused.contains("\"never\""), "{refused}");
    assert!(!refused.contains("--approvals"), "{refused}");
}

/// Without `--host`, the gateway knows the host by the name its client gives in
/// `initialize`: opencode's results are cut under opencode's own cut (51,200 bytes,
/// head only) and its errors begin with a line saying so; an unknown client is generic.
#[test]
fn without_host_the_profile_is_the_clients_own() {
    let Some(ev) = everything() else { return };
    let data = tempfile::tempdir().unwrap();
    // 45,000 characters: under the generic budget, over opencode's.
    let long: String = (0..1_800)
        .map(|i| format!("line {i:08} of the log\n"))
        .collect();
    let steps = json!([
        {"tool": "ev__echo", "args": {"message": long}},
        {"tool": "ev__get-sum", "args": {"a": "not a number"}},
    ]);
    let as_client = |name: &str| {
        let mut client = Command::new("node");
        client
            .env("GATEWAY_CLIENT_NAME", name)
            .arg(env!("CARGO_BIN_EXE_toolwire"))
            .arg(data.path())
            .arg("auto")
            .args(["--mcp", &ev]);
        run_client(client, steps.clone(), json!([]))
    };
    let text = |step: &Value| {
        step["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };

    let opencode = as_client("opencode");
    let echoed = text(&opencode[1]);
    assert!(echoed.len() < 51_200, "{} bytes", echoed.len());
    assert!(echoed.contains("by toolwire"), "{echoed:.300}");
    let failed = text(&opencode[2]);
    assert!(
        failed.starts_with("Error: the call to ev__get-sum"),
        "{failed}"
    );

    let other = as_client("some-other-host");
    let whole = text(&other[1]);
    assert!(
        whole.trim_end() == format!("Echo: {long}").trim_end(),
        "{} chars: {:.200}",
        whole.len(),
        whole
    );
    assert!(
        !text(&other[2]).starts_with("Error: the call"),
        "{}",
        other[2]
    );
}

/// The text of `ev__get-roots-list` through a gateway with `gateway` args, for a host
/// whose roots are `roots` (`None`: a host that declares no roots), after `steps`.
fn roots_seen(data: &Path, gateway: &[&str], roots: Option<Value>, steps: Value) -> Vec<String> {
    let mut client = Command::new("node");
    if let Some(roots) = roots {
        client.env("GATEWAY_ROOTS", roots.to_string());
    }
    client
        .arg(env!("CARGO_BIN_EXE_toolwire"))
        .arg(data)
        .arg("generic")
        .args(gateway);
    run_client(client, steps, json!([]))
        .iter()
        .filter(|step| step["tool"] == "ev__get-roots-list")
        .map(|step| step["result"].to_string())
        .collect()
}

/// The servers behind the gateway are given the host's roots (asked of the host, and
/// asked again when it says they changed), never the gateway's own working directory:
/// a host that declares no roots gives them none, and a server whose entry names its own
/// `"roots"` keeps them.
#[test]
fn servers_get_the_hosts_roots_never_the_gateways_folder() {
    let Some(ev) = everything() else { return };
    let data = tempfile::tempdir().unwrap();
    let dirs = tempfile::tempdir().unwrap();
    let uri = |name: &str| {
        let dir = dirs.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        format!("file://{}", dir.canonicalize().unwrap().display())
    };
    let (first, second, own) = (uri("first"), uri("second"), uri("own"));
    // The gateway runs in tests/mcp: its folder must reach no server.
    let gateway_dir = format!(
        "file://{}",
        support::peers::peers_dir()
            .canonicalize()
            .unwrap()
            .display()
    );
    let steps = json!([
        {"tool": "ev__get-roots-list", "until": first},
        {"roots": [{"uri": second, "name": "second"}]},
        {"tool": "ev__get-roots-list", "until": second},
    ]);
    let host_roots = json!([{"uri": first, "name": "first"}]);
    let seen = roots_seen(data.path(), &["--mcp", &ev], Some(host_roots), steps);
    assert!(seen[0].contains(&first), "{}", seen[0]);
    assert!(
        seen[1].contains(&second) && !seen[1].contains(&first),
        "{}",
        seen[1]
    );
    for text in &seen {
        assert!(!text.contains(&gateway_dir), "{text}");
    }

    // A host without roots: the server is given none.
    let steps = json!([{"tool": "ev__get-roots-list"}]);
    let seen = roots_seen(data.path(), &["--mcp", &ev], None, steps.clone());
    assert!(!seen[0].contains("file://"), "{}", seen[0]);

    // A server's own roots win over the host's.
    let script = support::peers::everything().unwrap();
    let own_dir = own.strip_prefix("file://").unwrap();
    let config = dirs.path().join("servers.json");
    let entry = json!({"mcpServers": {"ev": {
        "command": "node", "args": [script, "stdio"], "roots": [own_dir],
    }}});
    std::fs::write(&config, entry.to_string()).unwrap();
    let host_roots = json!([{"uri": first, "name": "first"}]);
    let args = ["--mcp-config", config.to_str().unwrap()];
    let seen = roots_seen(data.path(), &args, Some(host_roots), steps);
    assert!(
        seen[0].contains(&own) && !seen[0].contains(&first),
        "{}",
        seen[0]
    );
}

/// A server's result over the 16 MiB limit of one message reaches the host through the
/// gateway at once, as an error result that says how large it was, not as a call that
/// waits for its timeout and then reads as a server that did not answer.
#[test]
fn a_result_over_16_mib_reaches_the_host_at_once_as_too_large() {
    if support::peers::peer("gateway_client.mjs").is_none() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let script = support::peers::peers_dir().join("bad_server.py");
    let config = json!({"mcpServers": {"bad": {
        "command": "python3",
        "args": [script, "oversized"],
        "approval": "never",
    }}});
    let path = work.path().join("mcp.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let steps = json!([{"tool": "bad__work"}, {"tool": "bad__fine"}]);
    let started = std::time::Instant::now();
    let got = drive(
        data.path(),
        "generic",
        &["--mcp-config", path.to_str().unwrap()],
        steps,
        json!([]),
    );
    // The call's own timeout is 300 s, and the SDK client's 60 s.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let refused = &got[1]["result"];
    assert_eq!(refused["isError"], true, "{}", got[1]);
    assert!(
        refused.to_string().contains(
            "MCP server \\\"bad\\\"'s result was 17.0 MiB, over the 16 MiB limit of one \
             message, so toolwire dropped it unread"
        ),
        "{refused}"
    );
    assert_eq!(got[2]["result"]["content"][0]["text"], "fine", "{}", got[2]);
}

/// A size set for one tool in the `mcpServers` config wins over the host's budget.
#[test]
fn a_tools_configured_result_size_wins_over_the_hosts_budget() {
    let Some(script) = support::peers::everything() else {
        return;
    };
    if support::peers::peer("gateway_client.mjs").is_none() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let config = data.path().join("servers.json");
    let doc = json!({"mcpServers": {"ev": {
        "command": "node", "args": [script, "stdio"],
        "tools": {"echo": {"maxResultChars": 800}},
    }}});
    std::fs::write(&config, doc.to_string()).unwrap();
    let message: String = (0..400).map(|i| format!("word{i} ")).collect();
    let steps = json!([{"tool": "ev__echo", "args": {"message": message}}]);
    let got = drive(
        data.path(),
        "claude-code",
        &["--mcp-config", config.to_str().unwrap()],
        steps,
        json!([]),
    );
    let text = got[1]["result"]["content"][0]["text"].as_str().unwrap();
    // Claude Code's own budget (32,000) would have passed all 3,000 characters.
    assert!(message.len() > 2_500);
    assert!(text.len() < 1_200, "{} chars: {text}", text.len());
    assert!(text.contains("omitted by toolwire"), "{text}");
}

#[test]
fn a_5_mb_result_is_cut_for_the_host_and_read_back_whole() {
    let Some(fs) = support::peers::filesystem() else {
        return;
    };
    if support::peers::peer("gateway_client.mjs").is_none() {
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

#[test]
fn over_http_each_mcp_session_is_a_toolwire_session() {
    let Some(ev) = everything() else { return };
    let data = tempfile::tempdir().unwrap();
    let (_gateway, url, token) = support::mcp::spawn_http_gateway(data.path(), &["--mcp", &ev]);
    let steps = json!([
        {"tool": "ev__echo", "args": {"message": "over HTTP"}},
        {"tool": "ev__get-tiny-image"},
    ]);
    let first = drive_http(&url, &token, "host-one", steps.clone());
    let second = drive_http(&url, &token, "host-two", steps);
    for got in [&first, &second] {
        assert!(got[0]["names"].to_string().contains("\"ev__echo\""));
        assert_eq!(got[1]["result"]["content"][0]["text"], "Echo: over HTTP");
        assert!(
            got[2]["result"]["content"]
                .to_string()
                .contains("\"type\":\"image\"")
        );
    }
    let out = support::mcp::toolwire(data.path(), &["sessions", "--json"]);
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

    // A name that is not loopback is refused (DNS rebinding); so is another site's page,
    // token or not.
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
             Authorization: Bearer {token}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        conn.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 403"), "{header}: {answer}");
    }
}

/// 2026-07-28 has no MCP session: each request is served on its own, yet a host's calls
/// stay in one toolwire session, found by its name (the Python SDK client, twice).
#[test]
fn over_http_a_stateless_client_keeps_one_session() {
    let (Some(python), Some(ev)) = (support::peers::peer("venv/bin/python"), everything()) else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let (_gateway, url, token) = support::mcp::spawn_http_gateway(data.path(), &["--mcp", &ev]);
    for message in ["first", "second"] {
        let mut client = Command::new(&python);
        client
            .arg(support::peers::peers_dir().join("gateway_client.py"))
            .env("GATEWAY_URL", &url)
            .env("GATEWAY_TOKEN", &token);
        let steps = json!([{"tool": "ev__echo", "args": {"message": message}}]);
        let out = String::from_utf8(run(client, steps, json!([]))).unwrap();
        let got: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(got[0]["version"], "2026-07-28", "{out}");
        assert_eq!(
            got[2]["result"]["content"][0]["text"],
            format!("Echo: {message}")
        );
    }
    let out = support::mcp::toolwire(data.path(), &["sessions", "--json"]);
    let sessions: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sessions.as_array().unwrap().len(), 1, "{sessions}");
    assert_eq!(
        sessions[0]["title"], "gateway: gateway-python-host",
        "{sessions}"
    );
    assert_eq!(sessions[0]["messageCount"], 4, "{sessions}");
}

/// Over stateless HTTP the retry that brings the person's answer is a request of its
/// own, served by another handler: the call waits in the process, found by its
/// `requestState`.
#[test]
fn over_http_a_2026_07_28_host_approves_by_the_round_trip() {
    if support::peers::peer("venv/bin/python").is_none() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let config = fastmcp_config(work.path());
    let (_gateway, url, token) =
        support::mcp::spawn_http_gateway(data.path(), &["--mcp-config", &config]);
    let mut client = Command::new(support::peers::peer("venv/bin/python").unwrap());
    client
        .arg(support::peers::peers_dir().join("gateway_client.py"))
        .env("GATEWAY_URL", &url)
        .env("GATEWAY_TOKEN", &token);
    let steps = json!([
        {"tool": "py__long_note", "args": {"words": 6}},
        {"tool": "py__long_note", "args": {"words": 7}},
    ]);
    let answers = json!([
        {"action": "accept", "content": {"approve": true}},
        {"action": "accept", "content": {"approve": false}},
    ]);
    let out = String::from_utf8(run(client, steps, answers)).unwrap();
    let got: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got[0]["version"], "2026-07-28", "{out}");
    assert_eq!(got[2]["result"]["structuredContent"]["words"], 6, "{out}");
    assert_eq!(got[2]["asked"].as_array().unwrap().len(), 1, "{out}");
    assert_eq!(got[3]["result"]["isError"], true, "{out}");
    assert!(got[3].to_string().contains("the person said no"), "{out}");
}

#[test]
fn http_listens_on_loopback_only() {
    let data = tempfile::tempdir().unwrap();
    let out = support::mcp::toolwire(data.path(), &["gateway", "--http", "0.0.0.0:0"]);
    assert!(!out.status.success());
    assert!(
        support::mcp::stderr_of(&out).contains("listens on loopback only"),
        "{}",
        support::mcp::stderr_of(&out)
    );
}

/// The status line's code of the answer to an MCP `initialize` sent to the gateway at
/// `port` with `authorization` (a whole header line, or nothing).
fn initialize_status(port: &str, authorization: &str) -> String {
    let mut conn = std::net::TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    write!(
        conn,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{authorization}\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = Vec::new();
    let _ = conn.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer)
        .get(9..12)
        .unwrap_or_default()
        .to_owned()
}

/// `--http` makes its token in the data directory, readable by its owner only, and every
/// request without it (or with another) gets 401: any local process of any user could
/// otherwise call a tool, answer its approval itself and run it.
#[test]
fn over_http_every_caller_needs_the_token() {
    let data = tempfile::tempdir().unwrap();
    let (_gateway, url, token) = support::mcp::spawn_http_gateway(data.path(), &[]);
    let port = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let file = data.path().join("gateway-token");
        let mode = std::fs::metadata(file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert_eq!(token.len(), 64, "{token}");
    assert_eq!(initialize_status(port, ""), "401");
    let wrong = format!("Authorization: Bearer {}\r\n", "f".repeat(64));
    assert_eq!(initialize_status(port, &wrong), "401");
    let right = format!("Authorization: Bearer {token}\r\n");
    assert_eq!(initialize_status(port, &right), "200");
}

/// No credential, no listener: a token file others can read (or one without a token) is
/// refused, not served around or replaced.
#[cfg(unix)]
#[test]
fn http_does_not_start_without_a_credential() {
    use std::os::unix::fs::PermissionsExt;
    let data = tempfile::tempdir().unwrap();
    let file = data.path().join("gateway-token");
    std::fs::write(&file, format!("{}\n", "a".repeat(64))).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = support::mcp::toolwire(data.path(), &["gateway", "--http", "127.0.0.1:0"]);
    let said = support::mcp::stderr_of(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("can be read by other users"), "{said}");
    assert!(!said.contains("listening on"), "{said}");
    std::fs::write(&file, "short\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = support::mcp::toolwire(data.path(), &["gateway", "--http", "127.0.0.1:0"]);
    let said = support::mcp::stderr_of(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("holds no token"), "{said}");
}

/// `toolwire mcp install --http` writes the entry that reaches the HTTP gateway with its
/// token in an Authorization header, in each host's own words, into a file then readable
/// by its owner only; the stdio entry carries no token.
#[test]
fn install_http_writes_the_token_into_the_hosts_entry() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let install = |host: &str, file: &Path, http: bool| {
        let mut args = vec!["mcp", "install", "--host", host];
        args.extend(["--config", file.to_str().unwrap()]);
        if http {
            args.extend(["--http", "127.0.0.1:8931"]);
        }
        support::mcp::toolwire(data.path(), &args)
    };
    let stdio = dir.path().join("stdio.json");
    assert!(install("claude-code", &stdio, false).status.success());
    assert!(!data.path().join("gateway-token").exists());
    for (host, name, url_key) in [
        ("claude-code", ".claude.json", "url"),
        ("cursor", "mcp.json", "url"),
        ("gemini", "settings.json", "httpUrl"),
        ("vscode", "vscode.json", "url"),
    ] {
        let file = dir.path().join(name);
        std::fs::write(&file, r#"{"mcpServers": {}, "servers": {}}"#).unwrap();
        let out = install(host, &file, true);
        assert!(out.status.success(), "{}", support::mcp::stderr_of(&out));
        let token = support::mcp::http_token(data.path());
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let key = if host == "vscode" {
            "servers"
        } else {
            "mcpServers"
        };
        let entry = &written[key]["toolwire"];
        assert_eq!(
            entry[url_key], "http://127.0.0.1:8931/mcp",
            "{host}: {entry}"
        );
        assert_eq!(
            entry["headers"]["Authorization"],
            format!("Bearer {token}"),
            "{host}: {entry}"
        );
        assert!(entry.get("command").is_none(), "{host}: {entry}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{host}");
        }
    }
    let token = support::mcp::http_token(data.path());
    let codex = dir.path().join("config.toml");
    assert!(install("codex", &codex, true).status.success());
    let toml = std::fs::read_to_string(&codex).unwrap();
    assert!(
        toml.contains("url = \"http://127.0.0.1:8931/mcp\"")
            && toml.contains(&format!(
                "http_headers = {{ \"Authorization\" = \"Bearer {token}\" }}"
            )),
        "{toml}"
    );
    let desktop = dir.path().join("claude_desktop_config.json");
    let out = install("claude-desktop", &desktop, true);
    assert!(!out.status.success());
    assert!(support::mcp::stderr_of(&out).contains("without --http"));
    // The stdio entry written first carries no token.
    let stdio = std::fs::read_to_string(&stdio).unwrap();
    assert!(
        !stdio.contains(&token) && !stdio.contains("Authorization"),
        "{stdio}"
    );
}

/// Runs the Python SDK's client against a gateway it starts on stdio, in `mode` ("auto"
/// finds 2026-07-28, "legacy" shakes hands on 2025-11-25).
fn drive_python(
    data: &Path,
    gateway: &[&str],
    mode: &str,
    steps: Value,
    answers: Value,
) -> Option<Vec<Value>> {
    let python = support::peers::peer("venv/bin/python")?;
    let mut client = Command::new(python);
    client
        .arg(support::peers::peers_dir().join("gateway_client.py"))
        .arg(env!("CARGO_BIN_EXE_toolwire"))
        .arg(data)
        .arg("claude-code")
        .args(gateway)
        .env("GATEWAY_MODE", mode);
    let mut got = Vec::new();
    for line in String::from_utf8(run(client, steps, answers))
        .unwrap()
        .lines()
    {
        got.push(serde_json::from_str(line).unwrap());
    }
    Some(got)
}

/// tests/mcp/fastmcp_server.py as the gateway's one server, `py`: no approval asked but
/// for `long_note`.
fn fastmcp_config(dir: &Path) -> String {
    fastmcp_config_asking(dir, &["long_note"])
}

/// The FastMCP server's config where the tools `asking` need approval.
fn fastmcp_config_asking(dir: &Path, asking: &[&str]) -> String {
    let peers = support::peers::peers_dir();
    let tools: serde_json::Map<String, Value> = asking
        .iter()
        .map(|t| ((*t).to_owned(), json!({"approval": "always"})))
        .collect();
    let config = json!({"mcpServers": {"py": {
        "command": peers.join("venv/bin/python"),
        "args": [peers.join("fastmcp_server.py")],
        "approval": "never",
        "tools": tools,
    }}});
    let path = dir.join("mcp.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The FastMCP server's results for `steps`, as `host` gets them through the gateway
/// (`None` where the Python peers are not installed).
fn through_fastmcp(host: &str, steps: &Value) -> Option<Vec<Value>> {
    support::peers::peer("venv/bin/python")?;
    support::peers::peer("gateway_client.mjs")?;
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let config = fastmcp_config(work.path());
    Some(drive(
        data.path(),
        host,
        &["--mcp-config", &config],
        steps.clone(),
        json!([]),
    ))
}

/// `structuredContent` reaches every host within its budget, cut by structure so that it
/// still matches the tool's output schema (the TypeScript SDK's client checks it), with
/// toolwire's marker and the `read_result` call for the place cut most beside it; the
/// JSON text beside it stays valid JSON.
#[test]
fn structured_content_is_cut_to_the_hosts_budget_by_structure() {
    let steps = json!([{"tool": "py__table", "args": {"count": 20000}}]);
    for (host, budget) in [
        ("claude-code", 32_000),
        ("codex", 9_000),
        ("generic", 60_000),
    ] {
        let Some(got) = through_fastmcp(host, &steps) else {
            return;
        };
        let table = &got[1]["result"];
        assert!(table.get("isError").is_none(), "{host}: {table:.500}");
        let value = &table["structuredContent"];
        let sent = value.to_string().chars().count();
        assert!(sent <= budget, "{host}: {sent} chars of structuredContent");
        let rows = value["rows"].as_array().unwrap();
        assert!(rows.len() < 20_000, "{host}: {} rows", rows.len());
        assert_eq!(rows[0], json!({"id": 0, "name": "row 0"}), "{host}");
        assert_eq!(rows.last().unwrap()["id"], 19_999, "{host}");
        assert_eq!(value["total"], 20_000, "{host}");
        let note = value["toolwire/content"].as_str().unwrap();
        let call_id = table["_meta"]["toolwire/callId"].as_str().unwrap();
        assert!(
            note.contains("JSON shortened by toolwire"),
            "{host}: {note}"
        );
        assert!(
            note.contains(&format!(r#"read_result {{"callId":"{call_id}","part":"#))
                && note.contains(r#","pointer":"/rows"}"#),
            "{host}: {note}"
        );
        // Issue 43 §11, checked through the gateway: the JSON text beside the value is
        // cut as JSON, valid up to toolwire's marker.
        let text = table["content"][0]["text"].as_str().unwrap();
        let (json, _) = text
            .split_once("\n[… JSON shortened by toolwire")
            .unwrap_or_else(|| panic!("{host}: {text:.300}"));
        let kept: Value = serde_json::from_str(json).unwrap();
        assert_eq!(kept["rows"][0]["name"], "row 0", "{host}");
    }
}

/// Base64 in `structuredContent` (a PDF's bytes as server-pdf sends them, bare, and a
/// data URI that misnames its image) reaches every host as the server sent it, never a
/// placeholder: the host's app can read the bytes.
#[test]
fn base64_in_structured_content_reaches_the_host_as_sent() {
    use base64::Engine;
    let steps = json!([{"tool": "py__document", "args": {"kilobytes": 4}}]);
    let mut pdf = b"%PDF-1.7\n".to_vec();
    pdf.extend((0..4 * 1024).map(|i: usize| ((i * 7) % 251) as u8));
    pdf.extend(b"\n%%EOF\n");
    let b64 = base64::engine::general_purpose::STANDARD.encode(&pdf);
    for host in ["claude-code", "codex", "generic"] {
        let Some(got) = through_fastmcp(host, &steps) else {
            return;
        };
        let document = &got[1]["result"]["structuredContent"];
        assert!(document["bytes"] == b64, "{host}: {document:.300}");
        assert_eq!(
            document["preview"],
            "data:image/jpeg;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
            "{host}"
        );
        assert_eq!(document["name"], "report.pdf", "{host}");
    }
}

/// An MCP App's page is readable through the gateway: that `ui://` URI, read before any
/// resource listing, reaches the server whose tool names it, and the tool keeps its
/// `_meta.ui.resourceUri`.
#[test]
fn an_mcp_apps_page_is_read_through_the_gateway() {
    let steps = json!([
        {"mcp": "readResource", "params": {"uri": "ui://fixture/chart.html"}},
        {"listUntil": ["py__chart"]},
    ]);
    let Some(got) = through_fastmcp("claude-code", &steps) else {
        return;
    };
    let chart = got[2]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "py__chart")
        .unwrap();
    assert_eq!(
        chart["_meta"]["ui"]["resourceUri"],
        "ui://fixture/chart.html"
    );
    let page = &got[1]["result"]["contents"][0];
    assert_eq!(page["uri"], "ui://fixture/chart.html", "{}", got[1]);
    assert_eq!(page["mimeType"], "text/html;profile=mcp-app", "{page}");
    assert!(
        page["text"].as_str().unwrap().contains("the fixture's app"),
        "{page}"
    );
}

/// A `toolwire://blob/` link and a `read_result` call id are read only by the session
/// they were sent to. The connection that got the link reads it (its media type kept);
/// another gateway process on the same data (another host's session) that names the same
/// URI and call id gets "no resource" and "no stored result": before, any client read
/// any stored blob by its key, and any stored result by its call id.
#[test]
fn a_linked_blob_and_a_result_are_read_only_by_their_own_session() {
    if support::peers::peer("venv/bin/python").is_none()
        || support::peers::peer("gateway_client.mjs").is_none()
    {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let config = fastmcp_config(work.path());
    let wav = work.path().join("t.wav");
    let gateway = ["--mcp-config", config.as_str()];
    // The first host calls the tool, then reads its link back.
    let link_of = |result: &Value| {
        result["content"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["type"] == "resource_link")
            .unwrap_or_else(|| panic!("a link: {result}"))
            .clone()
    };
    let steps = json!([{"tool": "py__tone_wav", "args": {"millis": 100, "save_to": wav}}]);
    let got = drive(data.path(), "claude-code", &gateway, steps, json!([]));
    let link = link_of(&got[1]["result"]);
    assert_eq!(link["mimeType"], "audio/wav");
    let uri = link["uri"].as_str().unwrap().to_owned();
    let call_id = got[1]["result"]["_meta"]["toolwire/callId"]
        .as_str()
        .unwrap()
        .to_owned();

    let steps = json!([
        {"tool": "py__tone_wav", "args": {"millis": 100, "save_to": wav}},
        {"read": uri},
    ]);
    let own = drive(data.path(), "claude-code", &gateway, steps, json!([]));
    // The same bytes give the same blob: this host was sent the link, and reads it.
    assert_eq!(link_of(&own[1]["result"])["uri"], uri.as_str());
    let read = &own[2]["contents"][0];
    assert_eq!(read["uri"], uri.as_str(), "{}", own[2]);
    assert_eq!(read["mimeType"], "audio/wav", "{}", own[2]);
    assert_eq!(
        read["size"].as_u64().unwrap(),
        std::fs::metadata(&wav).unwrap().len()
    );

    // Another host, which was sent neither, names them.
    let steps = json!([
        {"read": uri},
        {"tool": "read_result", "args": {"callId": call_id}},
    ]);
    let other = drive(data.path(), "claude-code", &gateway, steps, json!([]));
    assert_eq!(other[1]["step"], "error", "{}", other[1]);
    assert!(
        other[1]["message"]
            .as_str()
            .unwrap()
            .contains("no resource"),
        "{}",
        other[1]
    );
    let refused = &other[2]["result"];
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(refused.to_string().contains("in this session"), "{refused}");
}

/// 500 text blocks of 500 characters (search hits, say) reach Claude Code within its
/// budget, separators counted: whole blocks at the head and the tail, one whole marker for
/// the run between them, whose `read_result` call, made for each part it names, gives back
/// exactly the blocks left out.
#[test]
fn many_small_blocks_are_kept_whole_at_both_ends_and_the_run_read_back() {
    if support::peers::peer("venv/bin/python").is_none()
        || support::peers::peer("gateway_client.mjs").is_none()
    {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let config = fastmcp_config(work.path());
    let args = json!({"count": 500, "size": 500});
    let steps = json!([{"marker": true, "tool": "py__many_blocks", "args": args}]);
    let got = drive(
        data.path(),
        "claude-code",
        &["--mcp-config", &config],
        steps,
        json!([]),
    );
    let step = &got[1];
    // What many_blocks returns, written here from its documented shape.
    let blocks: Vec<String> = (0..500)
        .map(|i| {
            let head = format!("hit {i}:");
            format!("{head}{}", "y".repeat(500 - head.len()))
        })
        .collect();
    let content = step["result"]["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{step}");
    let text = content[0]["text"].as_str().unwrap();
    assert!(
        text.chars().count() <= 32_000,
        "{} chars",
        text.chars().count()
    );
    let marker = step["marker"]
        .as_str()
        .unwrap_or_else(|| panic!("{text:.500}"));
    assert_eq!(text.matches("[…").count(), 1, "{text:.500}");
    assert!(marker.contains("omitted by toolwire; read them with read_result {"));
    let call = &step["call"];
    assert_eq!(call["callId"], step["result"]["_meta"]["toolwire/callId"]);
    assert_eq!(call["offset"], 0, "{marker}");
    let first = call["part"].as_u64().unwrap() as usize;
    let last = step["last"].as_u64().unwrap() as usize;
    let (head, tail) = text.split_once(marker).unwrap();
    let head: Vec<&str> = head.split_terminator("\n\n").collect();
    let tail: Vec<&str> = tail.strip_prefix("\n\n").unwrap().split("\n\n").collect();
    assert_eq!(head, blocks[..first], "the head is whole blocks");
    assert_eq!(tail, blocks[last + 1..], "the tail is whole blocks");
    assert!(!head.is_empty() && !tail.is_empty(), "{marker}");
    let read: Vec<&str> = step["read"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(read, blocks[first..=last], "the run read back");
}

#[test]
fn the_python_sdk_client_gets_every_kind_of_result_through_the_gateway() {
    if support::peers::peer("venv/bin/python").is_none() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let config = fastmcp_config(work.path());
    let png = work.path().join("g.png");
    let wav = work.path().join("t.wav");
    // What big_text(5) returns, written here from its documented shape, to compare with
    // what read_result gives back.
    let want = work.path().join("big.txt");
    let big: String = (1..=50_000)
        .map(|i| format!("line {i:07} {}\n", "x".repeat(86)))
        .collect();
    std::fs::write(&want, &big).unwrap();
    let steps = json!([
        {"tool": "py__forecast", "args": {"city": "Lisbon"}},
        {"tool": "py__forecast", "args": {"city": "Atlantis"}},
        {"tool": "py__gradient_png", "args": {"width": 40, "height": 40, "save_to": png}},
        {"tool": "py__tone_wav", "args": {"millis": 200, "save_to": wav}},
        {"read": "last-link"},
        {"follow": want, "tool": "py__big_text", "args": {"megabytes": 5}},
        // Needs approval; this client offers no elicitation, so it is refused.
        {"tool": "py__long_note", "args": {"words": 3}},
        // Reports progress 1..5 of 5 (50 ms apart), passed on to the host.
        {"tool": "py__slow_count", "args": {"steps": 5}},
    ]);
    let got = drive_python(
        data.path(),
        &["--mcp-config", &config],
        "auto",
        steps,
        json!([]),
    )
    .unwrap();
    assert_eq!(got[0]["version"], "2026-07-28", "{}", got[0]);
    assert!(got[1]["names"].to_string().contains("\"read_result\""));

    let forecast = &got[2]["result"];
    assert_eq!(
        forecast["structuredContent"]["city"], "Lisbon",
        "{forecast}"
    );
    assert_eq!(forecast["structuredContent"]["temperature_c"], 21.5);
    // The server behind stamps its results as its own (2026-07-28); the host's peer is
    // the gateway, and the stamp says so.
    let sender = &forecast["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(sender["name"], "toolwire-gateway", "{forecast}");

    let error = &got[3]["result"];
    assert_eq!(error["isError"], true, "{error}");
    assert!(
        error["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("no weather station in 'Atlantis'")
    );
    assert!(error.get("structuredContent").is_none(), "{error}");

    // The image arrives as an image block, byte for byte.
    let image = got[4]["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .cloned()
        .expect("an image block");
    use base64::Engine;
    let engine = base64::engine::general_purpose::STANDARD;
    let bytes = engine.decode(image["data"].as_str().unwrap()).unwrap();
    assert_eq!(bytes, std::fs::read(&png).unwrap());

    // Claude's model takes no audio: a line and a link, read back whole with
    // resources/read.
    let audio = &got[5]["result"]["content"];
    let link = audio
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "resource_link")
        .cloned()
        .unwrap_or_else(|| panic!("no link in {audio}"));
    assert_eq!(link["mimeType"], "audio/wav");
    let wav_bytes = std::fs::read(&wav).unwrap();
    assert_eq!(link["size"], wav_bytes.len());

    let read = &got[6]["contents"][0];
    assert_eq!(read["uri"], link["uri"], "{read}");
    assert_eq!(read["mimeType"], "audio/wav", "{read}");
    let read_bytes = engine.decode(read["blob"].as_str().unwrap()).unwrap();
    assert_eq!(read_bytes, wav_bytes);

    let follow = &got[7];
    assert_eq!(follow["firstMarker"], true, "{follow}");
    assert!(follow["firstText"].as_u64().unwrap() < 34_000, "{follow}");
    assert_eq!(follow["whole"], true, "{follow}");
    assert!(follow["pages"].as_u64().unwrap() > 100, "{follow}");

    let refused = &got[8]["result"];
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        refused.to_string().contains("nobody can be asked"),
        "{refused}"
    );

    // Progress reaches the host, coalesced (at most one per 100 ms) and rising, the last
    // step always among it.
    let counted = &got[9];
    assert_eq!(
        counted["result"]["content"][0]["text"], "counted to 5",
        "{counted}"
    );
    let progress = counted["progress"].as_array().unwrap();
    assert!(!progress.is_empty() && progress.len() <= 5, "{counted}");
    let done: Vec<f64> = progress
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert!(done.windows(2).all(|w| w[0] < w[1]), "{done:?}");
    assert_eq!(progress.last().unwrap()["progress"], 5.0, "{counted}");
    assert_eq!(progress.last().unwrap()["total"], 5.0, "{counted}");
    assert_eq!(
        progress.last().unwrap()["message"],
        "step 5 of 5",
        "{counted}"
    );
}

/// A tool needing approval, asked through the Python SDK client's elicitation: on
/// 2025-11-25 as an `elicitation/create` request, on 2026-07-28 as the input-required
/// round trip (the client asks, then calls again with the answer). Yes runs it, no
/// refuses it. An approved call's progress reaches the request that waits for it: on
/// 2026-07-28 that is the retry, under its own token (the first request was answered).
#[test]
fn the_python_sdk_client_approves_through_elicitation() {
    if support::peers::peer("venv/bin/python").is_none() {
        return;
    }
    for (mode, version) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let data = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let config = fastmcp_config_asking(work.path(), &["long_note", "slow_count"]);
        let steps = json!([
            {"tool": "py__long_note", "args": {"words": 3}},
            {"tool": "py__long_note", "args": {"words": 4}},
            {"tool": "py__slow_count", "args": {"steps": 5}},
        ]);
        let answers = json!([
            {"action": "accept", "content": {"approve": true}},
            {"action": "decline"},
            {"action": "accept", "content": {"approve": true}},
        ]);
        let got = drive_python(
            data.path(),
            &["--mcp-config", &config],
            mode,
            steps,
            answers,
        )
        .unwrap();
        assert_eq!(got[0]["version"], version, "{}", got[0]);
        let approved = &got[2];
        assert_eq!(
            approved["result"]["structuredContent"]["words"], 3,
            "{mode}: {approved}"
        );
        assert!(
            approved["asked"][0]
                .as_str()
                .unwrap()
                .contains("toolwire asks before running py__long_note"),
            "{mode}: {approved}"
        );
        let declined = &got[3];
        assert_eq!(declined["result"]["isError"], true, "{mode}: {declined}");
        assert!(
            declined.to_string().contains("the person said no"),
            "{mode}: {declined}"
        );
        assert_eq!(declined["asked"].as_array().unwrap().len(), 1, "{declined}");
        let counted = &got[4];
        assert_eq!(
            counted["result"]["content"][0]["text"], "counted to 5",
            "{mode}: {counted}"
        );
        let progress = counted["progress"].as_array().unwrap();
        assert_eq!(
            progress.last().map(|p| &p["progress"]),
            Some(&json!(5.0)),
            "{mode}: {counted}"
        );
    }
}

/// A tool's own question (server-everything's elicitation, behind the gateway) reaches
/// a 2026-07-28 host by the same round trip, after the approval: two rounds, each asked
/// with its own form, and the answer given is what the tool gets.
#[test]
fn a_tools_own_question_reaches_a_2026_07_28_host_by_the_round_trip() {
    let (Some(_), Some(ev)) = (support::peers::peer("venv/bin/python"), everything()) else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let steps = json!([{"tool": "ev__trigger-elicitation-request", "args": {}}]);
    let answers = json!([
        {"action": "accept", "content": {"approve": true}},
        {"action": "accept", "content": {"name": "Ada Lovelace"}},
    ]);
    // toolwire asks for the approval too (the host's alone would count by default).
    let gateway = ["--approvals", "toolwire", "--mcp", &ev];
    let got = drive_python(data.path(), &gateway, "auto", steps, answers).unwrap();
    assert_eq!(got[0]["version"], "2026-07-28", "{}", got[0]);
    let call = &got[2];
    let asked = call["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 2, "{call}");
    assert!(
        asked[0]
            .as_str()
            .unwrap()
            .contains("toolwire asks before running"),
        "{call}"
    );
    assert!(
        asked[1]
            .as_str()
            .unwrap()
            .starts_with("ev__trigger-elicitation-request asks:"),
        "{call}"
    );
    let text = call["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("- Name: Ada Lovelace"), "{call}");
}

/// On 2026-07-28 the answer comes back in a second request: it cannot be moved onto
/// another call (other arguments under the same requestState are refused, and nothing
/// runs), nor replayed once used.
#[test]
fn a_2026_07_28_answer_is_bound_to_the_call_it_answers() {
    if support::peers::peer("venv/bin/python").is_none() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let config = fastmcp_config(work.path());
    let steps = json!([{
        "forge": true,
        "tool": "py__long_note",
        "args": {"words": 2},
        "otherArgs": {"words": 9},
        "answer": {"action": "accept", "content": {"approve": true}},
    }]);
    // Answers given, so the client declares elicitation; the hand-driven step uses none.
    let got = drive_python(
        data.path(),
        &["--mcp-config", &config],
        "auto",
        steps,
        json!([{"action": "decline"}]),
    )
    .unwrap();
    assert_eq!(got[0]["version"], "2026-07-28", "{}", got[0]);
    let forge = &got[2];
    assert_eq!(forge["first"]["resultType"], "input_required", "{forge}");
    let ask = &forge["first"]["inputRequests"]["toolwire-ask"];
    assert_eq!(ask["method"], "elicitation/create", "{forge}");
    assert!(
        ask["params"]["message"]
            .as_str()
            .unwrap()
            .contains("py__long_note"),
        "{forge}"
    );
    assert!(
        forge["forgedError"]
            .as_str()
            .unwrap_or_else(|| panic!("the forged retry ran: {forge}"))
            .contains("belongs to another call"),
        "{forge}"
    );
    assert_eq!(forge["honest"]["structuredContent"]["words"], 2, "{forge}");
    assert!(
        forge["replayedError"]
            .as_str()
            .unwrap_or_else(|| panic!("the replay ran: {forge}"))
            .contains("no call waits"),
        "{forge}"
    );
    // Only the approved call ran: the history holds one call and its one result.
    let (_, messages) = support::mcp::first_session(data.path());
    let results: Vec<&Value> = messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 1, "{messages}");
    assert!(!messages.to_string().contains("\"words\":9"), "{messages}");
}

/// The Python SDK's client against the `--http` gateway at `url` with its `token`, as
/// client `name`.
fn python_over_http(
    (url, token): (&str, &str),
    name: &str,
    steps: Value,
    answers: Value,
) -> Option<Vec<Value>> {
    let mut client = Command::new(support::peers::peer("venv/bin/python")?);
    client
        .arg(support::peers::peers_dir().join("gateway_client.py"))
        .env("GATEWAY_URL", url)
        .env("GATEWAY_TOKEN", token)
        .env("GATEWAY_CLIENT_NAME", name);
    let out = String::from_utf8(run(client, steps, answers)).unwrap();
    Some(
        out.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
    )
}

/// A 2026-07-28 host that leaves its approvals unanswered fills its own session's room
/// among the calls waiting for a retry, not every host's: past 16, its calls are
/// refused at once in the gateway's words (not as the user's denial), and another
/// host's approval is still asked, and runs.
#[test]
fn a_host_that_leaves_approvals_unanswered_fills_only_its_own_room() {
    if support::peers::peer("venv/bin/python").is_none() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let config = fastmcp_config(work.path());
    let (_gateway, url, token) =
        support::mcp::spawn_http_gateway(data.path(), &["--mcp-config", &config]);
    let gateway = (url.as_str(), token.as_str());
    let steps = json!([{"leave": 18, "tool": "py__long_note", "args": {"words": 2}}]);
    // An answer given, so the client declares elicitation; the calls use none.
    let got =
        python_over_http(gateway, "host-flood", steps, json!([{"action": "decline"}])).unwrap();
    assert_eq!(got[0]["version"], "2026-07-28", "{}", got[0]);
    let leave = &got[2];
    let kinds: Vec<&str> = leave["kinds"]
        .as_array()
        .unwrap_or_else(|| panic!("{leave}"))
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    let mut want = vec!["input_required"; 16];
    want.extend(["complete", "complete"]);
    assert_eq!(kinds, want, "{leave}");
    for text in leave["texts"].as_array().unwrap() {
        assert_eq!(
            text,
            "toolwire refused this call to py__long_note: nobody was asked, as 16 calls of \
             this session already wait for the host's answer, the most the gateway keeps for \
             one session; answer or cancel those first.",
            "{leave}"
        );
    }
    let steps = json!([{"tool": "py__long_note", "args": {"words": 4}}]);
    let answers = json!([{"action": "accept", "content": {"approve": true}}]);
    let got = python_over_http(gateway, "host-calm", steps, answers).unwrap();
    assert_eq!(
        got[2]["result"]["structuredContent"]["words"], 4,
        "{}",
        got[2]
    );
    assert_eq!(got[2]["asked"].as_array().unwrap().len(), 1, "{}", got[2]);
}

/// A 2026-07-28 call whose host does not come back with the answer within the retry
/// wait (`--retry-wait`) is refused in the gateway's words and forgotten: the late
/// retry finds nothing waiting, and the stored result says what happened.
#[test]
fn an_input_required_nobody_answers_is_refused_after_the_retry_wait() {
    if support::peers::peer("venv/bin/python").is_none() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let config = fastmcp_config(work.path());
    let steps = json!([{
        "leave": 1,
        "tool": "py__long_note",
        "args": {"words": 2},
        "retryAfter": 3,
        "answer": {"action": "accept", "content": {"approve": true}},
    }]);
    let got = drive_python(
        data.path(),
        &["--mcp-config", &config, "--retry-wait", "1"],
        "auto",
        steps,
        json!([{"action": "decline"}]),
    )
    .unwrap();
    assert_eq!(got[0]["version"], "2026-07-28", "{}", got[0]);
    let leave = &got[2];
    assert_eq!(leave["kinds"], json!(["input_required"]), "{leave}");
    assert!(
        leave["lateError"]
            .as_str()
            .unwrap_or_else(|| panic!("the late answer ran: {leave}"))
            .contains("no call waits"),
        "{leave}"
    );
    let (_, messages) = support::mcp::first_session(data.path());
    let results: Vec<&Value> = messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 1, "{messages}");
    let stored = results[0].to_string();
    assert!(
        stored.contains(
            "toolwire refused this call to py__long_note: the host did not call again with \
             the person's answer within 1 s, so the gateway stopped waiting for it."
        ),
        "{stored}"
    );
    assert!(!stored.contains("user denied"), "{stored}");
}

/// The one call of the gateway's session waiting for a person, as `toolwire serve` on
/// the same data directory lists it: (session id, suspension id).
fn waiting_in_serve(port: u16) -> (String, String) {
    for _ in 0..600 {
        let (_, body) = support::http(port, "GET", "/api/sessions", None);
        let sessions = support::json(&body);
        let gateway = sessions["sessions"].as_array().and_then(|all| {
            all.iter()
                .find(|s| s["title"] == "gateway: gateway-python-host")
                .and_then(|s| s["id"].as_str())
                .map(str::to_owned)
        });
        if let Some(id) = gateway {
            let (_, body) = support::http(
                port,
                "GET",
                &format!("/api/sessions/{id}/suspensions"),
                None,
            );
            let pending = support::json(&body);
            if let Some(suspension) = pending[0]["suspension"]["id"].as_str() {
                return (id, suspension.to_owned());
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("no call of the gateway waits in serve's web app");
}

/// A `toolwire serve` with the FastMCP server on a fresh data directory, as a gateway on
/// the same directory would find it: (data, workspace, the servers' config, serve's port,
/// serve itself).
fn serve_beside_gateway() -> (
    tempfile::TempDir,
    tempfile::TempDir,
    String,
    u16,
    support::Running,
) {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let config = fastmcp_config(work.path());
    let port = support::free_port();
    let serve = support::Running(support::spawn_serve(
        data.path(),
        work.path(),
        port,
        &[],
        &["--mcp-config", &config],
    ));
    (data, work, config, port, serve)
}

/// A host that cannot ask (the Python SDK client with no elicitation) gets its approvals
/// from the web app of a `toolwire serve` on the same data directory: the gateway's call
/// is listed there as waiting, approving it runs it, denying it refuses it; and the
/// host's call returns what the person decided.
#[test]
fn a_host_that_cannot_ask_is_answered_through_the_web_app() {
    if support::peers::peer("venv/bin/python").is_none() {
        return;
    }
    let (data, _work, config, port, _serve) = serve_beside_gateway();
    assert!(
        data.path().join("serve.url").exists(),
        "serve did not announce itself"
    );
    let steps = json!([
        {"tool": "py__long_note", "args": {"words": 3}},
        {"tool": "py__long_note", "args": {"words": 5}},
    ]);
    let client = {
        let data = data.path().to_owned();
        let config = config.clone();
        std::thread::spawn(move || {
            drive_python(
                &data,
                &["--mcp-config", &config, "--ask-timeout", "120"],
                "auto",
                steps,
                json!([]),
            )
        })
    };
    let (session, first) = waiting_in_serve(port);
    support::approve(port, &session, &first);
    let (_, second) = waiting_in_serve(port);
    assert_ne!(first, second);
    let (status, body) = support::http(
        port,
        "POST",
        &format!("/api/sessions/{session}/suspensions/{second}"),
        Some(r#"{"type":"deny","reason":"not now, from the web app"}"#),
    );
    assert!(status < 300, "{status} {body}");
    let got = client.join().unwrap().unwrap();
    assert_eq!(got[0]["version"], "2026-07-28", "{}", got[0]);
    let approved = &got[2];
    assert_eq!(
        approved["result"]["structuredContent"]["words"], 3,
        "{approved}"
    );
    assert!(
        approved["asked"].as_array().unwrap().is_empty(),
        "{approved}"
    );
    let denied = &got[3]["result"];
    assert_eq!(denied["isError"], true, "{denied}");
    assert!(
        denied.to_string().contains("not now, from the web app"),
        "{denied}"
    );
}

/// With nobody to ask within the wait, the call is refused and says where it waited.
#[test]
fn a_web_approval_nobody_gives_times_out_into_a_refusal() {
    if support::peers::peer("venv/bin/python").is_none() {
        return;
    }
    let (data, _work, config, port, _serve) = serve_beside_gateway();
    let steps = json!([{"tool": "py__long_note", "args": {"words": 3}}]);
    let got = drive_python(
        data.path(),
        &["--mcp-config", &config, "--ask-timeout", "2"],
        "auto",
        steps,
        json!([]),
    )
    .unwrap();
    let refused = &got[2]["result"];
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        refused
            .to_string()
            .contains("nobody answered in toolwire's web app"),
        "{refused}"
    );
    // Nothing waits any more in the web app.
    let (_, body) = support::http(port, "GET", "/api/sessions", None);
    let id = support::json(&body)["sessions"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, body) = support::http(
        port,
        "GET",
        &format!("/api/sessions/{id}/suspensions"),
        None,
    );
    assert_eq!(support::json(&body), json!([]), "{body}");
}

/// `toolwire mcp install` writes the entry that starts this binary's gateway on the same
/// data directory, and keeps the file it changed.
#[test]
fn install_writes_the_one_entry_and_keeps_a_backup() {
    let data = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("settings.json");
    std::fs::write(&config, r#"{"mcpServers": {"fs": {"command": "npx"}}}"#).unwrap();
    let file = config.to_str().unwrap();
    let out = support::mcp::toolwire(
        data.path(),
        &["mcp", "install", "--host", "gemini", "--config", file],
    );
    assert!(out.status.success(), "{}", support::mcp::stderr_of(&out));
    assert!(support::mcp::stderr_of(&out).contains("toolwire-backup-"));
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    let entry = &written["mcpServers"]["toolwire"];
    let bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_toolwire")).unwrap();
    assert_eq!(
        std::fs::canonicalize(entry["command"].as_str().unwrap()).unwrap(),
        bin
    );
    let args: Vec<&str> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args[0], "--data-dir");
    assert_eq!(args[2..], ["gateway", "--host", "gemini"]);
    assert_eq!(written["mcpServers"]["fs"]["command"], "npx");

    let bad = support::mcp::toolwire(data.path(), &["mcp", "install", "--host", "emacs"]);
    assert!(support::mcp::stderr_of(&bad).contains("unknown host \"emacs\""));
}

/// MCP Inspector's CLI mode lists the gateway's tools and calls one through it.
#[test]
fn the_inspector_cli_lists_and_calls_tools_through_the_gateway() {
    let (Some(inspector), Some(ev)) = (mcp_host("mcp-inspector"), everything()) else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let (command, args) = ev.split_once('=').map(|(_, c)| ("--mcp", c)).unwrap();
    let inspect = |method: &[&str]| -> Value {
        let out = Command::new(&inspector)
            .arg("--cli")
            .arg(env!("CARGO_BIN_EXE_toolwire"))
            .args(["--data-dir", data.path().to_str().unwrap(), "gateway"])
            .args([command, &format!("ev={args}")])
            .args(method)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let listed = inspect(&["--method", "tools/list"]);
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"ev__echo") && names.contains(&"read_result"),
        "{names:?}"
    );
    let called = inspect(&[
        "--method",
        "tools/call",
        "--tool-name",
        "ev__echo",
        "--tool-arg",
        "message=from the inspector",
    ]);
    assert_eq!(
        called["content"][0]["text"], "Echo: from the inspector",
        "{called}"
    );
}

/// Claude Code and Gemini CLI, given the entry `toolwire mcp install` wrote into their
/// config (in a throwaway HOME), start the gateway and report it connected.
#[test]
fn claude_code_and_gemini_cli_report_the_installed_gateway_connected() {
    let (Some(claude), Some(gemini), Some(ev)) =
        (mcp_host("claude"), mcp_host("gemini"), everything())
    else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let servers = home.path().join("servers.json");
    let (_, command) = ev.split_once('=').unwrap();
    let mut words = command.split(' ');
    let program = words.next().unwrap();
    let config =
        json!({"mcpServers": {"ev": {"command": program, "args": words.collect::<Vec<_>>()}}});
    std::fs::write(&servers, config.to_string()).unwrap();
    let data = home.path().join("data");
    for (host, file) in [
        ("claude-code", home.path().join(".claude.json")),
        ("gemini", home.path().join(".gemini/settings.json")),
    ] {
        let out = support::mcp::toolwire(
            &data,
            &[
                "mcp",
                "install",
                "--host",
                host,
                "--config",
                file.to_str().unwrap(),
                "--mcp-config",
                servers.to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{}", support::mcp::stderr_of(&out));
    }
    hosts_report_connected(home.path(), &claude, &gemini, "gateway --host");
}

/// Claude Code and Gemini CLI, run in `home`, list the `toolwire` entry as connected,
/// its line naming `target`.
fn hosts_report_connected(home: &Path, claude: &Path, gemini: &Path, target: &str) {
    // Gemini CLI starts no server of an untrusted folder.
    let trusted = json!({home.to_str().unwrap(): "TRUST_FOLDER"});
    std::fs::write(
        home.join(".gemini/trustedFolders.json"),
        trusted.to_string(),
    )
    .unwrap();
    for (bin, connected) in [(claude, "✔ Connected"), (gemini, "- Connected")] {
        let out = Command::new(bin)
            .args(["mcp", "list"])
            .current_dir(home)
            .env("HOME", home)
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        // Gemini CLI says it on stderr, Claude Code on stdout.
        let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        let line = said
            .lines()
            .find(|l| l.contains("toolwire: "))
            .unwrap_or_else(|| panic!("{} did not list toolwire: {said}", bin.display()));
        assert!(line.contains(connected), "{line}");
        assert!(line.contains(target), "{line}");
    }
}

/// Claude Code and Gemini CLI, given the `--http` entry `toolwire mcp install` wrote
/// (the URL and the token header, in each host's own keys), reach a running `toolwire
/// gateway --http` and report it connected: the header is one they send.
#[test]
fn claude_code_and_gemini_cli_reach_the_http_gateway_with_its_token() {
    let (Some(claude), Some(gemini), Some(ev)) =
        (mcp_host("claude"), mcp_host("gemini"), everything())
    else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    let (_gateway, url, _) = support::mcp::spawn_http_gateway(&data, &["--mcp", &ev]);
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    for (host, file) in [
        ("claude-code", home.path().join(".claude.json")),
        ("gemini", home.path().join(".gemini/settings.json")),
    ] {
        let out = support::mcp::toolwire(
            &data,
            &[
                "mcp",
                "install",
                "--host",
                host,
                "--config",
                file.to_str().unwrap(),
                "--http",
                &addr,
            ],
        );
        assert!(out.status.success(), "{}", support::mcp::stderr_of(&out));
    }
    hosts_report_connected(home.path(), &claude, &gemini, &url);
}
