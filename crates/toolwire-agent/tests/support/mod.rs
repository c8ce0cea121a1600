//! Shared fixture for the agent-loop tests: a local HTTP server that answers like each
//! provider's API from a script of replies, real SQLite stores and a real workspace in
//! temp dirs, and the real executor with built-in and test tools.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value as Json, json};
use tempfile::TempDir;
use toolwire_agent::{Agent, AgentConfig, ApprovalRequest, Approver, TaskTool};
use toolwire_core::Message;
use toolwire_core::Resolution;
use toolwire_core::Value;
use toolwire_model::Provider;
use toolwire_model::{ClientConfig, ProviderClient, RetryPolicy};
use toolwire_runtime::{EventBus, Executor, Registry};
use toolwire_store::{HistoryStore, NewSession, StoreConfig, Stores};
use toolwire_tool::{Tool, ToolContext, ToolError, tool_fn};
use toolwire_tools::{Workspace, read_file, write_file};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// One scripted model reply: text, then calls `(id, name, input)`.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub text: String,
    pub calls: Vec<(String, String, Json)>,
}

pub(crate) fn text(t: &str) -> Reply {
    Reply {
        text: t.to_owned(),
        calls: Vec::new(),
    }
}

pub(crate) fn calls(t: &str, calls: &[(&str, &str, Json)]) -> Reply {
    Reply {
        text: t.to_owned(),
        calls: calls
            .iter()
            .map(|(id, name, input)| ((*id).to_owned(), (*name).to_owned(), input.clone()))
            .collect(),
    }
}

/// The non-streaming response body each API sends for `reply`.
pub(crate) fn response_body(provider: Provider, reply: &Reply) -> Json {
    match provider {
        Provider::Anthropic => {
            let mut content = Vec::new();
            if !reply.text.is_empty() {
                content.push(json!({"type": "text", "text": reply.text}));
            }
            for (id, name, input) in &reply.calls {
                content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
            }
            json!({
                "id": "msg_test", "type": "message", "role": "assistant", "model": "test-model",
                "content": content,
                "stop_reason": if reply.calls.is_empty() { "end_turn" } else { "tool_use" },
                "usage": {"input_tokens": 10, "output_tokens": 5}
            })
        }
        Provider::OpenaiChat => {
            let mut message = json!({"role": "assistant", "content": reply.text});
            if !reply.calls.is_empty() {
                message["tool_calls"] = reply
                    .calls
                    .iter()
                    .map(|(id, name, input)| {
                        json!({"id": id, "type": "function",
                               "function": {"name": name, "arguments": input.to_string()}})
                    })
                    .collect();
            }
            json!({
                "id": "chatcmpl-test", "object": "chat.completion",
                "choices": [{"index": 0, "message": message,
                             "finish_reason": if reply.calls.is_empty() { "stop" } else { "tool_calls" }}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5}
            })
        }
        Provider::OpenaiResponses => {
            let mut output = Vec::new();
            if !reply.text.is_empty() {
                output.push(json!({"type": "message", "role": "assistant",
                                   "content": [{"type": "output_text", "text": reply.text}]}));
            }
            for (id, name, input) in &reply.calls {
                output.push(json!({"type": "function_call", "call_id": id, "name": name,
                                   "arguments": input.to_string()}));
            }
            json!({"id": "resp_test", "status": "completed", "output": output,
                   "usage": {"input_tokens": 10, "output_tokens": 5}})
        }
        Provider::Gemini => {
            let mut parts = Vec::new();
            if !reply.text.is_empty() {
                parts.push(json!({"text": reply.text}));
            }
            for (id, name, input) in &reply.calls {
                parts.push(json!({"functionCall": {"id": id, "name": name, "args": input}}));
            }
            json!({"candidates": [{"content": {"role": "model", "parts": parts},
                                   "finishReason": "STOP"}],
                   "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5}})
        }
    }
}

/// Answers each request with the next scripted reply; a request past the end of the
/// script gets a 400 that names the problem (never retried, so a test fails fast).
struct Script {
    provider: Provider,
    replies: Mutex<VecDeque<Reply>>,
}

/// The server-sent events each API streams for `reply`, text in two deltas
/// (Anthropic and OpenAI chat).
pub(crate) fn sse_body(provider: Provider, reply: &Reply) -> String {
    let (first, second) = reply.text.split_at(reply.text.len() / 2);
    let mut events = Vec::new();
    match provider {
        Provider::Anthropic => {
            events
                .push(json!({"type": "message_start", "message": {"usage": {"input_tokens": 10}}}));
            events.push(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}));
            for t in [first, second] {
                events.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}));
            }
            events.push(json!({"type": "content_block_stop", "index": 0}));
            for (i, (id, name, input)) in reply.calls.iter().enumerate() {
                events.push(json!({"type": "content_block_start", "index": i + 1, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
                events.push(json!({"type": "content_block_delta", "index": i + 1, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}));
                events.push(json!({"type": "content_block_stop", "index": i + 1}));
            }
            events.push(json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}));
            events.push(json!({"type": "message_stop"}));
        }
        Provider::OpenaiChat => {
            let chunk = |delta: Json| json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]});
            for t in [first, second] {
                events.push(chunk(json!({"content": t})));
            }
            for (i, (id, name, input)) in reply.calls.iter().enumerate() {
                events.push(chunk(
                    json!({"tool_calls": [{"index": i, "id": id, "type": "function",
                    "function": {"name": name, "arguments": input.to_string()}}]}),
                ));
            }
        }
        other => panic!("no SSE script for {other}"),
    }
    let mut body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    if provider == Provider::OpenaiChat {
        body.push_str("data: [DONE]\n\n");
    }
    body
}

