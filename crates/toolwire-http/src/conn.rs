//! Connections: the accept loop toolwire's listeners run under hyper, with the limits
//! `axum::serve` lacks. A capped number of open connections, a header-read timeout
//! counted from the connection's first byte or its accept, an idle timeout between
//! kept-alive requests, and a stall timeout for a response that moves no byte (a client
//! that stopped reading). Without them, 1,100 idle TCP connections under a 1024-file
//! limit left normal requests unanswered, no token needed.
//!
//! At the cap, a new connection takes the place of one that is doing nothing: the
//! oldest that has sent nothing since its accept or its last answer, else the oldest
//! whose head is still coming; only when every connection has a request in flight is
//! the new one answered `503` and closed (not queued). Refusing instead let 600 silent
//! sockets, reopened every 5 s, keep every real request at `503`. A new connection that
//! is itself silent is the newest, so the last to give way; a real client sends its
//! request at once, and a connection with a request in flight is never closed for
//! another.
//!
//! The timeouts are one watchdog per connection over what the connection does, rather
//! than hyper's own `header_read_timeout`: hyper starts that timer whenever it waits for a
//! request head, kept-alive connections included, so the header and idle timeouts could
//! not differ.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::http::Request;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::AbortHandle;
use tokio::time::Instant;
use tower_service::Service;

/// Seconds a refused client is told to wait (`Retry-After`): about the time an idle
/// connection takes to be dropped by the header-read timeout.
pub const RETRY_AFTER_SECS: u64 = 5;

/// How long a response may move no byte either way before its connection is dropped:
/// longer than a request may take to start answering (`REQUEST_TIMEOUT`) and than the
/// event feeds' keep-alive comments (15 s), so only a client that stopped reading hits it.
pub const STALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Refusals under way at once. A refusal holds its socket until the client has sent its
/// request and read the `503` (or for [`REFUSAL_LINGER`]); past this many, the oldest is
/// closed unanswered, so a flood cannot turn the refusals themselves into the
/// file-descriptor leak, and a client that sends its request at once (a real one) is
/// still answered in the middle of a flood of silent connections.
const MAX_REFUSALS: usize = 64;

/// How long a refusal waits for the client's request, then for it to read the `503` and
/// close.
const REFUSAL_LINGER: Duration = Duration::from_secs(2);

/// Past this much of a head, a refused client is answered without reading the rest.
const MAX_REFUSED_HEAD: usize = 16 * 1024;

/// How long to wait before accepting again after an accept error that is not the client's
/// (out of file descriptors, say): retrying at once would spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// How long a new connection waits for the place of the connection it displaced, which
/// closes as soon as its task runs; past it (that connection took a request meanwhile and
/// stays), the new one is refused like any past the cap.
const DISPLACE_WAIT: Duration = Duration::from_secs(1);

/// The limits of one server's connections.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// How long a client has to send a whole request head, from its connection's accept
    /// or from the head's first byte.
    pub header_read: Duration,
    /// How long a kept-alive connection may wait for its next request.
    pub idle: Duration,
    /// How long an answer may move no byte before its connection is dropped.
    pub stall: Duration,
}

/// The open connections of one or more listeners that share a cap (`toolwire serve`'s
/// app and sandbox ports draw on the same file descriptors): their places, and what each
/// is doing, so that a new one can take the place of one doing nothing.
#[derive(Debug, Clone)]
pub struct Connections {
    slots: Arc<Semaphore>,
    open: Arc<Mutex<Open>>,
}

/// The connections holding a place, by a number of their own.
#[derive(Debug, Default)]
struct Open {
    next: u64,
    by_id: HashMap<u64, Arc<Activity>>,
}

impl Connections {
    /// At most `cap` connections open at once (at least one; see [`connection_cap`]).
    pub fn new(cap: usize) -> Self {
        Connections {
            slots: Arc::new(Semaphore::new(cap.clamp(1, Semaphore::MAX_PERMITS))),
            open: Arc::new(Mutex::new(Open::default())),
        }
    }

    /// Notes `activity`'s connection as open until the returned guard is dropped.
    fn register(&self, activity: &Arc<Activity>) -> Registered {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let id = open.next;
        open.next += 1;
        open.by_id.insert(id, Arc::clone(activity));
        Registered {
            open: Arc::clone(&self.open),
            id,
        }
    }

