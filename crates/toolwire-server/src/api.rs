//! The REST handlers under `/api`: sessions, messages (agent turns), direct tool calls,
//! tools, pending calls and their answers, and the model view of a session.

use std::sync::Arc;
use toolwire_core::{CallId, SessionId};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json_;
use toolwire_agent::{Approver, CallOptions, HostError};
use toolwire_core::{Message, PendingCall, Resolution, ToolResult, Widget};
use toolwire_model::Provider;
use toolwire_store::{MessagePage, NewSession, Page, RawStoredMessage, Session, StoredMessage};

use crate::AppState;
use crate::error::{ApiError, no_session};
use crate::extract::{Json, Path, Query};

/// Most sessions one page lists.
const MAX_PAGE: u32 = 200;

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ListQuery {
    /// Sessions skipped (default 0).
    #[serde(default)]
    pub offset: u32,
    /// Sessions listed, at most 200 (default 50).
    pub limit: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SessionList {
    pub sessions: Vec<Session>,
    pub offset: u32,
    pub limit: u32,
}

pub(crate) async fn list_sessions(
    State(state): State<AppState>,
    Query(q): Query<ListQuery>,
) -> Result<Json<SessionList>, ApiError> {
    let limit = q.limit.unwrap_or(50);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ApiError::bad_request(format!(
            "limit: {limit} is outside 1..={MAX_PAGE}"
        )));
    }
    let sessions = state
        .host
        .stores()
        .history()
        .list_sessions(Page {
            offset: q.offset,
            limit,
        })
        .await?;
    Ok(Json(SessionList {
        sessions,
        offset: q.offset,
        limit,
    }))
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub(crate) struct CreateSession {
    pub title: Option<String>,
}

pub(crate) async fn create_session(
    State(state): State<AppState>,
    Json(body): Json<CreateSession>,
) -> Result<(StatusCode, Json<Json_>), ApiError> {
    let title = body.title;
    let session = state
        .host
        .stores()
        .create_session(NewSession {
            title,
            ..NewSession::default()
        })
        .await?;
    Ok((StatusCode::CREATED, Json(to_json(&session)?)))
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionWithMessages {
    #[schemars(with = "Json_")]
    pub session: Session,
    #[schemars(with = "Vec<Json_>")]
    pub messages: Vec<StoredMessage>,
    /// The session's last event number when the messages were read: follow the events
    /// after it and nothing is missed (some may repeat what the messages already hold).
    pub last_event_seq: u64,
    /// Whether messages after these are stored: a page (`?limit=`) that stopped at its
    /// limit. Read them with `?after=` the last one's `seq`.
    pub more: bool,
}

/// Paging of `GET /api/sessions/{id}`'s messages: none reads them all.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct SessionQuery {
    /// Messages after this `seq` only (default 0: from the first).
    #[serde(default)]
    pub after: i64,
    /// At most this many messages, 1 to 10,000 (default: every one).
    pub limit: Option<u32>,
}

/// Most messages one page of a session holds.
const MAX_MESSAGE_PAGE: u32 = 10_000;

