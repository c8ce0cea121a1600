//! The executor's spans through the `Tracer` hook (a recording tracer here): one
//! `execute_tool` span per call under the scope's span, failures with `error.type`, the
//! approval wait as a child span ended by the answer, the tool given its call's context,
//! and content only when asked for.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use toolwire_core::{Resolution, ToolCall};
use toolwire_core::{Status, TraceContext, Value};
use toolwire_runtime::trace::{Attr, AttrValue, Span, SpanKind, Tracer};
use toolwire_runtime::{Executor, ExecutorConfig, Registry, Scope};
use toolwire_tool::{ApprovalPolicy, ToolContext, ToolError, tool_fn};

#[derive(Debug, Clone)]
struct Ended {
    name: String,
    context: TraceContext,
    parent: Option<[u8; 8]>,
    attributes: Vec<Attr>,
    events: Vec<&'static str>,
    error: Option<String>,
}

impl Ended {
    fn get(&self, key: &str) -> Option<&AttrValue> {
        self.attributes
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }
}

#[derive(Default)]
struct Recorder {
    ended: Arc<Mutex<Vec<Ended>>>,
    next: Mutex<u8>,
    content: bool,
}

struct Recording {
    data: Ended,
    sink: Arc<Mutex<Vec<Ended>>>,
}

impl Tracer for Recorder {
    fn start(
        &self,
        name: String,
        _kind: SpanKind,
        parent: Option<&TraceContext>,
        attributes: Vec<Attr>,
    ) -> Box<dyn Span> {
        let mut n = self.next.lock().unwrap();
        *n += 1;
        let context = TraceContext {
            trace_id: parent.map_or([9; 16], |p| p.trace_id),
            span_id: [*n; 8],
            sampled: true,
            state: None,
        };
        Box::new(Recording {
            data: Ended {
                name,
                context,
                parent: parent.map(|p| p.span_id),
                attributes,
                events: Vec::new(),
                error: None,
            },
            sink: Arc::clone(&self.ended),
        })
    }

    fn records_content(&self) -> bool {
        self.content
    }
}

impl Span for Recording {
    fn context(&self) -> &TraceContext {
        &self.data.context
    }
    fn set(&mut self, key: &'static str, value: AttrValue) {
        self.data.attributes.push((key, value));
    }
    fn event(&mut self, name: &'static str, _attributes: Vec<Attr>) {
        self.data.events.push(name);
    }
    fn fail(&mut self, error_type: &str, message: &str) {
        self.set("error.type", error_type.to_owned().into());
        self.data.error = Some(message.to_owned());
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.sink.lock().unwrap().push(self.data.clone());
    }
}

#[derive(Deserialize, JsonSchema)]
struct Empty {}

fn executor(recorder: Arc<Recorder>) -> Executor {
    let mut r = Registry::new();
    r.register(tool_fn(
        "traceparent",
        "Says the trace context it was given.",
        |_: Empty, ctx: ToolContext| async move {
            Ok::<_, ToolError>(Value::text(
                ctx.trace.map(|t| t.traceparent()).unwrap_or_default(),
            ))
        },
    ))
    .unwrap();
    r.register(tool_fn(
        "slow",
        "Sleeps.",
        |_: Empty, _ctx: ToolContext| async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            Ok::<_, ToolError>(Value::text("late"))
        },
    ))
    .unwrap();
    r.register(
        tool_fn(
            "guarded",
            "Needs approval.",
            |_: Empty, _ctx: ToolContext| async move { Ok::<_, ToolError>(Value::text("ran")) },
        )
        .with_schema(|s| {
            s.approval = ApprovalPolicy::Always;
            s.timeout = None;
        }),
    )
    .unwrap();
    let config = ExecutorConfig {
        default_timeout: Duration::from_millis(50),
        ..ExecutorConfig::default()
    };
    Executor::builder(r)
        .config(config)
        .tracer(recorder as Arc<dyn Tracer>)
        .build()
}

fn turn() -> TraceContext {
    TraceContext {
        trace_id: [7; 16],
        span_id: [0xee; 8],
        sampled: true,
        state: Some("v=1".into()),
    }
}

