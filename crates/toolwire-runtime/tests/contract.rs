//! One test per rule of the executor contract (docs/contracts.md, "Tool execution
//! contract"): panic, timeout, invalid input and
//! output, unknown tool, widgets discarded on error, call order, approvals, blocking,
//! display, cancel, suspension resumed by another executor.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value as Json, json};
use toolwire_core::{Audience, Status, Value};
use toolwire_core::{ErrorCode, EventKind, Resolution, ToolCall};
use toolwire_runtime::{Executor, ExecutorConfig, Registry, Scope};
use toolwire_store::MemorySuspensions;
use toolwire_tool::{ApprovalPolicy, ExecutionMode, ProgressSink, ToolContext, ToolError, tool_fn};

mod support;
use support::{announcing, land};

#[derive(Deserialize, JsonSchema)]
struct Sleep {
    ms: u64,
    label: String,
}

#[derive(Deserialize, JsonSchema)]
struct Empty {}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)] // Read by the executor's prompt, through the schema; the fn never runs.
struct Question {
    question: String,
}

fn registry() -> Registry {
    let mut r = Registry::new();
    r.register(tool_fn(
        "sleep",
        "Sleeps, then says its label.",
        |a: Sleep, _ctx: ToolContext| async move {
            tokio::time::sleep(Duration::from_millis(a.ms)).await;
            Ok::<_, ToolError>(Value::text(a.label))
        },
    ))
    .unwrap();
    r.register(tool_fn(
        "boom",
        "Panics.",
        |_: Empty, _ctx: ToolContext| async move {
            if true {
                panic!("kaboom at line 7");
            }
            Ok::<_, ToolError>(Value::text("unreachable"))
        },
    ))
    .unwrap();
    r.register(tool_fn(
        "widget_then_fail",
        "Emits a widget, then fails.",
        |_: Empty, ctx: ToolContext| async move {
            ctx.display_widget("chart", json!({"points": [1, 2]}), "a chart of 2 points");
            Err::<Value, _>(ToolError::with_code("upstream", "the upstream API said no"))
        },
    ))
    .unwrap();
    r.register(tool_fn(
        "widget_ok",
        "Emits a widget and succeeds.",
        |_: Empty, ctx: ToolContext| async move {
            ctx.display_widget("weather-forecast", json!({"temp": 21}), "Paris: 21°C");
            Ok::<_, ToolError>(Value::structured(json!({"temp": 21})))
        },
    ))
    .unwrap();
    r.register(
        tool_fn("typed_out", "Claims a number, returns a string.", |_: Empty, _ctx: ToolContext| async move {
            Ok::<_, ToolError>(Value::structured(json!({"count": "many"})))
        })
        .with_schema(|s| {
            s.output_schema = Some(json!({"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}));
        }),
    )
    .unwrap();
    r.register(
        tool_fn(
            "delete_all",
            "Deletes everything.",
            |_: Empty, ctx: ToolContext| async move {
                ctx.display_widget("receipt", json!({"deleted": 3}), "3 files deleted");
                Ok::<_, ToolError>(Value::text("deleted 3 files"))
            },
        )
        .with_schema(|s| s.approval = ApprovalPolicy::Always),
    )
    .unwrap();
    r.register(
        tool_fn(
            "ask_user",
            "Asks the person.",
            |_: Question, _ctx: ToolContext| async move {
                Err::<Value, _>(ToolError::failed("blocking tools never run"))
            },
        )
        .with_schema(|s| s.execution_mode = ExecutionMode::Blocking),
    )
    .unwrap();
    r.register(
        tool_fn(
            "show_chart",
            "Shows a chart.",
            |_: Empty, _ctx: ToolContext| async move {
                Ok::<_, ToolError>(Value::table(["x"], [json!({"x": 1})]))
            },
        )
        .with_schema(|s| s.execution_mode = ExecutionMode::Display),
    )
    .unwrap();
    r
}

fn executor_with(suspensions: Arc<MemorySuspensions>, timeout: Duration) -> Executor {
    let config = ExecutorConfig {
        default_timeout: timeout,
        ..ExecutorConfig::default()
    };
    Executor::builder(registry())
        .suspensions(suspensions)
        .config(config)
        .build()
}

fn executor() -> Executor {
    executor_with(
        Arc::new(MemorySuspensions::default()),
        Duration::from_secs(5),
    )
}

fn call(id: &str, name: &str, input: Json) -> ToolCall {
    ToolCall::new(id, name, input)
}

fn code(r: &toolwire_core::ToolResult) -> Option<ErrorCode> {
    r.error_code()
}

#[tokio::test]
async fn a_panic_becomes_an_error_result() {
    let r = executor()
        .execute(&Scope::new("s"), call("c1", "boom", json!({})))
        .await
        .into_result();
    assert_eq!(r.status, Status::Error);
    assert_eq!(code(&r), Some(ErrorCode::Panic));
    assert!(
        r.error
            .as_ref()
            .unwrap()
            .message
            .contains("kaboom at line 7")
    );
    assert_eq!((r.call_id.as_str(), r.tool_name.as_str()), ("c1", "boom"));
    r.validate().unwrap();
}

#[tokio::test]
async fn a_timeout_becomes_an_error_result() {
    let ex = executor_with(
        Arc::new(MemorySuspensions::default()),
        Duration::from_millis(50),
    );
    let r = ex
        .execute(
            &Scope::new("s"),
            call("c1", "sleep", json!({"ms": 5000, "label": "late"})),
        )
        .await
        .into_result();
    assert_eq!(code(&r), Some(ErrorCode::Timeout));
    assert!(r.error.unwrap().message.contains("timed out after 50ms"));
}

#[tokio::test]
async fn invalid_input_names_the_field() {
    let r = executor()
        .execute(
            &Scope::new("s"),
            call("c1", "sleep", json!({"ms": "soon", "label": "x"})),
        )
        .await
        .into_result();
    assert_eq!(code(&r), Some(ErrorCode::InvalidInput));
    let msg = r.error.unwrap().message;
    assert!(msg.contains("input.ms"), "{msg}");
    let r = executor()
        .execute(&Scope::new("s"), call("c2", "sleep", json!({"ms": 1})))
        .await
        .into_result();
    assert!(
        r.error
            .unwrap()
            .message
            .contains("\"label\" is a required property")
    );
}

#[tokio::test]
async fn invalid_output_is_caught() {
    let r = executor()
        .execute(&Scope::new("s"), call("c1", "typed_out", json!({})))
        .await
        .into_result();
    assert_eq!(code(&r), Some(ErrorCode::InvalidOutput));
    assert!(r.error.unwrap().message.contains("output.count"));
}

#[tokio::test]
async fn an_unknown_tool_is_an_error_not_a_crash() {
    let r = executor()
        .execute(&Scope::new("s"), call("c1", "rm_rf", json!({})))
        .await
        .into_result();
    assert_eq!(code(&r), Some(ErrorCode::UnknownTool));
    assert!(
        r.error
            .unwrap()
            .message
            .contains("available tools: sleep, boom")
    );
}

#[tokio::test]
async fn widgets_are_discarded_on_error_and_kept_on_success() {
    let ex = executor();
    let failed = ex
        .execute(&Scope::new("s"), call("c1", "widget_then_fail", json!({})))
        .await
        .into_result();
    assert_eq!(failed.status, Status::Error);
    assert!(failed.widgets.is_empty());
    assert_eq!(code(&failed), Some(ErrorCode::Other("upstream".into())));
    let ok = ex
        .execute(&Scope::new("s"), call("c2", "widget_ok", json!({})))
        .await
        .into_result();
    assert_eq!(ok.widgets.len(), 1);
    assert_eq!(ok.widgets[0].fallback, "Paris: 21°C");
}

#[tokio::test]
async fn results_come_back_in_call_order_not_completion_order() {
    let calls = vec![
        call("a", "sleep", json!({"ms": 600, "label": "first"})),
        call("b", "sleep", json!({"ms": 300, "label": "second"})),
        call("c", "sleep", json!({"ms": 1, "label": "third"})),
    ];
    let ex = executor();
    let scope = Scope::new("s");
    let started = std::time::Instant::now();
    let results = ex
        .execute_all(&scope, calls)
        .await
        .into_iter()
        .map(|f| f.into_result())
        .collect::<Vec<_>>();
    // Parallel, not sequential: well under the 901 ms sum.
    assert!(
        started.elapsed() < Duration::from_millis(850),
        "{:?}",
        started.elapsed()
    );
    let ids: Vec<&str> = results.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "c"]);
    // Their end times show they completed in reverse.
    let mut ended: Vec<(&str, &str)> = results
        .iter()
        .map(|r| {
            let at = r.metadata.ended_at.as_deref().unwrap();
            (at, r.call_id.as_str())
        })
        .collect();
    ended.sort();
    let order: Vec<&str> = ended.into_iter().map(|(_, id)| id).collect();
    assert_eq!(order, ["c", "b", "a"]);
}

#[tokio::test]
async fn approval_suspends_then_approve_runs_and_widgets_follow_the_result() {
    let ex = announcing(executor());
    let r = ex
        .execute(&Scope::new("s"), call("c1", "delete_all", json!({})))
        .await
        .into_result();
    assert_eq!(r.status, Status::Suspended);
    let id = r.suspension.unwrap().id;
    assert!(
        r.metadata.waited_ms.is_none(),
        "still waiting: no wait to report"
    );
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let done = land(&ex, ex.resolve(&id, Resolution::Approve).await.unwrap()).await;
    assert_eq!(done.status, Status::Success);
    assert_eq!(done.call_id, "c1");
    // The wait for the person is kept apart from the call's own duration.
    assert!(
        done.metadata.waited_ms.unwrap() >= 50,
        "{:?}",
        done.metadata
    );
    assert_eq!(done.widgets[0].fallback, "3 files deleted");
    // Resolved once only.
    assert!(ex.resolve(&id, Resolution::Approve).await.is_err());
    let mut sub = ex.events().subscribe("s", 0).await.unwrap();
    let mut kinds = Vec::new();
    for _ in 0..6 {
        kinds.push(match sub.next().await.unwrap().unwrap().kind {
            EventKind::ToolCallStarted { .. } => "started",
            EventKind::Suspended { .. } => "suspended",
            EventKind::ToolResult { result, .. } => result.status.as_str(),
            EventKind::Resolved { .. } => "resolved",
            EventKind::Widget { .. } => "widget",
            _ => "other",
        });
    }
    assert_eq!(
        kinds,
        [
            "started",
            "suspended",
            "suspended",
            "resolved",
            "success",
            "widget"
        ]
    );
}

/// A call approved by its caller already (an MCP App's call of its app-only tool) runs a
/// tool that asks for approval without suspending: no suspension stored or announced. A
/// tool that asks a question still asks it. Its start says who made it, as its stored
/// call does (a page watching the session folds an app's polls by it).
#[tokio::test]
async fn a_call_approved_already_runs_without_suspending_but_questions_are_still_asked() {
    let ex = announcing(executor());
    let by_app = call("c1", "delete_all", json!({})).by_app("monitor", true);
    let done = land(&ex, ex.execute_approved(&Scope::new("s"), by_app).await).await;
    assert_eq!(done.status, Status::Success);
    assert_eq!(done.widgets[0].fallback, "3 files deleted");
    assert!(ex.pending("s").await.unwrap().is_empty());
    let mut sub = ex.events().subscribe("s", 0).await.unwrap();
    let first = sub.next().await.unwrap().unwrap().kind;
    assert!(
        matches!(&first, EventKind::ToolCallStarted { by_person: Some(by), .. }
            if by.via == "app:monitor" && by.app_only),
        "{first:?}"
    );
    let second = sub.next().await.unwrap().unwrap().kind;
    assert!(
        matches!(second, EventKind::ToolResult { .. }),
        "no suspension between: {second:?}"
    );

    let asked = ex
        .execute_approved(
            &Scope::new("s"),
            call("c2", "ask_user", json!({"question": "which?"})),
        )
        .await
        .into_result();
    assert_eq!(asked.status, Status::Suspended);
}

#[tokio::test]
async fn deny_gives_an_error_saying_the_user_denied() {
    let ex = executor();
    let r = ex
        .execute(&Scope::new("s"), call("c1", "delete_all", json!({})))
        .await
        .into_result();
    let done = ex
        .resolve(
            &r.suspension.unwrap().id,
            Resolution::Deny {
                reason: Some("too risky".into()),
            },
        )
        .await
        .unwrap()
        .into_result();
    assert_eq!(code(&done), Some(ErrorCode::Denied));
    assert_eq!(
        done.error.unwrap().message,
        "The user denied this call to delete_all: too risky."
    );
}

#[tokio::test]
async fn a_blocking_tool_takes_the_answer_as_output_without_running() {
    let ex = executor();
    let r = ex
        .execute(
            &Scope::new("s"),
            call("c1", "ask_user", json!({"question": "Which branch?"})),
        )
        .await
        .into_result();
    let s = r.suspension.unwrap();
    assert_eq!(s.prompt, "Which branch?");
    let done = ex
        .resolve(
            &s.id,
            Resolution::Answer {
                value: json!("main"),
            },
        )
        .await
        .unwrap()
        .into_result();
    assert_eq!(done.status, Status::Success);
    assert_eq!(done.output[0].as_text().unwrap().content, "main");
}

#[tokio::test]
async fn a_suspension_is_resumed_by_another_executor_sharing_the_store() {
    let store = Arc::new(MemorySuspensions::default());
    let first = executor_with(Arc::clone(&store), Duration::from_secs(5));
    let r = first
        .execute(&Scope::new("s"), call("c1", "delete_all", json!({})))
        .await
        .into_result();
    drop(first);
    let second = executor_with(store, Duration::from_secs(5));
    let done = second
        .resolve(&r.suspension.unwrap().id, Resolution::Approve)
        .await
        .unwrap()
        .into_result();
    assert_eq!(
        (done.call_id.as_str(), done.status),
        ("c1", Status::Success)
    );
}

#[tokio::test]
async fn display_tools_acknowledge_to_the_model_and_show_the_person() {
    let r = executor()
        .execute(&Scope::new("s"), call("c1", "show_chart", json!({})))
        .await
        .into_result();
    assert_eq!(r.output.len(), 2);
    let ack = &r.output[0];
    assert_eq!(
        ack.annotations.as_ref().unwrap().audience,
        Some(vec![Audience::Assistant])
    );
    assert_eq!(
        r.output[1].annotations.as_ref().unwrap().audience,
        Some(vec![Audience::User])
    );
    assert!(r.output[1].as_table().is_ok());
}

#[tokio::test]
async fn cancel_ends_running_calls_with_an_error_each() {
    let ex = executor();
    let scope = Scope::new("s");
    let cancel = scope.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    });
    let results = ex
        .execute_all(
            &scope,
            vec![
                call("a", "sleep", json!({"ms": 10_000, "label": "x"})),
                call("b", "sleep", json!({"ms": 1, "label": "y"})),
            ],
        )
        .await
        .into_iter()
        .map(|f| f.into_result())
        .collect::<Vec<_>>();
    assert_eq!(code(&results[0]), Some(ErrorCode::Cancelled));
    assert_eq!(results[1].status, Status::Success);
    assert!(results.iter().all(|r| r.validate().is_ok()));
}

