//! An MCP server's tool as a toolwire [`Tool`]: the call, its progress, its cancellation,
//! the server's questions turned into suspensions, and the MCP App it declares.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    CustomResult, ElicitRequestParams, ElicitResult, ElicitationAction, JsonObject,
    ReadResourceRequestParams, RequestId, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::{Value as Json, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use toolwire_core::{CallRef, ErrorCode, Resolution, Status, Suspension, SuspensionReason};
use toolwire_normalize::Questions;
use toolwire_tool::{Output, Resume, Tool, ToolContext, ToolError, ToolOrigin, ToolSchema};

use crate::client::{Ask, Registration};
use crate::server::{Connection, McpServer};

/// Calls parked while a person answers a server's question, per server. Bounded: a
/// question nobody answers must not hold a connection's memory forever.
const MAX_PARKED: usize = 64;

/// Where a live call waits while its question is with a person.
#[derive(Default)]
pub(crate) struct Parked {
    calls: Mutex<Vec<(String, LiveCall)>>,
}

impl Parked {
    fn park(&self, call: LiveCall) -> String {
        let id = toolwire_core::new_id("mcpq");
        if let Ok(mut calls) = self.calls.lock() {
            if calls.len() >= MAX_PARKED {
                // The oldest question is given up; dropping its call cancels it.
                calls.remove(0);
            }
            calls.push((id.clone(), call));
        }
        id
    }

    fn take(&self, id: &str) -> Option<LiveCall> {
        let mut calls = self.calls.lock().ok()?;
        let at = calls.iter().position(|(k, _)| k == id)?;
        Some(calls.remove(at).1)
    }
}

/// How many times a person was asked for input in each call of a server's tools
/// (2026-07-28 `input_required` rounds and 2025-11-25 `elicitation/create` requests
/// alike), by call id. Bounded: calls a restart or a lost answer
/// left behind are forgotten oldest first.
#[derive(Default)]
pub(crate) struct Rounds {
    /// (session id, call id, rounds): a call id names a call within its session only.
    calls: Mutex<std::collections::VecDeque<(String, String, u32)>>,
}

/// Calls whose rounds are counted at once, per server.
const MAX_COUNTED: usize = 1024;

impl Rounds {
    /// Counts one more round of call `call_id` of session `session_id`, and returns its
    /// number (1 for the first).
    fn next(&self, session_id: &str, call_id: &str) -> u32 {
        let Ok(mut calls) = self.calls.lock() else {
            return 1;
        };
        if let Some((_, _, n)) = calls
            .iter_mut()
            .find(|(session, id, _)| session == session_id && id == call_id)
        {
            *n += 1;
            return *n;
        }
        if calls.len() >= MAX_COUNTED {
            calls.pop_front();
        }
        calls.push_back((session_id.to_owned(), call_id.to_owned(), 1));
        1
    }

    fn forget(&self, session_id: &str, call_id: &str) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.retain(|(session, id, _)| session != session_id || id != call_id);
        }
    }
}

/// The error that ends a call whose question the person declined or dismissed, or
/// toolwire refused to ask.
fn ended_by_person(resolution: &Resolution) -> Option<ToolError> {
    let (what, code, reason) = match resolution {
        Resolution::Deny { reason } => ("declined", "denied", reason),
        Resolution::Cancel { reason } => ("cancelled", "cancelled", reason),
        Resolution::Refuse { reason } => {
            return Some(ToolError::Failed {
                message: format!(
                    "toolwire refused the MCP server's question, so the call ended: {reason}."
                ),
                code: Some("denied".to_owned()),
                details: None,
            });
        }
        _ => return None,
    };
    let why = reason
        .as_deref()
        .map(|r| format!(": {r}"))
        .unwrap_or_default();
    Some(ToolError::Failed {
        message: format!("The user {what} the MCP server's question, so the call ended{why}."),
        code: Some(code.to_owned()),
        details: None,
    })
}

/// One MCP tool.
pub struct McpTool {
    server: Arc<McpServer>,
    /// The tool's own name on its server (shared: every call's future holds it, for the
    /// rare retry as a task).
    remote: Arc<str>,
    schema: ToolSchema,
    /// The `ui://` resource of its MCP App, if it declares one.
    app_uri: Option<String>,
    /// `execution.taskSupport: "required"`: it runs only as a task.
    task_required: bool,
    parked: Arc<Parked>,
    rounds: Arc<Rounds>,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.schema.name)
            .field("remote", &self.remote)
            .finish_non_exhaustive()
    }
}

