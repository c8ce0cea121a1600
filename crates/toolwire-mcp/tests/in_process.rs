//! The bridge against an rmcp server in this process: every content type, structured
//! content with and without its twin, an error, progress, a legacy elicitation, MRTR
//! input_required in one and two rounds, an MCP App, a server that dies mid-call.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, deprecated)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CreateMessageRequestParams,
    CreateTaskResult, ElicitRequestParams, GetTaskParams, GetTaskResult, InputRequiredResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Value as Json, json};
use toolwire_core::{ErrorCode, Status, SuspensionReason};
use toolwire_core::{EventKind, Resolution, ToolCall};
use toolwire_mcp::{Limits, McpServer, connect_servers};
use toolwire_runtime::{Executor, Scope};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

/// A server whose tools return fixed results, one per case.
#[derive(Clone, Default)]
struct Fixture {
    /// Speak only 2025-11-25, as most servers today do (server-initiated requests).
    legacy: bool,
    /// `tasks/get` calls so far.
    polls: Arc<AtomicUsize>,
    /// Set when the client cancels the `silent` call.
    cancelled: Arc<AtomicBool>,
}

fn tool(name: &str, meta: Json) -> Json {
    json!({"name": name, "description": format!("{name} test"), "inputSchema": {"type": "object"}, "_meta": meta})
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        serde_json::from_value(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "resources": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
            "serverInfo": {"name": "fixture", "version": "1"},
        }))
        .unwrap()
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        if self.legacy {
            std::borrow::Cow::Owned(vec![
                ProtocolVersion::V_2025_06_18,
                ProtocolVersion::V_2025_11_25,
            ])
        } else {
            std::borrow::Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools: Vec<Json> = [
            "media",
            "structured_twin",
            "structured_alone",
            "fails",
            "progress",
            "ask_legacy",
            "book",
            "two_rounds",
            "dies",
            "silent",
            "long_task",
            "sample",
        ]
        .iter()
        .map(|n| tool(n, json!({})))
        .chain([tool(
            "chart",
            json!({"ui": {"resourceUri": "ui://chart/app.html"}}),
        )])
        .chain([tool("app_only", json!({"ui": {"visibility": ["app"]}}))])
        .chain([
            tool("hinted", json!({"anthropic/maxResultSizeChars": 300_000})),
            tool("hinted_huge", json!({"anthropic/maxResultSizeChars": 1u64 << 40})),
        ])
        .chain(["typed_right", "typed_wrong"].map(|n| {
            let mut t = tool(n, json!({}));
            t["outputSchema"] = json!({"type": "object", "properties": {"temp": {"type": "number"}}, "required": ["temp"]});
            t
        }))
        .collect();
        Ok(serde_json::from_value(json!({"tools": tools})).unwrap())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let poll = self.polls.fetch_add(1, Ordering::SeqCst);
        let base = json!({
            "taskId": request.task_id, "createdAt": "2026-11-23T00:00:00Z",
            "lastUpdatedAt": "2026-11-23T00:00:01Z", "ttl": 60000, "pollInterval": 100,
        });
        let mut task = base.as_object().unwrap().clone();
        if poll < 2 {
            task.insert("status".into(), json!("working"));
            task.insert("statusMessage".into(), json!(format!("step {}", poll + 1)));
        } else {
            task.insert("status".into(), json!("completed"));
            task.insert(
                "result".into(),
                json!({"content": [{"type": "text", "text": "task done"}]}),
            );
        }
        Ok(serde_json::from_value(Json::Object(task)).unwrap())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let result: ReadResourceResult = serde_json::from_value(json!({"contents": [{
            "uri": request.uri, "mimeType": "text/html;profile=mcp-app",
            "text": "<html><body>chart</body></html>",
            "_meta": {"ui": {"csp": {"connectDomains": ["https://api.example"]}}},
        }]}))
        .unwrap();
        Ok(ReadResourceResponse::Complete(result))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let complete = |j: Json| -> Result<CallToolResponse, ErrorData> {
            Ok(CallToolResponse::Complete(
                serde_json::from_value::<CallToolResult>(j).unwrap(),
            ))
        };
        let input_required = |j: Json| -> Result<CallToolResponse, ErrorData> {
            Ok(CallToolResponse::InputRequired(
                serde_json::from_value::<InputRequiredResult>(j).unwrap(),
            ))
        };
        let ask = |key: &str, message: &str| {
            json!({key: {"method": "elicitation/create", "params": {"mode": "form", "message": message,
                "requestedSchema": {"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]}}}})
        };
        match request.name.as_ref() {
            "media" => complete(json!({"content": [
                {"type": "text", "text": "hello", "annotations": {"audience": ["user"], "priority": 0.5}},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "audio", "data": WAV, "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "notes"}},
                {"type": "resource_link", "uri": "file:///big.log", "name": "big.log", "mimeType": "text/plain"},
            ]})),
            "structured_twin" => complete(json!({
                "content": [{"type": "text", "text": "{\"temp\":21}"}],
                "structuredContent": {"temp": 21},
            })),
            "structured_alone" => complete(json!({"content": [], "structuredContent": [1, 2, 3]})),
            "fails" => complete(
                json!({"content": [{"type": "text", "text": "disk on fire"}], "isError": true}),
            ),
            "progress" => {
                let token = context.meta.get_progress_token().unwrap();
                for i in 1..=3 {
                    let p: ProgressNotificationParam = serde_json::from_value(json!({
                        "progressToken": token, "progress": i, "total": 3, "message": format!("step {i}")
                    }))
                    .unwrap();
                    context.peer.notify_progress(p).await.unwrap();
                }
                complete(json!({"content": [{"type": "text", "text": "done"}]}))
            }
            "ask_legacy" => {
                let params: ElicitRequestParams = serde_json::from_value(json!({
                    "mode": "form", "message": "Your name?",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                }))
                .unwrap();
                let answer = context.peer.create_elicitation(params).await.unwrap();
                let answer = serde_json::to_value(answer).unwrap();
                complete(
                    json!({"content": [{"type": "text", "text": format!("answer: {answer}")}]}),
                )
            }
            "book" => match (&request.input_responses, &request.request_state) {
                (Some(r), Some(state)) if state == "book-1" => {
                    let v = r["who"]["content"]["v"].as_str().unwrap_or("?").to_owned();
                    complete(
                        json!({"content": [{"type": "text", "text": format!("booked for {v}")}]}),
                    )
                }
                _ => input_required(
                    json!({"resultType": "input_required", "inputRequests": ask("who", "Name for the booking?"), "requestState": "book-1"}),
                ),
            },
            "two_rounds" => match request.request_state.as_deref() {
                None => input_required(
                    json!({"resultType": "input_required", "inputRequests": ask("a", "First?"), "requestState": "r1"}),
                ),
                Some("r1") => {
                    let first = request.input_responses.as_ref().unwrap()["a"]["content"]["v"]
                        .as_str()
                        .unwrap()
                        .to_owned();
                    input_required(
                        json!({"resultType": "input_required", "inputRequests": ask("b", "Second?"), "requestState": format!("r2:{first}")}),
                    )
                }
                Some(s) => {
                    let second = request.input_responses.as_ref().unwrap()["b"]["content"]["v"]
                        .as_str()
                        .unwrap()
                        .to_owned();
                    complete(
                        json!({"content": [{"type": "text", "text": format!("{} then {second}", &s[3..])}]}),
                    )
                }
            },
            "sample" => {
                let params: CreateMessageRequestParams = serde_json::from_value(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
                    "maxTokens": 10,
                }))
                .unwrap();
                match context.peer.create_message(params).await {
                    Ok(reply) => {
                        let reply = serde_json::to_value(reply).unwrap();
                        complete(
                            json!({"content": [{"type": "text", "text": format!("model said {}", reply["content"]["text"])}]}),
                        )
                    }
                    Err(e) => complete(
                        json!({"content": [{"type": "text", "text": format!("refused: {e}")}], "isError": true}),
                    ),
                }
            }
            "typed_right" => complete(json!({"content": [], "structuredContent": {"temp": 21.5}})),
            "typed_wrong" => complete(json!({"content": [], "structuredContent": {"temp": "hot"}})),
            "chart" => complete(json!({"content": [{"type": "text", "text": "CPU at 42%"}]})),
            "app_only" => complete(json!({"content": [{"type": "text", "text": "app"}]})),
            // Never answers: the call's own timeout must end it.
            "long_task" => Ok(CallToolResponse::Task(
                serde_json::from_value::<CreateTaskResult>(json!({
                    "resultType": "task", "taskId": "task-1", "status": "working",
                    "createdAt": "2026-11-23T00:00:00Z", "lastUpdatedAt": "2026-11-23T00:00:00Z",
                    "ttl": 60000, "pollInterval": 100,
                }))
                .unwrap(),
            )),
            "silent" => {
                context.ct.cancelled().await;
                self.cancelled.store(true, Ordering::SeqCst);
                complete(json!({"content": [{"type": "text", "text": "cancelled"}]}))
            }
            "dies" => Err(ErrorData::internal_error("unreachable", None)),
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

/// A fixture server reached through an in-memory stream.
fn fixture(legacy: bool, limits: Limits) -> Arc<McpServer> {
    let shared = Fixture {
        legacy,
        ..Fixture::default()
    };
    fixture_with(shared, limits)
}

/// A fixture whose counters the test keeps (`shared` is cloned per connection).
fn fixture_with(shared: Fixture, limits: Limits) -> Arc<McpServer> {
    let name = if shared.legacy { "legacy" } else { "modern" };
    McpServer::in_process(name, limits, move || {
        let (client, server) = tokio::io::duplex(1 << 20);
        let fixture = shared.clone();
        tokio::spawn(async move {
            if let Ok(running) = fixture.serve(server).await {
                let _ = running.waiting().await;
            }
        });
        client
    })
}

async fn executor(server: Arc<McpServer>) -> (Executor, Vec<String>) {
    support::executor_over(vec![server]).await
}

fn call(name: &str) -> ToolCall {
    ToolCall::new(format!("call-{name}"), name, json!({}))
}

fn kinds(r: &toolwire_core::ToolResult) -> Vec<String> {
    r.output.iter().map(|v| v.kind.to_string()).collect()
}

#[tokio::test]
async fn every_content_type_and_structured_content_come_through() {
    let (ex, names) = executor(fixture(false, Limits::default())).await;
    assert!(names.contains(&"modern__media".to_owned()));
    let scope = Scope::new("s");
    let r = ex
        .execute(&scope, call("modern__media"))
        .await
        .into_result();
    assert_eq!(r.status, Status::Success, "{r:?}");
    // Audio is a file value of an audio type, as every non-image medium is.
    assert_eq!(
        kinds(&r),
        ["text", "image", "file", "file_content", "resource_link"]
    );
    assert!(
        r.output[2]
            .mime_type
            .as_deref()
            .unwrap()
            .starts_with("audio/")
    );
    let audience = r.output[0].annotations.as_ref().unwrap().audience.clone();
    assert_eq!(serde_json::to_value(audience).unwrap(), json!(["user"]));

    // The text twin is kept for the model, the structured value shown to the person
    // (docs/contracts.md, "Twins").
    let twin = ex
        .execute(&scope, call("modern__structured_twin"))
        .await
        .into_result();
    assert_eq!(kinds(&twin), ["text", "structured"]);
    assert_eq!(twin.output[1].data, json!({"temp": 21}));
    let only = |i: usize| {
        twin.output[i]
            .annotations
            .as_ref()
            .unwrap()
            .audience
            .clone()
    };
    assert_eq!(serde_json::to_value(only(0)).unwrap(), json!(["assistant"]));
    assert_eq!(serde_json::to_value(only(1)).unwrap(), json!(["user"]));
    let alone = ex
        .execute(&scope, call("modern__structured_alone"))
        .await
        .into_result();
    assert_eq!(alone.output[0].data, json!([1, 2, 3]));

    let failed = ex
        .execute(&scope, call("modern__fails"))
        .await
        .into_result();
    assert_eq!(failed.status, Status::Error);
    assert_eq!(failed.error.unwrap().message, "disk on fire");
}

#[tokio::test]
async fn progress_notifications_become_progress_events() {
    let server = fixture(true, Limits::default());
    let (ex, _) = executor(server).await;
    let mut events = ex.events().subscribe("s", 0).await.unwrap();
    let r = ex
        .execute(&Scope::new("s"), call("legacy__progress"))
        .await
        .into_result();
    assert_eq!(r.status, Status::Success, "{r:?}");
    let mut seen = Vec::new();
    while let Ok(Some(Ok(event))) =
        tokio::time::timeout(Duration::from_millis(200), events.next()).await
    {
        if let EventKind::Progress {
            done,
            total,
            message,
            ..
        } = event.kind
        {
            seen.push((done, total, message));
        }
    }
    // Reports in a burst are coalesced (the latest wins; the final one always comes):
    // the first and the last arrive, in order.
    assert!((2..=3).contains(&seen.len()), "{seen:?}");
    assert_eq!(seen[0], (1, Some(3), Some("step 1".to_owned())));
    assert_eq!(seen.last(), Some(&(3, Some(3), Some("step 3".to_owned()))));
}

#[tokio::test]
async fn a_legacy_elicitation_is_a_suspension_whose_answer_resumes_the_call() {
    let (ex, _) = executor(fixture(true, Limits::default())).await;
    let r = ex
        .execute(&Scope::new("s"), call("legacy__ask_legacy"))
        .await
        .into_result();
    assert_eq!(r.status, Status::Suspended, "{r:?}");
    let s = r.suspension.unwrap();
    assert_eq!(s.reason, SuspensionReason::Input);
    assert_eq!(s.prompt, "Your name?");
    assert!(s.input_schema.unwrap()["properties"]["name"].is_object());
    let done = ex
        .resolve(
            &s.id,
            Resolution::Answer {
                value: json!({"name": "Ada"}),
            },
        )
        .await
        .unwrap()
        .into_result();
    assert_eq!(done.status, Status::Success, "{done:?}");
    let text = &done.output[0].as_text().unwrap().content;
    assert!(
        text.contains("\"accept\"") && text.contains("Ada"),
        "{text}"
    );
}

#[tokio::test]
async fn mrtr_input_required_in_one_and_two_rounds() {
    let (ex, _) = executor(fixture(false, Limits::default())).await;
    let scope = Scope::new("s");
    let r = ex.execute(&scope, call("modern__book")).await.into_result();
    assert_eq!(r.status, Status::Suspended, "{r:?}");
    let s = r.suspension.unwrap();
    assert_eq!(s.prompt, "Name for the booking?");
    let done = ex
        .resolve(
            &s.id,
            Resolution::Answer {
                value: json!({"v": "Grace"}),
            },
        )
        .await
        .unwrap()
        .into_result();
    assert_eq!(
        done.output[0].as_text().unwrap().content,
        "booked for Grace"
    );

    let r = ex
        .execute(&scope, call("modern__two_rounds"))
        .await
        .into_result();
    let s1 = r.suspension.unwrap();
    let second = ex
        .resolve(
            &s1.id,
            Resolution::Answer {
                value: json!({"v": "soup"}),
            },
        )
        .await
        .unwrap()
        .into_result();
    assert_eq!(second.status, Status::Suspended, "{second:?}");
    let s2 = second.suspension.unwrap();
    assert_eq!(s2.prompt, "Second?");
    let done = ex
        .resolve(
            &s2.id,
            Resolution::Answer {
                value: json!({"v": "fish"}),
            },
        )
        .await
        .unwrap()
        .into_result();
    assert_eq!(done.output[0].as_text().unwrap().content, "soup then fish");
}

#[tokio::test]
async fn an_mcp_app_is_attached_as_a_widget_and_app_only_tools_are_hidden() {
    let connected = connect_servers(vec![fixture(false, Limits::default())]).await;
    let hidden: Vec<String> = connected
        .tools
        .iter()
        .map(|t| toolwire_tool::Tool::schema(&**t))
        .filter(|s| s.hidden_from_model)
        .map(|s| s.name.clone())
        .collect();
    assert_eq!(hidden, ["modern__app_only"]);
    let (ex, _) = executor(fixture(false, Limits::default())).await;
    let r = ex
        .execute(&Scope::new("s"), call("modern__chart"))
        .await
        .into_result();
    assert_eq!(r.status, Status::Success, "{r:?}");
    assert_eq!(kinds(&r), ["text"]);
    let w = &r.widgets[0];
    assert_eq!(w.fallback, "CPU at 42%");
    let app = w.app.as_ref().unwrap();
    assert_eq!(app.uri, "ui://chart/app.html");
    assert!(app.html.as_deref().unwrap().contains("chart"));
    assert_eq!(
        app.csp,
        Some(json!({"connectDomains": ["https://api.example"]}))
    );

    // A linked resource is read on demand.
    let server = fixture(false, Limits::default());
    let read = server.read_resource("file:///big.log").await.unwrap();
    assert_eq!(read["contents"][0]["uri"], "file:///big.log");
}

/// A tool's own size hint (`_meta["anthropic/maxResultSizeChars"]`) is folded into its
/// schema where the tool is made, within the range a person may give, so the agent loop,
/// `export` and the gateway all read it from there; a tool without one has none.
#[tokio::test]
async fn a_tools_size_hint_is_its_schemas_result_budget() {
    let connected = connect_servers(vec![fixture(false, Limits::default())]).await;
    let size = |name: &str| {
        connected
            .tools
            .iter()
            .map(|t| toolwire_tool::Tool::schema(&**t))
            .find(|s| s.name == name)
            .unwrap()
            .max_result_chars
    };
    assert_eq!(size("modern__hinted"), Some(300_000));
    assert_eq!(
        size("modern__hinted_huge"),
        Some(*toolwire_mcp::RESULT_CHARS_RANGE.end())
    );
    assert_eq!(size("modern__media"), None);
}

/// The adapter hands the executor a typed outcome (a normalized result carrying the app's
/// widget), reports the payload exactly as received (no made-up app block in it) to an
/// executor that keeps payloads, and says where each tool comes from.
#[tokio::test]
async fn the_adapter_returns_a_typed_result_and_reports_the_payload_it_received() {
    use toolwire_tool::{Output, Tool, ToolContext, ToolOrigin};
    let connected = connect_servers(vec![fixture(false, Limits::default())]).await;
    let chart = connected
        .tools
        .iter()
        .find(|t| t.schema().name == "modern__chart")
        .unwrap();
    assert_eq!(
        chart.schema().origin,
        Some(ToolOrigin {
            source: "modern".into(),
            name: "chart".into()
        })
    );
    let keeping = ToolContext::detached("c1").keeping_received();
    let out = chart.execute(json!({}), keeping.clone()).await.unwrap();
    let Output::Result(result) = out else {
        panic!("not a typed result: {out:?}")
    };
    assert_eq!(result.status, Status::Success);
    assert_eq!(
        result.widgets[0].app.as_ref().unwrap().uri,
        "ui://chart/app.html"
    );
    assert_eq!(
        keeping.take_received().unwrap().into_json(),
        Some(json!({"content": [{"type": "text", "text": "CPU at 42%"}]}))
    );
    // Nobody asked: nothing is copied.
    let plain = ToolContext::detached("c2");
    chart.execute(json!({}), plain.clone()).await.unwrap();
    assert!(plain.take_received().is_none());
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_and_stays_usable() {
    let limits = Limits {
        call_timeout: Duration::from_millis(300),
        ..Limits::default()
    };
    let shared = Fixture::default();
    let (ex, _) = executor(fixture_with(shared.clone(), limits)).await;
    let scope = Scope::new("s");
    let r = ex
        .execute(&scope, call("modern__silent"))
        .await
        .into_result();
    assert_eq!(r.error_code(), Some(ErrorCode::Timeout), "{r:?}");
    // The abandoned call was cancelled on the server (notifications/cancelled).
    for _ in 0..50 {
        if shared.cancelled.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        shared.cancelled.load(Ordering::SeqCst),
        "the server was not told"
    );
    let after = ex
        .execute(&scope, call("modern__fails"))
        .await
        .into_result();
    assert_eq!(after.error.unwrap().message, "disk on fire");
}

#[tokio::test]
async fn a_task_is_polled_to_completion_with_progress() {
    let shared = Fixture::default();
    let (ex, _) = executor(fixture_with(shared.clone(), Limits::default())).await;
    let mut events = ex.events().subscribe("s", 0).await.unwrap();
    let r = ex
        .execute(&Scope::new("s"), call("modern__long_task"))
        .await
        .into_result();
    assert_eq!(r.status, Status::Success, "{r:?}");
    assert_eq!(r.output[0].as_text().unwrap().content, "task done");
    assert_eq!(
        shared.polls.load(Ordering::SeqCst),
        3,
        "polled until completed, once more not"
    );
    let mut messages = Vec::new();
    while let Ok(Some(Ok(event))) =
        tokio::time::timeout(Duration::from_millis(200), events.next()).await
    {
        if let EventKind::Progress {
            message: Some(m), ..
        } = event.kind
        {
            messages.push(m);
        }
    }
    assert_eq!(messages, ["step 1", "step 2"]);
}

#[tokio::test]
async fn structured_content_is_checked_against_the_output_schema() {
    let (ex, _) = executor(fixture(false, Limits::default())).await;
    let scope = Scope::new("s");
    let right = ex
        .execute(&scope, call("modern__typed_right"))
        .await
        .into_result();
    assert_eq!(right.status, Status::Success, "{right:?}");
    let wrong = ex
        .execute(&scope, call("modern__typed_wrong"))
        .await
        .into_result();
    assert_eq!(
        wrong.error_code(),
        Some(ErrorCode::InvalidOutput),
        "{wrong:?}"
    );
    assert!(wrong.error.unwrap().message.contains("temp"));
}

/// Answers every sampling request with "4", keeping the last message it was sent.
struct Four(std::sync::Mutex<Vec<String>>);

impl toolwire_mcp::Sampler for Four {
    fn sample(
        &self,
        params: Json,
    ) -> futures::future::BoxFuture<'_, Result<Json, toolwire_mcp::SampleError>> {
        let sent = params["messages"][0]["content"]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        self.0.lock().unwrap().push(sent);
        Box::pin(async {
            Ok(
                json!({"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m", "stopReason": "end_turn"}),
            )
        })
    }
}

/// A sampling request is shown to a person first (MCP asks for a human in the loop):
/// approved it goes to the sampler, edited it goes as edited, refused it does not go.
#[tokio::test]
async fn sampling_is_approved_by_a_person_then_served_by_the_sampler() {
    let sampler = Arc::new(Four(std::sync::Mutex::new(Vec::new())));
    let server = fixture(true, Limits::default()).with_sampler(sampler.clone());
    let (ex, _) = executor(server).await;
    let r = ex
        .execute(&Scope::new("s"), call("legacy__sample"))
        .await
        .into_result();
    assert_eq!(r.status, Status::Suspended, "{r:?}");
    let asked = r.suspension.unwrap();
    assert!(
        asked
            .prompt
            .contains("asks to send 1 message(s) to your model"),
        "{}",
        asked.prompt
    );
    assert_eq!(
        asked.input_schema.as_ref().unwrap()["properties"]["prompt"]["default"],
        "2+2?"
    );
    let done = ex
        .resolve(
            &asked.id,
            Resolution::Answer {
                value: json!({"prompt": "2+2?"}),
            },
        )
        .await
        .unwrap()
        .into_result();
    assert_eq!(
        done.output[0].as_text().unwrap().content,
        "model said \"4\"",
        "{done:?}"
    );
    assert_eq!(*sampler.0.lock().unwrap(), ["2+2?"]);

    // Edited by the person: the model is sent the edit.
    let r = ex
        .execute(&Scope::new("s"), call("legacy__sample"))
        .await
        .into_result();
    let asked = r.suspension.unwrap();
    ex.resolve(
        &asked.id,
        Resolution::Answer {
            value: json!({"prompt": "3+3?"}),
        },
    )
    .await
    .unwrap()
    .into_result();
    assert_eq!(sampler.0.lock().unwrap().last().unwrap(), "3+3?");

    // Refused: nothing is sent, and the server is told.
    let r = ex
        .execute(&Scope::new("s"), call("legacy__sample"))
        .await
        .into_result();
    let asked = r.suspension.unwrap();
    let refused = ex
        .resolve(&asked.id, Resolution::Deny { reason: None })
        .await
        .unwrap()
        .into_result();
    assert_eq!(sampler.0.lock().unwrap().len(), 2);
    assert!(format!("{refused:?}").contains("refused"), "{refused:?}");

    let (ex, _) = executor(fixture(true, Limits::default())).await;
    let r = ex
        .execute(&Scope::new("s"), call("legacy__sample"))
        .await
        .into_result();
    assert_eq!(r.status, Status::Error);
    let message = r.error.unwrap().message;
    assert!(message.contains("no model provider"), "{message}");
}

#[test]
fn provider_stop_reasons_read_as_mcp_ones() {
    for (provider, mcp) in [
        ("end_turn", "endTurn"),
        ("stop", "endTurn"),
        ("STOP", "endTurn"),
        ("max_tokens", "maxTokens"),
        ("length", "maxTokens"),
        ("MAX_TOKENS", "maxTokens"),
        ("stop_sequence", "stopSequence"),
        ("tool_use", "toolUse"),
        ("tool_calls", "toolUse"),
        ("content_filter", "content_filter"),
    ] {
        assert_eq!(toolwire_mcp::mcp_stop_reason(provider), mcp);
    }
}
