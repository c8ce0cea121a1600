//! AG-UI out: `POST /api/agui` takes an AG-UI `RunAgentInput` and answers with an SSE
//! stream of AG-UI 1.0 events, so any AG-UI front end (CopilotKit, `@ag-ui/client`) can
//! drive toolwire's agent. The thread is a toolwire session (its id is the `threadId`);
//! a run is a window onto the session's event feed, from the turn's start to its end or
//! to the first call that waits for a person, which ends the run with an `interrupt`
//! outcome. The next run's `resume` entries answer it, and the turn, still running here,
//! goes on. toolwire's own data (the canonical `ToolResult`, widgets) rides in `CUSTOM`
//! events, so a plain client works and a toolwire-aware one loses nothing. A call a person
//! makes in the same session while a run goes on (the web app's, an MCP App's polls) is
//! not the run's: it is left out of the run's stream, and never ends or holds the run.

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Value as Json_, json};
use tokio::sync::mpsc;
use toolwire_agent::Approver;
use toolwire_core::view::{KnownView, SourceView};
use toolwire_core::{
    Event, EventKind, Message, Resolution, SessionId, Status, SuspensionReason, ToolCall,
    ToolResult,
};
use toolwire_store::{NewSession, StoredMessage};

use crate::AppState;
use crate::error::ApiError;
use crate::extract::Json;

/// The AG-UI protocol version these events follow.
pub(crate) const AGUI_PROTOCOL: &str = "1.0";

/// Events one run may buffer before a slow client holds the run back.
const BUFFER: usize = 256;

/// The parts of `RunAgentInput` toolwire reads; the rest (tools, context, state,
/// forwardedProps) is accepted and ignored: the tools are the server's own.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunAgentInput {
    /// The conversation: a toolwire session of this id (made on first use).
    pub thread_id: String,
    pub run_id: String,
    /// The client's messages; the last user message is the new turn's text.
    #[serde(default)]
    pub messages: Vec<Json_>,
    /// Answers to the interrupts the previous run ended with.
    #[serde(default)]
    pub resume: Option<Vec<ResumeEntry>>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResumeEntry {
    pub interrupt_id: String,
    /// `resolved` or `cancelled`.
    pub status: String,
    /// For an approval `{"approved": true|false}`; for a question, the answer.
    #[serde(default)]
    pub payload: Option<Json_>,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// What a resume entry asks toolwire to do with the waiting call.
fn resolution_of(entry: &ResumeEntry, reason: SuspensionReason) -> Resolution {
    if entry.status != "resolved" {
        return Resolution::Cancel {
            reason: Some("cancelled from the AG-UI client".to_owned()),
        };
    }
    let payload = entry.payload.clone().unwrap_or(Json_::Null);
    match reason {
        SuspensionReason::Input => Resolution::Answer { value: payload },
        _ => match payload.get("approved").and_then(Json_::as_bool) {
            Some(true) => Resolution::Approve,
            _ => Resolution::Deny {
                reason: Some("denied from the AG-UI client".to_owned()),
            },
        },
    }
}

/// The text of the last user message: a string, or its text parts joined.
fn last_user_text(messages: &[Json_]) -> Option<String> {
    let message = messages.iter().rev().find(|m| m["role"] == "user")?;
    match &message["content"] {
        Json_::String(text) => Some(text.clone()),
        Json_::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|p| p["type"] == "text")
                .filter_map(|p| p["text"].as_str())
                .collect();
            Some(texts.join("\n"))
        }
        _ => None,
    }
    .filter(|t| !t.trim().is_empty())
}