/// A `tools/call` in flight. Dropped before its answer, it tells the server the call is
/// cancelled (`notifications/cancelled`), so a cancelled turn or a timeout stops the work.
struct LiveCall {
    conn: Arc<Connection>,
    id: RequestId,
    rx: oneshot::Receiver<Result<ServerResult, ServiceError>>,
    asks: mpsc::Receiver<Box<Ask>>,
    registration: Registration,
    /// The person's answer goes here when the call is resumed.
    reply: Option<oneshot::Sender<ElicitResult>>,
    /// The parked question's form, for its defaults.
    form: Option<Json>,
    answered: bool,
    /// Set once the call became a task: its result, from `task::spawn_finish`.
    task: Option<oneshot::Receiver<Result<Json, ToolError>>>,
    /// Ends the task's finishing (and cancels the task) when the call is dropped.
    task_stop: CancellationToken,
}

impl LiveCall {
    /// A call just sent as `id`, its answer to come on `rx`.
    fn new(
        conn: Arc<Connection>,
        id: RequestId,
        rx: oneshot::Receiver<Result<ServerResult, ServiceError>>,
        asks: mpsc::Receiver<Box<Ask>>,
        registration: Registration,
    ) -> Self {
        LiveCall {
            conn,
            id,
            rx,
            asks,
            registration,
            reply: None,
            form: None,
            answered: false,
            task: None,
            task_stop: CancellationToken::new(),
        }
    }

    /// Cancels the call at the server now, before anything else is sent to it (the drop
    /// would only queue the cancel).
    async fn cancel_now(&mut self) {
        self.answered = true;
        let params = CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some("the toolwire call was cancelled".to_owned()),
        );
        let _ = self.conn.peer().notify_cancelled(params).await;
    }
}

impl Drop for LiveCall {
    fn drop(&mut self) {
        self.task_stop.cancel();
        if let Some(answers) = &self.conn.answers {
            answers.forget(&self.id);
        }
        if self.answered {
            return;
        }
        let peer = self.conn.peer().clone();
        let id = self.id.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let params = CancelledNotificationParam::new(
                    Some(id),
                    Some("the toolwire call was cancelled".to_owned()),
                );
                let _ = peer.notify_cancelled(params).await;
            });
        }
    }
}

impl McpTool {
    pub(crate) fn new(
        server: Arc<McpServer>,
        remote: String,
        schema: ToolSchema,
        app_uri: Option<String>,
        task_required: bool,
        parked: Arc<Parked>,
        rounds: Arc<Rounds>,
    ) -> Self {
        McpTool {
            server,
            remote: remote.into(),
            schema,
            app_uri,
            task_required,
            parked,
            rounds,
        }
    }

    /// The tool's own name on its server (what `tools/call` is sent with).
    pub fn remote_name(&self) -> &str {
        &self.remote
    }

    /// Sends one `tools/call` and returns it in flight.
    async fn start(
        server: &McpServer,
        send: Outgoing<'_>,
        task_required: bool,
        ctx: ToolContext,
    ) -> Result<LiveCall, ToolError> {
        let conn = server.connection().await.map_err(unavailable)?;
        if let (Some(direct), Outgoing::Plain(name, input)) =
            (conn.direct.as_ref().filter(|_| !task_required), &send)
        {
            // Written by toolwire itself, not through rmcp's loop (see `DirectCalls`),
            // its arguments straight from the input.
            let arguments = arguments_of(input)?;
            let meta = ctx.trace.as_ref().map(trace_fields).unwrap_or_default();
            let (asks_tx, asks) = mpsc::channel(4);
            let mut registration = conn.router.register(ctx, asks_tx);
            let (id, token) = direct.next();
            registration.bind(&token);
            let rx = direct
                .call((&id, &token), name, arguments, meta)
                .await
                .map_err(|e| unavailable(server.error(format!("could not send the call: {e}"))))?;
            return Ok(LiveCall::new(conn, id, rx, asks, registration));
        }
        let params = match send {
            Outgoing::Plain(name, input) => {
                let mut params = CallToolRequestParams::new(name.to_owned());
                params.arguments = arguments(input)?;
                params
            }
            Outgoing::Params(params) => params,
        };
        let request = if task_required && conn.protocol.has_initialize() {
            // A 2025-11-25 tool that only runs as a task: the call asks for one. rmcp does
            // not model that revision's task field, so the request is sent as JSON.
            let mut json = serde_json::to_value(&params)
                .map_err(|e| ToolError::failed(format!("unsendable call: {e}")))?;
            json["task"] = json!({"ttl": crate::task::TASK_TTL_MS});
            ClientRequest::CustomRequest(rmcp::model::CustomRequest::new("tools/call", Some(json)))
        } else {
            ClientRequest::CallToolRequest(CallToolRequest::new(params))
        };
        let mut options = PeerRequestOptions::no_options();
        options.meta = ctx.trace.as_ref().map(trace_meta);
        // Registered before it is sent: the server may ask its question before rmcp
        // returns the request's handle (a question finding no call is declined).
        let (asks_tx, asks) = mpsc::channel(4);
        let mut registration = conn.router.register(ctx, asks_tx);
        let handle = conn
            .peer()
            .send_request_with_option(request, options)
            .await
            .map_err(|e| {
                let why = crate::readable::readable(&e);
                unavailable(server.error(format!("could not send the call: {why}")))
            })?;
        registration.bind(&handle.progress_token);
        // Over stdio, the answer is left as its text: a plain result is read from it
        // straight into its typed form (`Answer::Typed`), never into a JSON tree.
        if let Some(answers) = &conn.answers {
            answers.want(&handle.id);
        }
        Ok(LiveCall::new(
            conn,
            handle.id,
            handle.rx,
            asks,
            registration,
        ))
    }

