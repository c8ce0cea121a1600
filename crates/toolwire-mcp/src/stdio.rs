//! The stdio transport of a local MCP server: rmcp's line transport, except that an
//! answer to a `tools/call` is parsed once, straight into JSON, instead of into each of
//! rmcp's twenty result types in turn (its untagged `ServerResult`) and then back into
//! JSON for normalizing.

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use rmcp::RoleClient;
use rmcp::model::{
    ClientRequest, CustomResult, JsonRpcMessage, JsonRpcResponse, JsonRpcVersion2_0, RequestId,
    ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH};
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader, ReadBuf};

/// `tools/call` ids remembered at once. An id whose answer never comes (the call was
/// cancelled) stays until the set is full, and is then forgotten with the rest: an answer
/// whose id is not known only takes the slower, general parse.
const MAX_CALLS: usize = 1024;

/// rmcp's stdio transport over a child's pipes, with the `tools/call` fast path. Every
/// other line (requests, notifications, errors, answers to anything else, and anything
/// malformed) is handed to rmcp's own transport, so it is read exactly as rmcp reads it.
pub(crate) struct Stdio<R: AsyncRead, W: AsyncWrite> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Set once a line longer than the limit was dropped, until its end is seen.
    discarding: bool,
    /// rmcp's transport: it writes every message, and parses every line the fast path
    /// does not take, read from `feed`.
    rmcp: AsyncRwTransport<RoleClient, Feed, W>,
    feed: Feed,
    /// The ids of `tools/call` requests sent and not yet answered.
    calls: HashSet<RequestId>,
    /// The child, killed when the transport is dropped (`kill_on_drop`).
    child: Option<tokio::process::Child>,
}

impl<R, W> Stdio<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub(crate) fn new(read: R, write: W, child: Option<tokio::process::Child>) -> Self {
        let feed = Feed::default();
        Stdio {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            rmcp: AsyncRwTransport::new_client(feed.clone(), write),
            feed,
            calls: HashSet::new(),
            child,
        }
    }

    /// The next whole line into `self.line`, at most [`DEFAULT_MAX_LINE_LENGTH`] bytes (a
    /// longer one is dropped, as rmcp drops it). False at the end of the stream.
    /// Cancellation-safe: a partial line stays in `self.line` for the next call.
    async fn read_line(&mut self) -> std::io::Result<bool> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(false);
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |at| at + 1);
            let was_discarding = self.discarding;
            if self.discarding {
                self.discarding = newline.is_none();
            } else if self.line.len().saturating_add(take) > DEFAULT_MAX_LINE_LENGTH {
                self.line.clear();
                self.discarding = newline.is_none();
            } else {
                self.line.extend_from_slice(&available[..take]);
            }
            self.read.consume(take);
            if newline.is_some() && !was_discarding && !self.line.is_empty() {
                return Ok(true);
            }
            if newline.is_some() && was_discarding {
                self.line.clear();
            }
        }
    }

    /// A line that answers a `tools/call` in flight, as rmcp's message with the result
    /// as JSON (`CustomResult`), keys in the server's order.
    fn call_answer(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        if self.calls.is_empty() {
            return None;
        }
        let answer: Answer = serde_json::from_slice(trimmed(&self.line)).ok()?;
        if !self.calls.remove(&answer.id) {
            return None;
        }
        Some(JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: answer.id,
            result: ServerResult::CustomResult(CustomResult(answer.result)),
        }))
    }
}

/// A JSON-RPC answer with its result still JSON. Any other key (`method`, `params`,
/// `error`) fails the parse at that key, before its value is read, and leaves the line
/// to rmcp: a notification costs the fast path a few bytes, not a second parse.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    result: serde_json::Value,
}

/// A line without its newline, carriage return or byte order mark.
fn trimmed(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

impl<R, W> Transport<RoleClient> for Stdio<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(request) = &item {
            let is_call = match &request.request {
                ClientRequest::CallToolRequest(_) => true,
                ClientRequest::CustomRequest(custom) => custom.method == "tools/call",
                _ => false,
            };
            if is_call {
                if self.calls.len() >= MAX_CALLS {
                    self.calls.clear();
                }
                self.calls.insert(request.id.clone());
            }
        }
        self.rmcp.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.read_line().await {
                Ok(true) => {}
                // The end of the stream or a broken pipe: the service loop ends, and the
                // connection's error says the server stopped.
                Ok(false) | Err(_) => return None,
            }
            if let Some(answer) = self.call_answer() {
                self.line.clear();
                return Some(answer);
            }
            // Everything else, rmcp reads: its compatibility rules, and its answer to a
            // message it cannot read, are kept. It reads the one line and then the end of
            // the feed, where it stops.
            self.feed.put(&mut self.line);
            if let Some(message) = self.rmcp.receive().await {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.rmcp.close().await?;
        if let Some(mut child) = self.child.take() {
            // The MCP stdio shutdown: stdin closed and a moment to exit, then SIGTERM and
            // another moment (a server may save its state on it), then killed.
            let moment = std::time::Duration::from_secs(3);
            if tokio::time::timeout(moment, child.wait()).await.is_ok() {
                return Ok(());
            }
            if let Some(pid) = child.id().and_then(|id| i32::try_from(id).ok()) {
                let pid = nix::unistd::Pid::from_raw(pid);
                if nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).is_ok()
                    && tokio::time::timeout(moment, child.wait()).await.is_ok()
                {
                    return Ok(());
                }
            }
            child.kill().await?;
        }
        Ok(())
    }
}

