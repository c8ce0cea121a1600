//! Live events: SSE at `/api/sessions/{id}/events` and a WebSocket at `/api/ws`. Every
//! event carries its stored sequence number; `Last-Event-ID` or `?after=N` resumes with
//! nothing lost and nothing twice, also across a restart, because the feed is the event
//! log replayed and then followed (`EventBus::subscribe`). Feeds are capped per server
//! (past the cap, `503` with `Retry-After`), and a feed ends when its session is deleted.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use toolwire_core::SessionId;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message as WsMessage, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, broadcast};
use toolwire_agent::SharedEvent;
use toolwire_store::HistoryReader;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Path, Query};

/// How long a WebSocket client may take to say which session it wants.
const SUBSCRIBE_WAIT: Duration = Duration::from_secs(30);

/// How often an open feed looks whether its session still exists. A deletion through this
/// server ends its feeds at once; this finds one made by another process on the same
/// store (a second instance), which never passes through here.
const SESSION_RECHECK: Duration = Duration::from_secs(5);

/// How often an SSE feed sends a keep-alive comment (axum's default, which it used before).
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Deletions a slow feed may fall behind by before it looks in the store instead.
const DELETED_BUFFER: usize = 64;

/// The server's open feeds: their slots, and word of deleted sessions.
#[derive(Debug)]
pub(crate) struct Feeds {
    /// One permit per open feed (SSE or WebSocket), held for as long as it is open.
    slots: Arc<Semaphore>,
    /// The ids of sessions deleted through this server.
    deleted: broadcast::Sender<String>,
}

impl Feeds {
    pub(crate) fn new(max: usize) -> Self {
        Feeds {
            slots: Arc::new(Semaphore::new(max.min(Semaphore::MAX_PERMITS))),
            deleted: broadcast::channel(DELETED_BUFFER).0,
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
pub async fn delete_session(state: State<AppState>, id: Path<SessionId>) -> Response {
    let feeds = Arc::clone(&state.feeds);
    let session = id.0.clone();
    let answer = crate::api::delete_session(state, id).await.into_response();
    if answer.status().is_success() {
        // No feed listening is not an error.
        let _ = feeds.deleted.send(session.into());
    }
    answer
}

/// Resolves once `session` is deleted: at the word of a deletion through this server, or
/// when a look in the store finds it gone.
async fn session_gone(
    history: Arc<dyn HistoryReader>,
    session: String,
    mut deleted: broadcast::Receiver<String>,
) {
    let first = tokio::time::Instant::now() + SESSION_RECHECK;
    let mut recheck = tokio::time::interval_at(first, SESSION_RECHECK);
    recheck.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut listening = true;
    loop {
        let look = tokio::select! {
            word = deleted.recv(), if listening => match word {
                Ok(id) if id == session => return,
                Ok(_) => false,
                // Fell behind: some deletion may have been this session's.
                Err(broadcast::error::RecvError::Lagged(_)) => true,
                Err(broadcast::error::RecvError::Closed) => {
                    listening = false;
                    false
                }
            },
            _ = recheck.tick() => true,
        };
        // A store that fails to answer is not a deletion: the feed goes on.
        if look && matches!(history.session(&session).await, Ok(None)) {
            return;
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct EventsQuery {
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

/// The stored events of `session` after `after`, then live ones; ends when the log fails,
/// the session is deleted or the server shuts down (the client resumes from the last
/// number it saw). The feed holds `slot` while it is open.
async fn feed(
    state: &AppState,
    session: &str,
    after: u64,
    slot: OwnedSemaphorePermit,
) -> Result<impl Stream<Item = Vec<Arc<SharedEvent>>> + Send + 'static, ApiError> {
    // Listening before looking, so a deletion between the two is not missed.
    let deleted = state.feeds.deleted.subscribe();
    if state
        .host
        .stores()
        .history()
        .session(session)
        .await?
        .is_none()
    {
        return Err(crate::api::no_session(session));
    }
    let subscription = state.host.events().subscribe(session, after).await?;
    // The feed ends at shutdown (the client resumes from its last number elsewhere) and
    // when its session is deleted (a resume then finds no session).
    let closing = state.closing();
    let gone = session_gone(
        state.host.stores().history_reader(),
        session.to_owned(),
        deleted,
    );
    let end = Box::pin(async move {
        tokio::select! {
            () = closing => {}
            () = gone => {}
        }
    });
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
/// chunk header); a larger batch goes frame by frame, its bytes shared, not copied.
const JOIN_BELOW: usize = 16 * 1024;

/// A batch of events as the SSE body's chunks: one when they are small, else one a frame.
fn sse_chunks(batch: &[Arc<SharedEvent>]) -> Vec<Bytes> {
    let frames: Vec<Arc<[u8]>> = batch.iter().map(|e| e.sse_frame()).collect();
    let total: usize = frames.iter().map(|f| f.len()).sum();
    if frames.len() > 1 && total <= JOIN_BELOW {
        let mut joined = Vec::with_capacity(total);
        for frame in &frames {
            joined.extend_from_slice(frame);
        }
        vec![Bytes::from(joined)]
    } else {
        frames.into_iter().map(Bytes::from_owner).collect()
    }
}

pub async fn sse(
    State(state): State<AppState>,
    Path(id): Path<SessionId>,
    Query(q): Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let after = resume_point(&headers, q.after)?;
    let slot = state.feeds.slot()?;
    let events = feed(&state, &id, after, slot).await?;
    // Each event is framed once, by whichever of its subscribers gets there first, and
    // every feed sends those same bytes: with 1,000 subscribers, one frame, not 1,000.
    let frames = events.flat_map(|batch| futures::stream::iter(sse_chunks(&batch)));
    let body = Body::from_stream(with_keep_alive(frames).map(Ok::<_, Infallible>));
    Ok((
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response())
}

/// `frames`, with a comment every [`KEEP_ALIVE`] so that the client and any proxy see
/// the feed alive. The timer ticks on its own rather than being pushed back by every
/// event (as axum's `KeepAlive` does), so a busy feed costs no timer update per event;
/// a comment between events is harmless.
fn with_keep_alive(
    frames: impl Stream<Item = Bytes> + Send + 'static,
) -> impl Stream<Item = Bytes> + Send + 'static {
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + KEEP_ALIVE, KEEP_ALIVE);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    futures::stream::unfold(
        (Box::pin(frames), tick),
        |(mut frames, mut tick)| async move {
            tokio::select! {
                frame = frames.next() => frame.map(|f| (f, (frames, tick))),
                _ = tick.tick() => Some((Bytes::from_static(b":\n\n"), (frames, tick))),
            }
        },
    )
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
pub async fn ws(
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
