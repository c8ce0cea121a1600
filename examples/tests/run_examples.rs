//! The examples run and do what their docs say: every well-known kind comes back valid and
//! drawn, the widget rides beside the text result, and the embedded agent streams a
//! turn from a local OpenAI-compatible server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Command, Output};

use toolwire_core::WellKnown;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "example failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn kinds_returns_every_well_known_kind() {
    let out = stdout(&Command::new(env!("CARGO_BIN_EXE_kinds")).output().unwrap());
    for kind in WellKnown::ALL {
        assert!(
            out.contains(&format!("── {} (success)", kind.name())),
            "{} missing:\n{out}",
            kind.name()
        );
    }
    // Media went to the blob store, not inline.
    assert!(out.contains("[image image/png 1×1"), "{out}");
    assert!(out.contains("blake3:"), "{out}");
}

#[test]
fn widget_travels_beside_the_text_result() {
    let out = stdout(&Command::new(env!("CARGO_BIN_EXE_widget")).output().unwrap());
    assert!(out.contains(r#""widget":"chart.line""#), "{out}");
    assert!(
        out.contains("Builds got faster: 240 s then 180 s."),
        "{out}"
    );
    assert!(out.contains("build times: 240 s → 180 s (faster)"), "{out}");
}

#[tokio::test]
async fn host_agent_streams_a_turn() {
    let server = MockServer::start().await;
    let sse = [
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Two files"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":" here."}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}"#,
        "[DONE]",
    ]
    .iter()
    .map(|d| format!("data: {d}\n\n"))
    .collect::<String>();
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(sse),
        )
        .mount(&server)
        .await;
    let workspace = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_host_agent"));
    cmd.arg("How many files?")
        .current_dir(workspace.path())
        .env("TOOLWIRE_DATA_DIR", data.path())
        .env("OPENAI_BASE_URL", server.uri());
    for var in [
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
    ] {
        cmd.env_remove(var);
    }
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let out = stdout(&out);
    assert!(out.contains("Two files here."), "{out}");
    assert!(out.contains("[Done after 1 model requests]"), "{out}");
}
