//! The real `@modelcontextprotocol/server-everything` (npm, installed into tests/mcp by
//! `.ci/run`), over stdio and over streamable HTTP: every tool it lists is called with
//! valid arguments, stored and reloaded unchanged, and the notable ones are checked.
//!
//! Without `tests/mcp/node_modules` the tests say so and pass under plain `cargo test`;
//! under CI (`CI` set) they fail, so a missing server never passes for a working one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value as Json, json};
use toolwire_agent::{ApprovalRequest, Approver, CallOptions, Host};
use toolwire_core::{EventKind, ToolCall, new_id};
use toolwire_core::{Resolution, Status};
use toolwire_mcp::{Limits, ServerConfig, Transport};

/// Approves calls and answers every question with `answer`, counting the questions.
struct Answers {
    answer: Json,
    asked: std::sync::Mutex<Vec<String>>,
}

impl Approver for Answers {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Resolution> {
        self.asked
            .lock()
            .unwrap()
            .push(request.suspension.prompt.clone());
        let resolution = if request.is_question() {
            Resolution::Answer {
                value: self.answer.clone(),
            }
        } else {
            Resolution::Approve
        };
        Box::pin(async move { resolution })
    }
}

/// Valid arguments for each tool; the ones not named here take none.
fn arguments(tool: &str) -> Json {
    match tool {
        "echo" => json!({"message": "hello from toolwire"}),
        "get-annotated-message" => json!({"messageType": "success", "includeImage": true}),
        "get-resource-links" => json!({"count": 2}),
        "get-resource-reference" => json!({"resourceType": "Blob", "resourceId": 2}),
        "get-structured-content" => json!({"location": "Chicago"}),
        "get-sum" => json!({"a": 2, "b": 3}),
        // A data URI: the default is a URL on the internet, which CI cannot reach.
        "gzip-file-as-resource" => {
            json!({"data": "data:text/plain;base64,aGVsbG8gd29ybGQ=", "name": "hello.gz", "outputType": "resource"})
        }
        "trigger-long-running-operation" => json!({"duration": 1, "steps": 3}),
        "trigger-url-elicitation" => json!({"url": "https://example.com/consent"}),
        "simulate-research-query" => json!({"topic": "rust"}),
        _ => json!({}),
    }
}

async fn host_with(config: ServerConfig, data: &std::path::Path) -> Host {
    let limits = Limits {
        call_timeout: Duration::from_secs(30),
        ..Limits::default()
    };
    let connected = toolwire_mcp::connect_all(vec![config], limits).await;
    assert!(connected.failed.is_empty(), "{:?}", connected.failed);
    assert!(!connected.tools.is_empty());
    Host::builder()
        .data_dir(data)
        .without_builtins()
        .tools(
            connected
                .tools
                .into_iter()
                .map(|t| t as Arc<dyn toolwire_tool::Tool>),
        )
        .build()
        .await
        .unwrap()
}

