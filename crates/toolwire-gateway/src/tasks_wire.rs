//! 2025-11-25's task messages on stdio, rewritten beneath rmcp, whose model is the
//! 2026-07-28 one and drops them: a `tools/call`'s `params.task` goes into its `_meta`
//! (where the gateway's handler finds it), `tasks/get` and `tasks/cancel` of a 2025-11-25
//! host become requests rmcp hands the gateway as they are, and on the way out the
//! `initialize` answer gets `capabilities.tasks`, `tools/list` gets
//! `execution.taskSupport`, and the gateway's marked answer to a task-augmented call
//! becomes the `CreateTaskResult` (`{"task": {...}}`) of that revision. Every other line
//! passes untouched (and unparsed, but for a cheap look).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::{Value as Json, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// Where a 2025-11-25 host's task request travels in a `tools/call`'s `_meta`.
pub(crate) const LEGACY_TASK_META: &str = "toolwire/legacyTask";

/// The `_meta` key of the gateway's answer that becomes a `CreateTaskResult` on the way
/// out; its value carries [`Wire::nonce`], so a tool's own result cannot pose as one.
pub(crate) const CREATED_TASK_META: &str = "toolwire/createdTask";

/// The methods of 2025-11-25 that rmcp would refuse (it gates them on 2026-07-28's
/// tasks extension), under the names the gateway takes them by.
pub(crate) const LEGACY_GET: &str = "toolwire/legacy/tasks/get";
pub(crate) const LEGACY_CANCEL: &str = "toolwire/legacy/tasks/cancel";

/// Longest line that is looked at; a longer one (a huge result or argument) passes as
/// it is, streamed, so memory stays bounded whatever comes.
const MAX_REWRITTEN_LINE: u64 = 1 << 20;

/// Most answers awaited for rewriting at once (a host that never reads them cannot grow
/// the set).
const MAX_PENDING: usize = 256;

/// What the two directions share: the ids of requests whose answers are rewritten.
pub(crate) struct Wire {
    pub(crate) nonce: String,
    /// The tools whose calls may run as tasks (they ask nobody), as the host sees them.
    task_tools: HashSet<String>,
    initialize: Mutex<HashSet<String>>,
    tool_lists: Mutex<HashSet<String>>,
}

impl Wire {
    pub(crate) fn new(nonce: String, task_tools: HashSet<String>) -> Arc<Self> {
        Arc::new(Wire {
            nonce,
            task_tools,
            initialize: Mutex::new(HashSet::new()),
            tool_lists: Mutex::new(HashSet::new()),
        })
    }

    fn expect(set: &Mutex<HashSet<String>>, id: &Json) {
        if let Ok(mut set) = set.lock()
            && set.len() < MAX_PENDING
        {
            set.insert(id.to_string());
        }
    }

    fn answered(set: &Mutex<HashSet<String>>, id: &Json) -> bool {
        set.lock().is_ok_and(|mut set| set.remove(&id.to_string()))
    }

    fn awaits_any(&self) -> bool {
        let waiting = |set: &Mutex<HashSet<String>>| set.lock().is_ok_and(|s| !s.is_empty());
        waiting(&self.initialize) || waiting(&self.tool_lists)
    }

    /// A line from the host, rewritten if it is a 2025-11-25 task message.
    pub(crate) fn inbound(&self, line: &str) -> Option<String> {
        let cheap = ["\"initialize\"", "\"tools/list\"", "\"task\"", "\"tasks/"];
        if !cheap.iter().any(|k| line.contains(k)) {
            return None;
        }
        let mut message: Json = serde_json::from_str(line).ok()?;
        let method = message.get("method")?.as_str()?.to_owned();
        let id = message.get("id").cloned();
        // A 2026-07-28 request says its revision in its `_meta`; it is left to rmcp.
        let modern = message["params"]["_meta"]
            .get("io.modelcontextprotocol/protocolVersion")
            .is_some();
        match (method.as_str(), id) {
            ("initialize", Some(id)) => {
                Wire::expect(&self.initialize, &id);
                None
            }
            ("tools/list", Some(id)) if !modern => {
                Wire::expect(&self.tool_lists, &id);
                None
            }
            ("tools/call", Some(_)) if !modern => {
                let params = message.get_mut("params")?.as_object_mut()?;
                let task = params.remove("task")?;
                let meta = params
                    .entry("_meta")
                    .or_insert_with(|| json!({}))
                    .as_object_mut()?;
                meta.insert(
                    LEGACY_TASK_META.into(),
                    json!({"task": task, "nonce": self.nonce}),
                );
                Some(message.to_string())
            }
            ("tasks/get" | "tasks/cancel", Some(_)) if !modern => {
                let renamed = if method == "tasks/get" {
                    LEGACY_GET
                } else {
                    LEGACY_CANCEL
                };
                message["method"] = json!(renamed);
                Some(message.to_string())
            }
            _ => None,
        }
    }

    /// A line to the host, rewritten if it answers what 2025-11-25 shapes differently.
    pub(crate) fn outbound(&self, line: &str) -> Option<String> {
        if !line.contains(CREATED_TASK_META) && !self.awaits_any() {
            return None;
        }
        let mut message: Json = serde_json::from_str(line).ok()?;
        let id = message.get("id")?.clone();
        let result = message.get_mut("result")?.as_object_mut()?;
        if Wire::answered(&self.initialize, &id) {
            let caps = result.get_mut("capabilities")?.as_object_mut()?;
            caps.insert(
                "tasks".into(),
                json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
            );
        } else if Wire::answered(&self.tool_lists, &id) {
            for tool in result.get_mut("tools")?.as_array_mut()? {
                let Some(tool) = tool.as_object_mut() else {
                    continue;
                };
                // read_result answers at once; a call that may ask someone is answered
                // inline (its question goes to the host the usual way).
                let name = tool.get("name").and_then(Json::as_str).unwrap_or_default();
                if self.task_tools.contains(name) {
                    tool.insert("execution".into(), json!({"taskSupport": "optional"}));
                }
            }
        } else {
            let created = result.get("_meta")?.get(CREATED_TASK_META)?;
            if created.get("nonce").and_then(Json::as_str) != Some(self.nonce.as_str()) {
                return None;
            }
            let task = created.get("task")?.clone();
            *result = serde_json::Map::new();
            result.insert("task".into(), task);
        }
        Some(message.to_string())
    }
}