/// `GET /api/sessions/{id}`: the session and every message, as [`SessionWithMessages`].
/// The messages' stored JSON is written into the response as it is, not parsed and
/// serialized again: it was checked when it was stored, and a long session's response is
/// mostly those bytes (see `session_response_matches_the_typed_shape` for the proof that
/// the two agree).
pub(crate) async fn get_session(
    State(state): State<AppState>,
    Path(id): Path<SessionId>,
    Query(q): Query<SessionQuery>,
) -> Result<axum::response::Response, ApiError> {
    if q.after < 0 {
        return Err(ApiError::bad_request(format!(
            "after: {} is negative (a message's seq, or 0 for the first)",
            q.after
        )));
    }
    if let Some(limit) = q.limit
        && !(1..=MAX_MESSAGE_PAGE).contains(&limit)
    {
        return Err(ApiError::bad_request(format!(
            "limit: {limit} is outside 1..={MAX_MESSAGE_PAGE}"
        )));
    }
    let stores = state.host.stores();
    let session = stores
        .history()
        .session(&id)
        .await?
        .ok_or_else(|| no_session(&id))?;
    // Read before the messages, so no event falls between the two.
    let last_event_seq = stores.events().last_event_seq(&id).await?;
    let (messages, more) = match (q.after, q.limit) {
        (0, None) => (stores.history().load_raw(&id).await?, false),
        (after_seq, limit) => {
            // One more than asked for says whether there is more, in the same read.
            let limit = limit.unwrap_or(u32::MAX);
            let mut page = stores
                .history()
                .load_raw_page(
                    &id,
                    MessagePage {
                        after_seq,
                        limit: limit.saturating_add(1),
                    },
                )
                .await?;
            let more = page.len() > limit as usize;
            page.truncate(limit as usize);
            (page, more)
        }
    };
    let body = session_json(&session, &messages, last_event_seq, more)?;
    Ok((
        [(
            axum::http::header::CONTENT_TYPE,
            axum::http::HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response())
}

/// The body of `GET /api/sessions/{id}`: `{"session", "messages", "lastEventSeq"}`.
fn session_json(
    session: &Session,
    messages: &[RawStoredMessage],
    last_event_seq: u64,
    more: bool,
) -> Result<String, ApiError> {
    let size: usize = messages.iter().map(|m| m.body.len() + 128).sum();
    let mut out = String::with_capacity(size + 512);
    out.push_str("{\"session\":");
    out.push_str(
        &serde_json::to_string(session).map_err(|e| {
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "encode", e.to_string())
        })?,
    );
    out.push_str(",\"messages\":");
    RawStoredMessage::write_json_array(messages, &session.id, &mut out);
    out.push_str(",\"lastEventSeq\":");
    out.push_str(&last_event_seq.to_string());
    out.push_str(if more {
        ",\"more\":true}"
    } else {
        ",\"more\":false}"
    });
    Ok(out)
}

pub(crate) async fn delete_session(
    State(state): State<AppState>,
    Path(id): Path<SessionId>,
) -> Result<StatusCode, ApiError> {
    if state.host.stores().delete_session(&id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(no_session(&id))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct PostMessage {
    /// Not blank.
    #[schemars(regex(pattern = r"\S"))]
    pub text: String,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Accepted {
    pub session_id: String,
    /// Follow the work on `/api/sessions/{id}/events`.
    pub events: String,
    /// The call's id, for a direct call: its result event carries it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
}

fn accepted(session_id: &str, call_id: Option<String>) -> (StatusCode, Json<Accepted>) {
    (
        StatusCode::ACCEPTED,
        Json(Accepted {
            session_id: session_id.to_owned(),
            events: format!("/api/sessions/{session_id}/events"),
            call_id,
        }),
    )
}

async fn existing_session(state: &AppState, id: &str) -> Result<(), ApiError> {
    match state.host.stores().history().session(id).await? {
        Some(_) => Ok(()),
        None => Err(no_session(id)),
    }
}

/// Starts an agent turn; its events stream on the session's event feed.
pub(crate) async fn post_message(
    State(state): State<AppState>,
    Path(id): Path<SessionId>,
    Json(body): Json<PostMessage>,
) -> Result<(StatusCode, Json<Accepted>), ApiError> {
    existing_session(&state, &id).await?;
    let Some(settings) = state.provider.clone() else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "no_provider",
            "no model provider is configured: start the server with --provider and the \
             provider's API key in its usual variable",
        ));
    };
    if body.text.trim().is_empty() {
        return Err(ApiError::bad_request("the message is empty"));
    }
    let approver = Arc::clone(&state.approver) as Arc<dyn Approver>;
    let agent = state.host.agent(&settings, approver)?;
    let session = id.clone();
    state.spawn(async move {
        if let Ok(running) = agent.turn(&session, &body.text).await {
            // Its events are in the log, for the feeds; only its end is awaited here.
            let _ = running.finish().await;
        }
    });
    Ok(accepted(&id, None))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct PostCall {
    /// The tool to run; with `app`, its name on the app's own server (`tools/call`'s).
    pub tool: String,
    #[serde(default)]
    pub input: Option<Json_>,
    /// The tool whose MCP App asks for this call. An app may call only tools of its own
    /// server whose `visibility` lets apps call them; the server checks, not the page.
    #[serde(default)]
    #[schemars(length(min = 1, max = 128))]
    pub app: Option<String>,
}

/// The tool an MCP App (the view of tool `app`) asks for by its own server's `name`, and
/// whether it is the app's alone (its `visibility` leaves out `"model"`).
fn app_sibling(state: &AppState, app: &str, name: &str) -> Result<(String, bool), ApiError> {
    let forbidden = |why: String| ApiError::new(StatusCode::FORBIDDEN, "not_for_apps", why);
    let app_tool = state
        .host
        .tool(app)
        .ok_or_else(|| ApiError::not_found(format!("no tool {app:?}")))?;
    let Some(origin) = app_tool.schema().origin.clone() else {
        return Err(forbidden(format!(
            "tool {app:?} has no server, so its view can call no tool"
        )));
    };
    let tools = state.host.tools();
    let sibling = tools
        .schemas()
        .find(|s| {
            s.origin
                .as_ref()
                .is_some_and(|o| o.source == origin.source && o.name == name)
        })
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "no tool {name:?} on MCP server {:?}",
                origin.source
            ))
        })?;
    if sibling.hidden_from_apps {
        return Err(forbidden(format!(
            "tool {name:?} of MCP server {:?} is not callable by apps (its visibility \
             leaves out \"app\")",
            origin.source
        )));
    }
    Ok((sibling.name.clone(), sibling.hidden_from_model))
}