/// `POST /api/agui`.
pub(crate) async fn run(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(input): Json<RunAgentInput>,
) -> Result<Response, ApiError> {
    let thread = SessionId::parse(input.thread_id.clone())
        .map_err(|e| ApiError::bad_request(format!("threadId: {e}")))?;
    let stores = state.host.stores();
    if stores.history().session(&thread).await?.is_none() {
        stores
            .create_session(NewSession {
                id: Some(thread.to_string()),
                title: Some("AG-UI thread".to_owned()),
                ..NewSession::default()
            })
            .await?;
    }
    // Where this run's window onto the feed begins.
    let after = state.host.stores().events().last_event_seq(&thread).await?;
    let base = base_url(&state, &headers);
    let mut finishes_on_result = false;
    match input.resume.as_deref() {
        Some(entries) if !entries.is_empty() => {
            let waiting = state.host.executor().pending(&thread).await.map_err(|e| {
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "store", e.to_string())
            })?;
            for entry in entries {
                let Some(pending) = waiting
                    .iter()
                    .find(|p| p.suspension.id == entry.interrupt_id)
                else {
                    return Err(ApiError::not_found(format!(
                        "no interrupt {:?} waits in thread {thread}",
                        entry.interrupt_id
                    )));
                };
                let resolution = resolution_of(entry, pending.suspension.reason);
                if let Err(resolution) = state
                    .approver
                    .answer_soon(&entry.interrupt_id, resolution, crate::api::ANSWER_GRACE)
                    .await
                {
                    // Nobody waits here (a restart): the answer finishes the call now,
                    // and no turn goes on after it.
                    finishes_on_result = true;
                    state
                        .host
                        .resolve_pending(&thread, &entry.interrupt_id, resolution)
                        .await?;
                }
            }
        }
        _ => {
            let Some(text) = last_user_text(&input.messages) else {
                return Err(ApiError::bad_request(
                    "no user message to run: the last user message has no text",
                ));
            };
            let Some(settings) = state.provider.clone() else {
                return Err(ApiError::new(
                    StatusCode::CONFLICT,
                    "no_provider",
                    "no model provider is configured: start the server with --provider",
                ));
            };
            let approver = Arc::clone(&state.approver) as Arc<dyn Approver>;
            let agent = state.host.agent(&settings, approver)?;
            let session = thread.to_string();
            state.spawn(async move {
                if let Ok(running) = agent.turn(&session, &text).await {
                    let _ = running.finish().await;
                }
            });
        }
    }
    let subscription = state.host.events().subscribe(&thread, after).await?;
    let (tx, rx) = mpsc::channel::<Json_>(BUFFER);
    let resumed = input.resume.as_ref().is_some_and(|r| !r.is_empty());
    let window = Window {
        thread: thread.to_string(),
        run: input.run_id.clone(),
        base,
        text_open: None,
        request_message: None,
        texts: 0,
        open_calls: Vec::new(),
        interrupts: Vec::new(),
        // A resumed run joins a model request whose calls were made before it began.
        calls_this_step: resumed,
        last_step_ended: false,
        people: HashSet::new(),
    };
    let closing = state.closing();
    let history = state.host.stores().history_reader();
    let snapshot = if resumed {
        let answered: Vec<&str> = input
            .resume
            .iter()
            .flatten()
            .map(|r| r.interrupt_id.as_str())
            .collect();
        Some(messages_snapshot(&state, &thread, &window.base, &input.messages, &answered).await?)
    } else {
        None
    };
    tokio::spawn(async move {
        let mut window = window;
        let mut subscription = subscription;
        let send = |event: Json_| {
            let tx = tx.clone();
            async move { tx.send(event).await.is_ok() }
        };
        let started = json!({"type": "RUN_STARTED", "threadId": window.thread, "runId": window.run, "protocolVersion": AGUI_PROTOCOL, "timestamp": now_ms()});
        if !send(started).await {
            return;
        }
        if let Some(snapshot) = snapshot {
            for event in snapshot {
                if !send(event).await {
                    return;
                }
            }
        }
        tokio::pin!(closing);
        loop {
            let next = tokio::select! {
                next = subscription.next() => next,
                () = &mut closing => None,
            };
            let Some(Ok(event)) = next else {
                let _ = send(json!({"type": "RUN_ERROR", "message": "the event feed ended before the run did", "code": "feed_ended", "timestamp": now_ms()})).await;
                return;
            };
            let (mut events, mut end) = window.translate(&event, finishes_on_result);
            if window.last_step_ended {
                // The model's answer is stored before the request's end is announced: no
                // assistant message last means the request failed.
                let answered = history
                    .load(&window.thread)
                    .await
                    .is_ok_and(|messages| model_answered(&messages));
                events.push(if answered {
                    window.finished(json!({"type": "success"}))
                } else {
                    json!({"type": "RUN_ERROR", "message": "the model request failed (toolwire serve's log says why)", "code": "model_failed", "timestamp": now_ms()})
                });
                end = true;
            }
            for event in events {
                if !send(event).await {
                    return;
                }
            }
            if end {
                return;
            }
        }
    });
    let stream = tokio_stream_of(rx)
        .map(|event| Ok::<_, Infallible>(SseEvent::default().data(event.to_string())));
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// Whether the model's answer is the history's last word once a person's calls are set
/// aside: a request that failed stores no answer, and a person's call (an MCP App's poll)
/// may land between the answer and the request's end.
fn model_answered(messages: &[StoredMessage]) -> bool {
    let people = call_ids(messages, |c| c.by_person.is_some());
    matches!(
        messages
            .iter()
            .rev()
            .find(|m| !only_about(m, &people))
            .map(|m| &m.content),
        Some(Message::Assistant { .. })
    )
}

