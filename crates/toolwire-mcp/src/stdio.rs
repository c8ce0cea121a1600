//! MCP's line transport over a pair of pipes, for either side: rmcp's own, except that
//! the one message that comes on every tool call is parsed once, straight into what is
//! used, and the client's `tools/call` is written in one pass. toolwire as a client (a
//! local MCP server's stdio) reads an answer to its `tools/call` straight into JSON,
//! instead of into each of rmcp's twenty result types in turn (its untagged
//! `ServerResult`) and then back into JSON for normalizing, and writes the call itself
//! without rmcp's detour through a copy of its params as JSON; toolwire as a server (the
//! gateway, on its host's stdio) reads a host's `tools/call` straight into its request,
//! instead of trying rmcp's untagged message and request types in turn. Every other line
//! goes to rmcp's own parser, and every other message is written as rmcp writes it.

use std::collections::{HashMap, HashSet};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequest, CallToolRequestMethod, CallToolRequestParams, ClientRequest, CustomResult,
    JsonObject, JsonRpcMessage, JsonRpcRequest, JsonRpcResponse, JsonRpcVersion2_0, MetaObject,
    NumberOrString, ProgressToken, RequestId, RequestMetaObject, ServerResult,
};
use rmcp::model::{ClientNotification, GetExtensions, GetMeta};
use rmcp::service::{
    Peer, RequestContext, RxJsonRpcMessage, ServiceError, ServiceRole, TxJsonRpcMessage,
};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH};
use rmcp::{RoleClient, RoleServer};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, ReadBuf};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// `tools/call` ids remembered at once. An id whose answer never comes (the call was
/// cancelled) stays until the set is full, and is then forgotten with the rest: an answer
/// whose id is not known only takes the slower, general parse.
const MAX_CALLS: usize = 1024;

/// What one side reads faster than rmcp.
pub(crate) trait FastPath<Role: ServiceRole>: Send {
    /// Notes a message on its way out.
    fn sent(&mut self, _item: &TxJsonRpcMessage<Role>) {}
    /// Appends `item`'s line (without its newline) to `out`, byte for byte what rmcp's
    /// serialization writes, when this path knows the message; false (with `out` left
    /// as it was) leaves it to rmcp's.
    fn write(&mut self, _item: &TxJsonRpcMessage<Role>, _out: &mut Vec<u8>) -> bool {
        false
    }
    /// The message `line` (without its newline) is, when this path takes it; `None`
    /// leaves the line to rmcp.
    fn read(&mut self, line: &[u8]) -> Option<RxJsonRpcMessage<Role>>;
    /// `message`, read (by either parse), unless this path delivers it elsewhere itself.
    fn claim(&mut self, message: RxJsonRpcMessage<Role>) -> Option<RxJsonRpcMessage<Role>> {
        Some(message)
    }
    /// The stream ended: nothing more will be read.
    fn closed(&mut self) {}
}

/// rmcp's line transport with a [`FastPath`]. Every line the fast path does not take
/// (requests, notifications, errors, answers to anything else, and anything malformed)
/// is handed to rmcp's own transport, so it is read exactly as rmcp reads it; every
/// message it does not write is serialized as rmcp's codec does it (`serde_json`, then a
/// newline).
pub(crate) struct Lines<Role: ServiceRole, P, R: AsyncRead, W: AsyncWrite> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Set once a line longer than the limit was dropped, until its end is seen.
    discarding: bool,
    /// What is known of the line being dropped: its size and whom it answers.
    skim: Skim,
    /// A line dropped whole, once its end was seen: said to the peer's request it
    /// answered, so the request ends at once instead of at its timeout.
    dropped: Option<Skim>,
    /// rmcp's transport: it parses every line the fast path does not take, read from
    /// `feed`. What it writes itself (its answer to a message it could not read) lands
    /// in `captured` and is passed on to `write`.
    rmcp: AsyncRwTransport<Role, Feed, Captured>,
    feed: Feed,
    captured: Captured,
    /// Where every message is written.
    pipe: Pipe<W>,
    fast: P,
    /// The child, killed when the transport is dropped (`kill_on_drop`).
    child: Option<tokio::process::Child>,
}

/// A local MCP server's stdio, as toolwire's client reads it.
pub(crate) type Stdio<R, W> = Lines<RoleClient, CallAnswers, R, W>;

/// The gateway's transport on a host's pipes (or anything read and written line by line):
/// rmcp's, with a host's `tools/call` read in one parse, and answered beside rmcp's loop
/// once `calls` is started.
pub fn host_transport<R, W>(
    read: R,
    write: W,
    calls: Option<HostCalls>,
) -> impl Transport<RoleServer> + use<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let mut lines = Lines::with(read, write, None, CallRequests::default());
    let pipe: Arc<dyn LineOut> = Arc::new(lines.pipe.clone());
    lines.fast.direct = calls.map(|calls| (calls, pipe));
    lines
}

impl<R, W> Stdio<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// The transport over a server's pipes; an answer to a call that asked `raw` for its
    /// text is left there as text.
    pub(crate) fn new(
        read: R,
        write: W,
        child: Option<tokio::process::Child>,
        raw: Arc<RawAnswers>,
    ) -> Self {
        Lines::with(
            read,
            write,
            child,
            CallAnswers {
                calls: HashSet::new(),
                raw: Some(raw),
            },
        )
    }

    /// The calls toolwire writes itself through this transport's pipe, answered as
    /// this transport reads them (made before rmcp takes the transport).
    pub(crate) fn direct_calls(&self) -> Option<DirectCalls> {
        Some(DirectCalls {
            pipe: Arc::new(self.pipe.clone()),
            answers: Arc::clone(self.fast.raw.as_ref()?),
            next: AtomicU64::new(1),
        })
    }
}

impl<Role, P, R, W> Lines<Role, P, R, W>
where
    Role: ServiceRole,
    P: FastPath<Role>,
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    fn with(read: R, write: W, child: Option<tokio::process::Child>, fast: P) -> Self {
        let feed = Feed::default();
        let captured = Captured::default();
        Lines {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            skim: Skim::default(),
            dropped: None,
            rmcp: AsyncRwTransport::new(feed.clone(), captured.clone()),
            feed,
            captured,
            pipe: Pipe {
                write: Arc::new(tokio::sync::Mutex::new(Some(write))),
                waiting: Arc::new(AtomicUsize::new(0)),
            },
            fast,
            child,
        }
    }

    /// What rmcp wrote while it read (its answer to a line it could not read), passed
    /// on to the pipe.
    async fn pass_on_captured(&mut self) -> std::io::Result<()> {
        let bytes = self.captured.take();
        if bytes.is_empty() {
            return Ok(());
        }
        write_line(&self.pipe.write, bytes).await
    }

    /// The next whole line into `self.line`, at most [`DEFAULT_MAX_LINE_LENGTH`] bytes (a
    /// longer one is dropped, as rmcp drops it, and noted in `self.dropped` once its end
    /// is read: true with `self.line` empty). False at the end of the stream.
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
                self.skim.feed(&available[..take]);
                self.discarding = newline.is_none();
            } else if self.line.len().saturating_add(take) > DEFAULT_MAX_LINE_LENGTH {
                // Read on to its end without keeping it, only to learn its size and id.
                self.skim = Skim::default();
                self.skim.feed(&self.line);
                self.skim.feed(&available[..take]);
                self.line.clear();
                self.discarding = newline.is_none();
            } else {
                self.line.extend_from_slice(&available[..take]);
            }
            let dropped_whole = newline.is_some() && (was_discarding || self.skim.bytes > 0);
            self.read.consume(take);
            if dropped_whole {
                self.line.clear();
                self.dropped = Some(std::mem::take(&mut self.skim));
                return Ok(true);
            }
            if newline.is_some() && !self.line.is_empty() {
                return Ok(true);
            }
        }
    }
}