    /// Waits for the call's answer (a task's, once it became one), a question from the
    /// server, or a cancel; returns the `CallToolResult` as received. The call's count of
    /// questions is forgotten once it no longer asks.
    async fn drive(
        server: Arc<McpServer>,
        parked: Arc<Parked>,
        rounds: &Rounds,
        live: LiveCall,
        ctx: &ToolContext,
    ) -> Result<Answer, ToolError> {
        let ran = McpTool::drive_once(server, parked, rounds, live, ctx).await;
        let asks = match &ran {
            Err(ToolError::Suspend { .. }) => true,
            Ok(Answer::Json(received)) => received["resultType"] == "input_required",
            Ok(Answer::Typed(..)) | Err(_) => false,
        };
        if !asks {
            rounds.forget(&ctx.session_id, &ctx.call_id);
        }
        ran
    }

    async fn drive_once(
        server: Arc<McpServer>,
        parked: Arc<Parked>,
        rounds: &Rounds,
        mut live: LiveCall,
        ctx: &ToolContext,
    ) -> Result<Answer, ToolError> {
        let limit = server.limits().call_timeout;
        let deadline = tokio::time::sleep(limit);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                biased;
                _ = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
                // Before the executor's own limit (a little longer), so the error can say
                // which server did not answer what; dropping the call cancels it there.
                _ = &mut deadline => return Err(ToolError::with_code(
                    ErrorCode::Timeout.as_str(),
                    format!(
                        "MCP server {:?} did not answer the call within {} s; toolwire cancelled \
                         it (TOOLWIRE_MCP_TIMEOUT sets the limit)",
                        server.name(),
                        limit.as_secs()
                    ),
                )),
                answer = &mut live.rx, if live.task.is_none() => {
                    live.answered = true;
                    let json = match answer {
                        // Over stdio the answer comes as its text (a null result says the
                        // transport kept it), or as the server's JSON when the answer came
                        // before the call asked for its text; over the others, typed by rmcp.
                        Ok(Ok(ServerResult::CustomResult(CustomResult(Json::Null)))) => {
                            match live.conn.answers.as_ref().and_then(|a| a.take(&live.id)) {
                                Some(text) => match Answer::read(text)? {
                                    Answer::Json(json) => json,
                                    typed => return Ok(typed),
                                },
                                None => Json::Null,
                            }
                        }
                        Ok(Ok(ServerResult::CustomResult(CustomResult(json)))) => json,
                        Ok(Ok(result)) => serde_json::to_value(&result).map_err(unreadable)?,
                        // Refused for want of a token or of scope: the server now
                        // waits for a login (step-up asks for the scope named here).
                        Ok(Err(e)) if e.auth_challenge().is_some() => {
                            let challenge = e.auth_challenge().map(str::to_owned);
                            // Boxed: a rare path, kept out of every call's future.
                            let refused = Box::pin(server.refused_mid_session(challenge)).await;
                            return Err(unavailable(refused));
                        }
                        Ok(Err(e)) => return Err(call_error(&server, &live.conn, &e)),
                        Err(_) => {
                            server.drop_connection(&live.conn).await;
                            return Err(died(&server, &live.conn));
                        }
                    };
                    if !crate::task::is_task(&json) {
                        return Ok(Answer::Json(json));
                    }
                    // Finished beside this loop, which keeps taking the task's questions;
                    // the registration stays alive, so its progress keeps coming too.
                    live.task = Some(crate::task::spawn_finish(
                        Arc::clone(&live.conn),
                        json,
                        ctx.clone(),
                        live.task_stop.clone(),
                    ));
                }
                done = async {
                    match live.task.as_mut() {
                        Some(task) => task.await.ok(),
                        None => None,
                    }
                }, if live.task.is_some() => {
                    let Some(done) = done else {
                        return Err(ToolError::failed("the task's poller stopped"));
                    };
                    return done.map(Answer::Json);
                }
                Some(ask) = live.asks.recv() => {
                    // A 2025-11-25 server's question counts as a round, as a 2026-07-28
                    // one's does: one that asks again whatever the answer must not reach
                    // the person without end.
                    let max = server.limits().max_input_rounds;
                    if rounds.next(&ctx.session_id, &ctx.call_id) > max {
                        // Declined unasked, after the cancel: a server that asks again
                        // whatever the answer reads the cancel first and stops, instead of
                        // putting one more question that, over stdio, names no call and
                        // would reach whatever call of this server comes next.
                        live.cancel_now().await;
                        let _ = ask.reply.send(ElicitResult::new(ElicitationAction::Decline));
                        return Err(kept_asking(format!(
                            "{max} questions were put to the person in this call and it asked \
                             again, so toolwire declined that one without asking anyone and \
                             stopped the call"
                        )));
                    }
                    let suspension = ask_suspension(&ask.params);
                    live.form = suspension.input_schema.clone();
                    live.reply = Some(ask.reply);
                    let id = parked.park(live);
                    return Err(ToolError::suspend(suspension, Some(json!({"live": id}))));
                }
            }
        }
    }

    /// The call again, after an `input_required`, with the answers and the server's
    /// `requestState` echoed as it came.
    fn retry_params(
        &self,
        input: &Json,
        state: &Json,
        resolution: &Resolution,
    ) -> Result<CallToolRequestParams, ToolError> {
        let mcp = &state["mcp"];
        let request_state = mcp["requestState"].as_str().map(str::to_owned);
        let requests = mcp["inputRequests"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let questions = Questions::of(&requests);
        let mut responses = std::collections::BTreeMap::new();
        for (key, request) in &requests {
            let response = match request["method"].as_str() {
                Some("elicitation/create") => {
                    let value = match resolution {
                        Resolution::Answer { value } => Some(questions.answer_for(key, value)),
                        _ => None,
                    };
                    let schema = request.get("params").and_then(|p| p.get("requestedSchema"));
                    elicit_response(resolution, value, schema)
                }
                Some("roots/list") => json!({"roots": self.server.roots()}),
                // Sampling has no provider here; the server is told so in the response.
                _ => {
                    json!({"error": {"code": -32601, "message": "toolwire does not serve sampling for this server"}})
                }
            };
            responses.insert(key.clone(), response);
        }
        let mut params = CallToolRequestParams::new(self.remote.to_string());
        params.arguments = arguments(input)?;
        params.input_responses = Some(responses);
        params.request_state = request_state;
        Ok(params)
    }
}

