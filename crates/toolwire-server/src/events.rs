//! Live events: SSE at `/api/sessions/{id}/events` and a WebSocket at `/api/ws`. Every
//! event carries its stored sequence number; `Last-Event-ID` or `?after=N` resumes with
//! nothing lost and nothing twice, also across a restart, because the feed is the event
//! log replayed and then followed (`EventBus::subscribe`). Feeds are capped per server
//! (past the cap, `503` with `Retry-After`), and a feed ends when its session is deleted.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use toolwire_core::SessionId;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message as WsMessage, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use futures::task::AtomicWaker;
use futures::{Stream, StreamExt};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::AbortHandle;
use toolwire_runtime::{EventBus, SharedEvent, Subscription};
use toolwire_store::{HistoryReader, StoreError};

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Path, Query};

/// How long a WebSocket client may take to say which session it wants.
const SUBSCRIBE_WAIT: Duration = Duration::from_secs(30);

/// How often at most an open feed looks whether its session still exists. A deletion
/// through this server, or one the log names (another instance on the same Postgres),
/// ends its own session's feeds at once ([`Subscription::deleted`]); this finds one made by
/// another process on the same SQLite file, whose word does not say what changed. It
/// looks only when the event log has said so since ([`EventBus::changes_elsewhere`],
/// watched, not polled): with no other writer, an idle feed costs the store nothing and
/// has no timer of its own.
const SESSION_RECHECK: Duration = Duration::from_secs(5);

/// How often an SSE feed sends a keep-alive comment (axum's default, which it used before).
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The server's open feeds: one slot each. (Word of a deleted session reaches its feeds
/// through their subscriptions: [`Subscription::deleted`].)
#[derive(Debug)]
pub(crate) struct Feeds {
    /// One permit per open feed (SSE or WebSocket), held for as long as it is open.
    slots: Arc<Semaphore>,
}

impl Feeds {
    pub(crate) fn new(max: usize) -> Self {
        Feeds {
            slots: Arc::new(Semaphore::new(max.min(Semaphore::MAX_PERMITS))),
        }
    }

    /// A slot for one more feed, or `503` when every one is taken: refused at once rather
    /// than queued, since a queued feed would hold its connection all the same.
    fn slot(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        Arc::clone(&self.slots).try_acquire_owned().map_err(|_| {
            ApiError::unavailable(
                "too_many_feeds",
                "the server has too many open event feeds; retry later",
                crate::RETRY_AFTER_SECS,
            )
        })
    }
}

/// `DELETE /api/sessions/{id}`: the API's own, then word to the session's open feeds, so
/// they end now instead of following a session that is gone for as long as they stay open.
pub(crate) async fn delete_session(state: State<AppState>, id: Path<SessionId>) -> Response {
    let bus = Arc::clone(state.host.events());
    let session = id.0.clone();
    let answer = crate::api::delete_session(state, id).await.into_response();
    if answer.status().is_success() {
        bus.announce_deleted(&session);
    }
    answer
}