/// The pipe every message is written to, one whole line at a time (the lock is held for
/// a line, in the order sends were made), shared by the transport and the calls toolwire
/// writes itself ([`DirectCalls`]).
struct Pipe<W> {
    /// `None` once closed.
    write: Arc<tokio::sync::Mutex<Option<W>>>,
    /// Lines sent that wait for the lock: while any does, a new line waits behind them
    /// instead of being written at once, so lines go out in the order they were sent.
    waiting: Arc<AtomicUsize>,
}

impl<W> Clone for Pipe<W> {
    fn clone(&self) -> Self {
        Pipe {
            write: Arc::clone(&self.write),
            waiting: Arc::clone(&self.waiting),
        }
    }
}

impl<W: AsyncWrite + Send + Unpin + 'static> Pipe<W> {
    /// `bytes` written now, as far as the pipe takes them without waiting, when nothing
    /// else holds the pipe and no line sent before waits for it. rmcp runs the future
    /// `send` returns on a task of its own, which on a one-thread runtime runs only after
    /// every task woken before it: a line written here is on its way to the peer at
    /// once, instead of after whatever else the call woke (its events, its storing).
    fn start_write(&self, bytes: Vec<u8>) -> Started<W> {
        if self.waiting.load(Ordering::Acquire) == 0
            && let Ok(mut guard) = Arc::clone(&self.write).try_lock_owned()
        {
            let Some(pipe) = guard.as_mut() else {
                return Started::Done(Err(closed()));
            };
            // Polled once without a waker to keep: what is not ready now is polled again,
            // with the task's own waker, by the future.
            let mut cx = Context::from_waker(std::task::Waker::noop());
            let mut at = 0;
            while at < bytes.len() {
                match Pin::new(&mut *pipe).poll_write(&mut cx, &bytes[at..]) {
                    Poll::Ready(Ok(0)) => {
                        return Started::Done(Err(std::io::ErrorKind::WriteZero.into()));
                    }
                    Poll::Ready(Ok(n)) => at += n,
                    Poll::Ready(Err(e)) => return Started::Done(Err(e)),
                    Poll::Pending => return Started::Partly { guard, bytes, at },
                }
            }
            return match Pin::new(&mut *pipe).poll_flush(&mut cx) {
                Poll::Ready(flushed) => Started::Done(flushed),
                Poll::Pending => Started::Partly { guard, bytes, at },
            };
        }
        Started::Queued {
            write: Arc::clone(&self.write),
            bytes,
            queued: Queued::new(&self.waiting),
        }
    }
}

/// Writes whole lines to a server's stdin, whatever its type.
pub(crate) trait LineOut: Send + Sync {
    /// Writes `bytes` (one or more whole lines), after every line sent before them.
    fn send_line(&self, bytes: Vec<u8>) -> BoxFuture<'static, std::io::Result<()>>;
}

impl<W: AsyncWrite + Send + Unpin + 'static> LineOut for Pipe<W> {
    fn send_line(&self, bytes: Vec<u8>) -> BoxFuture<'static, std::io::Result<()>> {
        Box::pin(self.start_write(bytes).finish())
    }
}

/// The client's fast path: answers to the `tools/call`s it sent, as rmcp's message with
/// the result as JSON (`CustomResult`), keys in the server's order; or, for a call that
/// asked for its answer's text ([`RawAnswers::want`]), with a `null` result and the text
/// left in [`RawAnswers`], not parsed into a tree at all.
#[derive(Default)]
pub(crate) struct CallAnswers {
    /// The ids of `tools/call` requests sent and not yet answered.
    calls: HashSet<RequestId>,
    raw: Option<Arc<RawAnswers>>,
}

/// Answers to `tools/call`s kept as the JSON text they came in, for the calls that read
/// the text themselves (toolwire's MCP tool reads a plain result straight into its
/// typed form, and keeps that text as the payload received): parsing it into a JSON tree
/// first, to read it again from the tree, was a fifth of an echo call's work. Also where
/// the calls toolwire writes itself ([`DirectCalls`]) wait for their answers.
///
/// A call asks for its id ([`RawAnswers::want`] after rmcp sent it, or as
/// [`DirectCalls::call`] writes it) and gives it up when it ends ([`RawAnswers::forget`]),
/// so an entry lives only as long as its call: an answer nobody asked for (the call was
/// dropped, or the answer won the race against the ask) is parsed as before and reaches
/// rmcp whole.
#[derive(Default)]
pub(crate) struct RawAnswers(Mutex<Slots>);

#[derive(Default)]
struct Slots {
    calls: HashMap<RequestId, Slot>,
    /// Set when the stream ended: no answer comes any more.
    closed: bool,
}

#[derive(Default)]
struct Slot {
    /// The answer's text, once it came as text.
    text: Option<String>,
    /// Where a direct call's answer goes (its text is left in `text` first).
    direct: Option<Answered>,
}

/// A direct call's answer, as rmcp hands a request's to its caller.
type Answered = oneshot::Sender<Result<ServerResult, ServiceError>>;

/// Where a direct call's answer comes.
pub(crate) type AnswerRx = oneshot::Receiver<Result<ServerResult, ServiceError>>;

impl RawAnswers {
    /// The answer to `id` is wanted as text.
    pub(crate) fn want(&self, id: &RequestId) {
        if let Ok(mut slots) = self.0.lock() {
            slots.calls.insert(id.clone(), Slot::default());
        }
    }

    /// The text of the answer to `id`, when it came as text; the entry is gone after.
    pub(crate) fn take(&self, id: &RequestId) -> Option<String> {
        self.0.lock().ok()?.calls.remove(id)?.text
    }

    /// The answer to `id` is no longer wanted (its call ended).
    pub(crate) fn forget(&self, id: &RequestId) {
        if let Ok(mut slots) = self.0.lock() {
            slots.calls.remove(id);
        }
    }

    /// Keeps `text` as the answer to `id` when it is wanted (and not answered yet).
    fn put(&self, id: &RequestId, text: &str) -> bool {
        let Ok(mut slots) = self.0.lock() else {
            return false;
        };
        match slots.calls.get_mut(id) {
            Some(slot) if slot.text.is_none() => {
                slot.text = Some(text.to_owned());
                true
            }
            _ => false,
        }
    }

    /// Where the answer to `id` goes, when it is a direct call's (taken: it is answered
    /// once).
    fn direct_answer(&self, id: &RequestId) -> Option<Answered> {
        self.0.lock().ok()?.calls.get_mut(id)?.direct.take()
    }

