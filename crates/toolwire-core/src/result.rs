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
    pub call_id: String,
    pub tool_name: String,
}

impl CallRef {
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
    pub call_id: String,
    pub tool_name: String,
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
    #[serde(default, skip_serializing_if = "Metadata::is_empty")]
    pub metadata: Metadata,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Success,
    Error,
    Suspended,
}

impl Status {
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
    pub message: String,
    /// A stable machine-readable code, e.g. `timeout`, `invalid_input`, `denied`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
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
    pub id: String,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SuspensionReason {
    Approval,
    Input,
}

/// Timing, provenance and any other metadata; unknown keys are kept in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<Json>>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
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
    #[serde(flatten)]
    pub extra: Map<String, Json>,
}

impl Metadata {
    pub fn is_empty(&self) -> bool {
        *self == Metadata::default()
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

    pub fn suspended(call: CallRef, suspension: Suspension) -> Self {
        ToolResult {
            suspension: Some(suspension),
            ..ToolResult::empty(call, Status::Suspended)
        }
    }

    pub fn call(&self) -> CallRef {
        CallRef::new(self.call_id.clone(), self.tool_name.clone())
    }

    pub fn with_widget(mut self, widget: Widget) -> Self {
        self.widgets.push(widget);
        self
    }

    pub fn with_output(mut self, value: Value) -> Self {
        self.output.push(value);
        self
    }

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