async fn exercise(config: ServerConfig) {
    let dir = tempfile::tempdir().unwrap();
    let host = host_with(config, dir.path()).await;
    let names: Vec<String> = host
        .executor()
        .registry()
        .schemas()
        .map(|s| s.name.clone())
        .filter(|n| n.starts_with("ev__"))
        .collect();
    assert!(names.len() >= 10, "{names:?}");
    let session = host.session(None, "everything").await.unwrap();
    let answers = Arc::new(Answers {
        answer: json!({"color": "blue", "number": 7, "pets": "cats", "name": "Ada", "check": true, "email": "ada@example.com", "integer": 3, "untitledSingleSelectEnum": "option1", "titledSingleSelectEnum": "value1", "legacyTitledEnum": "opt1", "untitledMultipleSelectEnum": ["option1"], "titledMultipleSelectEnum": ["value1"]}),
        asked: std::sync::Mutex::new(Vec::new()),
    });
    let mut results = std::collections::BTreeMap::new();
    for name in &names {
        let remote = name.trim_start_matches("ev__");
        let mut running = host
            .run_call(
                &session.id,
                ToolCall::new(new_id("call"), name, arguments(remote)).by_person("test"),
                CallOptions::new(Arc::clone(&answers) as Arc<dyn Approver>),
            )
            .await
            .unwrap();
        let mut progress = 0;
        while let Some(event) = running.next().await {
            if matches!(event.kind, EventKind::Progress { .. }) {
                progress += 1;
            }
        }
        let result = running.finish().await.unwrap();
        // Stored once, and the same when read back.
        let stored = host
            .stores()
            .history()
            .find_result(&session.id, &result.call_id)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{name}: no stored result"));
        assert_eq!(stored.result, result, "{name}: the reloaded result differs");
        assert!(result.validate().is_ok(), "{name}: {:?}", result.validate());
        results.insert(remote.to_owned(), (result, progress));
    }
    let get = |n: &str| {
        &results
            .get(n)
            .unwrap_or_else(|| panic!("{n} was not listed"))
            .0
    };

    let echo = get("echo");
    assert_eq!(echo.status, Status::Success, "{echo:?}");
    assert!(
        echo.output[0]
            .as_text()
            .unwrap()
            .content
            .contains("hello from toolwire")
    );

    let image = get("get-tiny-image");
    let img = image
        .output
        .iter()
        .find(|v| v.kind == "image")
        .expect("an image");
    assert!(
        img.data["source"]["blob"]
            .as_str()
            .is_some_and(|r| r.starts_with("blake3:")),
        "{img:?}"
    );

    let blob = get("get-resource-reference");
    let file = blob
        .output
        .iter()
        .find(|v| v.kind == "file")
        .expect("a file value");
    // A blob resource is a file value; one this small stays inline (the store's
    // threshold), larger ones become blobs like the image above.
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(
            file.data["source"]["base64"]
                .as_str()
                .expect("inline base64"),
        )
        .unwrap();
    assert!(
        String::from_utf8(bytes).unwrap().starts_with("Resource 2"),
        "{file:?}"
    );

    let structured = get("get-structured-content");
    let kinds: Vec<String> = structured
        .output
        .iter()
        .map(|v| v.kind.to_string())
        .collect();
    // Twins (docs/contracts.md): both stored, the text for the model only, the
    // structured value for the person only.
    assert_eq!(kinds, ["text", "structured"]);
    let audience = |i: usize| {
        structured.output[i]
            .annotations
            .as_ref()
            .and_then(|a| a.audience.clone())
            .unwrap()
    };
    assert_eq!(audience(0), [toolwire_core::Audience::Assistant]);
    assert_eq!(audience(1), [toolwire_core::Audience::User]);
    assert!(structured.output[1].data["temperature"].is_number());

    let annotated = get("get-annotated-message");
    let audiences: Vec<Json> = annotated
        .output
        .iter()
        .filter_map(|v| v.annotations.as_ref())
        .map(|a| serde_json::to_value(&a.audience).unwrap())
        .collect();
    assert!(
        audiences
            .iter()
            .any(|a| a.as_array().is_some_and(|l| !l.is_empty())),
        "{audiences:?}"
    );

    let (long, progress) = results.get("trigger-long-running-operation").unwrap();
    assert_eq!(long.status, Status::Success);
    assert!(*progress >= 2, "progress events: {progress}");

    // A tool that runs only as a task: polled to completion, its status shown as progress.
    let (research, research_progress) = results.get("simulate-research-query").unwrap();
    assert_eq!(research.status, Status::Success, "{research:?}");
    let report: String = research
        .output
        .iter()
        .filter_map(|v| v.as_text().ok())
        .map(|t| t.content.to_owned())
        .collect();
    assert!(report.contains("rust"), "{report}");
    assert!(
        *research_progress >= 1,
        "task progress events: {research_progress}"
    );

    let elicited = get("trigger-elicitation-request");
    assert_eq!(elicited.status, Status::Success, "{elicited:?}");
    let text: String = elicited
        .output
        .iter()
        .filter_map(|v| v.as_text().ok())
        .map(|t| t.content.to_owned())
        .collect();
    assert!(text.contains("accept"), "{text}");
    assert!(!answers.asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn server_everything_over_stdio() {
    let Some(script) = support::peers::everything() else {
        return;
    };
    exercise(support::stdio(
        "ev",
        "node",
        &[script.display().to_string(), "stdio".into()],
    ))
    .await;
}

#[tokio::test]
async fn server_everything_over_streamable_http() {
    let Some(script) = support::peers::everything() else {
        return;
    };
    let port = support::peers::free_port();
    let server = support::peers::spawn_http(&script, port).await;
    exercise(support::trusted(ServerConfig::new(
        "ev",
        Transport::Http {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: Default::default(),
        },
    )))
    .await;
    drop(server);
}

/// server-everything's research task, asked to be ambiguous: mid-task it needs a person
/// (`input_required`) and asks through `tasks/result` (`relatedTask`). The question
/// reaches the approver as the call's question, the answer reaches the server, and the
/// task goes on with it (not with its "elicitation unavailable" default).
#[tokio::test]
async fn a_question_inside_a_task_reaches_the_person() {
    let Some(script) = support::peers::everything() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = support::stdio(
        "ev",
        "node",
        &[script.display().to_string(), "stdio".into()],
    );
    let host = host_with(config, dir.path()).await;
    let session = host.session(None, "task question").await.unwrap();
    let answers = Arc::new(Answers {
        answer: json!({"interpretation": "historical"}),
        asked: std::sync::Mutex::new(Vec::new()),
    });
    let running = host
        .run_call(
            &session.id,
            ToolCall::new(
                new_id("call"),
                "ev__simulate-research-query",
                json!({"topic": "bridges", "ambiguous": true}),
            )
            .by_person("test"),
            CallOptions::new(Arc::clone(&answers) as Arc<dyn Approver>),
        )
        .await
        .unwrap();
    let result = running.finish().await.unwrap();
    assert_eq!(result.status, Status::Success, "{result:?}");
    let report: String = result
        .output
        .iter()
        .filter_map(|v| v.as_text().ok())
        .map(|t| t.content.to_owned())
        .collect();
    assert!(report.contains("**Clarification**: historical"), "{report}");
    let asked = answers.asked.lock().unwrap().clone();
    assert!(
        asked
            .iter()
            .any(|p| p.contains("could have multiple interpretations")),
        "{asked:?}"
    );
}
