//! toolwire-normalize: any raw tool payload → one canonical, valid `ToolResult`. Pure.
//!
//! Accepted inputs: bare strings and JSON, golem-forge flat values, ART
//! envelopes, MCP `CallToolResult`s, canonical results (normalizing is idempotent), data
//! URIs and bare base64. Nothing is dropped silently: whatever is not mapped is kept as a
//! `structured` value and reported in [`Normalized::diagnostics`], which are also recorded
//! in the result's `metadata.diagnostics`.

#![warn(missing_docs)]

mod depth;
mod envelope;
mod fast;
mod mcp;
mod media;
mod payload;

use serde_json::Value as Json;
use toolwire_core::{CallRef, Status, ToolResult, Value, Widget};

pub use depth::{MAX_DEPTH, dismantle, to_string_iterative};
pub use mcp::{MCP_METADATA_KEY, Questions, app_widget};
pub use media::sniff_bytes;

/// The outcome of normalizing: a result that passes `validate()`, and what was noticed.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalized {
    /// The canonical result; it passes `validate()`.
    pub result: ToolResult,
    /// What was not mapped as-is, in payload order; empty for a clean payload.
    pub diagnostics: Vec<Diagnostic>,
}

/// Something in the raw payload that was not mapped as-is: where (a `$`-rooted path into
/// the payload) and what was done with it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Diagnostic {
    /// Where in the payload, `$`-rooted, e.g. `$.content[2]`.
    pub path: String,
    /// What was noticed and what was done with it.
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// The metadata key under which diagnostics are recorded in the result.
pub const DIAGNOSTICS_KEY: &str = "diagnostics";

#[derive(Debug, Default)]
pub(crate) struct Diagnostics(pub(crate) Vec<Diagnostic>);

impl Diagnostics {
    pub(crate) fn push(&mut self, path: &Path<'_>, message: impl Into<String>) {
        self.0.push(Diagnostic {
            path: path.to_string(),
            message: message.into(),
        });
    }
}