#[tokio::test]
async fn every_result_has_timing() {
    let r = executor()
        .execute(
            &Scope::new("s"),
            call("c1", "sleep", json!({"ms": 20, "label": "x"})),
        )
        .await
        .into_result();
    assert!(r.metadata.duration_ms.unwrap() >= 20);
    assert!(r.metadata.started_at.unwrap() <= r.metadata.ended_at.unwrap());
}

#[tokio::test]
async fn the_raw_payload_rides_along_in_events_only_when_debugging() {
    for debug_raw in [false, true] {
        let mut registry = Registry::new();
        registry
            .register(tool_fn(
                "mcp_like",
                "Returns a raw MCP result.",
                |_: Empty, _ctx: ToolContext| async move {
                    Ok::<_, ToolError>(
                        json!({"content": [{"type": "text", "text": "hi"}], "_meta": {"trace": 7}}),
                    )
                },
            ))
            .unwrap();
        let config = ExecutorConfig {
            debug_raw,
            ..ExecutorConfig::default()
        };
        let ex = announcing(Executor::builder(registry).config(config).build());
        let finished = ex
            .execute(&Scope::new("s"), call("c1", "mcp_like", json!({})))
            .await;
        let r = land(&ex, finished).await;
        // The result itself never carries the raw payload.
        assert_eq!(r.output[0].as_text().unwrap().content, "hi");
        assert!(r.metadata.raw_ref.is_none());
        let mut sub = ex.events().subscribe("s", 0).await.unwrap();
        let raw = loop {
            if let EventKind::ToolResult { raw, .. } = sub.next().await.unwrap().unwrap().kind {
                break raw;
            }
        };
        match debug_raw {
            true => assert_eq!(raw.unwrap()["_meta"]["trace"], json!(7)),
            false => assert!(raw.is_none()),
        }
    }
}