/// Resolves once `session` is deleted: at the word of its deletion (through this server,
/// or named by the log: another instance on the same Postgres), or when a look in the
/// store, after another writer changed it without saying what, finds it gone.
async fn session_gone(
    history: Arc<dyn HistoryReader>,
    bus: Arc<EventBus>,
    session: String,
    mut deleted: watch::Receiver<bool>,
) {
    let mut changes = bus.changes_elsewhere();
    let mut watching = true;
    // Another writer changed the log since the last look: look once `allowed` comes.
    let mut due = false;
    let mut allowed = tokio::time::Instant::now() + SESSION_RECHECK;
    let mut listening = true;
    loop {
        let look = tokio::select! {
            // (The watch's guard is dropped inside: it may not be held across an await.)
            word = async { deleted.wait_for(|gone| *gone).await.is_ok() }, if listening => {
                if word {
                    return;
                }
                // The route's sender is gone (the bus with it): only looks are left.
                listening = false;
                false
            },
            moved = changes.changed(), if watching && !due => {
                match moved {
                    Ok(()) => due = true,
                    // The bus is gone: no more word of other writers.
                    Err(_) => watching = false,
                }
                false
            },
            () = tokio::time::sleep_until(allowed), if due => {
                // Changes made while waiting are seen by this look.
                changes.borrow_and_update();
                due = false;
                true
            },
            else => std::future::pending().await,
        };
        if look {
            allowed = tokio::time::Instant::now() + SESSION_RECHECK;
            // A store that fails to answer is not a deletion: the feed goes on.
            if matches!(history.session(&session).await, Ok(None)) {
                return;
            }
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct EventsQuery {
    /// Resume after this sequence number (as `Last-Event-ID` does).
    pub after: Option<u64>,
}

/// The position to resume after: `Last-Event-ID` wins over `?after=`, and both default to
/// the start.
fn resume_point(headers: &HeaderMap, after: Option<u64>) -> Result<u64, ApiError> {
    match headers.get("last-event-id") {
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .ok_or_else(|| ApiError::bad_request("Last-Event-ID must be an event number")),
        None => Ok(after.unwrap_or(0)),
    }
}

/// A feed's subscription (the stored events of `session` after `after`, then live ones)
/// and what ends it: the server's shutdown (the client resumes from its last number
/// elsewhere) or its session's deletion (a resume then finds no session).
async fn open_feed(
    state: &AppState,
    session: &str,
    after: u64,
) -> Result<(Subscription, impl Future<Output = ()> + Send + 'static), ApiError> {
    // Following before looking, so a deletion between the two is not missed (its word
    // reaches the subscription).
    let subscription = state.host.events().subscribe(session, after).await?;
    let deleted = subscription.deleted();
    if state
        .host
        .stores()
        .history()
        .session(session)
        .await?
        .is_none()
    {
        return Err(crate::error::no_session(session));
    }
    let closing = state.closing();
    let gone = session_gone(
        state.host.stores().history_reader(),
        Arc::clone(state.host.events()),
        session.to_owned(),
        deleted,
    );
    let end = async move {
        tokio::select! {
            () = closing => {}
            () = gone => {}
        }
    };
    Ok((subscription, end))
}

/// The feed as a stream of batches (the WebSocket's): ends when the log fails, the session
/// is deleted or the server shuts down. The feed holds `slot` while it is open.
async fn feed(
    state: &AppState,
    session: &str,
    after: u64,
    slot: OwnedSemaphorePermit,
) -> Result<impl Stream<Item = Vec<Arc<SharedEvent>>> + Send + 'static, ApiError> {
    let (subscription, end) = open_feed(state, session, after).await?;
    let end = Box::pin(end);
    Ok(futures::stream::unfold(
        (subscription, end, slot),
        |(mut sub, mut end, slot)| async move {
            tokio::select! {
                next = sub.next_shared() => match next {
                    Some(Ok(event)) => {
                        // With it, whatever else is here already: one write for them all.
                        let mut batch = vec![event];
                        while batch.len() < MAX_BATCH {
                            match sub.try_next_shared() {
                                Some(more) => batch.push(more),
                                None => break,
                            }
                        }
                        Some((batch, (sub, end, slot)))
                    }
                    _ => None,
                },
                () = &mut end => None,
            }
        },
    ))
}

/// Events a feed takes at once, when that many are waiting (a subscriber far behind).
const MAX_BATCH: usize = 64;

/// Frames up to this size, together, are sent as one chunk (a copy of small frames, one
/// chunk header); a frame that would take a chunk past it starts the next one, its bytes
/// shared, not copied.
const JOIN_BELOW: usize = 16 * 1024;

pub(crate) async fn sse(
    State(state): State<AppState>,
    Path(id): Path<SessionId>,
    Query(q): Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let after = resume_point(&headers, q.after)?;
    let slot = state.feeds.slot()?;
    let (subscription, end) = open_feed(&state, &id, after).await?;
    let body = Body::new(FeedBody::new(subscription, end, slot));
    Ok((
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response())
}

/// What a feed's watcher (see [`watch_feed`]) has to tell its body, and the waker of the
/// connection that sends the body.
#[derive(Debug, Default)]
struct Signals {
    /// The feed is over (shutdown, or its session deleted).
    ended: AtomicBool,
    /// A keep-alive comment is due.
    ping: AtomicBool,
    waker: AtomicWaker,
}

impl Signals {
    fn raise(&self, flag: &AtomicBool) {
        flag.store(true, Ordering::Release);
        self.waker.wake();
    }
}

/// Waits, off the body, for what ends a feed and for its keep-alive times, and raises them
/// in `signals`. Polled inside the body, these were a `select!` of the shutdown watch, the
/// deletion broadcast, the store recheck and the keep-alive timer on every event of every
/// feed, though they fire once in seconds; here they cost the body one flag load each.
async fn watch_feed(end: impl Future<Output = ()>, signals: Arc<Signals>) {
    let mut end = std::pin::pin!(end);
    // The timer ticks on its own rather than being pushed back by every event (as axum's
    // `KeepAlive` does), so a busy feed costs no timer update per event; a comment
    // between events is harmless.
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + KEEP_ALIVE, KEEP_ALIVE);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = &mut end => {
                signals.raise(&signals.ended);
                return;
            }
            _ = tick.tick() => signals.raise(&signals.ping),
        }
    }
}