impl Respond for Script {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let streamed = request
            .body_json::<Json>()
            .is_ok_and(|b| b.get("stream") == Some(&Json::Bool(true)));
        match self.replies.lock().unwrap().pop_front() {
            Some(reply) if streamed => ResponseTemplate::new(200)
                .set_body_raw(sse_body(self.provider, &reply), "text/event-stream"),
            Some(reply) => {
                ResponseTemplate::new(200).set_body_json(response_body(self.provider, &reply))
            }
            None => ResponseTemplate::new(400).set_body_json(
                json!({"error": {"message": "the test script has no more replies"}}),
            ),
        }
    }
}

/// The path each API is posted to (non-streaming).
pub(crate) fn api_path(provider: Provider) -> &'static str {
    match provider {
        Provider::Anthropic => "/v1/messages",
        Provider::OpenaiChat => "/chat/completions",
        Provider::OpenaiResponses => "/responses",
        Provider::Gemini => "/v1beta/models/test-model:generateContent",
    }
}

pub(crate) async fn scripted_server(provider: Provider, replies: Vec<Reply>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path(api_path(provider)))
        .respond_with(Script {
            provider,
            replies: Mutex::new(replies.into()),
        })
        .mount(&server)
        .await;
    server
}

pub(crate) fn client(provider: Provider, base_url: &str) -> ProviderClient {
    let mut config = ClientConfig::new(provider, base_url, Some("test-key".into()));
    config.retry = RetryPolicy {
        max_attempts: 1,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(1),
    };
    config.timeout = Duration::from_secs(20);
    ProviderClient::new(config).unwrap()
}

/// Every request body the server received, in order.
pub(crate) async fn bodies(server: &MockServer) -> Vec<Json> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.body_json().unwrap())
        .collect()
}

/// Answers suspended calls from a list, in order; records what it was asked.
#[derive(Default)]
pub(crate) struct ScriptedApprover {
    answers: Mutex<VecDeque<Resolution>>,
    pub asked: Mutex<Vec<ApprovalRequest>>,
}

impl ScriptedApprover {
    pub(crate) fn new(answers: Vec<Resolution>) -> Arc<Self> {
        Arc::new(ScriptedApprover {
            answers: Mutex::new(answers.into()),
            asked: Mutex::new(Vec::new()),
        })
    }
}

impl Approver for ScriptedApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Resolution> {
        self.asked.lock().unwrap().push(request.clone());
        let answer = self.answers.lock().unwrap().pop_front();
        Box::pin(async move {
            answer.unwrap_or(Resolution::Deny {
                reason: Some("no scripted answer".into()),
            })
        })
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct EchoArgs {
    pub text: String,
    /// Milliseconds to wait before answering.
    #[serde(default)]
    pub delay_ms: u64,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct HangArgs {}

/// A temp workspace and data dir, stores, an executor with durable events and
/// suspensions, and the agent over a scripted server.
pub(crate) struct Harness {
    pub provider: Provider,
    pub server: MockServer,
    pub workspace: TempDir,
    pub data: TempDir,
    pub stores: Stores,
    pub events: Arc<EventBus>,
    pub agent: Arc<Agent>,
    /// Notified when the `hang` tool has started.
    pub hang_started: Arc<tokio::sync::Notify>,
}

/// Replaces the harness's history store with a wrapper around it.
pub(crate) type WrapHistory = fn(Arc<dyn HistoryStore>) -> Arc<dyn HistoryStore>;

pub(crate) struct Options {
    pub with_task: bool,
    pub approver: Arc<dyn Approver>,
    pub max_iterations: u32,
    pub stream: bool,
    /// Registered after the standard test tools.
    pub extra_tools: Vec<Arc<dyn Tool>>,
    /// Wraps the history store the agent uses (to count or fail its calls).
    pub wrap_history: Option<WrapHistory>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            with_task: false,
            approver: ScriptedApprover::new(Vec::new()),
            max_iterations: 100,
            stream: false,
            extra_tools: Vec::new(),
            wrap_history: None,
        }
    }
}

