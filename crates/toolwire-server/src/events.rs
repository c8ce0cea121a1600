//! Live events: SSE at `/api/sessions/{id}/events` and a WebSocket at `/api/ws`. Every
//! event carries its stored sequence number; `Last-Event-ID` or `?after=N` resumes with
//! nothing lost and nothing twice, also across a restart, because the feed is the event
//! log replayed and then followed (`EventBus::subscribe`).

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{Message as WsMessage, WebSocket, WebSocketUpgrade};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use schemars::JsonSchema;
use serde::Deserialize;
use toolwire_core::Event;

use crate::AppState;
use crate::error::ApiError;
use crate::extract::{Path, Query};

/// How long a WebSocket client may take to say which session it wants.
const SUBSCRIBE_WAIT: Duration = Duration::from_secs(30);

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

/// The stored events of `session` after `after`, then live ones; ends when the log fails
/// or the server shuts down (the client resumes from the last number it saw).
async fn feed(
    state: &AppState,
    session: &str,
    after: u64,
) -> Result<impl Stream<Item = Event> + Send + 'static, ApiError> {
    if state
        .host
        .stores()
        .history
        .session(session)
        .await?
        .is_none()
    {
        return Err(ApiError::not_found(format!("no session {session:?}")));
    }
    let subscription = state.host.events().subscribe(session, after).await?;
    // The feed ends at shutdown; the client resumes from its last number elsewhere.
    let closing = Box::pin(state.closing());
    Ok(futures::stream::unfold(
        (subscription, closing),
        |(mut sub, mut closing)| async move {
            tokio::select! {
                next = sub.next() => match next {
                    Some(Ok(event)) => Some((event, (sub, closing))),
                    _ => None,
                },
                () = &mut closing => None,
            }
        },
    ))
}

fn kind_name(event: &Event) -> String {
    serde_json::to_value(&event.kind)
        .ok()
        .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_owned))
        .unwrap_or_else(|| "event".to_owned())
}

pub async fn sse(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let after = resume_point(&headers, q.after)?;
    let events = feed(&state, &id, after).await?;
    let stream = events.map(|event| {
        let data = serde_json::to_string(&event).unwrap_or_else(|_| "{}".to_owned());
        Ok::<_, Infallible>(
            SseEvent::default()
                .id(event.seq.to_string())
                .event(kind_name(&event))
                .data(data),
        )
    });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
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
        Ok(upgrade) => upgrade
            .max_message_size(64 * 1024)
            .on_upgrade(move |socket| serve_socket(state, socket)),
        // A plain GET: said in the API's own error shape.
        Err(rejection) => ApiError::new(
            axum::http::StatusCode::UPGRADE_REQUIRED,
            "upgrade_required",
            rejection.body_text(),
        )
        .into_response(),
    }
}

async fn serve_socket(state: AppState, mut socket: WebSocket) {
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
    let events = match feed(&state, &request.session_id, request.after).await {
        Ok(events) => events,
        Err(e) => {
            let error = serde_json::json!({"error": {"code": e.code, "message": e.message}});
            let _ = socket.send(WsMessage::Text(error.to_string().into())).await;
            return;
        }
    };
    let mut events = std::pin::pin!(events);
    loop {
        tokio::select! {
            event = events.next() => match event {
                Some(event) => {
                    let text = serde_json::to_string(&event).unwrap_or_default();
                    if socket.send(WsMessage::Text(text.into())).await.is_err() {
                        return;
                    }
                }
                None => return,
            },
            incoming = socket.recv() => match incoming {
                Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => return,
                _ => {}
            },
        }
    }
}