/// A place in the raw payload, as a chain of stack frames: walking a payload costs no
/// allocation, and the text (`$.content[3].data`) is built only for a diagnostic.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl<'a> Path<'a> {
    pub(crate) fn key(&'a self, key: &'a str) -> Path<'a> {
        Path::Key(self, key)
    }

    pub(crate) fn index(&'a self, i: usize) -> Path<'a> {
        Path::Index(self, i)
    }
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Root => f.write_str("$"),
            Path::Key(parent, key) => write!(f, "{parent}.{key}"),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// What the payload said, before it is put in the canonical envelope.
#[derive(Debug, Default)]
pub(crate) struct Parts {
    pub output: Vec<Value>,
    pub widgets: Vec<Widget>,
}

/// The call a payload given on its own is recorded under (`toolwire normalize`, the
/// packages' `normalize`): the names given, else the payload's own `callId` and
/// `toolName`, else `call_1` and `tool`.
pub fn payload_call(raw: &Json, tool: Option<String>, call_id: Option<String>) -> CallRef {
    let own = |key: &str| {
        raw.get(key)
            .and_then(Json::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    CallRef::new(
        call_id
            .or_else(|| own("callId"))
            .unwrap_or_else(|| "call_1".into()),
        tool.or_else(|| own("toolName"))
            .unwrap_or_else(|| "tool".into()),
    )
}

/// Normalizes a borrowed JSON payload. Large strings are copied once; prefer
/// [`normalize_value`] when the payload can be given away.
pub fn normalize(raw: &Json, call: &CallRef) -> Normalized {
    let mut diags = Diagnostics::default();
    let owned = depth::clone_clamped(raw, &mut diags);
    finish(owned, call, diags)
}

/// Normalizes an owned JSON payload, moving its strings into the result.
pub fn normalize_value(mut raw: Json, call: &CallRef) -> Normalized {
    let mut diags = Diagnostics::default();
    depth::clamp(&mut raw, &mut diags);
    finish(raw, call, diags)
}

/// Normalizes raw bytes: JSON if they parse, else UTF-8 text, else binary media sniffed
/// from its magic bytes.
pub fn normalize_bytes(raw: &[u8], call: &CallRef) -> Normalized {
    let mut diags = Diagnostics::default();
    if let Some(envelope) = fast::try_mcp(raw, &mut diags) {
        return assemble(envelope, call, diags);
    }
    normalize_bytes_generic(raw, call)
}

/// A payload given on its own as JSON text (the packages' `normalize` of plain data),
/// recorded under [`payload_call`]'s names; `None` when the text is not JSON. The same
/// result as [`normalize_value`] of the parsed text, but an MCP result the typed fast path
/// covers is parsed straight into structs, not into a JSON tree first.
pub fn normalize_payload_text(
    raw: &str,
    tool: Option<String>,
    call_id: Option<String>,
) -> Option<Normalized> {
    let mut diags = Diagnostics::default();
    if let Some(envelope) = fast::try_mcp_text(raw, &mut diags) {
        // The fast path takes no key beyond an MCP result's own, so the payload names no
        // `callId` or `toolName` of its own: the call is the names given, else the defaults.
        let call = payload_call(&Json::Null, tool, call_id);
        return Some(assemble(envelope, &call, diags));
    }
    let json: Json = serde_json::from_str(raw).ok()?;
    let call = payload_call(&json, tool, call_id);
    Some(normalize_value(json, &call))
}

/// An MCP `CallToolResult` read from its JSON text by the typed fast path, not yet put
/// under a call's names: what a client that has the answer's text (not a parsed tree)
/// normalizes it with, once it knows the result is no task, question or other shape it
/// handles itself. See [`typed_mcp`].
#[derive(Debug)]
pub struct TypedMcp {
    envelope: Envelope,
    diags: Diagnostics,
}

/// `raw`, an MCP `CallToolResult`'s JSON text, read by the typed fast path: `None` when
/// the fast path does not cover it exactly (any key beyond `content`, `isError`, `_meta`
/// and a `resultType` of `complete`, a block other than text, image or audio, ...), and
/// the caller parses it the generic way. [`TypedMcp::normalized`] of it equals
/// [`normalize_value`] of the parsed text.
pub fn typed_mcp(raw: &str) -> Option<TypedMcp> {
    let mut diags = Diagnostics::default();
    let envelope = fast::try_mcp_text(raw, &mut diags)?;
    Some(TypedMcp { envelope, diags })
}

impl TypedMcp {
    /// Whether the server said the call failed (`isError`).
    pub fn is_error(&self) -> bool {
        self.envelope.status == Status::Error
    }

    /// The result, under `call`'s names.
    pub fn normalized(self, call: &CallRef) -> Normalized {
        assemble(self.envelope, call, self.diags)
    }
}

/// Whether `normalize_bytes` takes its typed fast path for `raw` (for tests).
#[doc(hidden)]
pub fn takes_fast_path(raw: &[u8]) -> bool {
    fast::try_mcp(raw, &mut Diagnostics::default()).is_some()
}

/// [`normalize_bytes`] without the typed fast path; public so tests can hold the two
/// paths to the same results.
#[doc(hidden)]
pub fn normalize_bytes_generic(raw: &[u8], call: &CallRef) -> Normalized {
    match serde_json::from_slice::<Json>(raw) {
        Ok(json) => normalize_value(json, call),
        Err(err) => {
            let mut diags = Diagnostics::default();
            let value = match std::str::from_utf8(raw) {
                Ok(text) => {
                    let trimmed = text.trim_start();
                    if trimmed.starts_with('{') || trimmed.starts_with('[') {
                        diags.push(
                            &Path::Root,
                            format!("looks like JSON but does not parse ({err}); kept as text"),
                        );
                    }
                    Json::String(text.to_owned())
                }
                Err(_) => {
                    use base64::Engine;
                    let mime = media::sniff_bytes(raw).unwrap_or("application/octet-stream");
                    let b64 = base64::engine::general_purpose::STANDARD.encode(raw);
                    format!("data:{mime};base64,{b64}").into()
                }
            };
            finish(value, call, diags)
        }
    }
}

/// The result every input ends in, before the call's identity and the diagnostics are
/// put in: a `ToolResult` with empty `callId`/`toolName`, so assembling it moves nothing.
pub(crate) type Envelope = ToolResult;

/// A success holding the payload's parts.
pub(crate) fn success_envelope(parts: Parts) -> Envelope {
    let mut result = ToolResult::success(CallRef::new(String::new(), String::new()), parts.output);
    result.widgets = parts.widgets;
    result
}

fn finish(raw: Json, call: &CallRef, mut diags: Diagnostics) -> Normalized {
    let envelope = match raw {
        Json::Object(map) if envelope::is_envelope(&map) => {
            envelope::normalize(map, call, &mut diags)
        }
        Json::Object(map) if mcp::is_call_tool_result(&map) => {
            mcp::call_tool_result(map, &mut diags)
        }
        other => {
            let mut parts = Parts::default();
            payload::values(other, &Path::Root, &mut diags, &mut parts);
            success_envelope(parts)
        }
    };
    assemble(envelope, call, diags)
}

/// The canonical result around an envelope, with the diagnostics recorded in it.
fn assemble(mut result: Envelope, call: &CallRef, mut diags: Diagnostics) -> Normalized {
    if let Some(s) = result.suspension.as_mut().filter(|s| s.id.is_empty()) {
        // An MCP `input_required` carries no id of its own; one per call is enough, since
        // the executor gives every recorded suspension a fresh id anyway.
        s.id = format!("{}-input", call.call_id);
    }
    if result.status == Status::Success && result.output.is_empty() {
        diags.push(
            &Path::Root,
            "the tool returned no content; recorded as empty text",
        );
        result.output.push(Value::text(""));
    }
    if !diags.0.is_empty() {
        let recorded = result
            .metadata
            .extra
            .entry(DIAGNOSTICS_KEY)
            .or_insert_with(|| Json::Array(Vec::new()));
        if !recorded.is_array() {
            // A payload's own non-array `diagnostics` is kept beside ours, not overwritten.
            let theirs = std::mem::take(recorded);
            *recorded = Json::Array(vec![theirs]);
        }
        if let Json::Array(list) = recorded {
            list.extend(diags.0.iter().filter_map(|d| serde_json::to_value(d).ok()));
        }
    }
    result.call_id.clone_from(&call.call_id);
    result.tool_name.clone_from(&call.tool_name);
    Normalized {
        result,
        diagnostics: diags.0,
    }
}