impl Harness {
    pub(crate) async fn new(provider: Provider, replies: Vec<Reply>, opts: Options) -> Harness {
        let server = scripted_server(provider, replies).await;
        Harness::with_server(provider, server, opts).await
    }

    pub(crate) async fn with_server(
        provider: Provider,
        server: MockServer,
        opts: Options,
    ) -> Harness {
        let workspace = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let mut stores = Stores::open(data.path(), StoreConfig::default())
            .await
            .unwrap();
        if let Some(wrap) = opts.wrap_history {
            stores = stores.map_history(wrap);
        }
        let ws = Arc::new(Workspace::new(workspace.path()).unwrap());
        let hang_started = Arc::new(tokio::sync::Notify::new());
        let mut registry = Registry::new();
        registry.register(read_file(Arc::clone(&ws))).unwrap();
        registry.register(write_file(Arc::clone(&ws))).unwrap();
        registry
            .register(tool_fn(
                "echo",
                "Echoes text, optionally after a delay.",
                |a: EchoArgs, _ctx: ToolContext| async move {
                    tokio::time::sleep(Duration::from_millis(a.delay_ms)).await;
                    Ok::<_, ToolError>(Value::text(a.text))
                },
            ))
            .unwrap();
        let started = Arc::clone(&hang_started);
        registry
            .register(tool_fn(
                "hang",
                "Runs until cancelled.",
                move |_a: HangArgs, ctx: ToolContext| {
                    let started = Arc::clone(&started);
                    async move {
                        started.notify_one();
                        ctx.cancel.cancelled().await;
                        Err::<Value, _>(ToolError::Cancelled)
                    }
                },
            ))
            .unwrap();
        for tool in opts.extra_tools {
            registry.register_arc(tool).unwrap();
        }
        let task = TaskTool::new();
        if opts.with_task {
            registry.register(task.clone()).unwrap();
        }
        let events = EventBus::new(Arc::clone(stores.events()));
        let executor = Executor::builder(registry)
            .events(Arc::clone(&events))
            .suspensions(Arc::clone(stores.suspensions()))
            .build();
        let mut config = AgentConfig::new("test-model");
        config.instructions = "Test instructions.".into();
        config.max_tokens = 1000;
        config.max_iterations = opts.max_iterations;
        config.stream = opts.stream;
        let agent = Agent::new(
            client(provider, &server.uri()),
            config,
            Arc::new(executor),
            stores.clone(),
            opts.approver,
        );
        task.bind(&agent);
        Harness {
            provider,
            server,
            workspace,
            data,
            stores,
            events,
            agent,
            hang_started,
        }
    }

    pub(crate) async fn session(&self) -> String {
        self.agent
            .start_session(NewSession::default())
            .await
            .unwrap()
            .id
    }

    pub(crate) async fn bodies(&self) -> Vec<Json> {
        bodies(&self.server).await
    }

    /// The stored messages of a session, as compact tags: `user:..`, `assistant:..[ids]`,
    /// `result:id:status`.
    pub(crate) async fn transcript(&self, session: &str) -> Vec<String> {
        self.stores
            .history()
            .load(session)
            .await
            .unwrap()
            .into_iter()
            .map(|m| match m.content {
                Message::User { text } => format!("user:{text}"),
                Message::Assistant { text, tool_calls } => format!(
                    "assistant:{text}{:?}",
                    tool_calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>()
                ),
                Message::ToolResult(r) => {
                    format!("result:{}:{}", r.call_id, r.status.as_str())
                }
                Message::Widget { .. } => "widget".into(),
                Message::System { text } => format!("system:{text}"),
            })
            .collect()
    }

    /// The event types of a session, in order (`turn_started:1`, `tool_result:c1`, ...).
    pub(crate) async fn event_tags(&self, session: &str) -> Vec<String> {
        let all = self.stores.events().events_since(session, 0).await.unwrap();
        all.into_iter()
            .map(|event| {
                let e: Json = serde_json::to_value(&event).unwrap();
                let ty = e["type"].as_str().unwrap().to_owned();
                match ty.as_str() {
                    "turn_started" | "turn_ended" => format!("{ty}:{}", e["turn"]),
                    "tool_call_started" => format!("{ty}:{}", e["callId"].as_str().unwrap()),
                    "tool_result" => format!("{ty}:{}", e["result"]["callId"].as_str().unwrap()),
                    _ => ty,
                }
            })
            .collect()
    }
}