/// An elicitation's answer as the server expects it. `schema` is the form's
/// `requestedSchema`: a field the person left out takes its default (SEP-1034), and a
/// plain-text answer (a terminal's) fills a one-field form, typed as the field says.
fn elicit_response(resolution: &Resolution, content: Option<Json>, schema: Option<&Json>) -> Json {
    match resolution {
        Resolution::Deny { .. } | Resolution::Refuse { .. } => return json!({"action": "decline"}),
        Resolution::Cancel { .. } => return json!({"action": "cancel"}),
        _ => {}
    }
    let properties = schema
        .and_then(|s| s.get("properties"))
        .and_then(Json::as_object);
    let mut content = match (content, properties) {
        (Some(Json::Bool(false)), _) => return json!({"action": "decline"}),
        // A URL-mode question, or a plain yes: accepted with nothing to add.
        (None | Some(Json::Null), None) => return json!({"action": "accept"}),
        (Some(Json::Object(fields)), _) => fields,
        (Some(Json::String(text)), Some(props)) => from_text(&text, props),
        (None | Some(Json::Null), Some(_)) => serde_json::Map::new(),
        (Some(other), _) => serde_json::Map::from_iter([("value".to_owned(), other)]),
    };
    for (name, prop) in properties.into_iter().flatten() {
        if let Some(default) = prop.get("default")
            && !content.contains_key(name)
        {
            content.insert(name.clone(), default.clone());
        }
    }
    json!({"action": "accept", "content": content})
}

/// A typed answer to a form: JSON when it is an object, else the text for the form's one
/// field (a number or a boolean when the field is one). Empty text leaves every field
/// to its default.
fn from_text(text: &str, props: &serde_json::Map<String, Json>) -> serde_json::Map<String, Json> {
    let text = text.trim();
    if let Ok(Json::Object(fields)) = serde_json::from_str::<Json>(text) {
        return fields;
    }
    let mut out = serde_json::Map::new();
    if text.is_empty() {
        return out;
    }
    if let Some((name, prop)) = props.iter().next().filter(|_| props.len() == 1) {
        let typed = match prop.get("type").and_then(Json::as_str) {
            Some("integer") => text.parse::<i64>().map(Json::from).ok(),
            Some("number") => text
                .parse::<f64>()
                .ok()
                .and_then(|n| serde_json::Number::from_f64(n).map(Json::Number)),
            Some("boolean") => match text.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" => Some(Json::Bool(true)),
                "n" | "no" | "false" => Some(Json::Bool(false)),
                _ => None,
            },
            _ => None,
        };
        out.insert(
            name.clone(),
            typed.unwrap_or_else(|| Json::String(text.to_owned())),
        );
    } else {
        out.insert("value".to_owned(), Json::String(text.to_owned()));
    }
    out
}