/// Runs one tool in the session; its result streams on the event feed and is stored.
pub(crate) async fn post_call(
    State(state): State<AppState>,
    Path(id): Path<SessionId>,
    Json(body): Json<PostCall>,
) -> Result<(StatusCode, Json<Accepted>), ApiError> {
    // No read of the session first: the call's own append, the first thing `run_call`
    // does, fails for a session that does not exist (a 404, `no_session`, as that read
    // gave), so one read a call and its round trip to a reader were spent for nothing.
    let (tool, apps_alone) = match &body.app {
        Some(app) => app_sibling(&state, app, &body.tool)?,
        None if state.host.tool(&body.tool).is_none() => {
            return Err(ApiError::not_found(format!("no tool {:?}", body.tool)));
        }
        None => (body.tool, false),
    };
    let input = body.input.unwrap_or_else(|| serde_json::json!({}));
    // A tool only apps may call, called by its own server's app, is the app's business
    // once the person let the app run (MCP Apps: the model never sees it; asking again
    // for each of an app's polls left a monitor app with 15 calls waiting): it runs
    // approved, never suspended for an approval. What it asks while it runs (an MCP
    // server's question) still goes to the person. Anything the model may call asks as
    // any call does, whoever calls it.
    // Its events reach the person through the session's feeds, not through this request:
    // the log is not asked where they start (a read a call).
    let mut options =
        CallOptions::new(Arc::clone(&state.approver) as Arc<dyn Approver>).without_events();
    if apps_alone {
        options = options.approved();
    }
    // Who asked: the person in the web app, or an MCP App's view on their screen (a call
    // of the app's own tool is kept from the model's view as well).
    let call = toolwire_core::ToolCall::new(toolwire_core::new_id("call"), &tool, input);
    let call = match &body.app {
        Some(app) => call.by_app(app, apps_alone),
        None => call.by_person("web"),
    };
    let call_id = call.id.clone();
    let (cancel, tracked) = state.calls.track(&id, &call_id);
    let running = state
        .host
        .run_call(&id, call, options.scope(cancel))
        .await?;
    state.spawn(async move {
        let _ = running.finish().await;
        drop(tracked);
    });
    Ok(accepted(&id, Some(call_id)))
}

