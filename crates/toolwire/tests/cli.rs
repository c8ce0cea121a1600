//! The binary's contract with a person at a shell: good input works, bad input exits 1
//! with one line saying what and where, never a panic (exit 101) or a backtrace.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use support::with_stdin;

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn toolwire(args: &[&str], stdin: &str) -> Output {
    with_stdin(
        Command::new(env!("CARGO_BIN_EXE_toolwire"))
            .args(args)
            .env("RUST_BACKTRACE", "1"),
        stdin,
    )
}

fn fixture(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(rel)
        .display()
        .to_string()
}

/// Exit 1, exactly one stderr line, containing each of `expected`.
fn assert_one_line_error(out: &Output, expected: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("backtrace"),
        "{stderr}"
    );
    for e in expected {
        assert!(stderr.contains(e), "{stderr:?} lacks {e:?}");
    }
}

const VALID: &str = r#"{"callId":"c1","toolName":"t","status":"success","output":[{"kind":"text","data":{"content":"hi"}}]}"#;

#[test]
fn validate_accepts_a_valid_result() {
    let out = toolwire(&["validate"], VALID);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("ok: <stdin> (success, 1 values)"));
}

#[test]
fn validate_rejects_bad_input_with_what_and_where() {
    assert_one_line_error(
        &toolwire(&["validate"], "{not json"),
        &["<stdin>", "not JSON", "line 1 column 2"],
    );
    assert_one_line_error(
        &toolwire(&["validate"], &VALID.replace("success", "done")),
        &["status", "unknown variant `done`"],
    );
    assert_one_line_error(
        &toolwire(
            &["validate"],
            &VALID.replace(r#""kind":"text""#, r#""kind":"Bad Kind""#),
        ),
        &["output[0].kind", "invalid kind \"Bad Kind\""],
    );
    assert_one_line_error(
        &toolwire(
            &["validate"],
            r#"{"callId":"c","toolName":"t","status":"success","output":{}}"#,
        ),
        &["output", "expected a sequence"],
    );
    assert_one_line_error(
        &toolwire(
            &["validate"],
            &VALID.replace(r#"{"content":"hi"}"#, r#"{"content":3}"#),
        ),
        &["output[0].data.content: expected string"],
    );
    assert_one_line_error(
        &toolwire(&["validate", "/no/such/file.json"], ""),
        &["cannot read /no/such/file.json"],
    );
}

#[test]
fn validate_prints_one_line_per_violation() {
    let two = r#"{"callId":"","toolName":"t","status":"success","output":[{"kind":"table","data":{"columns":[],"rows":1}}]}"#;
    let out = toolwire(&["validate"], two);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        [
            "callId: must not be empty",
            "output[0].data.rows: expected array"
        ]
    );
}

#[test]
fn normalize_a_real_mcp_payload() {
    let out = toolwire(
        &[
            "normalize",
            &fixture("mcp/get-tiny-image.json"),
            "--tool",
            "get-tiny-image",
            "--call-id",
            "x",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0));
    let result: toolwire_core::ToolResult = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (result.call_id.as_str(), result.tool_name.as_str()),
        ("x", "get-tiny-image")
    );
    result.validate().unwrap();
    assert_eq!(result.output[1].mime_type.as_deref(), Some("image/png"));
}