/// Ends the watcher with its feed (the body dropped: sent to its end, or the client gone).
#[derive(Debug)]
struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The wait for a feed's next event, which owns the subscription while it waits.
type Waiting = Pin<
    Box<dyn Future<Output = (Subscription, Option<Result<Arc<SharedEvent>, StoreError>>)> + Send>,
>;

/// Where a feed's body is between two of its chunks.
enum Next {
    /// Between waits: the next poll takes what is ready without waiting, else waits.
    Ready(Subscription),
    Waiting(Waiting),
    Ended,
}

/// An SSE feed as a response body of its own: each chunk is the events' shared frames
/// (one event's frame as is, a reference count; several ready at once joined into one
/// chunk), so an event costs a feed one wake, two polls and one write, with no per-event
/// stream adapters, `select!` or allocations between the broadcast and hyper.
struct FeedBody {
    next: Next,
    /// An event taken from the subscription that did not fit in the last chunk: the
    /// first of the next.
    carry: Option<Arc<SharedEvent>>,
    signals: Arc<Signals>,
    _watcher: AbortOnDrop,
    /// The feed's slot among the server's open feeds, held while it is open.
    _slot: OwnedSemaphorePermit,
}

impl FeedBody {
    fn new(
        subscription: Subscription,
        end: impl Future<Output = ()> + Send + 'static,
        slot: OwnedSemaphorePermit,
    ) -> Self {
        let signals = Arc::new(Signals::default());
        let watcher = tokio::spawn(watch_feed(end, Arc::clone(&signals)));
        FeedBody {
            next: Next::Ready(subscription),
            carry: None,
            signals,
            _watcher: AbortOnDrop(watcher.abort_handle()),
            _slot: slot,
        }
    }

    /// One chunk: `first`'s frame, with the frames of the events already here joined to
    /// it while the chunk stays under [`JOIN_BELOW`] (up to [`MAX_BATCH`] events): one
    /// write for them all. A single event's frame goes out as the shared bytes, uncopied.
    fn chunk(&mut self, first: &SharedEvent, sub: &mut Subscription) -> Bytes {
        let first = first.sse_frame();
        let mut joined: Option<Vec<u8>> = None;
        for _ in 1..MAX_BATCH {
            let Some(more) = sub.try_next_shared() else {
                break;
            };
            let frame = more.sse_frame();
            let len = joined.as_ref().map_or(first.len(), Vec::len);
            if len + frame.len() > JOIN_BELOW {
                self.carry = Some(more);
                break;
            }
            joined
                .get_or_insert_with(|| {
                    let mut all = Vec::with_capacity(2 * (first.len() + frame.len()));
                    all.extend_from_slice(&first);
                    all
                })
                .extend_from_slice(&frame);
        }
        joined.map_or(first, Bytes::from)
    }
}

