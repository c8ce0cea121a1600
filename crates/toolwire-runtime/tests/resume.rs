//! A tool that suspends itself mid-run is finished by its own `Tool::resume`: the state it
//! kept comes back with the person's answer, across executors sharing the store, for as
//! many rounds as it asks (the shape of MCP's Multi Round-Trip Requests).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value as Json, json};
use toolwire_core::{ErrorCode, Resolution, ToolCall};
use toolwire_core::{Status, SuspensionReason};
use toolwire_runtime::{Executor, ExecutorConfig, Registry, Scope};
use toolwire_store::MemorySuspensions;
use toolwire_tool::{Output, Resume, Tool, ToolContext, ToolError, ToolSchema};

/// Asks two questions, one per round, like an MCP server answering `input_required`
/// twice; the final result names both answers.
struct TwoRounds {
    schema: ToolSchema,
}

fn input_required(key: &str, message: &str, state: &str) -> Json {
    json!({
        "resultType": "input_required",
        "inputRequests": {key: {"method": "elicitation/create", "params": {
            "message": message,
            "requestedSchema": {"type": "object", "properties": {"v": {"type": "string"}}},
        }}},
        "requestState": state,
    })
}

impl Tool for TwoRounds {
    fn schema(&self) -> &ToolSchema {
        &self.schema
    }

    fn execute(
        &self,
        _input: Json,
        _ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Output, ToolError>> {
        Box::pin(async { Ok(Output::Raw(input_required("first", "First?", "round-1"))) })
    }

    fn resume(
        &self,
        _input: Json,
        resume: Resume,
        _ctx: ToolContext,
    ) -> Option<BoxFuture<'static, Result<Output, ToolError>>> {
        Some(Box::pin(async move {
            let state = resume.state.unwrap_or_default();
            let request_state = state["mcp"]["requestState"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            let answer = match resume.resolution {
                Resolution::Answer { value } => value,
                Resolution::Deny { .. } | Resolution::Cancel { .. } | Resolution::Refuse { .. } => {
                    return Err(ToolError::failed("the user declined"));
                }
                Resolution::Approve => return Err(ToolError::failed("an answer was expected")),
            };
            match request_state.as_str() {
                "round-1" => {
                    let next = format!("round-2:{}", answer["v"].as_str().unwrap_or(""));
                    Ok(Output::Raw(input_required("second", "Second?", &next)))
                }
                s if s.starts_with("round-2:") => {
                    let first = &s["round-2:".len()..];
                    let second = answer["v"].as_str().unwrap_or("");
                    Ok(Output::Raw(json!({
                        "resultType": "complete",
                        "content": [{"type": "text", "text": format!("{first} then {second}")}],
                    })))
                }
                other => Err(ToolError::failed(format!("unknown state {other:?}"))),
            }
        }))
    }
}

/// Suspends through `ToolError::Suspend` with state, and resumes from it.
struct Confirm {
    schema: ToolSchema,
}

impl Tool for Confirm {
    fn schema(&self) -> &ToolSchema {
        &self.schema
    }