/// What a call sends: a plain call's name and input (a direct call writes the input
/// without a copy of it), or rmcp's params (a retry carrying the person's answers).
enum Outgoing<'a> {
    Plain(&'a str, &'a Json),
    Params(CallToolRequestParams),
}

/// A call's input as MCP arguments: an object, or none.
fn arguments_of(input: &Json) -> Result<Option<&JsonObject>, ToolError> {
    match input {
        Json::Object(map) => Ok(Some(map)),
        Json::Null => Ok(None),
        _ => Err(ToolError::InvalidInput(
            "MCP tool arguments must be a JSON object".to_owned(),
        )),
    }
}

fn arguments(input: &Json) -> Result<Option<JsonObject>, ToolError> {
    arguments_of(input).map(|map| map.cloned())
}

/// What the person is asked for a legacy `elicitation/create`, read from its JSON so
/// that a mode rmcp adds later still gets a prompt.
fn ask_suspension(params: &ElicitRequestParams) -> Suspension {
    let json = serde_json::to_value(params).unwrap_or(Json::Null);
    let message = json["message"].as_str().unwrap_or_default();
    let prompt = match json["url"].as_str() {
        Some(url) => format!("{message}\nThe server asks you to open {url}"),
        None => message.to_owned(),
    };
    Suspension {
        id: String::new(),
        reason: SuspensionReason::Input,
        prompt: if prompt.trim().is_empty() {
            "The MCP server needs your input to continue.".to_owned()
        } else {
            prompt
        },
        input_schema: json.get("requestedSchema").cloned(),
    }
}

/// The refusal a 2025-11-25 server gives a plain call to a tool that runs only as a task
/// (-32601, "requires task augmentation").
fn needs_task(e: &ToolError) -> bool {
    matches!(e, ToolError::Failed { details: Some(d), .. }
        if d["code"] == -32601 && d["message"].as_str().is_some_and(|m| m.contains("task")))
}

/// The same refusal as an error result, as the TypeScript SDK sends it (never a typed
/// answer: those are not errors).
fn refused_as_not_a_task(answer: &Answer) -> bool {
    let Answer::Json(result) = answer else {
        return false;
    };
    result["isError"] == true
        && result["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("-32601") && t.contains("requires task augmentation"))
}

/// The error of a call stopped because its server kept asking for input (`what` says
/// how it went).
fn kept_asking(what: String) -> ToolError {
    ToolError::Failed {
        message: format!(
            "the MCP server kept asking for input: {what} (TOOLWIRE_MCP_MAX_INPUT_ROUNDS \
             raises the limit)"
        ),
        code: Some("too_many_rounds".to_owned()),
        details: None,
    }
}

/// The limit an HTTP answer passed, when `why` (rmcp's error, made readable) says its
/// body was too large: rmcp stops reading there, so its size is not known.
fn http_too_large(why: &str) -> Option<usize> {
    let (_, rest) = why.split_once("HTTP response body exceeded the maximum size of ")?;
    rest.split(' ').next()?.parse().ok()
}

/// The code of a call whose result was too long to read.
const RESULT_TOO_LARGE: &str = "result_too_large";

fn unavailable(e: crate::server::ServerError) -> ToolError {
    ToolError::with_code(ErrorCode::Unavailable.as_str(), e.to_string())
}

fn died(server: &McpServer, conn: &Connection) -> ToolError {
    if matches!(
        server.config().transport,
        crate::config::Transport::Http { .. }
    ) {
        // No process of toolwire's ended: rmcp closed the HTTP connection (a broken
        // stream, or an SSE event over its 16 MiB limit) without saying why to the call.
        return unavailable(
            server.error(
                "the connection to the server closed before its answer to the call was read",
            ),
        );
    }
    let tail = conn.stderr_tail();
    let mut why = "the server exited before answering the call".to_owned();
    if !tail.is_empty() {
        let last = tail.lines().last().unwrap_or_default();
        why.push_str(&format!("; its stderr ends with: {last}"));
    }
    unavailable(server.error(why))
}

fn call_error(server: &McpServer, conn: &Connection, e: &ServiceError) -> ToolError {
    match e {
        ServiceError::McpError(data) => {
            too_large(server, data).unwrap_or_else(|| ToolError::Failed {
                message: format!("the MCP server answered with an error: {}", data.message),
                code: Some("mcp_error".to_owned()),
                details: serde_json::to_value(data).ok(),
            })
        }
        ServiceError::TransportClosed => died(server, conn),
        other => {
            let why = crate::readable::readable(other);
            match http_too_large(&why) {
                Some(limit) => ToolError::with_code(
                    RESULT_TOO_LARGE,
                    format!(
                        "MCP server {:?}'s result was over the {} limit of one message, so \
                         toolwire dropped it unread; ask the tool for less (a smaller page, \
                         a narrower query)",
                        server.name(),
                        crate::stdio::mib(limit)
                    ),
                ),
                None => unavailable(server.error(why)),
            }
        }
    }
}

/// The error of a call whose answer toolwire's transport dropped as too long to read
/// (its stand-in error carries the sizes), saying so; `None` for a server's own error.
fn too_large(server: &McpServer, data: &rmcp::model::ErrorData) -> Option<ToolError> {
    let dropped = data.data.as_ref()?.get(crate::stdio::DROPPED_KEY)?;
    let size = |key: &str| {
        dropped[key]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0)
    };
    Some(ToolError::with_code(
        RESULT_TOO_LARGE,
        format!(
            "MCP server {:?}'s result was {}, over the {} limit of one message, so toolwire \
             dropped it unread; ask the tool for less (a smaller page, a narrower query)",
            server.name(),
            crate::stdio::mib(size("bytes")),
            crate::stdio::mib(size("limit"))
        ),
    ))
}