    /// A direct call's slot, or `None` once the stream has ended.
    fn expect(&self, id: &RequestId) -> Option<AnswerRx> {
        let mut slots = self.0.lock().ok()?;
        if slots.closed {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        slots.calls.insert(
            id.clone(),
            Slot {
                text: None,
                direct: Some(tx),
            },
        );
        Some(rx)
    }

    /// The stream ended: every direct call waiting hears so (its answer's sender is
    /// dropped), and none is written any more.
    fn close(&self) {
        if let Ok(mut slots) = self.0.lock() {
            slots.closed = true;
            for slot in slots.calls.values_mut() {
                slot.direct = None;
            }
        }
    }
}

/// What the id of a call toolwire writes itself starts with. A string: rmcp numbers its
/// own requests, so the two never meet, and a server that keeps ids in 32 bits (or
/// reads numbers as doubles) gets no number it cannot hold. JSON-RPC and MCP allow either.
const DIRECT_ID_PREFIX: &str = "toolwire-";

/// `tools/call`s toolwire writes to a stdio server itself, beside rmcp's service loop:
/// a plain call (no task, no retry of a question) needs none of the loop's bookkeeping,
/// its task per request or its channels, and its answer goes straight to the call from
/// the transport that read it (as text, see [`RawAnswers`]). Everything else the server
/// and toolwire say to each other still goes through rmcp: its progress and questions
/// (routed by the call's progress token, as for any call), the call's cancellation,
/// every other request. Lines are written through the same pipe as rmcp's, in order.
pub(crate) struct DirectCalls {
    pipe: Arc<dyn LineOut>,
    answers: Arc<RawAnswers>,
    next: AtomicU64,
}

impl DirectCalls {
    /// A new call's id and its progress token (the same string), known before it is
    /// written: its progress is routed from its first report.
    pub(crate) fn next(&self) -> (RequestId, ProgressToken) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        // Written piecewise, not by `format!`, whose machinery cost ~900 instructions a
        // call here.
        let mut text = String::with_capacity(DIRECT_ID_PREFIX.len() + 20);
        text.push_str(DIRECT_ID_PREFIX);
        text.push_str(itoa::Buffer::new().format(n));
        let id: Arc<str> = text.into();
        (
            RequestId::String(Arc::clone(&id)),
            ProgressToken(NumberOrString::String(id)),
        )
    }

    /// Writes `tools/call` `id` (from [`DirectCalls::next`]) of `name` with `arguments`
    /// and `meta` (its `_meta`, to which `token` is added); returns where its answer
    /// comes. An error when the stream has ended or the pipe is closed.
    pub(crate) async fn call(
        &self,
        (id, token): (&RequestId, &ProgressToken),
        name: &str,
        arguments: Option<&JsonObject>,
        mut meta: JsonObject,
    ) -> std::io::Result<AnswerRx> {
        let token = serde_json::to_value(token)?;
        meta.insert("progressToken".to_owned(), token);
        let line = CallOut {
            jsonrpc: JsonRpcVersion2_0,
            id,
            method: CallToolRequestMethod,
            params: CallParamsOut {
                meta: Some(&meta),
                name,
                arguments,
                request_state: None,
            },
        };
        let bytes = line_of(&line)?;
        let rx = self.answers.expect(id).ok_or_else(closed)?;
        if let Err(e) = self.pipe.send_line(bytes).await {
            self.answers.forget(id);
            return Err(e);
        }
        Ok(rx)
    }
}

impl FastPath<RoleClient> for CallAnswers {
    fn sent(&mut self, item: &TxJsonRpcMessage<RoleClient>) {
        if let JsonRpcMessage::Request(request) = item {
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
    }

    fn write(&mut self, item: &TxJsonRpcMessage<RoleClient>, out: &mut Vec<u8>) -> bool {
        let JsonRpcMessage::Request(JsonRpcRequest {
            id,
            request: ClientRequest::CallToolRequest(call),
            ..
        }) = item
        else {
            return false;
        };
        let Some(line) = CallOut::of(id, call) else {
            return false;
        };
        let at = out.len();
        if serde_json::to_writer(&mut *out, &line).is_err() {
            out.truncate(at);
            return false;
        }
        true
    }

    fn read(&mut self, line: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
        // A notification fails the parse at its `method`, before any value is read.
        let answer: Answer = serde_json::from_slice(line).ok()?;
        let text = answer.result.get();
        let result = match &self.raw {
            Some(raw) if raw.put(&answer.id, text) => serde_json::Value::Null,
            _ if self.calls.contains(&answer.id) => serde_json::from_str(text).ok()?,
            _ => return None,
        };
        self.calls.remove(&answer.id);
        Some(JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: answer.id,
            result: ServerResult::CustomResult(CustomResult(result)),
        }))
    }

    fn claim(
        &mut self,
        message: RxJsonRpcMessage<RoleClient>,
    ) -> Option<RxJsonRpcMessage<RoleClient>> {
        let Some(raw) = &self.raw else {
            return Some(message);
        };
        let (to, answer) = match message {
            JsonRpcMessage::Response(response) => match raw.direct_answer(&response.id) {
                Some(to) => (to, Ok(response.result)),
                None => return Some(JsonRpcMessage::Response(response)),
            },
            JsonRpcMessage::Error(error) => {
                match error.id.as_ref().and_then(|id| raw.direct_answer(id)) {
                    Some(to) => (to, Err(ServiceError::McpError(error.error))),
                    None => return Some(JsonRpcMessage::Error(error)),
                }
            }
            other => return Some(other),
        };
        // The call may be gone already (cancelled): its answer is dropped with it.
        let _ = to.send(answer);
        None
    }

    fn closed(&mut self) {
        if let Some(raw) = &self.raw {
            raw.close();
        }
    }
}

impl Drop for CallAnswers {
    fn drop(&mut self) {
        // The service loop ended without the stream's end (the connection was dropped):
        // its direct calls hear so too.
        self.closed();
    }
}

/// A `tools/call` request as rmcp writes it, borrowed from the request. rmcp serializes a
/// request's params to a JSON value first (a copy of the arguments), to merge the
/// `_meta` it keeps in the request's extensions with any in the params, and then writes
/// `_meta` first and the params' other fields after it, in their order. For a call with
/// no `_meta` in its params, no legacy `MetaObject` and no `inputResponses` (a retry
/// after a server's question: rare, and left to rmcp), that comes to the fields below,
/// written straight from the request.
#[derive(Serialize)]
struct CallOut<'a> {
    jsonrpc: JsonRpcVersion2_0,
    id: &'a RequestId,
    method: CallToolRequestMethod,
    params: CallParamsOut<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CallParamsOut<'a> {
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<&'a JsonObject>,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<&'a JsonObject>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_state: Option<&'a str>,
}

impl<'a> CallOut<'a> {
    /// The call's line, when it is one this path writes as rmcp would.
    fn of(id: &'a RequestId, call: &'a CallToolRequest) -> Option<Self> {
        let params = &call.params;
        if params.meta.is_some()
            || params.input_responses.is_some()
            || call.extensions.get::<MetaObject>().is_some()
        {
            return None;
        }
        let meta = call
            .extensions
            .get::<RequestMetaObject>()
            .map(|meta| &meta.0.0);
        Some(CallOut {
            jsonrpc: JsonRpcVersion2_0,
            id,
            method: CallToolRequestMethod,
            params: CallParamsOut {
                meta,
                name: &params.name,
                arguments: params.arguments.as_ref(),
                request_state: params.request_state.as_deref(),
            },
        })
    }
}

/// A JSON-RPC answer with its result still JSON. Any other key (`method`, `params`,
/// `error`) fails the parse at that key, before its value is read, and leaves the line
/// to rmcp: a notification costs the fast path a few bytes, not a second parse.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer<'a> {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: JsonRpcVersion2_0,
    #[serde(deserialize_with = "request_id")]
    id: RequestId,
    /// Checked to be one JSON value, and no more: parsed only when nobody wants the text.
    #[serde(borrow)]
    result: &'a serde_json::value::RawValue,
}

/// The server's fast path: a host's `tools/call`, as rmcp's request; answered beside
/// rmcp's loop when the host transport has [`HostCalls`] (and through `pipe`).
#[derive(Default)]
pub(crate) struct CallRequests {
    direct: Option<(HostCalls, Arc<dyn LineOut>)>,
}