    fn execute(
        &self,
        input: Json,
        _ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Output, ToolError>> {
        Box::pin(async move {
            let suspension = toolwire_core::Suspension {
                id: "same-id-every-time".into(),
                reason: SuspensionReason::Input,
                prompt: "Overwrite?".into(),
                input_schema: None,
            };
            Err(ToolError::suspend(
                suspension,
                Some(json!({"target": input["target"]})),
            ))
        })
    }

    fn resume(
        &self,
        _input: Json,
        resume: Resume,
        _ctx: ToolContext,
    ) -> Option<BoxFuture<'static, Result<Output, ToolError>>> {
        Some(Box::pin(async move {
            let target = resume.state.unwrap_or_default()["target"].clone();
            match resume.resolution {
                Resolution::Deny { .. } => Ok(Output::Raw(json!(format!("kept {target}")))),
                _ => Ok(Output::Raw(json!(format!("overwrote {target}")))),
            }
        }))
    }
}

fn executor(store: Arc<MemorySuspensions>) -> Executor {
    let mut registry = Registry::new();
    let schema = |name: &str| ToolSchema::new(name, "test", json!({"type": "object"}));
    registry
        .register(TwoRounds {
            schema: schema("two_rounds"),
        })
        .unwrap();
    registry
        .register(Confirm {
            schema: schema("confirm"),
        })
        .unwrap();
    let config = ExecutorConfig {
        default_timeout: Duration::from_secs(5),
        ..ExecutorConfig::default()
    };
    Executor::builder(registry)
        .suspensions(store)
        .config(config)
        .build()
}

fn answer(v: &str) -> Resolution {
    Resolution::Answer {
        value: json!({"v": v}),
    }
}

#[tokio::test]
async fn two_rounds_of_input_end_in_one_final_result() {
    let store = Arc::new(MemorySuspensions::default());
    let ex = executor(Arc::clone(&store));
    let first = ex
        .execute(
            &Scope::new("s"),
            ToolCall::new("c1", "two_rounds", json!({})),
        )
        .await
        .into_result();
    assert_eq!(first.status, Status::Suspended);
    let s1 = first.suspension.unwrap();
    assert_eq!(s1.prompt, "First?");
    assert_eq!(s1.reason, SuspensionReason::Input);
    assert!(s1.input_schema.is_some());

    // The person takes a while with each question: both waits count in the result.
    tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    // The second round is answered by another executor sharing the store (a restart).
    let second = ex
        .resolve(&s1.id, answer("soup"))
        .await
        .unwrap()
        .into_result();
    assert_eq!(second.status, Status::Suspended);
    let s2 = second.suspension.unwrap();
    assert_eq!(s2.prompt, "Second?");
    assert_ne!(s1.id, s2.id, "each round is its own suspension");
    ex.settled(&s1.id).await.unwrap();
    drop(ex);

    let other = executor(Arc::clone(&store));
    let listed = other.pending("s").await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].suspension.id, s2.id);
    assert!(
        listed[0].waited_ms >= 60,
        "the first wait is carried: {:?}",
        listed[0]
    );
    tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    let done = other
        .resolve(&s2.id, answer("fish"))
        .await
        .unwrap()
        .into_result();
    let waited = done.metadata.waited_ms.unwrap();
    assert!(waited >= 120, "both waits: {waited} ms");
    assert!(
        done.metadata.duration_ms.unwrap() < waited,
        "the duration is the run after the last answer, not the wait"
    );
    assert_eq!(done.status, Status::Success);
    assert_eq!(done.output.len(), 1, "{:?}", done.output);
    assert_eq!(done.output[0].as_text().unwrap().content, "soup then fish");
    assert_eq!(done.call_id, "c1");
    other.settled(&s2.id).await.unwrap();
    assert!(other.pending("s").await.unwrap().is_empty());
}

#[tokio::test]
async fn a_mid_run_suspension_gets_a_fresh_id_and_its_state_back() {
    let store = Arc::new(MemorySuspensions::default());
    let ex = executor(Arc::clone(&store));
    let scope = Scope::new("s");
    let a = ex
        .execute(
            &scope,
            ToolCall::new("c1", "confirm", json!({"target": "a.txt"})),
        )
        .await
        .into_result();
    let b = ex
        .execute(
            &scope,
            ToolCall::new("c2", "confirm", json!({"target": "b.txt"})),
        )
        .await
        .into_result();
    let (sa, sb) = (a.suspension.unwrap(), b.suspension.unwrap());
    assert_ne!(
        sa.id, sb.id,
        "the tool's own id is not trusted to be unique"
    );
    assert_ne!(sa.id, "same-id-every-time");
    assert_eq!(ex.pending("s").await.unwrap().len(), 2);

    let kept = ex
        .resolve(&sa.id, Resolution::Deny { reason: None })
        .await
        .unwrap()
        .into_result();
    assert_eq!(kept.output[0].as_text().unwrap().content, "kept \"a.txt\"");
    let done = ex
        .resolve(&sb.id, answer("yes"))
        .await
        .unwrap()
        .into_result();
    assert_eq!(
        done.output[0].as_text().unwrap().content,
        "overwrote \"b.txt\""
    );
}

#[tokio::test]
async fn a_call_whose_tool_is_gone_cannot_be_resumed() {
    let store = Arc::new(MemorySuspensions::default());
    let ex = executor(Arc::clone(&store));
    let r = ex
        .execute(
            &Scope::new("s"),
            ToolCall::new("c1", "two_rounds", json!({})),
        )
        .await
        .into_result();
    let id = r.suspension.unwrap().id;
    let bare = Executor::builder(Registry::new())
        .suspensions(store)
        .build();
    let done = bare.resolve(&id, answer("x")).await.unwrap().into_result();
    assert_eq!(done.error_code(), Some(ErrorCode::UnknownTool));
    assert!(done.error.unwrap().message.contains("cannot be resumed"));
}