/// A `tools/call`'s answer as the call's driver hands it on.
enum Answer {
    /// A complete result that is no error, read from its text by normalize's typed fast
    /// path; with that text, the payload as received.
    Typed(Box<toolwire_normalize::TypedMcp>, String),
    /// Anything else (a task, a question, an error, a result the fast path does not
    /// cover), as JSON.
    Json(Json),
}

impl Answer {
    /// An answer's text as it came over stdio.
    fn read(text: String) -> Result<Answer, ToolError> {
        match toolwire_normalize::typed_mcp(&text) {
            Some(typed) if !typed.is_error() => Ok(Answer::Typed(Box::new(typed), text)),
            _ => serde_json::from_str(&text)
                .map(Answer::Json)
                .map_err(unreadable),
        }
    }
}

/// The error of an answer whose result is not JSON (the transport checked it was).
fn unreadable(e: serde_json::Error) -> ToolError {
    ToolError::failed(format!("unreadable result: {e}"))
}

/// What a finished `tools/call` comes to, typed: a result (with the tool's MCP App as a
/// widget when it completed), or the server's questions (`input_required`) as a
/// suspension whose state carries what the retry needs. The payload as received is
/// reported to the context for an executor that keeps it.
async fn outcome(
    server: &McpServer,
    call: &CallRef,
    app_uri: Option<&str>,
    received: Answer,
    ctx: &ToolContext,
) -> Result<Output, ToolError> {
    let received = match received {
        // A plain result, complete and no error, of a tool with no app: nothing below
        // applies but normalizing, which the typed read has done; the text as received
        // is what is kept.
        Answer::Typed(typed, text) if app_uri.is_none() => {
            ctx.received_text(text);
            return Ok(Output::Result(Box::new(typed.normalized(call).result)));
        }
        Answer::Typed(_, text) => serde_json::from_str(&text).map_err(unreadable)?,
        Answer::Json(json) => json,
    };
    // Built before normalizing takes the result apart: its text is the app's fallback.
    // Only a complete success shows the app; a question or an error has nothing for it.
    let completes = received
        .get("resultType")
        .and_then(Json::as_str)
        .is_none_or(|t| t == "complete")
        && received.get("isError") != Some(&Json::Bool(true));
    let app = match app_uri {
        Some(uri) if completes => Some(toolwire_normalize::app_widget(
            // Boxed: only an app's tool reads it, and its request's state would
            // otherwise be carried in every call's future.
            &Box::pin(read_app(server, uri)).await,
            &received,
        )),
        _ => None,
    };
    if ctx.keeps_received() {
        ctx.received(received.clone());
    }
    let mut result = toolwire_normalize::normalize_value(received, call).result;
    match result.status {
        Status::Suspended => {
            let suspension = result
                .suspension
                .take()
                .unwrap_or_else(|| Questions::default().suspension());
            // The retry reads `mcp.inputRequests` and `mcp.requestState` back from it.
            let state = serde_json::to_value(&result.metadata).unwrap_or(Json::Null);
            Err(ToolError::suspend(suspension, Some(state)))
        }
        Status::Success => {
            result.widgets.extend(app);
            Ok(Output::Result(Box::new(result)))
        }
        Status::Error => Ok(Output::Result(Box::new(result))),
    }
}

/// An MCP App's HTML, read once per connection. A resource that cannot be read is still
/// a widget (the app is named, and its fallback shown), just without HTML.
async fn read_app(server: &McpServer, uri: &str) -> Json {
    if let Some(hit) = server
        .ui_cache
        .lock()
        .ok()
        .and_then(|c| c.get(uri).cloned())
    {
        return hit;
    }
    let bare = json!({"uri": uri, "mimeType": crate::client::MCP_APP_MIME});
    let Ok(conn) = server.connection().await else {
        return bare;
    };
    let read = tokio::time::timeout(
        server.limits().connect_timeout,
        conn.peer()
            .read_resource(ReadResourceRequestParams::new(uri)),
    )
    .await;
    let contents = match read {
        Ok(Ok(read)) => serde_json::to_value(&read)
            .ok()
            .and_then(|r| r["contents"].as_array().and_then(|c| c.first().cloned())),
        _ => None,
    };
    let resource = contents.unwrap_or(bare);
    if let Ok(mut cache) = server.ui_cache.lock() {
        cache.insert(uri.to_owned(), resource.clone());
    }
    resource
}

