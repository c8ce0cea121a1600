//! `ToolResult`: the one thing that flows from a tool call to stores, renderers and models.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use crate::value::Value;
use crate::widget::{Resource, Widget};

/// The identity of a tool call, which every result must echo exactly.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallRef {
    /// The provider's id of the call.
    pub call_id: String,
    /// The name of the tool called.
    pub tool_name: String,
}

impl CallRef {
    /// The identity of call `call_id` to tool `tool_name`.
    pub fn new(call_id: impl Into<String>, tool_name: impl Into<String>) -> Self {
        CallRef {
            call_id: call_id.into(),
            tool_name: tool_name.into(),
        }
    }
}

/// One result per tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// The id of the call this answers; equal to the call's.
    pub call_id: String,
    /// The tool that was called.
    pub tool_name: String,
    /// Whether the call succeeded, failed or waits on a person.
    pub status: Status,
    /// Ordered values; a success has at least one.
    #[serde(default)]
    pub output: Vec<Value>,
    /// Present exactly when `status` is `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    /// Present exactly when `status` is `suspended`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspension: Option<Suspension>,
    /// Display-only; never sent to a model (docs/contracts.md, "Display widgets").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub widgets: Vec<Widget>,
    /// Index of the blobs that `output` values reference (docs/contracts.md, "Media
    /// persistence and rehydration").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
    /// Timing, provenance and whatever else the tool or toolwire recorded.
    #[serde(default, skip_serializing_if = "Metadata::is_empty")]
    pub metadata: Metadata,
}

/// How a call ended, or that it has not ended yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The call finished; `output` holds what it made.
    Success,
    /// The call failed; `error` says why.
    Error,
    /// The call waits on a person; `suspension` says for what.
    Suspended,
}

impl Status {
    /// The status as written on the wire: `success`, `error` or `suspended`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Success => "success",
            Status::Error => "error",
            Status::Suspended => "suspended",
        }
    }
}

/// Why a call failed. `message` is for the model and the person alike.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorInfo {
    /// What went wrong, in words the model and the person both read.
    pub message: String,
    /// A stable machine-readable code, e.g. `timeout`, `invalid_input`, `denied`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Structured detail for programs (e.g. schema violations); never needed to understand `message`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_json"
    )]
    pub details: Option<Json>,
}

/// A call waiting on a person: an approval, or an answer to a blocking tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Suspension {
    /// Unique id; the answer names it.
    pub id: String,
    /// Whether the call waits for an approval or for an answer.
    pub reason: SuspensionReason,
    /// What the person is asked.
    pub prompt: String,
    /// JSON Schema of the expected answer, for `input` suspensions.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_json"
    )]
    pub input_schema: Option<Json>,
}

/// What a suspended call waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SuspensionReason {
    /// A yes/no on running the call.
    Approval,
    /// An answer matching `inputSchema` that becomes the call's output.
    Input,
}

/// Timing, provenance and any other metadata; unknown keys are kept in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// Where the output came from (URLs, files), as the tool listed them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<Json>>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// Milliseconds the call ran, from start to end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Milliseconds the call waited for a person (an approval, an answer) before it ran
    /// on; not part of `durationMs`, which is the time after the last answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_ms: Option<u64>,
    /// Blob key of the raw payload as the tool sent it (an MCP result), kept when it is
    /// at most 1 MiB of JSON (any size with `TOOLWIRE_DEBUG_TOOL_RESULT_RAW=1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_ref: Option<String>,
    /// Keys beyond these, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Json>,
}

impl Metadata {
    /// Whether nothing is set, so the field can be left off the wire. Field by field (a
    /// new field fails to compile here until it is counted): comparing with a default made
    /// for it cost a map with its hasher, made and dropped, per result written.
    pub fn is_empty(&self) -> bool {
        let Metadata {
            sources,
            started_at,
            ended_at,
            duration_ms,
            waited_ms,
            raw_ref,
            extra,
        } = self;
        sources.is_none()
            && started_at.is_none()
            && ended_at.is_none()
            && duration_ms.is_none()
            && waited_ms.is_none()
            && raw_ref.is_none()
            && extra.is_empty()
    }
}