    /// Asks the connection doing the least to close (see the module's doc); `false` when
    /// every one has a request in flight or is already asked.
    fn displace_one(&self) -> bool {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let pick = open
            .by_id
            .values()
            .filter_map(|a| a.displaceable().map(|rank| (rank, a)))
            .min_by_key(|(rank, _)| *rank);
        match pick {
            Some(((tier, _), activity)) => {
                activity.displace(tier);
                true
            }
            None => false,
        }
    }
}

/// A connection's entry in [`Connections`], removed when it closes.
#[derive(Debug)]
struct Registered {
    open: Arc<Mutex<Open>>,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.by_id.remove(&self.id);
    }
}

/// Serves `app` on `listener` until `stop` resolves; then stops accepting, lets every
/// connection finish its request in flight and close, and returns when all have. Each
/// connection holds a place in `connections` while its socket is open (after a WebSocket
/// upgrade too, since the socket stays open): with none left, a new one takes the place
/// of one doing nothing, or, when every one is busy, gets a `503` at once.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    connections: Connections,
    limits: Limits,
    stop: impl Future<Output = ()>,
) {
    let mut refusals: VecDeque<AbortHandle> = VecDeque::new();
    // Every connection holds a receiver: the server is done when the last is dropped.
    let (closing_tx, closing_rx) = watch::channel(false);
    let mut stop = std::pin::pin!(stop);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    if !is_connection_error(&e) {
                        tokio::time::sleep(ACCEPT_BACKOFF).await;
                    }
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let app = app.clone();
        let closing = closing_rx.clone();
        match Arc::clone(&connections.slots).try_acquire_owned() {
            Ok(slot) => {
                let connections = connections.clone();
                tokio::spawn(connection(stream, slot, app, limits, closing, connections));
            }
            Err(_) if connections.displace_one() => {
                // The displaced connection's place comes back in a moment; the semaphore
                // hands places to waiters in turn.
                let connections = connections.clone();
                tokio::spawn(async move {
                    let slots = Arc::clone(&connections.slots);
                    match tokio::time::timeout(DISPLACE_WAIT, slots.acquire_owned()).await {
                        Ok(Ok(slot)) => {
                            connection(stream, slot, app, limits, closing, connections).await;
                        }
                        _ => refuse(stream).await,
                    }
                });
            }
            Err(_) => {
                refusals.retain(|r| !r.is_finished());
                if refusals.len() >= MAX_REFUSALS
                    && let Some(oldest) = refusals.pop_front()
                {
                    oldest.abort();
                }
                refusals.push_back(tokio::spawn(refuse(stream)).abort_handle());
            }
        }
    }
    drop(listener);
    for refusal in refusals {
        refusal.abort();
    }
    closing_tx.send_replace(true);
    drop(closing_rx);
    closing_tx.closed().await;
}

/// Errors of one connection (it was reset before it was accepted): accept the next one.
fn is_connection_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

/// The `503` a connection past the cap gets, in `toolwire serve`'s API error shape.
fn refusal() -> String {
    let body = r#"{"error":{"code":"too_many_connections","message":"the server has too many open connections; retry later"}}"#;
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         retry-after: {RETRY_AFTER_SECS}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Answers `503` once the request's head has come (an HTTP client takes an answer that
/// comes before its request for a broken connection, and retries or fails), then waits a
/// little for the client to close: closing with its request unread would send a reset,
/// which can destroy the answer before the client reads it. A client that sends no head
/// within [`REFUSAL_LINGER`] is closed unanswered.
async fn refuse(mut stream: TcpStream) {
    let _ = tokio::time::timeout(REFUSAL_LINGER, async {
        let mut head = Vec::new();
        let mut chunk = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_REFUSED_HEAD {
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok(());
            }
            head.extend_from_slice(&chunk[..n]);
        }
        stream.write_all(refusal().as_bytes()).await?;
        stream.shutdown().await?;
        while stream.read(&mut chunk).await? > 0 {}
        Ok::<_, std::io::Error>(())
    })
    .await;
}