impl Tool for McpTool {
    fn schema(&self) -> &ToolSchema {
        &self.schema
    }

    fn execute(
        &self,
        input: Json,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Output, ToolError>> {
        let server = Arc::clone(&self.server);
        let parked = Arc::clone(&self.parked);
        let rounds = Arc::clone(&self.rounds);
        let app_uri = self.app_uri.clone();
        let call = CallRef::new(&*ctx.call_id, &self.schema.name);
        let remote = Arc::clone(&self.remote);
        let task_required = self.task_required;
        Box::pin(async move {
            let plain = Outgoing::Plain(&remote, &input);
            let live = McpTool::start(&server, plain, task_required, ctx.clone()).await?;
            let ran = McpTool::drive(
                Arc::clone(&server),
                Arc::clone(&parked),
                &rounds,
                live,
                &ctx,
            )
            .await;
            let received = match ran {
                // rmcp's tool model drops `execution`, so a tool that runs only as a task
                // is often known as one by this refusal; it is called again as a task.
                Err(e) if !task_required && needs_task(&e) => None,
                Ok(r) if !task_required && refused_as_not_a_task(&r) => None,
                other => Some(other?),
            };
            let received = match received {
                Some(received) => received,
                None => {
                    // Boxed where taken: unboxed, this second call's futures doubled the
                    // size of every call's (boxed whole by `execute`).
                    let again = Box::pin(async {
                        let plain = Outgoing::Plain(&remote, &input);
                        let live = McpTool::start(&server, plain, true, ctx.clone()).await?;
                        McpTool::drive(Arc::clone(&server), parked, &rounds, live, &ctx).await
                    });
                    again.await?
                }
            };
            outcome(&server, &call, app_uri.as_deref(), received, &ctx).await
        })
    }

    fn read_resource(&self, uri: &str) -> Option<BoxFuture<'static, Result<Json, ToolError>>> {
        let server = Arc::clone(&self.server);
        let uri = uri.to_owned();
        Some(Box::pin(async move {
            server
                .read_resource(&uri)
                .await
                .map_err(|e| ToolError::with_code(ErrorCode::Unavailable.as_str(), e.to_string()))
        }))
    }

    fn resume(
        &self,
        input: Json,
        resume: Resume,
        ctx: ToolContext,
    ) -> Option<BoxFuture<'static, Result<Output, ToolError>>> {
        let server = Arc::clone(&self.server);
        let parked = Arc::clone(&self.parked);
        let rounds = Arc::clone(&self.rounds);
        let app_uri = self.app_uri.clone();
        let call = CallRef::new(&*ctx.call_id, &self.schema.name);
        let state = resume.state.unwrap_or(Json::Null);
        if let Some(live_id) = state.get("live").and_then(Json::as_str) {
            // A legacy question: the call is still in flight, waiting for this answer.
            let live = parked.take(live_id);
            let resolution = resume.resolution;
            return Some(Box::pin(async move {
                let Some(mut live) = live else {
                    return Err(ToolError::with_code(
                        ErrorCode::Unavailable.as_str(),
                        "the MCP server's question was asked before toolwire restarted; \
                         its call is gone, so call the tool again",
                    ));
                };
                let content = match &resolution {
                    Resolution::Answer { value } => Some(value.clone()),
                    _ => None,
                };
                let reply: ElicitResult = serde_json::from_value(elicit_response(
                    &resolution,
                    content,
                    live.form.as_ref(),
                ))
                .unwrap_or_else(|_| ElicitResult::new(ElicitationAction::Decline));
                if let Some(tx) = live.reply.take() {
                    let _ = tx.send(reply);
                }
                live.conn.router.rebind(&live.registration, ctx.clone());
                let received =
                    McpTool::drive(Arc::clone(&server), parked, &rounds, live, &ctx).await?;
                outcome(&server, &call, app_uri.as_deref(), received, &ctx).await
            }));
        }
        if state.get("mcp").is_some() {
            // Multi Round-Trip Requests. A decline or a cancel ends the call here: sent
            // back, a server that only knows how to ask again would ask forever.
            if let Some(ended) = ended_by_person(&resume.resolution) {
                self.rounds.forget(&ctx.session_id, &ctx.call_id);
                return Some(Box::pin(async move { Err(ended) }));
            }
            let round = self.rounds.next(&ctx.session_id, &ctx.call_id);
            let max = server.limits().max_input_rounds;
            if round > max {
                self.rounds.forget(&ctx.session_id, &ctx.call_id);
                return Some(Box::pin(async move {
                    Err(kept_asking(format!(
                        "{max} answers were given and it asked again, so toolwire stopped the \
                         call"
                    )))
                }));
            }
            // The call again, with the answers.
            let params = self.retry_params(&input, &state, &resume.resolution);
            let task_required = self.task_required;
            return Some(Box::pin(async move {
                let retry = Outgoing::Params(params?);
                let live = McpTool::start(&server, retry, task_required, ctx.clone()).await?;
                // Anything but another question ends the count (`drive` forgets it).
                let ran = McpTool::drive(Arc::clone(&server), parked, &rounds, live, &ctx).await;
                outcome(&server, &call, app_uri.as_deref(), ran?, &ctx).await
            }));
        }
        None
    }
}

