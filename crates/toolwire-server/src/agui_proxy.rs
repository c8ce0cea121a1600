//! `POST /api/agui/follow`: the front end's door to the AG-UI agent this server follows
//! (toolwire-agui records the run; this is the HTTP side: checks, the stream back, the
//! run's life past the request).

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde_json::Value as Json_;
use toolwire_agui::{FollowError, pump};

use crate::AppState;
use crate::agui::RunAgentInput;
use crate::error::ApiError;
use crate::extract::Json;

/// `POST /api/agui/follow`: a proxy to the followed agent. The front end's
/// `RunAgentInput` goes to the agent as it came, and the agent's SSE stream comes back as
/// it came, while each event is recorded in the thread's session.
pub(crate) async fn proxy(
    State(state): State<AppState>,
    Json(body): Json<Json_>,
) -> Result<axum::response::Response, ApiError> {
    let Some(target) = state.agui_follow.clone() else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "not_following",
            "this server follows no AG-UI agent: start it with --agui-follow URL",
        ));
    };
    // The fields toolwire reads must be there and well formed; the rest goes through.
    if let Err(e) = serde_json::from_value::<RunAgentInput>(body.clone()) {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "bad_body",
            format!("not a RunAgentInput: {e}"),
        ));
    }
    if let Some(thread) = body["threadId"].as_str()
        && (thread.is_empty() || thread.len() > 4096)
    {
        return Err(ApiError::bad_request("threadId: expected 1 to 4096 bytes"));
    }
    let (mut follower, response) = match target.start(state.host.clone(), &body).await {
        Ok(started) => started,
        Err(FollowError::BadInput(why)) => return Err(ApiError::bad_request(why)),
        Err(FollowError::Store(e)) => return Err(e.into()),
        Err(e) => {
            return Err(ApiError::new(
                StatusCode::BAD_GATEWAY,
                "agent_failed",
                e.to_string(),
            ));
        }
    };
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("text/event-stream")
        .to_owned();
    let (tx, rx) = tokio::sync::mpsc::channel::<axum::body::Bytes>(64);
    let closing = state.closing();
    state.spawn(async move {
        pump(&mut follower, response, Some(tx), closing).await;
        target.report(&follower);
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|chunk| (Ok::<_, std::convert::Infallible>(chunk), rx))
    });
    Ok((
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache".to_owned()),
        ],
        axum::body::Body::from_stream(stream),
    )
        .into_response())
}