/// Tools that arrive while calls run (an MCP server got ready): a running call finishes
/// with the tool it started with, a new call finds the new tool, and a change that fails
/// (a duplicate name) leaves the set as it was.
#[tokio::test]
async fn the_tool_set_changes_whole_while_calls_run() {
    let executor = Arc::new(executor());
    let running = {
        let executor = Arc::clone(&executor);
        tokio::spawn(async move {
            let scope = Scope::new("s");
            let input = json!({"ms": 300, "label": "old sleep"});
            executor
                .execute(&scope, call("c1", "sleep", input))
                .await
                .into_result()
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    executor
        .update_tools(|r| {
            r.retain(|name| name != "sleep");
            r.register(tool_fn(
                "late",
                "Came later.",
                |_: Empty, _ctx: ToolContext| async move { Ok::<_, ToolError>(Value::text("late")) },
            ))
        })
        .unwrap();
    let scope = Scope::new("s");
    let late = executor
        .execute(&scope, call("c2", "late", json!({})))
        .await
        .into_result();
    assert_eq!(late.status, Status::Success, "{late:?}");
    let gone = executor
        .execute(&scope, call("c3", "sleep", json!({"ms": 1, "label": "x"})))
        .await
        .into_result();
    assert_eq!(code(&gone), Some(ErrorCode::UnknownTool));
    let old = running.await.unwrap();
    assert_eq!(old.status, Status::Success, "{old:?}");
    assert_eq!(old.output[0].as_text().unwrap().content, "old sleep");

    let before = executor.registry().names().to_vec();
    let refused = executor.update_tools(|r| {
        r.retain(|_| false);
        r.register(tool_fn(
            "late",
            "Again.",
            |_: Empty, _ctx: ToolContext| async move { Ok::<_, ToolError>(Value::text("x")) },
        ))?;
        r.register(tool_fn(
            "late",
            "Twice.",
            |_: Empty, _ctx: ToolContext| async move { Ok::<_, ToolError>(Value::text("y")) },
        ))
    });
    assert!(refused.is_err());
    assert_eq!(executor.registry().names(), before.as_slice());
}

/// `null` for an optional argument the schema types otherwise is read as "not given"
/// (strict-mode models and some MCP clients send it); a `null` for a required argument, or
/// a wrong type, is still refused with the field named.
#[tokio::test]
async fn a_null_optional_argument_is_left_out_not_refused() {
    #[derive(Deserialize, JsonSchema)]
    struct Args {
        name: String,
        #[serde(default)]
        verbose: Option<bool>,
    }
    let mut registry = Registry::new();
    registry
        .register(
            tool_fn(
                "greet",
                "Greets.",
                |args: Args, _ctx: ToolContext| async move {
                    Ok::<_, ToolError>(format!("{} {:?}", args.name, args.verbose))
                },
            )
            .with_schema(|s| {
                // As a server declares it: a plain boolean, no null allowed.
                s.input_schema = json!({"type": "object", "properties": {
                    "name": {"type": "string"}, "verbose": {"type": "boolean"}},
                    "required": ["name"]});
            }),
        )
        .unwrap();
    let ex = Executor::new(registry);
    let scope = Scope::new("s");
    let ok = ex
        .execute(
            &scope,
            call("c1", "greet", json!({"name": "Ada", "verbose": null})),
        )
        .await
        .into_result();
    assert_eq!(ok.status, Status::Success, "{ok:?}");
    assert_eq!(ok.output[0].as_text().unwrap().content, "Ada None");
    for bad in [
        json!({"name": null}),
        json!({"name": "Ada", "verbose": "yes"}),
    ] {
        let refused = ex
            .execute(&scope, call("c2", "greet", bad.clone()))
            .await
            .into_result();
        assert_eq!(refused.status, Status::Error, "{bad}");
        let error = refused.error.unwrap();
        assert_eq!(error.code.as_deref(), Some("invalid_input"), "{bad}");
    }
}

/// Records the reports a caller's tap is told.
#[derive(Default)]
struct Tap(std::sync::Mutex<Vec<u64>>);

impl ProgressSink for Tap {
    fn progress(
        &self,
        _session: &str,
        _call: &str,
        done: u64,
        _total: Option<u64>,
        _message: Option<&str>,
    ) -> futures::future::BoxFuture<'static, ()> {
        self.0.lock().unwrap().push(done);
        Box::pin(async {})
    }
}

/// A caller's progress tap is told the call's progress coalesced once (the throttle that
/// guards the log guards it too), and the last step before the call's result, not an
/// interval later.
#[tokio::test]
async fn a_progress_tap_hears_each_step_coalesced_and_the_last_before_the_result() {
    let mut registry = Registry::new();
    registry
        .register(tool_fn(
            "chatty",
            "Reports a thousand steps, then ends.",
            |_: Empty, ctx: ToolContext| async move {
                for done in 1..=1000 {
                    ctx.progress(done, None, None).await;
                }
                Ok::<_, ToolError>(json!("done"))
            },
        ))
        .unwrap();
    let ex = Executor::new(registry);
    let tap = Arc::new(Tap::default());
    let scope = Scope {
        progress: Some(Arc::clone(&tap) as Arc<dyn ProgressSink>),
        ..Scope::new("s")
    };
    let r = ex
        .execute(&scope, call("c1", "chatty", json!({})))
        .await
        .into_result();
    assert_eq!(r.status, Status::Success);
    let heard = tap.0.lock().unwrap().clone();
    assert_eq!(
        heard.last(),
        Some(&1000),
        "the last step, before the result"
    );
    assert!(heard.len() < 50, "coalesced: {} of 1000", heard.len());
    assert!(heard.windows(2).all(|w| w[0] < w[1]), "{heard:?}");
}