/// Stops a call: one waiting for a person is cancelled (its question dismissed, its
/// approval withdrawn), one running here is stopped. Either way it gets its one stored
/// result, a `cancelled` or `denied` error, on the session's feed.
pub(crate) async fn cancel_call(
    State(state): State<AppState>,
    Path((id, call_id)): Path<(SessionId, CallId)>,
) -> Result<(StatusCode, Json<Json_>), ApiError> {
    let waiting = waiting_calls(&state, &id)
        .await?
        .into_iter()
        .find(|p| p.call.id == *call_id);
    let cancel = || Resolution::Cancel {
        reason: Some("cancelled in the web app".to_owned()),
    };
    if let Some(pending) = waiting {
        if let Err(resolution) = state.approver.answer(&pending.suspension.id, cancel()) {
            // Nobody waits here (a restart): the answer finishes the call now.
            state
                .host
                .resolve_pending(&id, &pending.suspension.id, resolution)
                .await?;
        }
        return Ok((
            StatusCode::ACCEPTED,
            Json(serde_json::json!({"cancelled": true})),
        ));
    }
    if state.calls.cancel(&id, &call_id) {
        return Ok((
            StatusCode::ACCEPTED,
            Json(serde_json::json!({"cancelled": true})),
        ));
    }
    Err(ApiError::not_found(format!(
        "no call {call_id:?} is running or waiting in this session"
    )))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ReadResource {
    /// The resource's URI on the tool's source, e.g. an MCP App's `ui://...`.
    #[schemars(length(min = 1, max = 4096))]
    pub uri: String,
    /// Keep what is read with a stored result of this tool (a resource link's Read), so
    /// it is shown again after a reload.
    pub keep: Option<KeepRead>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct KeepRead {
    pub session_id: String,
    pub call_id: String,
}

/// The widget a kept read is stored as, beside its call's result: display only, never
/// sent to a model. Its data is `{uri, read}`, `read` the `resources/read` answer.
pub(crate) const RESOURCE_READ_WIDGET: &str = "toolwire.resource_read";

/// The largest read kept (its JSON text): a bigger one is shown, not stored.
const MAX_KEPT_READ: usize = 1 << 20;

/// `resources/read` on the source of tool `name` (its MCP server): what an MCP App's view
/// asks the page for. Tools without a source of resources answer 404.
pub(crate) async fn read_tool_resource(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Json(body): Json<ReadResource>,
) -> Result<Json<Json_>, ApiError> {
    if body.uri.is_empty() || body.uri.len() > 4096 {
        return Err(ApiError::bad_request("uri: 1 to 4096 characters"));
    }
    let tool = state
        .host
        .tool(&name)
        .ok_or_else(|| ApiError::not_found(format!("no tool {name:?}")))?;
    let read = tool
        .tool
        .read_resource(&body.uri)
        .ok_or_else(|| ApiError::not_found(format!("tool {name:?} has no resources")))?;
    // Checked before reading: a refused keep reads nothing.
    if let Some(keep) = &body.keep {
        check_keep(&state, &name, &body.uri, keep).await?;
    }
    match read.await {
        Ok(json) => {
            if let Some(keep) = &body.keep {
                keep_read(&state, &body.uri, keep, &json).await?;
            }
            Ok(Json(json))
        }
        Err(e) => Err(ApiError::new(
            StatusCode::BAD_GATEWAY,
            "resource_unavailable",
            e.to_string(),
        )),
    }
}

/// A read is kept only with a stored result of the tool it was read through, in that
/// session, that links to the URI read: it cannot be pinned on another call or link.
async fn check_keep(
    state: &AppState,
    tool: &str,
    uri: &str,
    keep: &KeepRead,
) -> Result<(), ApiError> {
    let found = state
        .host
        .stores()
        .history()
        .find_result(&keep.session_id, &keep.call_id)
        .await?;
    let links = |r: &ToolResult| {
        r.output.iter().any(|v| {
            v.is_kind(toolwire_core::WellKnown::ResourceLink)
                && v.data.get("uri").and_then(Json_::as_str) == Some(uri)
        })
    };
    if found.is_some_and(|r| {
        r.session_id == keep.session_id && r.result.tool_name == tool && links(&r.result)
    }) {
        return Ok(());
    }
    Err(ApiError::not_found(format!(
        "no result of {tool:?} with call id {:?} in session {:?} links to {uri:?}",
        keep.call_id, keep.session_id
    )))
}

/// Stores a read beside the result it was read from, up to [`MAX_KEPT_READ`].
async fn keep_read(
    state: &AppState,
    uri: &str,
    keep: &KeepRead,
    read: &Json_,
) -> Result<(), ApiError> {
    let stores = state.host.stores();
    let data = serde_json::json!({"uri": uri, "read": read});
    if serde_json::to_vec(&data).map_or(true, |text| text.len() > MAX_KEPT_READ) {
        return Ok(());
    }
    let widget = Widget::new(RESOURCE_READ_WIDGET, data, format!("read {uri}"));
    stores
        .append(
            &keep.session_id,
            Message::Widget {
                call_id: Some(keep.call_id.clone()),
                widget,
            },
        )
        .await?;
    Ok(())
}

pub(crate) async fn list_tools(State(state): State<AppState>) -> Result<Json<Json_>, ApiError> {
    let tools = state.host.tools();
    let schemas: Vec<_> = tools.schemas().collect();
    Ok(Json(to_json(&schemas)?))
}

/// `GET /api/servers`: each MCP server and where it is (connecting, ready, failed with
/// its reason, restarting), so a person can tell a tool that is not there yet from one
/// that never will be.
pub(crate) async fn list_servers(State(state): State<AppState>) -> Result<Json<Json_>, ApiError> {
    Ok(Json(
        serde_json::json!({ "servers": to_json(&state.host.sources())? }),
    ))
}

pub(crate) async fn list_suspensions(
    State(state): State<AppState>,
    Path(id): Path<SessionId>,
) -> Result<Json<Json_>, ApiError> {
    Ok(Json(to_json(&waiting_calls(&state, &id).await?)?))
}

/// The calls of session `id` that wait for a person. One already answered (being
/// finished) does not wait: it is not listed, answered or cancelled again.
async fn waiting_calls(state: &AppState, id: &str) -> Result<Vec<PendingCall>, ApiError> {
    existing_session(state, id).await?;
    Ok(state
        .host
        .executor()
        .pending(id)
        .await
        .map_err(HostError::from)?
        .into_iter()
        .filter(|p| !p.resolving)
        .collect())
}

/// Approves, denies or answers a pending call: the call waiting in this process gets the
/// answer; else (after a restart) the answer finishes the call here and stores its result.
/// How long an answer waits for its call to start waiting here before it finishes the
/// call itself (see `WebApprover::answer_soon`).
pub(crate) const ANSWER_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

pub(crate) async fn resolve(
    State(state): State<AppState>,
    Path((id, suspension)): Path<(SessionId, String)>,
    Json(resolution): Json<Resolution>,
) -> Result<(StatusCode, Json<Json_>), ApiError> {
    if !waiting_calls(&state, &id)
        .await?
        .iter()
        .any(|p| p.suspension.id == suspension)
    {
        return Err(ApiError::not_found(format!(
            "no call waiting with suspension id {suspension:?} in this session"
        )));
    }
    match state
        .approver
        .answer_soon(&suspension, resolution, ANSWER_GRACE)
        .await
    {
        Ok(()) => Ok((
            StatusCode::ACCEPTED,
            Json(serde_json::json!({"delivered": true})),
        )),
        Err(resolution) => {
            let result: ToolResult = state
                .host
                .resolve_pending(&id, &suspension, resolution)
                .await?;
            Ok((StatusCode::OK, Json(to_json(&result)?)))
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ExportQuery {
    /// anthropic, openai-chat, openai-responses or gemini.
    pub provider: String,
    pub model: Option<String>,
    /// The truncation budget per result, in characters.
    pub max_chars: Option<usize>,
    /// With `true` the answer is `{request, diagnostics}`: the request, and what encoding
    /// cut (which result, by which budget, how much), repaired or left out.
    #[serde(default)]
    pub diagnostics: bool,
}

pub(crate) async fn export(
    State(state): State<AppState>,
    Path(id): Path<SessionId>,
    Query(q): Query<ExportQuery>,
) -> Result<axum::response::Response, ApiError> {
    let provider: Provider = q
        .provider
        .parse()
        .map_err(|e| ApiError::bad_request(format!("provider: {e}")))?;
    let model = match q.model {
        Some(m) if m.trim().is_empty() => {
            return Err(ApiError::bad_request("model: must not be empty"));
        }
        Some(m) => m,
        None => provider.default_model().to_owned(),
    };
    // The request this server's agent sends (its tools, their sizes, its system prompt),
    // for the provider and model asked.
    let mut config = match &state.provider {
        Some(settings) => {
            let mut config = settings.agent_config();
            config.model = model;
            config
        }
        None => toolwire_agent::AgentConfig::new(model),
    };
    match q.max_chars {
        Some(0) => return Err(ApiError::bad_request("max_chars: must be at least 1")),
        Some(n) => config.budget.max_chars = n,
        None => {}
    }
    let (body, diagnostics) = state.host.export(&id, provider, &config).await?;
    if q.diagnostics {
        let request: Json_ = serde_json::from_slice(&body).map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                format!("cannot read the request back: {e}"),
            )
        })?;
        let diagnostics = to_json(&diagnostics)?;
        return Ok(
            Json(serde_json::json!({"request": request, "diagnostics": diagnostics}))
                .into_response(),
        );
    }
    // The bytes as the client sends them.
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response())
}

fn to_json(value: &impl Serialize) -> Result<Json_, ApiError> {
    serde_json::to_value(value).map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("cannot serialize the answer: {e}"),
        )
    })
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Info {
    /// The server's version.
    pub version: String,
    /// The provider agent turns use, if one is configured: posting a message needs it.
    pub provider: Option<String>,
    /// The model agent turns use, if a provider is configured.
    pub model: Option<String>,
    /// The MCP Apps sandbox proxy's origin: the page frames `{sandboxOrigin}/sandbox`.
    pub sandbox_origin: Option<String>,
}