#[tokio::test]
async fn each_call_is_a_span_under_the_scope_and_the_tool_sees_it() {
    let recorder = Arc::new(Recorder::default());
    let exec = executor(Arc::clone(&recorder));
    let scope = Scope {
        trace: Some(turn()),
        ..Scope::new("s1")
    };
    let ok = exec
        .execute(
            &scope,
            ToolCall::new("c1", "traceparent", serde_json::json!({})),
        )
        .await
        .into_result();
    let late = exec
        .execute(&scope, ToolCall::new("c2", "slow", serde_json::json!({})))
        .await
        .into_result();
    let missing = exec
        .execute(&scope, ToolCall::new("c3", "nope", serde_json::json!({})))
        .await
        .into_result();
    assert_eq!(late.status, Status::Error);
    assert_eq!(missing.status, Status::Error);
    let ended = recorder.ended.lock().unwrap().clone();
    assert_eq!(ended.len(), 3, "{ended:#?}");
    for span in &ended {
        assert_eq!(span.parent, Some([0xee; 8]));
        assert_eq!(span.context.trace_id, [7; 16]);
        assert_eq!(
            span.get("gen_ai.operation.name"),
            Some(&"execute_tool".into())
        );
        // Content is off: no arguments, no result.
        assert_eq!(span.get("gen_ai.tool.call.arguments"), None);
        assert_eq!(span.get("gen_ai.tool.call.result"), None);
    }
    let first = &ended[0];
    assert_eq!(first.name, "execute_tool traceparent");
    assert_eq!(first.get("gen_ai.tool.call.id"), Some(&"c1".into()));
    assert_eq!(first.get("gen_ai.tool.type"), Some(&"function".into()));
    assert_eq!(first.error, None);
    // The tool got its own span's context, with the trace's state.
    let told = ok.output[0].data["content"].as_str().unwrap().to_owned();
    assert_eq!(told, first.context.traceparent());
    assert!(
        told.starts_with("00-07070707070707070707070707070707-"),
        "{told}"
    );
    assert_eq!(ended[1].get("error.type"), Some(&"timeout".into()));
    assert!(ended[1].error.as_ref().unwrap().contains("timed out"));
    assert_eq!(ended[2].get("error.type"), Some(&"unknown_tool".into()));
}

#[tokio::test]
async fn an_approval_wait_is_a_child_span_and_content_is_recorded_when_asked() {
    let recorder = Arc::new(Recorder {
        content: true,
        ..Recorder::default()
    });
    let exec = executor(Arc::clone(&recorder));
    let scope = Scope::new("s2");
    let waiting = exec
        .execute(
            &scope,
            ToolCall::new("g1", "guarded", serde_json::json!({})),
        )
        .await;
    assert_eq!(waiting.result().status, Status::Suspended);
    // Nothing ended yet: the call and its wait are open, held by the waiting call.
    assert!(recorder.ended.lock().unwrap().is_empty());
    let done = exec
        .resume(waiting, Resolution::Deny { reason: None })
        .await
        .unwrap()
        .into_result();
    assert_eq!(done.status, Status::Error);
    let ended = recorder.ended.lock().unwrap().clone();
    assert_eq!(ended.len(), 2, "{ended:#?}");
    let (wait, call) = (&ended[0], &ended[1]);
    assert_eq!(wait.name, "await_approval guarded");
    assert_eq!(wait.parent, Some(call.context.span_id));
    assert_eq!(wait.get("toolwire.resolution"), Some(&"denied".into()));
    assert_eq!(call.parent, None, "a call outside a turn is a root");
    assert_eq!(call.events, ["toolwire.resolved"]);
    assert_eq!(call.get("error.type"), Some(&"denied".into()));
    assert_eq!(call.get("gen_ai.tool.call.arguments"), Some(&"{}".into()));
    let result = call.get("gen_ai.tool.call.result").unwrap();
    assert!(
        matches!(result, AttrValue::Str(s) if s.contains("denied")),
        "{result:?}"
    );
}