/// A present JSON field is `Some`, even when it is `null`: serde's default reads `null`
/// as `None`, which would turn a stored `Some(Null)` into `None` on reload and break the
/// round trip (docs/contracts.md, "Invariants", 3). An absent field is `None` through
/// `#[serde(default)]`.
pub(crate) fn present_json<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Json>, D::Error> {
    Json::deserialize(d).map(Some)
}

/// What a builder accepts as `output`: one value, or several.
pub trait IntoOutput {
    /// The output values, in order.
    fn into_output(self) -> Vec<Value>;
}

impl IntoOutput for Value {
    fn into_output(self) -> Vec<Value> {
        vec![self]
    }
}

impl IntoOutput for Vec<Value> {
    fn into_output(self) -> Vec<Value> {
        self
    }
}

impl<const N: usize> IntoOutput for [Value; N] {
    fn into_output(self) -> Vec<Value> {
        self.into()
    }
}

impl ToolResult {
    fn empty(call: CallRef, status: Status) -> Self {
        ToolResult {
            call_id: call.call_id,
            tool_name: call.tool_name,
            status,
            output: Vec::new(),
            error: None,
            suspension: None,
            widgets: Vec::new(),
            resources: Vec::new(),
            metadata: Metadata::default(),
        }
    }

    /// `ToolResult::success(call, Value::table(cols, rows).summary("42 rows"))`.
    pub fn success(call: CallRef, output: impl IntoOutput) -> Self {
        ToolResult {
            output: output.into_output(),
            ..ToolResult::empty(call, Status::Success)
        }
    }

    /// A failed result with this message and no code.
    pub fn error(call: CallRef, message: impl Into<String>) -> Self {
        ToolResult {
            error: Some(ErrorInfo {
                message: message.into(),
                code: None,
                details: None,
            }),
            ..ToolResult::empty(call, Status::Error)
        }
    }

    /// An error with a machine-readable code, e.g. `timeout`.
    pub fn error_with_code(
        call: CallRef,
        code: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        let mut result = ToolResult::error(call, message);
        if let Some(error) = result.error.as_mut() {
            error.code = Some(code.into());
        }
        result
    }

    /// The typed `error.code`, when the result is an error that has one.
    pub fn error_code(&self) -> Option<crate::ErrorCode> {
        self.error
            .as_ref()
            .and_then(|e| e.code.as_deref())
            .map(crate::ErrorCode::parse)
    }

    /// A result waiting on a person.
    pub fn suspended(call: CallRef, suspension: Suspension) -> Self {
        ToolResult {
            suspension: Some(suspension),
            ..ToolResult::empty(call, Status::Suspended)
        }
    }

    /// The identity of the call this result answers.
    pub fn call(&self) -> CallRef {
        CallRef::new(self.call_id.clone(), self.tool_name.clone())
    }

    /// The same result with one more widget.
    pub fn with_widget(mut self, widget: Widget) -> Self {
        self.widgets.push(widget);
        self
    }

    /// The same result with one more output value.
    pub fn with_output(mut self, value: Value) -> Self {
        self.output.push(value);
        self
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        self.status == Status::Error
    }
}

#[cfg(test)]
mod round_trip_tests {
    use super::{CallRef, ToolResult};

    #[test]
    fn null_details_survive_a_round_trip() {
        let mut r = ToolResult::error(CallRef::new("c", "t"), "failed");
        if let Some(e) = r.error.as_mut() {
            e.details = Some(serde_json::Value::Null);
        }
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains("\"details\":null"), "{text}");
        let back: ToolResult = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        // Absent stays absent.
        let plain = ToolResult::error(CallRef::new("c", "t"), "failed");
        let back: ToolResult =
            serde_json::from_str(&serde_json::to_string(&plain).unwrap()).unwrap();
        assert_eq!(back, plain);
    }
}