/// One connection: hyper's HTTP/1 with upgrades (the WebSocket), under the watchdog.
async fn connection(
    stream: TcpStream,
    slot: OwnedSemaphorePermit,
    app: Router,
    limits: Limits,
    mut closing: watch::Receiver<bool>,
    connections: Connections,
) {
    // Answers and event frames are small writes that must go out at once: with Nagle's
    // algorithm, an event written while the previous one is unacknowledged would wait
    // for the client's (delayed) ACK. A socket that refuses the option still works.
    let _ = stream.set_nodelay(true);
    let activity = Arc::new(Activity::new());
    // Until the connection closes or becomes a WebSocket (whose socket keeps its place,
    // but which is in use, not waiting).
    let _registered = connections.register(&activity);
    let io = Tracked {
        stream: Some(stream),
        activity: Arc::clone(&activity),
        slot: Some(slot),
    };
    let requests = Arc::clone(&activity);
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        // Counted from the moment the head is parsed until the answer's body is dropped
        // (sent, or the connection gone), so the watchdog knows a request is in flight.
        let busy = Busy::begin(&requests);
        requests
            .unread_body
            .store(!request.body().is_end_stream(), Ordering::Release);
        let activity = Arc::clone(&requests);
        let mut app = app.clone();
        async move {
            let request = request.map(|inner| Body::new(RequestBody { inner, activity }));
            let response = app.call(request).await?;
            Ok::<_, std::convert::Infallible>(
                response.map(|inner| Body::new(TrackedBody { inner, _busy: busy })),
            )
        }
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    // The watchdog below times the head; hyper's own timer needs no runtime hook then.
    http.header_read_timeout(None);
    let conn = http
        .serve_connection(TokioIo::new(io), service)
        .with_upgrades();
    let mut conn = std::pin::pin!(conn);
    let mut shutting_down = false;
    loop {
        let deadline = activity.deadline(&limits);
        // The watchdog's timer and the shutdown watch fire once in seconds, while the
        // connection is polled for every event an open feed sends: they are polled only
        // when their own wakers fired (see `WhenWoken`), and the connection first.
        let sleep = std::pin::pin!(tokio::time::sleep_until(deadline));
        let timer = WhenWoken::new(sleep);
        let wait = std::pin::pin!(closing.wait_for(|c| *c));
        let shutdown = WhenWoken::new(wait);
        let asked = std::pin::pin!(activity.displaced.notified());
        let displaced = WhenWoken::new(asked);
        tokio::select! {
            biased;
            // Done: closed by either side, or handed over to a WebSocket.
            _ = conn.as_mut() => {
                if activity.unread_body.load(Ordering::Acquire) {
                    activity.linger.store(true, Ordering::Release);
                }
                return;
            }
            () = timer => {
                // Activity may have moved the deadline while this slept.
                if activity.deadline(&limits) <= Instant::now() {
                    // Dropping the connection closes its socket.
                    return;
                }
            }
            _ = shutdown, if !shutting_down => {
                // Finishes the request in flight, if any, then closes.
                shutting_down = true;
                conn.as_mut().graceful_shutdown();
            }
            () = displaced => {
                // Checked here, where the socket is read: no byte can come in between.
                if activity.still_displaceable() {
                    return;
                }
            }
        }
    }
}

/// A future polled only on its first poll and when its own waker has fired since its last
/// poll, not every time the task it sits in is polled: for the rare branches beside a
/// connection, which a busy event feed polls a thousand times for each time they fire.
struct WhenWoken<F> {
    inner: F,
    flag: Arc<WokenFlag>,
}

/// The waker a [`WhenWoken`] polls its future with: it notes the wake, then wakes the task.
#[derive(Debug)]
struct WokenFlag {
    woken: AtomicBool,
    task: futures::task::AtomicWaker,
}

impl std::task::Wake for WokenFlag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.task.wake();
    }
}

impl<F> WhenWoken<F> {
    fn new(inner: F) -> Self {
        WhenWoken {
            inner,
            flag: Arc::new(WokenFlag {
                woken: AtomicBool::new(true),
                task: futures::task::AtomicWaker::new(),
            }),
        }
    }
}

impl<F: Future + Unpin> Future for WhenWoken<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        this.flag.task.register(cx.waker());
        if !this.flag.woken.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        let waker = std::task::Waker::from(Arc::clone(&this.flag));
        Pin::new(&mut this.inner).poll(&mut Context::from_waker(&waker))
    }
}

/// No head has begun since the connection last went idle.
const NONE: u64 = u64::MAX;

/// What a connection has been doing, in milliseconds since its accept.
#[derive(Debug)]
struct Activity {
    start: Instant,
    /// Requests whose answer is not yet sent.
    busy: AtomicUsize,
    /// The last byte read or written.
    last_io: AtomicU64,
    /// When the connection last went idle (its accept, or an answer's end).
    idle_since: AtomicU64,
    /// Whether a request has been answered: a connection that never sent a whole head is
    /// on the header timeout from its accept.
    served: AtomicBool,
    /// The first byte of a head read while idle ([`NONE`] until then).
    head_started: AtomicU64,
    /// Asked to give its place to a new connection: 0 not, else 1 + the tier it was
    /// picked in (see [`Activity::displaceable`]).
    asked: AtomicU8,
    /// Wakes the connection's task when it is asked.
    displaced: Notify,
    /// The last request's body has not been read to its end.
    unread_body: AtomicBool,
    /// Close lingering (see [`Tracked`]'s `Drop`): hyper closed the connection with a
    /// request body unread.
    linger: AtomicBool,
}

