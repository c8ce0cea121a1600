//! `read_result`: pages through a stored tool result, following a truncation marker
//! (`read_result {"callId", "part", "offset"}`) to exactly the part the model did not see;
//! or points into a JSON result (`pointer`) or searches one with a regular expression
//! (`pattern`), so a model finds the line it needs in 5 MB without reading them all.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use toolwire_core::Value;
use toolwire_model::{DEFAULT_READ_CHARS, ReadRequest, read};
use toolwire_store::HistoryReader;

use toolwire_tool::ToolContext;
use toolwire_tool::{Tool, ToolError, tool_fn};

/// The most one read returns, so a page never blows the context it is meant to protect.
const MAX_READ_CHARS: usize = 60_000;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ReadResultArgs {
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
    /// A regular expression (Rust regex syntax, e.g. "(?i)error|panic"): return only the
    /// lines (rows; JSON leaves as "pointer = value") that match, each with the offset or
    /// pointer that reads it; `offset` then counts lines searched.
    #[serde(default)]
    pub pattern: Option<String>,
    /// A JSON pointer (RFC 6901, e.g. "/items/3/name") into a JSON result: read only the
    /// value there.
    #[serde(default)]
    pub pointer: Option<String>,
}

/// The `read_result` tool over a history store.
pub fn read_result(history: Arc<dyn HistoryReader>) -> impl Tool {
    tool_fn(
        "read_result",
        "Reads more of an earlier tool result that was shortened for you. Call it with the \
         callId, part and offset given in a truncation marker to get the omitted content. \
         Give a pattern (regular expression) to get only the matching lines, or a pointer \
         (JSON pointer) to get one value of a JSON result.",
        move |args: ReadResultArgs, ctx: ToolContext| {
            let history = Arc::clone(&history);
            async move {
                // Only the calling session's results: a call id names a call within its
                // session, and another session's results are not this model's to read.
                let stored = history
                    .find_result(&ctx.session_id, &args.call_id)
                    .await
                    .map_err(|e| ToolError::with_code("store", e.to_string()))?
                    .ok_or_else(|| {
                        ToolError::with_code(
                            "not_found",
                            format!(
                                "no stored result with callId {:?} in this session",
                                args.call_id
                            ),
                        )
                    })?;
                let limit = args
                    .limit
                    .unwrap_or(DEFAULT_READ_CHARS)
                    .clamp(1, MAX_READ_CHARS);
                let request = ReadRequest {
                    part: args.part,
                    offset: args.offset,
                    limit,
                    pattern: args.pattern.as_deref(),
                    pointer: args.pointer.as_deref(),
                };
                let text = read(&stored.result, &request)
                    .map_err(|e| ToolError::with_code("invalid_input", e.to_string()))?;
                Ok::<_, ToolError>(Value::text(text))
            }
        },
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolwire_core::{CallRef, Message, ToolResult};
    use toolwire_store::{NewSession, StoreConfig, Stores};
    use toolwire_tool::Output;

    /// The tool as a model of session `session` calls it: JSON arguments, a stored result
    /// (SQLite), the page or the error it returns.
    async fn call_in(
        tool: &impl Tool,
        session: &str,
        input: serde_json::Value,
    ) -> Result<String, ToolError> {
        let ctx = ToolContext::new("c_read", session, "t", None, None);
        match tool.execute(input, ctx).await? {
            Output::Values(values) => Ok(values[0].data["content"].as_str().unwrap().to_owned()),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[tokio::test]
    async fn read_result_searches_and_points_into_a_stored_result() {
        let data = tempfile::tempdir().unwrap();
        let stores = Stores::open(data.path(), StoreConfig::default())
            .await
            .unwrap();
        let session = stores.create_session(NewSession::default()).await.unwrap();
        let log: String = (0..50_000)
            .map(|i| format!("line {i}\n"))
            .collect::<String>()
            + "FATAL: disk full\n";
        let report =
            json!({"checks": [{"name": "disk", "ok": false}, {"name": "net", "ok": true}]});
        let stored = ToolResult::success(
            CallRef::new("call_big", "run"),
            vec![Value::text(log), Value::structured(report)],
        );
        stores
            .append(&session.id, Message::tool(stored))
            .await
            .unwrap();
        let tool = read_result(stores.history_reader());
        let call = |tool, input| call_in(tool, &session.id, input);

        let found = call(&tool, json!({"callId": "call_big", "pattern": "FATAL"}))
            .await
            .unwrap();
        assert!(found.starts_with("offset "), "{found}");
        assert!(
            found.contains(": FATAL: disk full\n[1 matches for /FATAL/"),
            "{found}"
        );

        let failing = call(
            &tool,
            json!({"callId": "call_big", "part": 1, "pattern": "false"}),
        )
        .await
        .unwrap();
        assert!(failing.starts_with("/checks/0/ok = false\n"), "{failing}");
        let name = call(
            &tool,
            json!({"callId": "call_big", "part": 1, "pointer": "/checks/0/name"}),
        )
        .await
        .unwrap();
        assert_eq!(name, "disk");

        for (bad, says) in [
            (
                json!({"callId": "call_big", "pattern": "[z-a]"}),
                "is not a regular expression",
            ),
            (
                json!({"callId": "call_big", "part": 1, "pointer": "/checks/9"}),
                "is an array of 2 items",
            ),
            (json!({"callId": "call_big", "pointer": "/x"}), "not JSON"),
        ] {
            let err = call(&tool, bad).await.unwrap_err().to_string();
            assert!(err.contains(says), "{err}");
        }

        // Another session's model cannot read it, though it knows the call id.
        let other = stores.create_session(NewSession::default()).await.unwrap();
        let err = call_in(&tool, &other.id, json!({"callId": "call_big"}))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no stored result with callId \"call_big\" in this session"),
            "{err}"
        );
    }
}