impl FastPath<RoleServer> for CallRequests {
    fn read(&mut self, line: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
        let call: CallLine = serde_json::from_slice(line).ok()?;
        let mut params = call.params;
        // Where rmcp's own parse puts a request's `_meta`: in the request's extensions,
        // not in its params.
        let meta = params.meta.take();
        let mut request = CallToolRequest::new(params);
        if let Some(meta) = meta {
            request.extensions.insert(meta);
        }
        Some(JsonRpcMessage::request(
            ClientRequest::CallToolRequest(request),
            call.id,
        ))
    }

    fn claim(
        &mut self,
        message: RxJsonRpcMessage<RoleServer>,
    ) -> Option<RxJsonRpcMessage<RoleServer>> {
        let Some((calls, pipe)) = &self.direct else {
            return Some(message);
        };
        let Some(started) = calls.0.started.get() else {
            return Some(message);
        };
        match message {
            JsonRpcMessage::Request(request)
                if matches!(request.request, ClientRequest::CallToolRequest(_)) =>
            {
                calls.answer(started, request.id, request.request, pipe);
                None
            }
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    calls.cancel(id);
                }
                // rmcp sees it too: it cancels what is its own.
                Some(JsonRpcMessage::Notification(notification))
            }
            other => Some(other),
        }
    }

    fn closed(&mut self) {
        if let Some((calls, _)) = &self.direct {
            calls.cancel_all();
        }
    }
}

/// A host's plain `tools/call` answered beside rmcp's service loop (the gateway's, on
/// its stdio): the call's request handler is spawned straight from the transport that
/// read it, with the context rmcp would give it, and its answer written through the same
/// pipe as rmcp's lines. None of the loop's per-request bookkeeping (its child tokens and
/// pool, a task for the answer's send, the channel back to the loop). A host's
/// `notifications/cancelled` for such a call cancels its context's token, as rmcp's loop
/// does. Everything else the host sends (and every call before [`HostCalls::start`])
/// goes to rmcp.
#[derive(Clone, Default)]
pub struct HostCalls(Arc<HostShared>);

/// What answers a host's request: rmcp's `Service::handle_request`, in effect.
pub type HostHandler = Arc<
    dyn Fn(
            ClientRequest,
            RequestContext<RoleServer>,
        ) -> BoxFuture<'static, Result<ServerResult, ErrorData>>
        + Send
        + Sync,
>;

#[derive(Default)]
struct HostShared {
    started: OnceLock<(Peer<RoleServer>, HostHandler)>,
    /// The calls being answered, by the host's request id: cancelled by the host, or all
    /// when the stream ends.
    running: Mutex<HashMap<RequestId, CancellationToken>>,
}

impl std::fmt::Debug for HostCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostCalls")
            .field("started", &self.0.started.get().is_some())
            .finish_non_exhaustive()
    }
}

impl HostCalls {
    /// From now on, `handler` answers the host's plain calls, with `peer` (the running
    /// service's) in their context. Only for a host that initialized on 2025-11-25 or
    /// older: on 2026-07-28 rmcp's loop marks each request's revision for what the
    /// handler does on it (its task-locals), which a call spawned here would not carry.
    /// True when started.
    pub fn start(&self, peer: Peer<RoleServer>, handler: HostHandler) -> bool {
        let initialized = peer
            .peer_info()
            .is_some_and(|info| info.protocol_version.has_initialize());
        initialized && self.0.started.set((peer, handler)).is_ok()
    }

    /// Answers `request`, a `tools/call` the host sent as `id`, on a task of its own, by
    /// the handler `start` was given.
    fn answer(
        &self,
        (peer, handler): &(Peer<RoleServer>, HostHandler),
        id: RequestId,
        mut request: ClientRequest,
        pipe: &Arc<dyn LineOut>,
    ) {
        let ct = CancellationToken::new();
        if let Ok(mut running) = self.0.running.lock() {
            running.insert(id.clone(), ct.clone());
        }
        let mut context = RequestContext::new(id.clone(), peer.clone());
        context.ct = ct;
        // Where rmcp's loop puts them: the request's `_meta` and extensions move to the
        // context.
        std::mem::swap(&mut context.meta, request.get_meta_mut());
        std::mem::swap(&mut context.extensions, request.extensions_mut());
        let answered = handler(request, context);
        let (shared, pipe) = (Arc::clone(&self.0), Arc::clone(pipe));
        tokio::spawn(async move {
            let message: TxJsonRpcMessage<RoleServer> = match answered.await {
                Ok(result) => JsonRpcMessage::response(result, id.clone()),
                Err(error) => JsonRpcMessage::error(error, Some(id.clone())),
            };
            if let Ok(mut running) = shared.running.lock() {
                running.remove(&id);
            }
            let bytes = match line_of(&message) {
                Ok(bytes) => bytes,
                Err(e) => {
                    let error = ErrorData::internal_error(format!("unsendable answer: {e}"), None);
                    let message: TxJsonRpcMessage<RoleServer> =
                        JsonRpcMessage::error(error, Some(id));
                    let Ok(bytes) = line_of(&message) else { return };
                    bytes
                }
            };
            // A pipe that closed took the host with it: nobody is left to tell.
            let _ = pipe.send_line(bytes).await;
        });
    }

    /// The host cancelled call `id`.
    fn cancel(&self, id: &RequestId) {
        if let Some(ct) = self.0.running.lock().ok().and_then(|r| r.get(id).cloned()) {
            ct.cancel();
        }
    }

    /// The stream ended: every call still running is cancelled.
    fn cancel_all(&self) {
        if let Ok(running) = self.0.running.lock() {
            for ct in running.values() {
                ct.cancel();
            }
        }
    }
}

/// A `tools/call` request. Another method fails the parse at its `method`, and any key
/// a request does not have fails it too, leaving the line to rmcp.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallLine {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: JsonRpcVersion2_0,
    #[serde(deserialize_with = "request_id")]
    id: RequestId,
    #[serde(rename = "method")]
    _method: CallToolRequestMethod,
    params: CallToolRequestParams,
}

/// A request's id on the fast paths, read as rmcp reads one (an integer, also in float
/// form when exact, or a string) but straight from the text: rmcp's reader goes through
/// a `serde_json::Value`, a string id then copied twice (~3,500 instructions an answer).
fn request_id<'de, D: serde::Deserializer<'de>>(from: D) -> Result<RequestId, D::Error> {
    struct Id;
    impl serde::de::Visitor<'_> for Id {
        type Value = RequestId;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a number or a string")
        }

        fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<RequestId, E> {
            Ok(RequestId::Number(n))
        }

        fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<RequestId, E> {
            i64::try_from(n)
                .map(RequestId::Number)
                .map_err(|_| E::custom("Number too large for i64"))
        }

        fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<RequestId, E> {
            // As rmcp: `1.0` and `1e2` are integers in float form; 2^53 and beyond
            // cannot say which integer was sent.
            if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
                Ok(RequestId::Number(n as i64))
            } else {
                Err(E::custom("Expected an integer"))
            }
        }

        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<RequestId, E> {
            Ok(RequestId::String(text.into()))
        }
    }
    from.deserialize_any(Id)
}