/// One line at a time for rmcp's transport to read, then the end of the stream.
#[derive(Clone, Default)]
struct Feed(Arc<Mutex<(Vec<u8>, usize)>>);

impl Feed {
    /// Hands `line` over (its buffer is swapped, not copied) and leaves `line` empty.
    fn put(&self, line: &mut Vec<u8>) {
        if !line.ends_with(b"\n") {
            line.push(b'\n');
        }
        if let Ok(mut feed) = self.0.lock() {
            std::mem::swap(&mut feed.0, line);
            feed.1 = 0;
        }
        line.clear();
    }
}

impl AsyncRead for Feed {
    fn poll_read(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if let Ok(mut feed) = self.0.lock() {
            let (bytes, at) = &mut *feed;
            let rest = &bytes[(*at).min(bytes.len())..];
            let n = rest.len().min(buf.remaining());
            buf.put_slice(&rest[..n]);
            *at += n;
        }
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolRequest, CallToolRequestParams, ServerNotification};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::*;

    /// A server that does not stop when its stdin closes is sent SIGTERM before it is
    /// killed: its handler runs (it could save its state), and it is not killed.
    #[tokio::test]
    async fn a_server_that_outlives_its_stdin_gets_sigterm_before_a_kill() {
        let dir = tempfile::tempdir().unwrap();
        let mark = dir.path().join("term");
        let script = format!(
            "trap 'echo term > {}; exit 0' TERM; while :; do sleep 0.1; done",
            mark.display()
        );
        let mut child = tokio::process::Command::new("sh")
            .args(["-c", &script])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
        let mut transport = Stdio::new(stdout, stdin, Some(child));
        let started = std::time::Instant::now();
        transport.close().await.unwrap();
        assert_eq!(std::fs::read_to_string(&mark).unwrap().trim(), "term");
        assert!(started.elapsed() < std::time::Duration::from_secs(6));
    }

    /// A `tools/call` answer comes as the server's JSON, keys in its order; a notification,
    /// garbage, and an answer to an unknown id still go through rmcp as before.
    #[tokio::test]
    async fn a_call_answer_is_json_in_the_servers_order_and_the_rest_is_rmcps() {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (client_read, client_write) = tokio::io::split(client);
        let (server_read, mut server_write) = tokio::io::split(server);
        let mut transport = Stdio::new(client_read, client_write, None);

        let call = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new("echo"),
        ));
        transport
            .send(JsonRpcMessage::request(call, RequestId::Number(7)))
            .await
            .unwrap();
        let mut sent = String::new();
        let mut server_read = BufReader::new(server_read);
        server_read.read_line(&mut sent).await.unwrap();
        assert!(sent.contains("\"tools/call\""), "{sent}");

        server_write
            .write_all(
                b"not json\n\
                  {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\
                  {\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}\n\
                  {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"z\":1,\"content\":[],\"a\":2}}\n",
            )
            .await
            .unwrap();

        let progress = transport.receive().await.unwrap();
        assert!(
            matches!(
                progress,
                JsonRpcMessage::Notification(ref n)
                    if matches!(n.notification, ServerNotification::ProgressNotification(_))
            ),
            "{progress:?}"
        );
        // Not a call in flight: typed by rmcp.
        let other = transport.receive().await.unwrap();
        assert!(
            matches!(other, JsonRpcMessage::Response(ref r) if !matches!(r.result, ServerResult::CustomResult(_))),
            "{other:?}"
        );
        let answer = transport.receive().await.unwrap();
        let JsonRpcMessage::Response(JsonRpcResponse {
            id,
            result: ServerResult::CustomResult(CustomResult(json)),
            ..
        }) = answer
        else {
            panic!("not a call's answer as JSON: {answer:?}");
        };
        assert_eq!(id, RequestId::Number(7));
        assert_eq!(json.to_string(), r#"{"z":1,"content":[],"a":2}"#);
    }

    /// A line past the limit is dropped without being kept whole, and the next one read.
    #[tokio::test]
    async fn an_oversized_line_is_dropped_and_the_next_read() {
        let (client, mut server) = tokio::io::duplex(64 * 1024);
        let (client_read, client_write) = tokio::io::split(client);
        let mut transport = Stdio::new(client_read, client_write, None);
        let writer = tokio::spawn(async move {
            let chunk = vec![b'x'; 1024 * 1024];
            for _ in 0..(DEFAULT_MAX_LINE_LENGTH / chunk.len() + 2) {
                server.write_all(&chunk).await.unwrap();
            }
            server
                .write_all(
                    b"\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n",
                )
                .await
                .unwrap();
            server
        });
        let next = transport.receive().await.unwrap();
        assert!(matches!(next, JsonRpcMessage::Notification(_)), "{next:?}");
        assert!(transport.line.capacity() <= DEFAULT_MAX_LINE_LENGTH + 64 * 1024);
        drop(writer.await.unwrap());
        assert!(transport.receive().await.is_none(), "the stream ended");
    }
}