/// The ids of the stored calls `pick` chooses.
fn call_ids(messages: &[StoredMessage], pick: impl Fn(&ToolCall) -> bool) -> HashSet<&str> {
    messages
        .iter()
        .filter_map(|m| match &m.content {
            Message::Assistant { tool_calls, .. } => Some(tool_calls),
            _ => None,
        })
        .flatten()
        .filter(|c| pick(c))
        .map(|c| c.id.as_str())
        .collect()
}

/// Whether `message` is only about the calls `ids` names: an assistant message with no
/// text whose calls are all among them (how a person's call is stored), or the result of
/// one of them.
fn only_about(message: &StoredMessage, ids: &HashSet<&str>) -> bool {
    match &message.content {
        Message::Assistant { text, tool_calls } => {
            text.is_empty()
                && !tool_calls.is_empty()
                && tool_calls.iter().all(|c| ids.contains(c.id.as_str()))
        }
        Message::ToolResult(result) => ids.contains(result.call_id.as_str()),
        _ => false,
    }
}

fn tokio_stream_of(rx: mpsc::Receiver<Json_>) -> impl futures::Stream<Item = Json_> {
    futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|e| (e, rx)) })
}

/// This server's own origin as the request named it, for media URLs a client can fetch.
fn base_url(state: &AppState, headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    let scheme = if state.guard.secure_cookies {
        "https"
    } else {
        "http"
    };
    format!("{scheme}://{host}")
}