/// A line without its newline, carriage return or byte order mark.
fn trimmed(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

impl<Role, P, R, W> Transport<Role> for Lines<Role, P, R, W>
where
    Role: ServiceRole,
    P: FastPath<Role>,
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<Role>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.fast.sent(&item);
        // Serialized here, before the future: the message is not kept, only its bytes.
        let mut bytes = Vec::with_capacity(256);
        let encoded = if self.fast.write(&item, &mut bytes) {
            Ok(())
        } else {
            serde_json::to_writer(&mut bytes, &item).map_err(std::io::Error::from)
        };
        bytes.push(b'\n');
        let started = match encoded {
            Ok(()) => self.pipe.start_write(bytes),
            Err(e) => Started::Done(Err(e)),
        };
        started.finish()
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<Role>> {
        loop {
            match self.read_line().await {
                Ok(true) => {}
                // The end of the stream or a broken pipe: the service loop ends, and the
                // connection's error says the peer stopped.
                Ok(false) | Err(_) => {
                    self.fast.closed();
                    return None;
                }
            }
            if let Some(dropped) = self.dropped.take() {
                // An answer too long to read still ends its request, saying why; any
                // other line too long (a request, a notification) is dropped as before.
                if let Some(message) = dropped.as_error().and_then(|m| self.fast.claim(m)) {
                    return Some(message);
                }
                continue;
            }
            if let Some(message) = self.fast.read(trimmed(&self.line)) {
                self.line.clear();
                match self.fast.claim(message) {
                    Some(message) => return Some(message),
                    None => continue,
                }
            }
            // Everything else, rmcp reads: its compatibility rules, and its answer to a
            // message it cannot read, are kept. It reads the one line and then the end of
            // the feed, where it stops.
            self.feed.put(&mut self.line);
            let message = self.rmcp.receive().await;
            if self.pass_on_captured().await.is_err() {
                self.fast.closed();
                return None;
            }
            if let Some(message) = message.and_then(|m| self.fast.claim(m)) {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.rmcp.close().await?;
        // Dropping the pipe closes the server's stdin: its signal to exit.
        drop(self.pipe.write.lock().await.take());
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

/// The key of the `data` of the error that stands for an answer too long to read:
/// `{"bytes": N, "limit": L}`, the answer's size and the limit, in bytes.
pub(crate) const DROPPED_KEY: &str = "toolwire/dropped";

/// What is learnt of a line too long to keep, read byte by byte as it is dropped: its
/// size, and the `id` of the top-level object unless it has a `method` (then it is a
/// request or a notification, not an answer). Nothing of it is kept but the id.
#[derive(Debug, Default)]
struct Skim {
    /// Bytes read, the newline included.
    bytes: usize,
    /// Nesting: 1 inside the top-level object.
    depth: usize,
    in_string: bool,
    escaped: bool,
    part: Part,
    /// The key being read at depth 1 (only the first bytes: `id` and `method` are short).
    key: Vec<u8>,
    /// The value of `id` as read so far, when the key read is `id`.
    value: Option<Vec<u8>>,
    id: Option<Vec<u8>>,
    method: bool,
}

/// Where a [`Skim`] is in the top-level object.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Before a key (or the object's end).
    #[default]
    Key,
    /// Inside a key's string.
    InKey,
    /// After a key, before its colon.
    Colon,
    /// Inside a value.
    Value,
}

/// Longest `id` value kept (a longer one is no id toolwire sent).
const MAX_ID: usize = 256;

impl Skim {
    fn feed(&mut self, bytes: &[u8]) {
        self.bytes = self.bytes.saturating_add(bytes.len());
        for &b in bytes {
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        let top = self.depth == 1;
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if top && self.part == Part::InKey {
                    self.part = Part::Colon;
                    return;
                }
            }
            if top && self.part == Part::InKey {
                if self.key.len() < 8 {
                    self.key.push(b);
                }
            } else {
                self.keep(b);
            }
            return;
        }
        match b {
            b'"' if top && self.part == Part::Key => {
                self.in_string = true;
                self.part = Part::InKey;
                self.key.clear();
            }
            b':' if top && self.part == Part::Colon => {
                self.part = Part::Value;
                match self.key.as_slice() {
                    b"id" => self.value = Some(Vec::new()),
                    b"method" => self.method = true,
                    _ => {}
                }
            }
            b',' if top && self.part == Part::Value => self.end_value(),
            b'}' | b']' if top => {
                if self.part == Part::Value {
                    self.end_value();
                }
                self.depth = 0;
            }
            b'{' | b'[' => {
                self.keep(b);
                self.depth = self.depth.saturating_add(1);
            }
            b'}' | b']' => {
                self.keep(b);
                self.depth = self.depth.saturating_sub(1);
            }
            b'"' => {
                self.keep(b);
                self.in_string = true;
            }
            _ => self.keep(b),
        }
    }

    /// Keeps `b` when it is part of the `id`'s value.
    fn keep(&mut self, b: u8) {
        if self.depth >= 1
            && let Some(value) = &mut self.value
        {
            if value.len() < MAX_ID {
                value.push(b);
            } else {
                // Not an id toolwire would have sent: no answer is made up for it.
                self.value = None;
            }
        }
    }

    fn end_value(&mut self) {
        if let Some(value) = self.value.take() {
            self.id = Some(value);
        }
        self.part = Part::Key;
    }

    /// The error that ends the request this line answered, when it was an answer.
    fn as_error<Req, Resp, Not>(&self) -> Option<JsonRpcMessage<Req, Resp, Not>> {
        if self.method {
            return None;
        }
        let id: RequestId = serde_json::from_slice(self.id.as_deref()?).ok()?;
        // The newline is not part of the message.
        let bytes = self.bytes.saturating_sub(1);
        let error = rmcp::model::ErrorData::internal_error(
            format!(
                "the answer was {}, over the {} limit of one message, so it was dropped unread",
                mib(bytes),
                mib(DEFAULT_MAX_LINE_LENGTH)
            ),
            Some(
                serde_json::json!({DROPPED_KEY: {"bytes": bytes, "limit": DEFAULT_MAX_LINE_LENGTH}}),
            ),
        );
        Some(JsonRpcMessage::Error(rmcp::model::JsonRpcError::new(
            Some(id),
            error,
        )))
    }
}

/// `bytes` in MiB: a whole number as it is (16 MiB), else to a tenth, rounded down
/// (17.3 MiB).
pub(crate) fn mib(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if bytes.is_multiple_of(MIB) {
        return format!("{} MiB", bytes / MIB);
    }
    let tenths = bytes.saturating_mul(10) / MIB;
    format!("{}.{} MiB", tenths / 10, tenths % 10)
}

/// Writes one whole line (or lines) to the pipe and flushes it, as rmcp's own writer
/// does for each message.
async fn write_line<W: AsyncWrite + Unpin>(
    write: &tokio::sync::Mutex<Option<W>>,
    bytes: Vec<u8>,
) -> std::io::Result<()> {
    let mut write = write.lock().await;
    finish_line(&mut write, &bytes).await
}

/// Writes the rest of a line to the pipe held by `write` and flushes it.
async fn finish_line<W: AsyncWrite + Unpin>(
    write: &mut Option<W>,
    rest: &[u8],
) -> std::io::Result<()> {
    let Some(write) = write.as_mut() else {
        return Err(closed());
    };
    write.write_all(rest).await?;
    write.flush().await
}

/// `message` as one line of JSON, newline included.
fn line_of(message: &impl Serialize) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(256);
    serde_json::to_writer(&mut bytes, message)?;
    bytes.push(b'\n');
    Ok(bytes)
}

fn closed() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::NotConnected, "Transport is closed")
}

/// How far [`Pipe::start_write`] got with a line before its future runs.
enum Started<W> {
    /// Written and flushed (or failed).
    Done(std::io::Result<()>),
    /// The pipe took `bytes[..at]` and is held, so nothing comes between; the rest
    /// (and the flush) is the future's.
    Partly {
        guard: tokio::sync::OwnedMutexGuard<Option<W>>,
        bytes: Vec<u8>,
        at: usize,
    },
    /// Not started: it waits for the lock, behind the lines sent before it.
    Queued {
        write: Arc<tokio::sync::Mutex<Option<W>>>,
        bytes: Vec<u8>,
        queued: Queued,
    },
}