/// What the app needs to know to choose its views: a chat box needs a provider.
pub(crate) async fn info(State(state): State<AppState>) -> Json<Info> {
    let provider = state.provider.as_ref();
    Json(Info {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        provider: provider.map(|p| p.provider().to_string()),
        model: provider.map(|p| p.agent_config().model),
        sandbox_origin: state.sandbox_origin.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolwire_core::{CallRef, ToolCall, Value};
    use toolwire_store::{StoreConfig, Stores};

    /// The hand-written response and the typed struct it stands for serialize to the same
    /// JSON, for every kind of message, including text that needs escaping.
    #[tokio::test]
    async fn session_response_matches_the_typed_shape() {
        let dir = tempfile::tempdir().unwrap();
        let stores = Stores::open(dir.path(), StoreConfig::default())
            .await
            .unwrap();
        let session = stores
            .create_session(NewSession {
                title: Some("quote \" and \u{2028}".into()),
                ..NewSession::default()
            })
            .await
            .unwrap();
        let messages = vec![
            Message::system("be brief"),
            Message::user("tab\tand \"quotes\" and émoji 🦀"),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall::new(
                    "call_1",
                    "echo",
                    serde_json::json!({"a": [1, 2]}),
                )],
            },
            Message::ToolResult(ToolResult::success(
                CallRef::new("call_1", "echo"),
                Value::text("line\nline"),
            )),
        ];
        stores.append_many(&session.id, messages).await.unwrap();
        let session = stores
            .history()
            .session(&session.id)
            .await
            .unwrap()
            .unwrap();
        let raw = stores.history().load_raw(&session.id).await.unwrap();
        let typed = SessionWithMessages {
            messages: stores.history().load(&session.id).await.unwrap(),
            session: session.clone(),
            last_event_seq: 7,
            more: true,
        };
        let written: Json_ =
            serde_json::from_str(&session_json(&session, &raw, 7, true).unwrap()).unwrap();
        assert_eq!(written, serde_json::to_value(&typed).unwrap());
        assert_eq!(written["messages"].as_array().map(Vec::len), Some(4));
    }
}
