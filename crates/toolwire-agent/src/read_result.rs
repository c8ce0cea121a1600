//! `read_result`: pages through a stored tool result, following a truncation marker
//! (`read_result {"callId", "part", "offset"}`) to exactly the part the model did not see.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use toolwire_core::Value;
use toolwire_model::read::{DEFAULT_READ_CHARS, read_part};
use toolwire_store::HistoryStore;

use toolwire_tool::ToolContext;
use toolwire_tool::{Tool, ToolError, tool_fn};

/// The most one read returns, so a page never blows the context it is meant to protect.
const MAX_READ_CHARS: usize = 60_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReadResultArgs {
    /// The call whose stored result to read.
    pub call_id: String,
    /// Which output value (as in the marker); default 0.
    #[serde(default)]
    pub part: usize,
    /// Where to start, in the marker's units (chars, rows, entries or diff lines).
    #[serde(default)]
    pub offset: usize,
    /// Characters to return, default 20,000, at most 60,000.
    #[serde(default)]
    pub limit: Option<usize>,
}

/// The `read_result` tool over a history store.
pub fn read_result(history: Arc<dyn HistoryStore>) -> impl Tool {
    tool_fn(
        "read_result",
        "Reads more of an earlier tool result that was shortened for you. Call it with the \
         callId, part and offset given in a truncation marker to get the omitted content.",
        move |args: ReadResultArgs, _ctx: ToolContext| {
            let history = Arc::clone(&history);
            async move {
                let stored = history
                    .find_result(&args.call_id)
                    .await
                    .map_err(|e| ToolError::with_code("store", e.to_string()))?
                    .ok_or_else(|| {
                        ToolError::with_code(
                            "not_found",
                            format!("no stored result with callId {:?}", args.call_id),
                        )
                    })?;
                let limit = args
                    .limit
                    .unwrap_or(DEFAULT_READ_CHARS)
                    .clamp(1, MAX_READ_CHARS);
                let text = read_part(&stored.result, args.part, args.offset, limit)
                    .map_err(|e| ToolError::with_code("invalid_input", e.to_string()))?;
                Ok::<_, ToolError>(Value::text(text))
            }
        },
    )
}