/// The stored conversation as AG-UI messages, and the thread's state (what waits for a
/// person, less the interrupts this run answers), sent first on a run that resumes. Each
/// message keeps the id the client knows it by (`client`, the messages it sent).
async fn messages_snapshot(
    state: &AppState,
    thread: &str,
    base: &str,
    client: &[Json_],
    answered: &[&str],
) -> Result<Vec<Json_>, ApiError> {
    let stored = state.host.stores().history().load(thread).await?;
    let mut ids = ClientIds::new(client);
    let mut messages = Vec::new();
    // An MCP App's calls of a tool only apps may call are kept from the model (pairing),
    // and so from the conversation a client is given (a monitor's poll every 2 s).
    let apps_own = call_ids(&stored, toolwire_core::ToolCall::is_app_only);
    for message in &stored {
        if only_about(message, &apps_own) {
            continue;
        }
        let id = ids.of(message);
        match &message.content {
            Message::User { text } => {
                messages.push(json!({"id": id, "role": "user", "content": text}));
            }
            Message::Assistant { text, tool_calls } => {
                let calls: Vec<Json_> = tool_calls
                    .iter()
                    .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.input.to_string()}}))
                    .collect();
                let mut m = json!({"id": id, "role": "assistant", "content": text});
                if !calls.is_empty() {
                    m["toolCalls"] = Json_::Array(calls);
                }
                messages.push(m);
            }
            Message::ToolResult(result) => {
                let mut m = json!({"id": id, "role": "tool", "toolCallId": result.call_id, "content": parts(result, base)});
                // AG-UI's `ToolMessage.error`: how a plain client tells a call failed.
                if result.status == Status::Error {
                    m["error"] = json!(text_of(result));
                }
                messages.push(m);
            }
            _ => {}
        }
    }
    let pending =
        state.host.executor().pending(thread).await.map_err(|e| {
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "store", e.to_string())
        })?;
    // An interrupt this run answers may still be pending for a moment (the call it
    // resumes has not finished): it no longer waits for anyone.
    let waiting: Vec<Json_> = pending
        .iter()
        .filter(|p| !answered.contains(&p.suspension.id.as_str()))
        .map(|p| json!({"interruptId": p.suspension.id, "toolCallId": p.call.id, "tool": p.call.name}))
        .collect();
    Ok(vec![
        json!({"type": "MESSAGES_SNAPSHOT", "messages": messages, "timestamp": now_ms()}),
        json!({"type": "STATE_SNAPSHOT", "snapshot": {"toolwire": {"sessionId": thread, "waiting": waiting}}, "timestamp": now_ms()}),
    ])
}

/// The ids a client knows the stored messages by: the ids of the messages it sends (what
/// it was streamed, or made itself), matched to stored messages by what they hold. A
/// stored message the client does not hold gets the id the stream gave it (a result's
/// `<call>-result`), else `m<seq>`.
struct ClientIds {
    /// The client's user message ids, in order.
    users: std::collections::VecDeque<String>,
    /// The client's assistant messages: id, text, call ids.
    assistants: Vec<(String, String, Vec<String>)>,
    /// The client's tool messages: call id → id.
    tools: std::collections::HashMap<String, String>,
    /// Ids given already: never twice.
    used: std::collections::HashSet<String>,
}

impl ClientIds {
    fn new(client: &[Json_]) -> ClientIds {
        let mut ids = ClientIds {
            users: std::collections::VecDeque::new(),
            assistants: Vec::new(),
            tools: std::collections::HashMap::new(),
            used: std::collections::HashSet::new(),
        };
        for message in client {
            let Some(id) = message["id"].as_str().map(str::to_owned) else {
                continue;
            };
            match message["role"].as_str() {
                Some("user") => ids.users.push_back(id),
                Some("assistant") => {
                    let text = message["content"].as_str().unwrap_or("").to_owned();
                    let calls = message["toolCalls"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|c| c["id"].as_str().map(str::to_owned))
                        .collect();
                    ids.assistants.push((id, text, calls));
                }
                Some("tool") => {
                    if let Some(call) = message["toolCallId"].as_str() {
                        ids.tools.insert(call.to_owned(), id);
                    }
                }
                _ => {}
            }
        }
        ids
    }

    fn of(&mut self, message: &toolwire_store::StoredMessage) -> String {
        let known = match &message.content {
            Message::User { .. } => self.users.pop_front(),
            Message::Assistant { text, tool_calls } => {
                // By a call it made, else by its text.
                let at = self
                    .assistants
                    .iter()
                    .position(|(_, _, calls)| {
                        tool_calls.first().is_some_and(|c| calls.contains(&c.id))
                    })
                    .or_else(|| {
                        self.assistants
                            .iter()
                            .position(|(_, t, _)| !text.is_empty() && t == text)
                    });
                at.map(|at| self.assistants.remove(at).0)
            }
            Message::ToolResult(result) => Some(
                self.tools
                    .remove(&result.call_id)
                    .unwrap_or_else(|| format!("{}-result", result.call_id)),
            ),
            _ => None,
        };
        let id = known
            .filter(|id| !self.used.contains(id))
            .unwrap_or_else(|| format!("m{}", message.seq));
        self.used.insert(id.clone());
        id
    }
}

