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
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

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
    /// The tools whose calls may run as tasks (they ask nobody), as the host sees them
    /// now: read at each listing, since the servers behind hand their tools over as
    /// they come up, after the host connected.
    task_tools: TaskTools,
    initialize: Mutex<HashSet<String>>,
    tool_lists: Mutex<HashSet<String>>,
}

/// What gives [`Wire`] the tools whose calls may run as tasks.
type TaskTools = Box<dyn Fn() -> HashSet<String> + Send + Sync>;

impl Wire {
    pub(crate) fn new(
        nonce: String,
        task_tools: impl Fn() -> HashSet<String> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Wire {
            nonce,
            task_tools: Box::new(task_tools),
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
            let task_tools = (self.task_tools)();
            for tool in result.get_mut("tools")?.as_array_mut()? {
                let Some(tool) = tool.as_object_mut() else {
                    continue;
                };
                // read_result answers at once; a call that may ask someone is answered
                // inline (its question goes to the host the usual way).
                let name = tool.get("name").and_then(Json::as_str).unwrap_or_default();
                if task_tools.contains(name) {
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

/// Which way a [`Lines`] rewrites: the host's lines, or the lines to the host.
#[derive(Clone, Copy)]
enum Way {
    In,
    Out,
}

/// One direction of the host's stdio, each line through `wire` as it passes, on the
/// caller's own task: no pump task or in-memory pipe between rmcp and the host (they
/// cost two wake-ups a message, a thread hop each on a busy runtime).
pub(crate) struct Lines<T> {
    inner: T,
    wire: Arc<Wire>,
    way: Way,
    /// Bytes of the current line, not yet complete.
    line: Vec<u8>,
    /// The current line outgrew [`MAX_REWRITTEN_LINE`]: it streams through as it is
    /// until its newline.
    streaming: bool,
    /// Bytes ready to hand on (to the reader, or to `inner` when writing), from `done`.
    ready: Vec<u8>,
    done: usize,
    /// The reading side met the end of its input.
    ended: bool,
    /// Where the reading side reads into: zeroed once, not on every poll (a poll that
    /// finds nothing to read would otherwise clear 8 KB each time).
    chunk: Vec<u8>,
}

impl<T> Lines<T> {
    fn new(inner: T, wire: &Arc<Wire>, way: Way) -> Self {
        Lines {
            inner,
            wire: Arc::clone(wire),
            way,
            line: Vec::new(),
            streaming: false,
            ready: Vec::new(),
            done: 0,
            ended: false,
            chunk: Vec::new(),
        }
    }

    fn rewrite(&self, line: &str) -> Option<String> {
        match self.way {
            Way::In => self.wire.inbound(line),
            Way::Out => self.wire.outbound(line),
        }
    }

    /// Takes `bytes` in: each complete line is rewritten (or kept) into `ready`; a line
    /// too long to look at goes to `ready` as it comes.
    fn take_in(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|&b| b == b'\n');
            let upto = newline.map_or(bytes.len(), |i| i + 1);
            let (part, rest) = bytes.split_at(upto);
            bytes = rest;
            if self.streaming {
                self.ready.extend_from_slice(part);
                self.streaming = newline.is_none();
                continue;
            }
            self.line.extend_from_slice(part);
            if newline.is_some() {
                let line = std::mem::take(&mut self.line);
                let text = String::from_utf8_lossy(&line);
                match self.rewrite(text.trim_end()) {
                    Some(changed) => {
                        self.ready.extend_from_slice(changed.as_bytes());
                        self.ready.push(b'\n');
                    }
                    None => self.ready.extend_from_slice(&line),
                }
                self.line = line;
                self.line.clear();
            } else if self.line.len() as u64 >= MAX_REWRITTEN_LINE {
                self.ready.append(&mut self.line);
                self.streaming = true;
            }
        }
    }

    /// Marks everything in `ready` as handed on.
    fn drained(&mut self) {
        self.ready.clear();
        self.done = 0;
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Lines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.done < this.ready.len() {
                let n = (this.ready.len() - this.done).min(buf.remaining());
                buf.put_slice(&this.ready[this.done..this.done + n]);
                this.done += n;
                if this.done == this.ready.len() {
                    this.drained();
                }
                return Poll::Ready(Ok(()));
            }
            if this.ended {
                // A last line without its newline passes as it is.
                if this.line.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                this.ready.append(&mut this.line);
                continue;
            }
            if this.chunk.is_empty() {
                this.chunk = vec![0u8; 8 * 1024];
            }
            let mut read = ReadBuf::new(&mut this.chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            let n = read.filled().len();
            if n == 0 {
                this.ended = true;
            } else {
                let chunk = std::mem::take(&mut this.chunk);
                this.take_in(&chunk[..n]);
                this.chunk = chunk;
            }
        }
    }
}

impl<W: AsyncWrite + Unpin> Lines<W> {
    /// Writes `ready` to `inner` until it is all written.
    fn poll_hand_on(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while self.done < self.ready.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.ready[self.done..]))?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            self.done += n;
        }
        self.drained();
        Poll::Ready(Ok(()))
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for Lines<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        // What was taken before goes first, so what waits here stays one write's worth.
        ready!(this.poll_hand_on(cx))?;
        this.take_in(buf);
        // Started now; whatever the host's pipe does not take yet goes on the next call.
        if let Poll::Ready(Err(e)) = this.poll_hand_on(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        ready!(this.poll_hand_on(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if !this.line.is_empty() {
            this.ready.append(&mut this.line);
        }
        ready!(this.poll_hand_on(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

/// `input` and `output` (the host's stdio) as rmcp serves on them, every line passing
/// through `wire`.
pub(crate) fn interpose<R, W>(input: R, output: W, wire: &Arc<Wire>) -> (Lines<R>, Lines<W>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    (
        Lines::new(input, wire, Way::In),
        Lines::new(output, wire, Way::Out),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn a_task_augmented_call_carries_its_task_in_meta() {
        let wire = Wire::new("n".into(), HashSet::new);
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
        let wire = Wire::new("n".into(), || HashSet::from(["a".to_owned()]));
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
    async fn lines_read_through_are_rewritten_and_the_rest_kept_byte_for_byte() {
        let wire = Wire::new("n".into(), HashSet::new);
        let task = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x","task":{"ttl":1}}}"#;
        let plain = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\r\n";
        let input = format!("{task}\n{plain}no newline at the end");
        let (mut reader, _) = interpose(input.as_bytes(), Vec::new(), &wire);
        let mut out = String::new();
        reader.read_to_string(&mut out).await.unwrap();
        let mut lines = out.split_inclusive('\n');
        let first: Json = serde_json::from_str(lines.next().unwrap()).unwrap();
        assert_eq!(first["params"]["_meta"][LEGACY_TASK_META]["task"]["ttl"], 1);
        assert_eq!(lines.next(), Some(plain));
        assert_eq!(lines.next(), Some("no newline at the end"));
    }

    #[tokio::test]
    async fn a_line_too_long_to_look_at_passes_whole() {
        let wire = Wire::new("n".into(), HashSet::new);
        let long = format!(
            "{{\"method\":\"tools/call\",\"params\":{{\"task\":{{}},\"x\":\"{}\"}}}}\n",
            "a".repeat(usize::try_from(MAX_REWRITTEN_LINE).unwrap() * 2)
        );
        let next = "{\"id\":1}\n";
        let input = format!("{long}{next}");
        // Read through, in pieces as a pipe gives them.
        let (mut reader, _) = interpose(input.as_bytes(), Vec::new(), &wire);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, input.as_bytes());
        // And written through, in uneven pieces.
        let (_, mut writer) = interpose(&b""[..], Vec::new(), &wire);
        for piece in input.as_bytes().chunks(7_777) {
            writer.write_all(piece).await.unwrap();
        }
        writer.shutdown().await.unwrap();
        assert_eq!(writer.inner, input.as_bytes());
    }
}