/// The JSON each API carries for a batch of tool results `(id, name, is_error, text)`,
/// followed by user text, written out per wire format (not through the encoder).
/// Returns the items that end the request: messages (Anthropic, OpenAI chat), input
/// items (Responses) or contents (Gemini).
pub(crate) fn results_tail(
    provider: Provider,
    results: &[(&str, &str, bool, &str)],
    then_user: Option<&str>,
) -> Vec<Json> {
    match provider {
        Provider::Anthropic => {
            let mut content: Vec<Json> = results
                .iter()
                .map(|(id, _, err, t)| {
                    let mut block = json!({"type": "tool_result", "tool_use_id": id,
                                           "content": [{"type": "text", "text": t}]});
                    if *err {
                        block["is_error"] = json!(true);
                    }
                    block
                })
                .collect();
            if let Some(u) = then_user {
                content.push(json!({"type": "text", "text": u}));
            }
            vec![json!({"role": "user", "content": content})]
        }
        Provider::OpenaiChat => {
            let mut out: Vec<Json> = results
                .iter()
                .map(|(id, _, err, t)| {
                    let content = if *err {
                        format!("Error: {t}")
                    } else {
                        (*t).to_owned()
                    };
                    json!({"role": "tool", "tool_call_id": id, "content": content})
                })
                .collect();
            if let Some(u) = then_user {
                out.push(json!({"role": "user", "content": [{"type": "text", "text": u}]}));
            }
            out
        }
        Provider::OpenaiResponses => {
            let mut out: Vec<Json> = results
                .iter()
                .map(|(id, _, err, t)| {
                    let output = if *err {
                        format!("Error: {t}")
                    } else {
                        (*t).to_owned()
                    };
                    json!({"type": "function_call_output", "call_id": id, "output": output})
                })
                .collect();
            if let Some(u) = then_user {
                out.push(json!({"type": "message", "role": "user", "content": u}));
            }
            out
        }
        Provider::Gemini => {
            let parts: Vec<Json> = results
                .iter()
                .map(|(id, name, err, t)| {
                    let key = if *err { "error" } else { "output" };
                    json!({"functionResponse": {"id": id, "name": name, "response": {key: t}}})
                })
                .collect();
            let mut out = vec![json!({"role": "user", "parts": parts})];
            if let Some(u) = then_user {
                out.push(json!({"role": "user", "parts": [{"text": u}]}));
            }
            out
        }
    }
}

/// The list of messages / input items / contents of a request body.
pub(crate) fn turns(provider: Provider, body: &Json) -> Vec<Json> {
    let key = match provider {
        Provider::Anthropic | Provider::OpenaiChat => "messages",
        Provider::OpenaiResponses => "input",
        Provider::Gemini => "contents",
    };
    body[key].as_array().unwrap().clone()
}

/// The last `n` turns of a request body.
pub(crate) fn tail(provider: Provider, body: &Json, n: usize) -> Vec<Json> {
    let all = turns(provider, body);
    all[all.len().saturating_sub(n)..].to_vec()
}

/// The system prompt as each API carries it.
pub(crate) fn system_of(provider: Provider, body: &Json) -> String {
    match provider {
        Provider::Anthropic => body["system"].as_str().unwrap().to_owned(),
        Provider::OpenaiChat => {
            assert_eq!(body["messages"][0]["role"], "system");
            body["messages"][0]["content"].as_str().unwrap().to_owned()
        }
        Provider::OpenaiResponses => body["instructions"].as_str().unwrap().to_owned(),
        Provider::Gemini => body["systemInstruction"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned(),
    }
}

/// The tool names offered in a request body.
pub(crate) fn tool_names(provider: Provider, body: &Json) -> Vec<String> {
    let tools = match provider {
        Provider::Gemini => body["tools"][0]["functionDeclarations"].clone(),
        _ => body["tools"].clone(),
    };
    tools
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| {
                    t.get("name")
                        .or_else(|| t.pointer("/function/name"))
                        .and_then(Json::as_str)
                        .unwrap()
                        .to_owned()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Runs `$body` (an async fn taking a `Provider`) once per provider, each as its own test.
#[macro_export]
macro_rules! per_provider {
    ($name:ident) => {
        mod $name {
            use toolwire_model::Provider;
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn anthropic() {
                super::$name(Provider::Anthropic).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn openai_chat() {
                super::$name(Provider::OpenaiChat).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn openai_responses() {
                super::$name(Provider::OpenaiResponses).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn gemini() {
                super::$name(Provider::Gemini).await;
            }
        }
    };
}