/// A result's text for AG-UI's string content: its text values, or its error.
fn text_of(result: &ToolResult) -> String {
    if let Some(error) = &result.error {
        return error.message.clone();
    }
    let texts: Vec<String> = result
        .output
        .iter()
        .filter_map(|v| match v.known() {
            Some(Ok(KnownView::Text(t))) => Some(t.content.to_owned()),
            Some(Ok(KnownView::Structured(data))) => Some(data.to_string()),
            _ => None,
        })
        .collect();
    texts.join("\n")
}

/// One run's state while it translates toolwire events to AG-UI's.
struct Window {
    thread: String,
    run: String,
    base: String,
    /// The assistant text message open now.
    text_open: Option<String>,
    /// The AG-UI id of the model request's assistant message (its text's, or its calls'
    /// `parentMessageId`): one message holds the text and the calls, as toolwire stores it.
    request_message: Option<String>,
    texts: usize,
    /// Calls started in this run that have neither a result nor a question yet: the run
    /// ends with its interrupts only once none is left, so results that land beside a
    /// question are not lost to the next run.
    open_calls: Vec<String>,
    /// The questions this run will end with.
    interrupts: Vec<Json_>,
    /// Whether the model request under way asked for tools.
    calls_this_step: bool,
    /// Set when a request that asked for no tool ended: the agent is done.
    last_step_ended: bool,
    /// Calls a person made while the run goes on (the web app's, an MCP App's poll every
    /// 2 s): not the run's, so neither streamed nor counted (before, a poll between the
    /// model's last request and its end kept the run from ever finishing, and a person's
    /// approval ended it with an interrupt that was not its own).
    people: HashSet<String>,
}

impl Window {
    fn close_text(&mut self, out: &mut Vec<Json_>) {
        if let Some(id) = self.text_open.take() {
            out.push(json!({"type": "TEXT_MESSAGE_END", "messageId": id, "timestamp": now_ms()}));
        }
    }

    /// Ends the run with its interrupts once every call it started has a result or a
    /// question.
    fn end_if_only_questions_are_left(&mut self, out: &mut Vec<Json_>) -> bool {
        if self.interrupts.is_empty() || !self.open_calls.is_empty() {
            return false;
        }
        let interrupts = std::mem::take(&mut self.interrupts);
        out.push(self.finished(json!({"type": "interrupt", "interrupts": interrupts})));
        true
    }

    /// The id of the model request's assistant message, made on first use.
    fn request_message(&mut self) -> String {
        if let Some(id) = &self.request_message {
            return id.clone();
        }
        self.texts += 1;
        let id = format!("{}-text-{}", self.run, self.texts);
        self.request_message = Some(id.clone());
        id
    }

    fn finished(&self, outcome: Json_) -> Json_ {
        json!({"type": "RUN_FINISHED", "threadId": self.thread, "runId": self.run, "outcome": outcome, "timestamp": now_ms()})
    }

    /// Whether `kind` is about a call a person made (see [`Window::people`]), noting the
    /// call when it starts.
    fn is_a_persons(&mut self, kind: &EventKind) -> bool {
        match kind {
            EventKind::ToolCallStarted {
                call_id,
                by_person: Some(_),
                ..
            } => {
                self.people.insert(call_id.clone());
                true
            }
            EventKind::ToolResult { result, .. } => self.people.contains(&result.call_id),
            EventKind::Widget { call_id, .. }
            | EventKind::Progress { call_id, .. }
            | EventKind::Suspended { call_id, .. }
            | EventKind::Resolved { call_id, .. } => self.people.contains(call_id),
            _ => false,
        }
    }