impl Activity {
    fn new() -> Self {
        Activity {
            start: Instant::now(),
            busy: AtomicUsize::new(0),
            last_io: AtomicU64::new(0),
            idle_since: AtomicU64::new(0),
            served: AtomicBool::new(false),
            head_started: AtomicU64::new(NONE),
            asked: AtomicU8::new(0),
            displaced: Notify::new(),
            unread_body: AtomicBool::new(false),
            linger: AtomicBool::new(false),
        }
    }

    /// How readily the connection gives its place, least busy and oldest first: tier 0
    /// when it has sent nothing since its accept or its last answer, tier 1 when a head
    /// is coming (since its first byte); `None` with a request in flight, or when asked
    /// already.
    fn displaceable(&self) -> Option<(u8, Instant)> {
        if self.busy.load(Ordering::Acquire) > 0 || self.asked.load(Ordering::Acquire) != 0 {
            return None;
        }
        let since = |ms: u64| self.start + Duration::from_millis(ms);
        match self.head_started.load(Ordering::Acquire) {
            NONE => Some((0, since(self.idle_since.load(Ordering::Acquire)))),
            head => Some((1, since(head))),
        }
    }

    /// Asks the connection, picked in `tier`, to close.
    fn displace(&self, tier: u8) {
        self.asked.store(tier + 1, Ordering::Release);
        self.displaced.notify_one();
    }

    /// Whether the connection, asked to close, still may: not when a request came since,
    /// nor when one picked as silent has begun a head.
    fn still_displaceable(&self) -> bool {
        let asked = self.asked.swap(0, Ordering::AcqRel);
        if asked == 0 || self.busy.load(Ordering::Acquire) > 0 {
            return false;
        }
        asked != 1 || self.head_started.load(Ordering::Acquire) == NONE
    }

    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX - 1)
    }

    fn read(&self, n: usize) {
        if n == 0 {
            return;
        }
        let now = self.now();
        self.last_io.store(now, Ordering::Relaxed);
        if self.busy.load(Ordering::Acquire) == 0 {
            let _ =
                self.head_started
                    .compare_exchange(NONE, now, Ordering::AcqRel, Ordering::Relaxed);
        }
    }

    fn wrote(&self, n: usize) {
        if n > 0 {
            self.last_io.store(self.now(), Ordering::Relaxed);
        }
    }

    /// When the connection is to be dropped if nothing changes.
    fn deadline(&self, limits: &Limits) -> Instant {
        let at =
            |ms: u64, limit: Duration| self.start + Duration::from_millis(ms).saturating_add(limit);
        if self.busy.load(Ordering::Acquire) > 0 {
            return at(self.last_io.load(Ordering::Relaxed), limits.stall);
        }
        let head = self.head_started.load(Ordering::Acquire);
        if head != NONE {
            return at(head, limits.header_read);
        }
        let idle = self.idle_since.load(Ordering::Acquire);
        if !self.served.load(Ordering::Acquire) {
            at(idle, limits.header_read)
        } else {
            at(idle, limits.idle)
        }
    }
}

/// A request in flight on a connection, from its parsed head to its answer's end.
#[derive(Debug)]
struct Busy(Arc<Activity>);

impl Busy {
    fn begin(activity: &Arc<Activity>) -> Self {
        activity.busy.fetch_add(1, Ordering::AcqRel);
        activity.head_started.store(NONE, Ordering::Release);
        Busy(Arc::clone(activity))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let a = &self.0;
        a.served.store(true, Ordering::Release);
        a.idle_since.store(a.now(), Ordering::Release);
        a.head_started.store(NONE, Ordering::Release);
        a.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An answer's body, which ends its request's [`Busy`] when dropped.
#[derive(Debug)]
struct TrackedBody {
    inner: Body,
    _busy: Busy,
}

impl HttpBody for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    // Kept, so a body of known length is still sent with its Content-Length.
    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// The socket, noting every byte for the watchdog and holding the connection's slot
/// until it is closed. Both are taken only when it is dropped (see `Drop`).
#[derive(Debug)]
struct Tracked {
    stream: Option<TcpStream>,
    activity: Arc<Activity>,
    slot: Option<OwnedSemaphorePermit>,
}

impl Tracked {
    fn stream(&mut self) -> std::io::Result<&mut TcpStream> {
        self.stream
            .as_mut()
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotConnected))
    }
}