impl http_body::Body for FeedBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        this.signals.waker.register(cx.waker());
        if this.signals.ended.load(Ordering::Acquire) {
            this.next = Next::Ended;
            return Poll::Ready(None);
        }
        if let Next::Ready(_) = this.next
            && let Next::Ready(mut sub) = std::mem::replace(&mut this.next, Next::Ended)
        {
            let first = this.carry.take().or_else(|| sub.try_next_shared());
            if let Some(first) = first {
                let chunk = this.chunk(&first, &mut sub);
                this.next = Next::Ready(sub);
                return Poll::Ready(Some(Ok(http_body::Frame::data(chunk))));
            }
            this.next = Next::Waiting(Box::pin(async move {
                let next = sub.next_shared().await;
                (sub, next)
            }));
        }
        match &mut this.next {
            Next::Waiting(waiting) => {
                if let Poll::Ready((mut sub, next)) = waiting.as_mut().poll(cx) {
                    // The log failed, or the bus is gone: the feed ends, and the client
                    // resumes from the last number it saw.
                    let Some(Ok(first)) = next else {
                        this.next = Next::Ended;
                        return Poll::Ready(None);
                    };
                    let chunk = this.chunk(&first, &mut sub);
                    this.next = Next::Ready(sub);
                    return Poll::Ready(Some(Ok(http_body::Frame::data(chunk))));
                }
            }
            Next::Ended => return Poll::Ready(None),
            Next::Ready(_) => {}
        }
        if this.signals.ping.swap(false, Ordering::AcqRel) {
            return Poll::Ready(Some(Ok(http_body::Frame::data(Bytes::from_static(
                b":\n\n",
            )))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.next, Next::Ended)
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Subscribe {
    session_id: String,
    #[serde(default)]
    after: u64,
}

/// The WebSocket: the client's first message is `{"sessionId": ..., "after": N}`; every
/// event follows as one JSON text message, `seq` included.
pub(crate) async fn ws(
    State(state): State<AppState>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    match upgrade {
        // The slot is taken before the upgrade, so a refusal is a plain `503` answer.
        Ok(upgrade) => match state.feeds.slot() {
            Ok(slot) => upgrade
                .max_message_size(64 * 1024)
                .on_upgrade(move |socket| serve_socket(state, socket, slot)),
            Err(busy) => busy.into_response(),
        },
        // A plain GET: said in the API's own error shape.
        Err(rejection) => ApiError::new(
            axum::http::StatusCode::UPGRADE_REQUIRED,
            "upgrade_required",
            rejection.body_text(),
        )
        .into_response(),
    }
}

async fn serve_socket(state: AppState, mut socket: WebSocket, slot: OwnedSemaphorePermit) {
    let first = tokio::time::timeout(SUBSCRIBE_WAIT, socket.recv()).await;
    let Ok(Some(Ok(WsMessage::Text(text)))) = first else {
        return;
    };
    let request: Subscribe = match serde_json::from_str(text.as_str()) {
        Ok(r) => r,
        Err(e) => {
            let error =
                serde_json::json!({"error": {"code": "bad_request", "message": e.to_string()}});
            let _ = socket.send(WsMessage::Text(error.to_string().into())).await;
            return;
        }
    };
    let events = match feed(&state, &request.session_id, request.after, slot).await {
        Ok(events) => events,
        Err(e) => {
            let error = serde_json::json!({"error": {"code": e.code, "message": e.message}});
            let _ = socket.send(WsMessage::Text(error.to_string().into())).await;
            return;
        }
    };
    // One message an event: a WebSocket frames each on its own anyway.
    let mut events = std::pin::pin!(events.flat_map(futures::stream::iter));
    loop {
        tokio::select! {
            event = events.next() => match event {
                Some(shared) => {
                    let text: &str = &shared.json();
                    if socket.send(WsMessage::Text(text.into())).await.is_err() {
                        return;
                    }
                }
                None => {
                    // A clean close, so the client knows the feed ended (deleted session,
                    // shutdown) rather than the connection failing.
                    let close = CloseFrame {
                        code: axum::extract::ws::close_code::NORMAL,
                        reason: "the feed ended".into(),
                    };
                    let _ = socket.send(WsMessage::Close(Some(close))).await;
                    return;
                }
            },
            incoming = socket.recv() => match incoming {
                Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => return,
                _ => {}
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body::Body as _;
    use toolwire_core::EventKind;

    fn note(size: usize) -> EventKind {
        EventKind::Progress {
            call_id: "c".into(),
            done: 1,
            total: None,
            message: Some("x".repeat(size)),
        }
    }

    async fn next_chunk(body: &mut FeedBody) -> Option<Bytes> {
        let frame = std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await?;
        frame.ok()?.into_data().ok()
    }

    #[tokio::test]
    async fn the_body_joins_ready_frames_and_sends_a_large_one_on_its_own() {
        let bus = EventBus::in_memory();
        let sub = bus.subscribe("s1", 0).await.unwrap();
        let slot = Arc::new(Semaphore::new(1)).try_acquire_owned().unwrap();
        let mut body = FeedBody::new(sub, std::future::pending(), slot);
        // Three small, one past JOIN_BELOW, one small: all ready before the first poll.
        let mut expected = Vec::new();
        for size in [10, 10, 10, JOIN_BELOW + 1, 10] {
            let event = bus.emit("s1", note(size)).await.unwrap();
            expected.extend_from_slice(&SharedEvent::new(event).sse_frame());
        }
        let mut chunks = Vec::new();
        while chunks.iter().map(Bytes::len).sum::<usize>() < expected.len() {
            chunks.push(next_chunk(&mut body).await.unwrap());
        }
        // The small ones together, the large one alone, then the last.
        assert_eq!(chunks.len(), 3);
        assert!(chunks[0].starts_with(b"id: 1\n") && chunks[0].windows(6).any(|w| w == b"id: 3\n"));
        assert!(chunks[1].starts_with(b"id: 4\n") && chunks[1].len() > JOIN_BELOW);
        assert!(chunks[2].starts_with(b"id: 5\n"));
        assert_eq!(chunks.concat(), expected, "every frame once, in order");
        // A later event is waited for, then sent.
        let waiting = tokio::spawn(async move { (next_chunk(&mut body).await, body) });
        let event = bus.emit("s1", note(3)).await.unwrap();
        let (chunk, mut body) = waiting.await.unwrap();
        assert_eq!(chunk.unwrap(), SharedEvent::new(event).sse_frame());
        // The feed's end, raised by its watcher, ends the body.
        body.signals.raise(&body.signals.ended);
        assert!(next_chunk(&mut body).await.is_none());
        assert!(body.is_end_stream());
    }
}