    /// AG-UI events for one toolwire event, and whether the run ends with it.
    fn translate(&mut self, event: &Event, ends_on_result: bool) -> (Vec<Json_>, bool) {
        if self.is_a_persons(&event.kind) {
            return (Vec::new(), false);
        }
        let mut out = Vec::new();
        let ts = now_ms();
        let end = match &event.kind {
            EventKind::AssistantDelta { text } => {
                if self.text_open.is_none() {
                    let id = self.request_message();
                    out.push(json!({"type": "TEXT_MESSAGE_START", "messageId": id, "role": "assistant", "timestamp": ts}));
                    self.text_open = Some(id);
                }
                if let Some(id) = &self.text_open {
                    out.push(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": text, "timestamp": ts}));
                }
                false
            }
            EventKind::ToolCallStarted {
                call_id,
                tool_name,
                input,
                ..
            } => {
                self.close_text(&mut out);
                let parent = self.request_message();
                out.push(json!({"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": tool_name, "parentMessageId": parent, "timestamp": ts}));
                out.push(json!({"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": input.to_string(), "timestamp": ts}));
                out.push(json!({"type": "TOOL_CALL_END", "toolCallId": call_id, "timestamp": ts}));
                self.open_calls.push(call_id.clone());
                self.calls_this_step = true;
                false
            }
            // A suspended result is the executor's own word that a call waits (the
            // `suspended` event is the interrupt); it may come after the run that ended
            // on that interrupt, in the window of the run that resumes it.
            EventKind::ToolResult { result, .. } if result.status == Status::Suspended => false,
            EventKind::ToolResult { result, .. } => {
                self.close_text(&mut out);
                out.push(json!({
                    "type": "TOOL_CALL_RESULT",
                    "messageId": format!("{}-result", result.call_id),
                    "toolCallId": result.call_id,
                    "role": "tool",
                    "content": parts(result, &self.base),
                    "timestamp": ts,
                }));
                // The canonical result (kinds, display hints, errors), for clients that
                // know toolwire.
                out.push(json!({"type": "CUSTOM", "name": "toolwire.tool_result", "value": result, "timestamp": ts}));
                self.open_calls.retain(|id| *id != result.call_id);
                if ends_on_result && self.interrupts.is_empty() {
                    out.push(self.finished(json!({"type": "success"})));
                    true
                } else {
                    self.end_if_only_questions_are_left(&mut out)
                }
            }
            EventKind::Widget { call_id, widget } => {
                out.push(json!({"type": "CUSTOM", "name": "toolwire.widget", "value": {"callId": call_id, "widget": widget}, "timestamp": ts}));
                false
            }
            EventKind::Progress {
                call_id,
                done,
                total,
                message,
            } => {
                out.push(json!({"type": "CUSTOM", "name": "toolwire.progress", "value": {"callId": call_id, "done": done, "total": total, "message": message}, "timestamp": ts}));
                false
            }
            EventKind::Suspended {
                call_id,
                suspension,
            } => {
                self.close_text(&mut out);
                let reason = match suspension.reason {
                    SuspensionReason::Input => "input_required",
                    _ => "tool_approval",
                };
                let mut interrupt = json!({
                    "id": suspension.id,
                    "reason": reason,
                    "message": suspension.prompt,
                    "toolCallId": call_id,
                });
                let schema = match suspension.reason {
                    SuspensionReason::Input => suspension.input_schema.clone(),
                    _ => Some(
                        json!({"type": "object", "properties": {"approved": {"type": "boolean"}}, "required": ["approved"]}),
                    ),
                };
                if let Some(schema) = schema.filter(Json_::is_object) {
                    interrupt["responseSchema"] = schema;
                }
                self.interrupts.push(interrupt);
                self.open_calls.retain(|id| id != call_id);
                self.end_if_only_questions_are_left(&mut out)
            }
            EventKind::TurnStarted { .. } => {
                self.calls_this_step = false;
                self.request_message = None;
                false
            }
            // A model request that asked for no tool: the agent's last (toolwire's
            // `turn` events are its requests; AG-UI's run is the whole exchange). Whether
            // it answered or failed is read from the history by the caller.
            EventKind::TurnEnded { .. } if !self.calls_this_step => {
                self.close_text(&mut out);
                self.last_step_ended = true;
                false
            }
            _ => false,
        };
        (out, end)
    }
}

/// A result's content: a plain string when it is text only (what AG-UI 0.x clients and
/// validators accept), else parts: text as text, media by URL to this server's resources
/// route (never inline base64); an error as its message.
fn parts(result: &ToolResult, base: &str) -> Json_ {
    if result.status == Status::Error {
        return Json_::String(text_of(result));
    }
    let mut parts = Vec::new();
    for value in &result.output {
        let part = match value.known() {
            Some(Ok(KnownView::Text(t))) => json!({"type": "text", "text": t.content}),
            Some(Ok(KnownView::Image(image))) => {
                json!({"type": "image", "source": source(image.source, image.mime_type, base)})
            }
            Some(Ok(KnownView::File(file))) => {
                let kind = match file.media_kind {
                    toolwire_core::MediaKind::Audio => "audio",
                    toolwire_core::MediaKind::Video => "video",
                    _ => "document",
                };
                json!({"type": kind, "source": source(file.source, file.mime_type, base)})
            }
            Some(Ok(KnownView::Structured(data))) => {
                json!({"type": "text", "text": data.to_string()})
            }
            _ => json!({"type": "text", "text": value.data.to_string()}),
        };
        parts.push(part);
    }
    if parts.iter().all(|p| p["type"] == "text") {
        let texts: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
        return Json_::String(texts.join("\n"));
    }
    Json_::Array(parts)
}

/// Where a part's bytes are: the resources route for stored media; only media small
/// enough for the store to keep inline (at most 1 KB) goes as data.
fn source(source: SourceView<'_>, mime: Option<&str>, base: &str) -> Json_ {
    let mime = mime.unwrap_or("application/octet-stream");
    match source {
        SourceView::Blob { key, .. } => json!({
            "type": "url",
            "value": format!("{base}/api/resources/{key}/content"),
            "mimeType": mime,
        }),
        SourceView::Url(url) => json!({"type": "url", "value": url, "mimeType": mime}),
        SourceView::Base64(data) => json!({"type": "data", "value": data, "mimeType": mime}),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use toolwire_core::CallRef;

    fn stored(seq: i64, content: Message) -> StoredMessage {
        StoredMessage {
            id: seq,
            session_id: "s".into(),
            seq,
            created_at_ms: 0,
            content,
        }
    }

    /// The model answered, then an MCP App's poll landed before the request's end was
    /// announced: still answered. A request that stored no answer, with or without a poll
    /// after it, is not.
    #[test]
    fn the_models_answer_is_found_behind_a_persons_calls() {
        let poll = ToolCall::new("p1", "poll", json!({})).by_app("monitor", true);
        let polled = |seq| {
            [
                stored(seq, Message::assistant("", vec![poll.clone()])),
                stored(
                    seq + 1,
                    Message::ToolResult(ToolResult::success(CallRef::new("p1", "poll"), vec![])),
                ),
            ]
        };
        let asked = stored(1, Message::user("anything?"));
        let answer = stored(2, Message::assistant("Nothing to run.", vec![]));
        assert!(model_answered(&[asked.clone(), answer.clone()]));
        let [call, result] = polled(3);
        assert!(model_answered(&[asked.clone(), answer, call, result]));
        let [call, result] = polled(2);
        assert!(!model_answered(&[asked.clone(), call, result]));
        assert!(!model_answered(&[asked]));
    }
}