/// The server's tools as toolwire tools, named `SERVER__TOOL`, from their `tools/list`
/// JSON; the names are recorded for the server's status. A definition without a name is
/// skipped: nothing could call it.
pub(crate) fn tools_of(server: &Arc<McpServer>, defs: Vec<Json>) -> Vec<Arc<McpTool>> {
    let parked = Arc::new(Parked::default());
    let rounds = Arc::new(Rounds::default());
    let defs: Vec<(String, Json)> = defs
        .into_iter()
        .filter_map(|d| Some((d.get("name")?.as_str()?.to_owned(), d)))
        .collect();
    let refs: Vec<&str> = defs.iter().map(|(n, _)| n.as_str()).collect();
    let names = crate::naming::assign(server.prefix(), &refs);
    server.set_tool_names(names.clone());
    defs.iter()
        .zip(names)
        .map(|((remote, def), name)| {
            // The tool times out first (see `drive`), naming its server; the executor's
            // limit is only the backstop.
            let backstop = server.limits().call_timeout + std::time::Duration::from_secs(5);
            let (mut schema, app_uri) = crate::schema::tool_schema(&name, def, backstop);
            let read_only = schema.annotations.as_ref().and_then(|a| a.read_only_hint);
            schema.approval = server.config().approval.policy(remote, read_only);
            // The one budget rule, folded in here: every reader takes the schema's number.
            schema.max_result_chars = server.config().budget.resolve(remote, def.get("_meta"));
            schema.origin = Some(ToolOrigin {
                source: server.name().to_owned(),
                name: remote.clone(),
            });
            let task_required = def["execution"]["taskSupport"] == "required";
            Arc::new(McpTool::new(
                Arc::clone(server),
                remote.clone(),
                schema,
                app_uri,
                task_required,
                Arc::clone(&parked),
                Arc::clone(&rounds),
            ))
        })
        .collect()
}

/// The call's trace context in `_meta` under the keys MCP reserves for it (`traceparent`,
/// `tracestate`, as W3C Trace Context writes them), so a traced server's spans join the
/// trace of the call that asked.
fn trace_meta(trace: &toolwire_core::TraceContext) -> rmcp::model::RequestMetaObject {
    rmcp::model::RequestMetaObject::from(trace_fields(trace))
}

/// A call's `_meta` entries for its trace (W3C `traceparent`, and `tracestate`).
fn trace_fields(trace: &toolwire_core::TraceContext) -> JsonObject {
    let mut meta = serde_json::Map::new();
    meta.insert("traceparent".to_owned(), Json::String(trace.traceparent()));
    if let Some(state) = &trace.state {
        meta.insert("tracestate".to_owned(), Json::String(state.clone()));
    }
    meta
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn answers_take_defaults_and_plain_text_fills_a_one_field_form() {
        let answer = |v: Json| Resolution::Answer { value: v };
        let form = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John"},
            "age": {"type": "integer", "default": 30},
        }});
        let ada = json!({"name": "Ada"});
        let r = elicit_response(&answer(ada.clone()), Some(ada), Some(&form));
        assert_eq!(
            r,
            json!({"action": "accept", "content": {"name": "Ada", "age": 30}})
        );
        let r = elicit_response(&answer(json!("")), Some(json!("")), Some(&form));
        assert_eq!(r["content"], json!({"name": "John", "age": 30}));
        let one = json!({"type": "object", "properties": {"guests": {"type": "integer"}}});
        let r = elicit_response(&answer(json!("4")), Some(json!(" 4 ")), Some(&one));
        assert_eq!(r["content"], json!({"guests": 4}));
        let r = elicit_response(
            &answer(json!("")),
            Some(json!("{\"guests\": 2}")),
            Some(&one),
        );
        assert_eq!(r["content"], json!({"guests": 2}));
        let deny = Resolution::Deny { reason: None };
        assert_eq!(
            elicit_response(&deny, None, Some(&form)),
            json!({"action": "decline"})
        );
        assert_eq!(
            elicit_response(&answer(Json::Null), None, None),
            json!({"action": "accept"})
        );
    }
}
