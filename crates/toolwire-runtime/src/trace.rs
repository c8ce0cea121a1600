//! The tracing hook: spans as the OpenTelemetry GenAI conventions name them, behind a
//! trait, so the engine depends on no telemetry crate and costs nothing when no tracer
//! is set (`toolwire-otel` implements it and exports over OTLP).

use std::sync::Arc;

use serde_json::Value as Json;
use toolwire_core::{Status, ToolResult, TraceContext, WellKnown};

/// The OTLP span kinds toolwire uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// Work inside this process: a turn, a tool call, a wait.
    Internal,
    /// A request to another service: a model provider.
    Client,
}

/// An attribute value, in the types OTLP carries.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// A string.
    Str(String),
    /// A 64-bit integer (OTLP/JSON writes it as a string).
    Int(i64),
    /// A boolean.
    Bool(bool),
    /// An array of strings (e.g. finish reasons, blob keys).
    Strs(Vec<String>),
}

impl From<&str> for AttrValue {
    fn from(s: &str) -> Self {
        AttrValue::Str(s.to_owned())
    }
}

impl From<String> for AttrValue {
    fn from(s: String) -> Self {
        AttrValue::Str(s)
    }
}

impl From<u64> for AttrValue {
    fn from(n: u64) -> Self {
        AttrValue::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl From<bool> for AttrValue {
    fn from(b: bool) -> Self {
        AttrValue::Bool(b)
    }
}

/// One attribute: its key is one of the conventions' names (or `toolwire.*`).
pub type Attr = (&'static str, AttrValue);

/// Starts spans. Implementations must never block or fail the caller: a dead collector
/// is the exporter's problem, not the call's.
pub trait Tracer: Send + Sync {
    /// Opens a span under `parent` (a new trace without one). It ends when dropped.
    fn start(
        &self,
        name: String,
        kind: SpanKind,
        parent: Option<&TraceContext>,
        attributes: Vec<Attr>,
    ) -> Box<dyn Span>;

    /// Whether arguments, results and the like (opt-in content) are recorded.
    fn records_content(&self) -> bool;
}

/// An open span; dropping it ends it (at that instant) and hands it to the exporter.
pub trait Span: Send + Sync {
    /// This span's place in its trace: the parent for its children.
    fn context(&self) -> &TraceContext;
    /// Sets (or replaces) one attribute.
    fn set(&mut self, key: &'static str, value: AttrValue);
    /// A point in time inside the span, with its own attributes.
    fn event(&mut self, name: &'static str, attributes: Vec<Attr>);
    /// Marks the span failed: status `ERROR` and `error.type`; the status message is
    /// `message` when the tracer records content, else `error_type` (an error's text is
    /// content).
    fn fail(&mut self, error_type: &str, message: &str);
}

/// A shared tracer, or none (the default: tracing off).
pub type SharedTracer = Option<Arc<dyn Tracer>>;

/// Key names of the GenAI conventions (and toolwire's own), written once.
pub mod attr {
    /// What the span does: `execute_tool`, `chat`, `invoke_agent`.
    pub const OPERATION: &str = "gen_ai.operation.name";
    /// The model provider (`anthropic`, `openai`, `gcp.gemini`).
    pub const PROVIDER: &str = "gen_ai.provider.name";
    /// The model asked for.
    pub const REQUEST_MODEL: &str = "gen_ai.request.model";
    /// The model that answered, when the provider says.
    pub const RESPONSE_MODEL: &str = "gen_ai.response.model";
    /// Tokens the request used as input.
    pub const INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
    /// Tokens the model wrote.
    pub const OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
    /// Why the model stopped, per choice.
    pub const FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
    /// The agent a turn belongs to (`toolwire`, `subagent`).
    pub const AGENT_NAME: &str = "gen_ai.agent.name";
    /// The session id.
    pub const CONVERSATION: &str = "gen_ai.conversation.id";
    /// The tool called.
    pub const TOOL_NAME: &str = "gen_ai.tool.name";
    /// The call's id, as the model or person gave it.
    pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
    /// `function` for built-in tools, `extension` for MCP tools.
    pub const TOOL_TYPE: &str = "gen_ai.tool.type";
    /// The call's arguments as JSON (opt-in content).
    pub const TOOL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
    /// The result as JSON when small and without media (opt-in content).
    pub const TOOL_RESULT: &str = "gen_ai.tool.call.result";
    /// A failed call's error code.
    pub const ERROR_TYPE: &str = "error.type";
    /// The blob keys of a result recorded by reference (toolwire's own).
    pub const RESULT_REF: &str = "toolwire.result.ref";
    /// The size of a result recorded by reference.
    pub const RESULT_BYTES: &str = "toolwire.result.bytes";
    /// The stored result's status (`success`, `error`, …).
    pub const RESULT_STATUS: &str = "toolwire.result.status";
    /// The id of the suspension a wait span waits on.
    pub const SUSPENSION_ID: &str = "toolwire.suspension.id";
    /// Why the call waits (`approval`, `input`).
    pub const SUSPENSION_REASON: &str = "toolwire.suspension.reason";
    /// How a wait ended (`approved`, `denied`, …).
    pub const RESOLUTION: &str = "toolwire.resolution";
    /// The call that started a subagent.
    pub const PARENT_CALL_ID: &str = "toolwire.parent_call.id";
}

/// Results up to this many bytes of JSON are recorded inline (when content is on);
/// larger ones by reference and size.
pub const INLINE_RESULT_LIMIT: usize = 4096;

/// What a finished call's span records about its result: its status, `error.type` for
/// a failure, and (content on) the result inline when small and without media (a failure
/// without output: its error), else its blobs' keys and sizes (`toolwire.result.ref`,
/// `toolwire.result.bytes`).
pub fn record_result(span: &mut dyn Span, result: &ToolResult, content: bool) {
    span.set(attr::RESULT_STATUS, status_name(result.status).into());
    if result.status == Status::Error {
        let error = result.error.as_ref();
        let code = error
            .and_then(|e| e.code.as_deref())
            .unwrap_or("_OTHER")
            .to_owned();
        let message = error.map(|e| e.message.as_str()).unwrap_or("failed");
        span.fail(&code, message);
    }
    if !content {
        return;
    }
    let (refs, media_bytes) = media_refs(result);
    if !refs.is_empty() || media_bytes > 0 {
        if !refs.is_empty() {
            span.set(attr::RESULT_REF, AttrValue::Strs(refs));
        }
        span.set(attr::RESULT_BYTES, media_bytes.into());
        return;
    }
    // A failure's output is usually empty: its error (message, code) is what it said.
    let text = match (&result.error, result.output.is_empty()) {
        (Some(error), true) => serde_json::to_string(error),
        _ => serde_json::to_string(&result.output),
    }
    .unwrap_or_default();
    if text.len() <= INLINE_RESULT_LIMIT {
        span.set(attr::TOOL_RESULT, text.into());
        return;
    }
    // Too large to inline and not a blob of its own: the payload as received is, when
    // the store kept it (`rawRef`); the whole result is in the history either way.
    if let Some(raw) = &result.metadata.raw_ref {
        span.set(attr::RESULT_REF, AttrValue::Strs(vec![raw.clone()]));
    }
    span.set(attr::RESULT_BYTES, (text.len() as u64).into());
}

/// The blob keys of a result's media, and their bytes together (inline media counts its
/// decoded size and has no key).
fn media_refs(result: &ToolResult) -> (Vec<String>, u64) {
    let mut keys = Vec::new();
    let mut bytes = 0u64;
    for value in &result.output {
        if !(value.is_kind(WellKnown::Image) || value.is_kind(WellKnown::File)) {
            continue;
        }
        let Some(source) = value.data.get("source") else {
            continue;
        };
        if let Some(key) = source.get("blob").and_then(Json::as_str) {
            keys.push(key.to_owned());
            bytes += source.get("size").and_then(Json::as_u64).unwrap_or(0);
        } else if let Some(b64) = source.get("base64").and_then(Json::as_str) {
            bytes += (b64.len() as u64 / 4) * 3;
        }
    }
    (keys, bytes)
}

fn status_name(status: Status) -> &'static str {
    match status {
        Status::Success => "success",
        Status::Error => "error",
        Status::Suspended => "suspended",
    }
}