impl<W: AsyncWrite + Unpin> Started<W> {
    /// The rest of the line's writing.
    async fn finish(self) -> std::io::Result<()> {
        match self {
            Started::Done(written) => written,
            Started::Partly {
                mut guard,
                bytes,
                at,
            } => finish_line(&mut guard, &bytes[at..]).await,
            Started::Queued {
                write,
                bytes,
                queued,
            } => {
                let written = write_line(&write, bytes).await;
                drop(queued);
                written
            }
        }
    }
}

/// One line counted in [`Pipe::waiting`] until it is written or dropped.
struct Queued(Arc<AtomicUsize>);

impl Queued {
    fn new(waiting: &Arc<AtomicUsize>) -> Self {
        waiting.fetch_add(1, Ordering::AcqRel);
        Queued(Arc::clone(waiting))
    }
}

impl Drop for Queued {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Where rmcp's transport writes (only its answer to a line it could not read, as every
/// message sent goes through `Lines::send`), kept until `Lines` passes it on.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    fn take(&self) -> Vec<u8> {
        self.0
            .lock()
            .map(|mut bytes| std::mem::take(&mut *bytes))
            .unwrap_or_default()
    }
}

impl AsyncWrite for Captured {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if let Ok(mut bytes) = self.0.lock() {
            bytes.extend_from_slice(buf);
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
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