/// Copies lines from `from` to `to`, each through `rewrite`; a line too long to look at
/// is streamed through as it is.
async fn pump(
    from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    rewrite: impl Fn(&str) -> Option<String>,
) -> std::io::Result<()> {
    let mut from = BufReader::new(from);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut from)
            .take(MAX_REWRITTEN_LINE)
            .read_until(b'\n', &mut line)
            .await?;
        if read == 0 {
            return to.shutdown().await;
        }
        if line.last() != Some(&b'\n') && read as u64 == MAX_REWRITTEN_LINE {
            // Too long to look at: through as it is, to its end.
            to.write_all(&line).await?;
            loop {
                line.clear();
                let more = (&mut from)
                    .take(MAX_REWRITTEN_LINE)
                    .read_until(b'\n', &mut line)
                    .await?;
                to.write_all(&line).await?;
                if more == 0 || line.last() == Some(&b'\n') {
                    break;
                }
            }
            to.flush().await?;
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        match rewrite(text.trim_end()) {
            Some(mut changed) => {
                changed.push('\n');
                to.write_all(changed.as_bytes()).await?;
            }
            None => to.write_all(&line).await?,
        }
        to.flush().await?;
    }
}

/// `input` and `output` (the host's stdio) behind a pair rmcp serves on, every line
/// passing through `wire`.
pub(crate) fn interpose(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
    wire: &Arc<Wire>,
) -> (tokio::io::DuplexStream, tokio::io::DuplexStream) {
    let (to_rmcp, rmcp_reads) = tokio::io::duplex(64 * 1024);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(64 * 1024);
    let inbound = Arc::clone(wire);
    tokio::spawn(async move {
        let _ = pump(input, to_rmcp, |l| inbound.inbound(l)).await;
    });
    let outbound = Arc::clone(wire);
    tokio::spawn(async move {
        let _ = pump(from_rmcp, output, |l| outbound.outbound(l)).await;
    });
    (rmcp_reads, rmcp_writes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_task_augmented_call_carries_its_task_in_meta() {
        let wire = Wire::new("n".into(), HashSet::new());
        let call = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x","arguments":{},"task":{"ttl":60000}}}"#;
        let out: Json = serde_json::from_str(&wire.inbound(call).unwrap()).unwrap();
        assert_eq!(
            out["params"]["_meta"][LEGACY_TASK_META]["task"]["ttl"],
            60000
        );
        assert_eq!(out["params"]["_meta"][LEGACY_TASK_META]["nonce"], "n");
        assert!(out["params"].get("task").is_none());
        // A plain call, and a 2026-07-28 one, pass untouched.
        let plain = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"task"}}"#;
        assert!(wire.inbound(plain).is_none());
    }

    #[test]
    fn answers_are_shaped_for_2025_11_25() {
        let wire = Wire::new("n".into(), HashSet::from(["a".to_owned()]));
        wire.inbound(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#);
        let init = wire
            .outbound(r#"{"jsonrpc":"2.0","id":0,"result":{"capabilities":{"tools":{}}}}"#)
            .unwrap();
        assert!(
            init.contains(r#""requests":{"tools":{"call":{}}}"#),
            "{init}"
        );
        wire.inbound(r#"{"jsonrpc":"2.0","id":"l","method":"tools/list"}"#);
        let list = wire
            .outbound(r#"{"jsonrpc":"2.0","id":"l","result":{"tools":[{"name":"a"},{"name":"read_result"}]}}"#)
            .unwrap();
        let list: Json = serde_json::from_str(&list).unwrap();
        assert_eq!(
            list["result"]["tools"][0]["execution"]["taskSupport"],
            "optional"
        );
        assert!(list["result"]["tools"][1].get("execution").is_none());
        // The gateway's marked answer becomes a CreateTaskResult; a tool's lookalike not.
        let made = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"_meta":{"toolwire/createdTask":{"nonce":"n","task":{"taskId":"t"}}}}}"#;
        let made: Json = serde_json::from_str(&wire.outbound(made).unwrap()).unwrap();
        assert_eq!(made["result"], json!({"task": {"taskId": "t"}}));
        let forged = r#"{"jsonrpc":"2.0","id":8,"result":{"content":[],"_meta":{"toolwire/createdTask":{"nonce":"x","task":{}}}}}"#;
        assert!(wire.outbound(forged).is_none());
    }

    #[tokio::test]
    async fn a_line_too_long_to_look_at_passes_whole() {
        let wire = Wire::new("n".into(), HashSet::new());
        let long = format!(
            "{{\"method\":\"tools/call\",\"params\":{{\"task\":{{}},\"x\":\"{}\"}}}}\n",
            "a".repeat(usize::try_from(MAX_REWRITTEN_LINE).unwrap() * 2)
        );
        let next = "{\"id\":1}\n";
        let input = format!("{long}{next}");
        let mut out = Vec::new();
        pump(input.as_bytes(), &mut out, |l| wire.inbound(l))
            .await
            .unwrap();
        assert_eq!(out, input.as_bytes());
    }
}