/// Closing a socket with bytes of the client's still unread makes the kernel send a
/// reset, which can destroy the answer before the client reads it: a client that sent a
/// body over the limit (chunked, after `100 Continue`) got a reset instead of its `413`.
/// So when hyper closes a connection whose request body was not read to its end, the
/// socket is kept a little longer (with its slot), reading and dropping what still comes,
/// until the client closes: what nginx calls a lingering close.
impl Drop for Tracked {
    fn drop(&mut self) {
        if !self.activity.linger.load(Ordering::Acquire) {
            return;
        }
        let (Some(stream), Ok(runtime)) =
            (self.stream.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        runtime.spawn(linger(stream, self.slot.take()));
    }
}

/// How long a lingering close waits for the client to finish sending and close.
const LINGER: Duration = Duration::from_secs(2);

/// Most bytes a lingering close reads and drops.
const MAX_LINGER_BYTES: usize = 16 * 1024 * 1024;

/// Reads and drops what the client still sends until it closes, for [`LINGER`] and
/// [`MAX_LINGER_BYTES`] at most; then closes, and the slot goes back.
async fn linger(mut stream: TcpStream, _slot: Option<OwnedSemaphorePermit>) {
    let _ = tokio::time::timeout(LINGER, async {
        // hyper has sent the answer and shut its side down already; saying it again is
        // harmless.
        let _ = stream.shutdown().await;
        let mut sink = vec![0u8; 16 * 1024];
        let mut left = MAX_LINGER_BYTES;
        while left > 0 {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => return,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    })
    .await;
}

/// A request's body as the app reads it: its end noted, so that a connection closed
/// with the body unread lingers (see [`Tracked`]'s `Drop`).
#[derive(Debug)]
struct RequestBody {
    inner: Incoming,
    activity: Arc<Activity>,
}

impl HttpBody for RequestBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            this.activity.unread_body.store(false, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl AsyncRead for Tracked {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(this.stream()?).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            this.activity.read(buf.filled().len() - before);
        }
        polled
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(this.stream()?).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            this.activity.wrote(n);
        }
        polled
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(this.stream()?).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = polled {
            this.activity.wrote(n);
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.as_ref().is_some_and(|s| s.is_write_vectored())
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(self.get_mut().stream()?).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(self.get_mut().stream()?).poll_shutdown(cx)
    }
}

/// The process's soft limit on open files, where the system says (`/proc/self/limits`).
pub fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.trim_start_matches("Max open files")
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The connection cap to use: `wanted`, but at most half the open-file limit, since the
/// store, MCP servers' pipes and the event feeds need descriptors too; at least one.
pub fn connection_cap(wanted: usize, open_files: Option<u64>) -> usize {
    let room = open_files
        .map(|n| usize::try_from(n / 2).unwrap_or(usize::MAX))
        .unwrap_or(usize::MAX);
    wanted.min(room).max(1)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_keeps_half_the_open_files_for_the_rest() {
        assert_eq!(connection_cap(512, Some(1024)), 512);
        assert_eq!(connection_cap(512, Some(256)), 128);
        assert_eq!(connection_cap(512, None), 512);
        assert_eq!(connection_cap(0, Some(1024)), 1);
        assert_eq!(connection_cap(512, Some(1)), 1);
    }

    #[test]
    fn the_open_files_limit_is_read_where_there_is_proc() {
        if std::path::Path::new("/proc/self/limits").exists() {
            assert!(open_files_limit().unwrap() > 0);
        }
    }

    #[test]
    fn a_connection_is_on_the_header_timeout_until_served_then_on_the_idle_one() {
        let limits = Limits {
            header_read: Duration::from_secs(10),
            idle: Duration::from_secs(30),
            stall: Duration::from_secs(60),
        };
        let a = Arc::new(Activity::new());
        let secs = |at: Instant| (at - a.start).as_secs();
        assert_eq!(secs(a.deadline(&limits)), 10);
        let busy = Busy::begin(&a);
        assert_eq!(secs(a.deadline(&limits)), 60);
        drop(busy);
        assert_eq!(secs(a.deadline(&limits)), 30);
        // A new head's first byte puts it back on the header timeout.
        a.read(1);
        assert_eq!(secs(a.deadline(&limits)), 10);
        a.read(1);
        assert_eq!(
            secs(a.deadline(&limits)),
            10,
            "from the first byte, not the last"
        );
    }
}