#[test]
fn normalize_rejects_non_json_unless_told_it_is_text() {
    assert_one_line_error(&toolwire(&["normalize"], "plain words"), &["not JSON"]);
    let out = toolwire(&["normalize", "--text", "--compact"], "plain words");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains(r#""content":"plain words""#));
}

#[test]
fn normalize_strict_fails_on_diagnostics_but_still_prints() {
    let out = toolwire(
        &["normalize", "--strict"],
        r#"{"kind":"Bad Kind","data":{}}"#,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a valid kind"));
    assert!(String::from_utf8_lossy(&out.stdout).contains(r#""kind": "structured""#));
}

#[test]
fn schema_prints_the_committed_schema() {
    let out = toolwire(&["schema"], "");
    assert_eq!(out.status.code(), Some(0));
    let committed = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schema/toolwire.schema.json"),
    )
    .unwrap();
    assert_eq!(out.stdout, committed);
}

#[test]
fn usage_errors_are_not_panics() {
    let out = toolwire(&["no-such-command"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unrecognized subcommand"));
}

/// Runs with its own data directory.
fn toolwire_in(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["--data-dir", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    toolwire(&all, "")
}

#[test]
fn normalize_store_then_sessions_show_and_gc() {
    let dir = tempfile::tempdir().unwrap();
    let image = fixture("mcp/get-tiny-image.json");
    let out = toolwire_in(
        dir.path(),
        &["normalize", "--store", &image, "--tool", "get-tiny-image"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stored: toolwire_core::ToolResult = serde_json::from_slice(&out.stdout).unwrap();
    // The media went to the blob store and is indexed in resources.
    let key = stored.resources[0].uri.clone();
    assert!(toolwire_core::is_blob_key(&key));
    assert_eq!(
        stored.output[1].data["source"]["blob"],
        serde_json::json!(key)
    );

    let sessions = toolwire_in(dir.path(), &["sessions", "--json"]);
    let list: serde_json::Value = serde_json::from_slice(&sessions.stdout).unwrap();
    let session = list[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(list[0]["messageCount"], 1);

    // Reloaded from history, the result is the same value.
    let shown = toolwire_in(dir.path(), &["show", &session, "--json"]);
    let messages: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    let reloaded: toolwire_core::ToolResult =
        serde_json::from_value(messages[0]["content"].clone()).unwrap();
    assert_eq!(reloaded, stored);
    // Landed like any call's result: announced once stored, so a session open in `serve`
    // shows it live.
    let events = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let stores = toolwire_store::Stores::open(dir.path(), Default::default())
            .await
            .unwrap();
        stores.events().events_since(&session, 0).await.unwrap()
    });
    let announced: Vec<&toolwire_core::EventKind> = events.iter().map(|e| &e.kind).collect();
    assert_eq!(
        announced,
        [&toolwire_core::EventKind::tool_result(stored.clone(), None)]
    );
    let rendered = String::from_utf8(toolwire_in(dir.path(), &["show", &session]).stdout).unwrap();
    assert!(
        rendered.contains("[image image/png 4.0 KB blake3:"),
        "{rendered}"
    );

    // Referenced blobs survive gc; nothing is listed for removal.
    let gc = toolwire_in(dir.path(), &["gc", "--dry-run", "--min-age-secs", "0"]);
    assert!(String::from_utf8_lossy(&gc.stdout).contains("1 blobs scanned, 0 unreferenced"));
    assert!(String::from_utf8_lossy(&gc.stdout).contains("0 stale temporary files removed"));
}

#[test]
fn store_commands_reject_bad_ids_and_unknown_sessions() {
    let dir = tempfile::tempdir().unwrap();
    assert_one_line_error(
        &toolwire_in(dir.path(), &["show", "../etc"]),
        &["invalid session id", ".."],
    );
    assert_one_line_error(
        &toolwire_in(dir.path(), &["show", "nope"]),
        &["no session \"nope\""],
    );
    let image = fixture("mcp/echo.json");
    assert_one_line_error(
        &toolwire_in(
            dir.path(),
            &["normalize", "--store", "--session", "missing", &image],
        ),
        &["no session \"missing\""],
    );
}

#[test]
fn a_corrupt_database_is_a_clear_error_and_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    std::fs::write(&db, b"this is not a sqlite database, just bytes").unwrap();
    let out = toolwire_in(dir.path(), &["sessions"]);
    assert_one_line_error(&out, &["cannot open the stores"]);
    assert_eq!(
        std::fs::read(&db).unwrap(),
        b"this is not a sqlite database, just bytes"
    );
}

#[test]
fn call_read_file_on_this_checkout_renders_and_stores() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = toolwire_in(
        dir.path(),
        &[
            "call",
            "read_file",
            r#"{"path":"README.md"}"#,
            "--workspace",
            repo.to_str().unwrap(),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("read_file") && shown.contains("# toolwire"),
        "{shown}"
    );
    let list: serde_json::Value =
        serde_json::from_slice(&toolwire_in(dir.path(), &["sessions", "--json"]).stdout).unwrap();
    assert_eq!(list[0]["messageCount"], 2, "the person's call, its result");
    let session = list[0]["id"].as_str().unwrap();
    let shown = toolwire_in(dir.path(), &["show", session]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("‹ you (cli)"), "{shown}");
    let json = toolwire_in(dir.path(), &["show", session, "--json"]);
    let messages: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        messages[0]["content"]["toolCalls"][0]["byPerson"]["via"],
        "cli"
    );
}

#[test]
fn call_refuses_escapes_and_unknown_tools_as_error_results() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let ws = ws.path().to_str().unwrap();
    let out = toolwire_in(
        dir.path(),
        &[
            "call",
            "read_file",
            r#"{"path":"../../etc/passwd"}"#,
            "--workspace",
            ws,
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("outside_workspace"));
    let out = toolwire_in(dir.path(), &["call", "no_such_tool", "--workspace", ws]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("unknown_tool"));
    assert_one_line_error(
        &toolwire_in(
            dir.path(),
            &["call", "read_file", "{oops", "--workspace", ws],
        ),
        &["the input is not JSON"],
    );
}

#[test]
fn call_needs_approval_for_run_and_yes_gives_it() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let ws = ws.path().to_str().unwrap();
    // No terminal to ask: denied, and the model-facing message says how to approve.
    let out = toolwire_in(
        dir.path(),
        &["call", "run", r#"{"command":"echo hi"}"#, "--workspace", ws],
    );
    assert_eq!(out.status.code(), Some(1));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("error (denied)") && shown.contains("--yes"),
        "{shown}"
    );
    let out = toolwire_in(
        dir.path(),
        &[
            "call",
            "run",
            r#"{"command":"echo hi"}"#,
            "--workspace",
            ws,
            "--yes",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("hi"));
}

#[test]
fn export_cuts_a_long_result_and_read_result_returns_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let long: String = (0..400).map(|i| format!("line {i:03}\n")).collect();
    std::fs::write(ws.path().join("log.txt"), &long).unwrap();
    let ws = ws.path().to_str().unwrap();
    let out = toolwire_in(
        dir.path(),
        &[
            "call",
            "read_file",
            r#"{"path":"log.txt"}"#,
            "--workspace",
            ws,
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let list: serde_json::Value =
        serde_json::from_slice(&toolwire_in(dir.path(), &["sessions", "--json"]).stdout).unwrap();
    let session = list[0]["id"].as_str().unwrap();
    for provider in ["anthropic", "openai-chat", "openai-responses", "gemini"] {
        let out = toolwire_in(
            dir.path(),
            &[
                "export",
                session,
                "--provider",
                provider,
                "--max-chars",
                "400",
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{provider}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let body = String::from_utf8(out.stdout).unwrap();
        assert!(
            body.contains("omitted by toolwire; read them with read_result"),
            "{provider}: {body}"
        );
    }
    // Follow the marker: the call id and offset it names give the omitted text.
    let body: serde_json::Value = serde_json::from_slice(
        &toolwire_in(
            dir.path(),
            &[
                "export",
                session,
                "--provider",
                "anthropic",
                "--max-chars",
                "400",
            ],
        )
        .stdout,
    )
    .unwrap();
    let text = body["messages"][2]["content"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let args_at = text.find("read_result ").unwrap() + "read_result ".len();
    let args_end = text[args_at..].find('}').unwrap() + args_at + 1;
    let read_args = &text[args_at..args_end];
    let offset = serde_json::from_str::<serde_json::Value>(read_args).unwrap()["offset"]
        .as_u64()
        .unwrap() as usize;
    let out = toolwire_in(
        dir.path(),
        &[
            "call",
            "read_result",
            read_args,
            "--workspace",
            ws,
            "--session",
            session,
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains(&long[offset..offset + 30]), "{shown}");
    // A bad flag value is a usage error (exit 2), naming the choices.
    let bad = toolwire_in(dir.path(), &["export", session, "--provider", "claude"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr)
            .contains("expected anthropic, openai-chat, openai-responses or gemini")
    );
}

#[test]
fn show_draws_a_reloaded_image_on_a_terminal_that_can() {
    let dir = tempfile::tempdir().unwrap();
    let image = fixture("mcp/get-tiny-image.json");
    assert_eq!(
        toolwire_in(dir.path(), &["normalize", "--store", &image])
            .status
            .code(),
        Some(0)
    );
    let list: serde_json::Value =
        serde_json::from_slice(&toolwire_in(dir.path(), &["sessions", "--json"]).stdout).unwrap();
    let session = list[0]["id"].as_str().unwrap();
    let show = |images: &str| {
        Command::new(env!("CARGO_BIN_EXE_toolwire"))
            .args(["--data-dir", dir.path().to_str().unwrap(), "show", session])
            .env("TOOLWIRE_IMAGES", images)
            .output()
            .unwrap()
    };
    // The stored result references a blob; a kitty terminal gets the image itself.
    let kitty = String::from_utf8_lossy(&show("kitty").stdout).into_owned();
    assert!(kitty.contains("\x1b_Ga=T"), "no kitty image in {kitty:?}");
    let plain = String::from_utf8_lossy(&show("none").stdout).into_owned();
    assert!(
        plain.contains("[image image/png 4.0 KB blake3:") && !plain.contains("\x1b_G"),
        "{plain:?}"
    );
}

#[test]
fn a_question_nobody_can_answer_still_gets_its_one_stored_result() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let out = toolwire_in(
        dir.path(),
        &[
            "call",
            "ask_user",
            r#"{"question":"Which branch?"}"#,
            "--workspace",
            ws.path().to_str().unwrap(),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: serde_json::Value =
        serde_json::from_slice(&toolwire_in(dir.path(), &["sessions", "--json"]).stdout).unwrap();
    let session = list[0]["id"].as_str().unwrap();
    let shown = toolwire_in(dir.path(), &["show", session, "--json"]);
    let messages: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    let roles: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["assistant", "tool_result"]);
    let result = &messages[1]["content"];
    // Nobody could answer: the question was dismissed (cancelled), not refused.
    assert_eq!(result["error"]["code"], "cancelled");
    let message = result["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("no terminal to answer tool ask_user's question: Which branch?"),
        "{message}"
    );
}

/// Endless or huge input is refused at the cap with one clear line, not read until
/// memory runs out.
#[test]
fn endless_input_stops_at_the_cap() {
    let out = Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args(["render", "/dev/zero"])
        .env("TOOLWIRE_MAX_INPUT_BYTES", "100000")
        .output()
        .unwrap();
    assert_one_line_error(
        &out,
        &[
            "/dev/zero",
            "larger than 100000 bytes",
            "TOOLWIRE_MAX_INPUT_BYTES",
        ],
    );
}

/// A line that quotes input quotes an excerpt: a 1 MB bad value is not echoed whole.
#[test]
fn errors_quote_an_excerpt_of_the_input() {
    let huge = "x".repeat(1_000_000);
    let input = format!(r#"{{"callId":"c","toolName":"t","status":"{huge}","output":[]}}"#);
    let out = toolwire(&["validate"], &input);
    assert_one_line_error(&out, &["<stdin>", "status"]);
    assert!(out.stderr.len() < 2000, "{} bytes", out.stderr.len());
}

/// A reader that goes away (`| head -c1`) ends the output quietly, as `cat` does: no
/// panic, no error line.
#[test]
fn a_closed_stdout_ends_the_output_quietly() {
    let big = format!(
        r#"{{"kind":"text","data":{{"content":"{}"}}}}"#,
        "line of text\\n".repeat(50_000)
    );
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), big).unwrap();
    for args in [
        vec!["render", "--expand", file.path().to_str().unwrap()],
        vec!["schema"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolwire"))
            .args(&args)
            .env("RUST_BACKTRACE", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the read end before the command writes.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

/// A `normalize --store` the store refuses (a call id with a control character) fails
/// with one line and leaves no empty session behind.
#[test]
fn a_refused_normalize_store_leaves_no_session() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("payload.json");
    std::fs::write(&file, r#"{"content":[{"type":"text","text":"hi"}]}"#).unwrap();
    let out = toolwire_in(
        dir.path(),
        &[
            "normalize",
            "--store",
            "--call-id",
            "bad\u{7}id",
            file.to_str().unwrap(),
        ],
    );
    assert_one_line_error(&out, &["call id", "only letters, digits"]);
    let sessions = toolwire_in(dir.path(), &["sessions", "--json"]);
    assert_eq!(String::from_utf8_lossy(&sessions.stdout).trim(), "[]");
}

/// `migrate` copies a data directory's store into another and `show` reads it there,
/// image included; a second run copies nothing; a bad source is one line.
#[test]
fn migrate_copies_a_store_and_a_second_run_copies_nothing() {
    let (src, dst) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let image = fixture("mcp/get-tiny-image.json");
    let out = toolwire_in(
        src.path(),
        &["normalize", "--store", &image, "--tool", "get-tiny-image"],
    );
    assert_eq!(out.status.code(), Some(0));
    let from = format!("sqlite://{}", src.path().join("history.db").display());
    let to = format!("sqlite://{}", dst.path().join("history.db").display());
    let blobs_to = format!("file://{}", dst.path().join("blobs").display());
    let args = [
        "migrate",
        "--from",
        &from,
        "--to",
        &to,
        "--blobs-to",
        &blobs_to,
    ];
    let out = toolwire(&args, "");
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("1 sessions (1 new)") && said.contains("1 blobs"),
        "{said}"
    );
    let again = String::from_utf8_lossy(&toolwire(&args, "").stdout).into_owned();
    assert!(
        again.contains("0 messages copied") && again.contains("0 blobs"),
        "{again}"
    );
    // The target, opened as a data directory, holds the session and its image.
    let listed = toolwire_in(dst.path(), &["sessions"]);
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let id = listed
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no session: {listed}"))
        .to_owned();
    let shown = toolwire_in(dst.path(), &["show", &id]);
    assert_eq!(
        shown.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let out = toolwire(
        &[
            "migrate",
            "--from",
            "mysql://x/y",
            "--to",
            &to,
            "--from-blobs",
            &blobs_to,
        ],
        "",
    );
    assert_one_line_error(
        &out,
        &[
            "cannot open the source",
            "expected sqlite://PATH or postgres://",
        ],
    );
}