    /// The fast paths read an id as rmcp does, whatever the server or host wrote: the
    /// same id, or a refusal where rmcp refuses.
    #[test]
    fn an_id_is_read_as_rmcp_reads_it() {
        #[derive(Deserialize)]
        struct Ours {
            #[serde(deserialize_with = "request_id")]
            id: RequestId,
        }
        #[derive(Deserialize)]
        struct Rmcps {
            id: RequestId,
        }
        let ids = [
            "0",
            "7",
            "-3",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "1.0",
            "1e2",
            "1.5",
            "9007199254740992.0",
            "-2.0",
            "\"toolwire-1\"",
            "\"\"",
            "\"\\u00e9\\n\"",
            "\"é\"",
            "true",
            "null",
            "[]",
            "{}",
        ];
        for id in ids {
            let line = format!("{{\"id\":{id}}}");
            let ours = serde_json::from_str::<Ours>(&line).map(|o| o.id);
            let rmcps = serde_json::from_str::<Rmcps>(&line).map(|r| r.id);
            match (&ours, &rmcps) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{id}"),
                (Err(_), Err(_)) => {}
                _ => panic!("{id}: ours {ours:?}, rmcp's {rmcps:?}"),
            }
        }
        // Both kinds occur, so the comparison above is not of refusals alone.
        assert_eq!(
            serde_json::from_str::<Ours>("{\"id\":\"toolwire-1\"}")
                .unwrap()
                .id,
            RequestId::String("toolwire-1".into())
        );
        assert_eq!(
            serde_json::from_str::<Ours>("{\"id\":1e2}").unwrap().id,
            RequestId::Number(100)
        );
    }

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
        let mut transport = Stdio::new(stdout, stdin, Some(child), Default::default());
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
        let mut transport = Stdio::new(client_read, client_write, None, Default::default());

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
        assert_eq!(
            sent,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}"#.to_owned()
                + "\n"
        );

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

    type DuplexRead = tokio::io::ReadHalf<tokio::io::DuplexStream>;
    type DuplexWrite = tokio::io::WriteHalf<tokio::io::DuplexStream>;

    /// A client transport whose answers' texts go to the `RawAnswers` returned, and the
    /// server's ends of its pipes.
    fn with_answers() -> (
        Arc<RawAnswers>,
        Stdio<DuplexRead, DuplexWrite>,
        (DuplexRead, DuplexWrite),
    ) {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (client_read, client_write) = tokio::io::split(client);
        let raw = Arc::new(RawAnswers::default());
        let transport = Stdio::new(client_read, client_write, None, Arc::clone(&raw));
        (raw, transport, tokio::io::split(server))
    }

    /// A call toolwire writes itself goes out as rmcp would write it (its id and progress
    /// token a string of toolwire's, never one of rmcp's numbers), and its answer reaches
    /// it, not rmcp: as text, or as the server's error; rmcp still gets every other line.
    /// When the stream ends, a call still waiting hears so, and no call is written any
    /// more.
    #[tokio::test]
    async fn a_direct_call_is_answered_beside_rmcp_and_hears_the_end() {
        let (raw, mut transport, (server_read, mut server_write)) = with_answers();
        let direct = transport.direct_calls().unwrap();
        let mut server_read = BufReader::new(server_read);

        let mut args = JsonObject::new();
        args.insert("message".into(), "hi".into());
        let (first, token) = direct.next();
        let answer = direct
            .call((&first, &token), "echo", Some(&args), JsonObject::new())
            .await
            .unwrap();
        let mut sent = String::new();
        server_read.read_line(&mut sent).await.unwrap();
        assert_eq!(
            sent,
            r#"{"jsonrpc":"2.0","id":"toolwire-1","method":"tools/call","params":{"_meta":{"progressToken":"toolwire-1"},"name":"echo","arguments":{"message":"hi"}}}"#
                .to_owned()
                + "\n"
        );
        let (second, token) = direct.next();
        assert_eq!(second, RequestId::String("toolwire-2".into()));
        let refused = direct
            .call((&second, &token), "echo", None, JsonObject::new())
            .await
            .unwrap();
        let (third, token) = direct.next();
        let unanswered = direct
            .call((&third, &token), "echo", None, JsonObject::new())
            .await
            .unwrap();

        let text = r#"{"content":[{"type":"text","text":"hi"}]}"#;
        server_write
            .write_all(
                format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":\"toolwire-1\",\"result\":{text}}}\n\
                     {{\"jsonrpc\":\"2.0\",\"id\":\"toolwire-2\",\"error\":{{\"code\":-32602,\"message\":\"no\"}}}}\n\
                     {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":\"toolwire-3\",\"progress\":1}}}}\n"
                )
                .as_bytes(),
            )
            .await
            .unwrap();
        // The answers went to their calls; rmcp reads the notification.
        let progress = transport.receive().await.unwrap();
        assert!(
            matches!(progress, JsonRpcMessage::Notification(_)),
            "{progress:?}"
        );
        let Ok(Ok(ServerResult::CustomResult(CustomResult(serde_json::Value::Null)))) =
            answer.await
        else {
            panic!("the answer did not come as text");
        };
        assert_eq!(raw.take(&first).as_deref(), Some(text));
        let Ok(Err(ServiceError::McpError(error))) = refused.await else {
            panic!("the error did not reach its call");
        };
        assert_eq!(error.message, "no");
        raw.forget(&second);

        // The server goes away: the call still waiting hears so, and nothing more is
        // written.
        drop(server_write);
        drop(server_read);
        assert!(transport.receive().await.is_none());
        assert!(unanswered.await.is_err());
        let (fourth, token) = direct.next();
        assert!(
            direct
                .call((&fourth, &token), "echo", None, JsonObject::new())
                .await
                .is_err()
        );
    }

    /// A call that asked for its answer's text gets a null result and the text exactly as
    /// the server wrote it, once; a call that gave up its ask (it ended) gets the answer
    /// parsed, as every call did before, and nothing is left behind for either.
    #[tokio::test]
    async fn a_call_that_asks_for_its_answers_text_gets_it_as_written() {
        let (raw, mut transport, (_server_read, mut server_write)) = with_answers();
        for id in [1, 2] {
            let call = ClientRequest::CallToolRequest(CallToolRequest::new(
                CallToolRequestParams::new("echo"),
            ));
            transport
                .send(JsonRpcMessage::request(call, RequestId::Number(id)))
                .await
                .unwrap();
        }
        raw.want(&RequestId::Number(1));
        raw.want(&RequestId::Number(2));
        raw.forget(&RequestId::Number(2));
        let text = r#"{ "content" : [{"type":"text","text":"caf\u00e9"}], "z": 1.0 }"#;
        server_write
            .write_all(
                format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{text}}}\n\
                     {{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{text}}}\n"
                )
                .as_bytes(),
            )
            .await
            .unwrap();
        let result = |message: RxJsonRpcMessage<RoleClient>| match message {
            JsonRpcMessage::Response(JsonRpcResponse {
                result: ServerResult::CustomResult(CustomResult(json)),
                ..
            }) => json,
            other => panic!("not a call's answer as JSON: {other:?}"),
        };
        assert_eq!(
            result(transport.receive().await.unwrap()),
            serde_json::Value::Null
        );
        assert_eq!(raw.take(&RequestId::Number(1)).as_deref(), Some(text));
        assert_eq!(raw.take(&RequestId::Number(1)), None);
        assert_eq!(
            result(transport.receive().await.unwrap()),
            serde_json::json!({"content": [{"type": "text", "text": "café"}], "z": 1.0})
        );
        assert_eq!(raw.take(&RequestId::Number(2)), None);
        assert!(raw.0.lock().unwrap().calls.is_empty());
    }

    /// A host's `tools/call` read by the fast path is the request rmcp's own parse makes
    /// of the same line (its `_meta` in the request's extensions, not its params), in
    /// either key order and either revision; any other message, a call with a key a
    /// request does not have, and garbage go through rmcp as before.
    #[tokio::test]
    async fn a_hosts_call_is_the_request_rmcp_would_read() {
        use rmcp::model::{ClientJsonRpcMessage, RequestMetaObject};
        let calls = [
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ev__echo","arguments":{"message":"hi","n":[1,{"b":2,"a":1}]}}}"#,
            r#"{"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"p1"},"arguments":{}},"jsonrpc":"2.0","id":"s-1"}"#,
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x","arguments":{"a":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"h","version":"1"},"progressToken":4}}}"#,
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"x","requestState":"abc","inputResponses":{}}}"#,
        ];
        for line in calls {
            let fast = CallRequests::default().read(line.as_bytes()).expect(line);
            let rmcp: ClientJsonRpcMessage = serde_json::from_str(line).unwrap();
            assert_eq!(
                serde_json::to_value(&fast).unwrap(),
                serde_json::to_value(&rmcp).unwrap(),
                "{line}"
            );
            let (JsonRpcMessage::Request(fast), JsonRpcMessage::Request(rmcp)) = (fast, rmcp)
            else {
                panic!("not requests: {line}");
            };
            assert_eq!(fast.id, rmcp.id);
            let (ClientRequest::CallToolRequest(fast), ClientRequest::CallToolRequest(rmcp)) =
                (fast.request, rmcp.request)
            else {
                panic!("not calls: {line}");
            };
            assert_eq!(fast.params, rmcp.params, "{line}");
            assert_eq!(
                fast.extensions.get::<RequestMetaObject>(),
                rmcp.extensions.get::<RequestMetaObject>(),
                "{line}"
            );
        }
        for other in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"},"extra":1}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{}}}"#,
            "not json",
        ] {
            assert!(
                CallRequests::default().read(other.as_bytes()).is_none(),
                "{other}"
            );
        }
        // Through the transport: the fast path's call, then rmcp's notification.
        let (host, gateway) = tokio::io::duplex(64 * 1024);
        let (gateway_read, gateway_write) = tokio::io::split(gateway);
        let (_host_read, mut host_write) = tokio::io::split(host);
        let mut transport = host_transport(gateway_read, gateway_write, None);
        host_write
            .write_all(
                format!(
                    "{}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n",
                    calls[0]
                )
                .as_bytes(),
            )
            .await
            .unwrap();
        let call = transport.receive().await.unwrap();
        assert!(
            matches!(&call, JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::CallToolRequest(_))),
            "{call:?}"
        );
        let note = transport.receive().await.unwrap();
        assert!(matches!(note, JsonRpcMessage::Notification(_)), "{note:?}");
    }

    /// A `tools/call` the fast path writes is byte for byte the line rmcp's serialization
    /// writes, with and without `_meta`, progress tokens, trace context, odd characters in
    /// ids, names, arguments and state; a call it does not cover is left to rmcp.
    #[test]
    fn a_call_is_written_as_rmcp_writes_it() {
        use rmcp::model::{CustomRequest, InputResponses, ListToolsRequest};
        use serde_json::json;
        let odd = "quote \" backslash \\ newline \n tab \t nul \u{0} bell \u{7} \
                   separator \u{2028} crab \u{1F980} \u{e9} </script>";
        let object = |v: serde_json::Value| v.as_object().cloned().unwrap();
        let arguments = [
            None,
            Some(JsonObject::new()),
            Some(object(json!({"message": "call 7"}))),
            Some(object(json!({
                "z": null, odd: true, "n": [1, -2, 2.5, -0.0, 1e300, 0.1, u64::MAX, i64::MIN],
                "nested": {"b": 2, "a": {"y": [], "x": {}}}, "message": odd,
            }))),
        ];
        let metas = [
            None,
            Some(object(json!({}))),
            Some(object(json!({"progressToken": 3}))),
            Some(object(json!({"progressToken": "p-1", "traceparent":
                "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": odd}))),
            Some(object(
                json!({"io.modelcontextprotocol/clientInfo": {"name": odd, "version": "1"},
                "progressToken": 9}),
            )),
        ];
        let ids = [
            RequestId::Number(0),
            RequestId::Number(i64::MAX),
            RequestId::Number(-5),
            RequestId::String("s-1".into()),
            RequestId::String(odd.into()),
        ];
        let mut compared = 0;
        for name in ["echo", "", odd] {
            for args in &arguments {
                for meta in &metas {
                    for state in [None, Some("abc"), Some(odd)] {
                        for id in &ids {
                            let mut params = CallToolRequestParams::new(name.to_owned());
                            params.arguments = args.clone();
                            params.request_state = state.map(str::to_owned);
                            let mut call = CallToolRequest::new(params);
                            if let Some(meta) = meta {
                                call.extensions
                                    .insert(RequestMetaObject::from(meta.clone()));
                            }
                            let message = JsonRpcMessage::request(
                                ClientRequest::CallToolRequest(call),
                                id.clone(),
                            );
                            let mut fast = b"kept".to_vec();
                            assert!(CallAnswers::default().write(&message, &mut fast));
                            let mut rmcp = b"kept".to_vec();
                            serde_json::to_writer(&mut rmcp, &message).unwrap();
                            assert_eq!(
                                String::from_utf8(fast).unwrap(),
                                String::from_utf8(rmcp).unwrap()
                            );
                            compared += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(compared, 3 * 4 * 5 * 3 * 5);

        // Not covered: `_meta` in the params, answers to a server's questions, a legacy
        // `MetaObject`, a call as a task (sent as JSON), any other request.
        let call = |edit: &dyn Fn(&mut CallToolRequest)| {
            let mut call = CallToolRequest::new(CallToolRequestParams::new("echo"));
            edit(&mut call);
            JsonRpcMessage::request(ClientRequest::CallToolRequest(call), RequestId::Number(1))
        };
        let left = [
            call(&|c| c.params.meta = Some(RequestMetaObject::from(object(json!({"a": 1}))))),
            call(&|c| c.params.input_responses = Some(InputResponses::new())),
            call(&|c| {
                c.extensions.insert(MetaObject(object(json!({"a": 1}))));
            }),
            JsonRpcMessage::request(
                ClientRequest::CustomRequest(CustomRequest::new("tools/call", Some(json!({})))),
                RequestId::Number(2),
            ),
            JsonRpcMessage::request(
                ClientRequest::ListToolsRequest(ListToolsRequest::default()),
                RequestId::Number(3),
            ),
        ];
        for message in left {
            let mut out = b"kept".to_vec();
            assert!(
                !CallAnswers::default().write(&message, &mut out),
                "{message:?}"
            );
            assert_eq!(out, b"kept");
        }
    }

    /// One line from `read` within 5 s; `absent` says what its absence means.
    async fn line_within(
        read: &mut (impl tokio::io::AsyncBufRead + Unpin),
        absent: &str,
    ) -> String {
        let mut line = String::new();
        tokio::time::timeout(std::time::Duration::from_secs(5), read.read_line(&mut line))
            .await
            .expect(absent)
            .unwrap();
        line
    }

    /// A notification whose line is longer than the test pipes below take at once.
    fn notification(n: i64) -> TxJsonRpcMessage<RoleClient> {
        let params = rmcp::model::CancelledNotificationParam::new(
            Some(RequestId::Number(n)),
            Some("x".repeat(200)),
        );
        JsonRpcMessage::notification(rmcp::model::ClientNotification::CancelledNotification(
            rmcp::model::CancelledNotification::new(params),
        ))
    }

    /// A message sent is on the pipe when `send` returns, before its future is polled:
    /// rmcp polls that future on a task of its own, which on a one-thread runtime runs
    /// only after every task woken before it.
    #[tokio::test]
    async fn a_line_is_on_the_pipe_when_send_returns() {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (client_read, client_write) = tokio::io::split(client);
        let (server_read, _server_write) = tokio::io::split(server);
        let mut transport = Stdio::new(client_read, client_write, None, Default::default());
        let call = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new("echo"),
        ));
        let sending = transport.send(JsonRpcMessage::request(call, RequestId::Number(7)));
        let sent = line_within(
            &mut BufReader::new(server_read),
            "the line waited for its future to be polled",
        )
        .await;
        assert_eq!(
            sent,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}"#.to_owned()
                + "\n"
        );
        sending.await.unwrap();
    }

    /// Lines go out whole and in the order they were sent when the pipe is full: the line
    /// it took part of holds it until its future ends, the next ones wait behind, and a
    /// line sent while one still waits (the pipe free again) waits too.
    #[tokio::test]
    async fn lines_keep_their_order_when_the_pipe_is_full() {
        // A pipe that takes less than one line at once.
        let (client, server) = tokio::io::duplex(64);
        let (client_read, client_write) = tokio::io::split(client);
        let (mut server_read, _server_write) = tokio::io::split(server);
        let mut transport = Stdio::new(client_read, client_write, None, Default::default());
        let first = transport.send(notification(1));
        let second = transport.send(notification(2));
        let reader = tokio::spawn(async move {
            let mut all = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut server_read, &mut all)
                .await
                .unwrap();
            all
        });
        first.await.unwrap();
        // The pipe is free and `second` has not started: the third waits behind it (a
        // third that took the pipe first would hold it, and `second` would wait forever).
        let third = transport.send(notification(3));
        let rest = async {
            second.await.unwrap();
            third.await.unwrap();
        };
        tokio::time::timeout(std::time::Duration::from_secs(5), rest)
            .await
            .expect("a line sent later took the pipe first");
        // Both halves of the pipe's end gone: the reader sees its end.
        drop(transport);
        let all = String::from_utf8(reader.await.unwrap()).unwrap();
        let order: Vec<String> = all
            .lines()
            .map(|line| {
                let line: serde_json::Value = serde_json::from_str(line).unwrap();
                line["params"]["requestId"].to_string()
            })
            .collect();
        assert_eq!(order, ["1", "2", "3"], "{all}");
    }

    /// rmcp's answer to a line it cannot read (well-formed JSON that is no message) still
    /// reaches the server, though rmcp's transport no longer holds the pipe.
    #[tokio::test]
    async fn rmcps_answer_to_an_unreadable_line_is_sent() {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (client_read, client_write) = tokio::io::split(client);
        let (server_read, mut server_write) = tokio::io::split(server);
        let mut transport = Stdio::new(client_read, client_write, None, Default::default());
        server_write
            .write_all(
                b"{\"not\":\"a message\"}\n\
                  {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n",
            )
            .await
            .unwrap();
        let next = transport.receive().await.unwrap();
        assert!(matches!(next, JsonRpcMessage::Notification(_)), "{next:?}");
        // Bounded: a transport that kept the answer would leave this read waiting.
        let answer = line_within(
            &mut BufReader::new(server_read),
            "rmcp's answer never reached the pipe",
        )
        .await;
        let answer: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
        assert_eq!(answer["id"], serde_json::Value::Null, "{answer}");
    }

    /// What is learnt of a dropped line: the top-level `id` wherever it stands, through
    /// strings holding braces, quotes and escapes, and nothing for a request or a
    /// notification (they have a `method`), a nested `id`, or no object at all.
    #[test]
    fn a_dropped_answer_is_known_by_its_top_level_id() {
        let id_of = |line: &str| {
            let mut skim = Skim::default();
            skim.feed(line.as_bytes());
            let message: Option<RxJsonRpcMessage<RoleClient>> = skim.as_error();
            match message {
                Some(JsonRpcMessage::Error(e)) => Some(e.id.unwrap()),
                _ => None,
            }
        };
        // A string that holds what would end the object, a key, a brace and a backslash.
        let tricky = serde_json::to_string("a \"}, \"id\": 9, {[ \\").unwrap();
        for (line, id) in [
            (
                r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#,
                Some(RequestId::Number(7)),
            ),
            (
                &format!(r#"{{"result":{{"text":{tricky},"id":3}},"jsonrpc":"2.0","id":"s-1"}}"#),
                Some(RequestId::String("s-1".into())),
            ),
            (
                r#" { "id" : 12 , "error": {"code": 1, "message": "}"}}"#,
                Some(RequestId::Number(12)),
            ),
            (
                r#"{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{}}"#,
                None,
            ),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":5}}"#,
                None,
            ),
            (r#"{"result":{"id":6}}"#, None),
            (r#"{"id":{"not":"an id"},"result":1}"#, None),
            ("[1, 2]", None),
            ("not json", None),
        ] {
            assert_eq!(id_of(line), id, "{line}");
        }
        assert_eq!(mib(16 * 1024 * 1024), "16 MiB");
        assert_eq!(mib(17 * 1024 * 1024 + 1), "17.0 MiB");
        assert_eq!(mib(100 * 1000 * 1000), "95.3 MiB");
    }

    /// A line past the limit is dropped without being kept whole, and the next one read.
    #[tokio::test]
    async fn an_oversized_line_is_dropped_and_the_next_read() {
        let (client, mut server) = tokio::io::duplex(64 * 1024);
        let (client_read, client_write) = tokio::io::split(client);
        let mut transport = Stdio::new(client_read, client_write, None, Default::default());
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
