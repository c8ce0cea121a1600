//! Tasks the gateway runs for its hosts. On 2026-07-28 (the tasks extension, SEP-2663,
//! where the server decides per call whether to make a task), a host that declares the
//! extension gets a task of the gateway's own for a call that is still running after a
//! moment (at once when its server runs the tool as a task), instead of a request held
//! open until it ends; a quicker call is answered inline as for any host. The call runs
//! through the same pipeline as any call (stored, budgeted, media kept), and the host
//! polls `tasks/get` (the server's status messages as `statusMessage`, the budgeted
//! result inline once completed) or cancels with `tasks/cancel` (which cancels the
//! server's task too). Only calls that ask nobody become tasks: a call needing approval
//! keeps the host's own way of asking (a task here could not put the question to it).
//! On 2025-11-25 the host asks for a task (`params.task`) and reads it with `tasks/get`,
//! `tasks/result`, `tasks/list` and `tasks/cancel` in that revision's shapes (made on
//! stdio by [`crate::tasks_wire`]).
//!
//! A task belongs to the toolwire session of the connection that made it: another
//! connection (or another stateless client) asking for its id is told no such task
//! exists. Ids are random (122 bits), live tasks are capped per session, and finished
//! ones are dropped after their time to live.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, CancelTaskParams, CreateTaskResult, DetailedTask, GetTaskParams,
    GetTaskResult, JsonObject, Task, TaskPayload, TaskStatus,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value as Json, json};
use tokio_util::sync::CancellationToken;
use toolwire_core::{ToolCall, new_id};

use crate::tasks_wire::{CREATED_TASK_META, LEGACY_CANCEL, LEGACY_GET, LEGACY_TASK_META};
use crate::{Gateway, asks, progress};

/// Most tasks one session runs at once; past it a call is answered inline, as for a
/// host without tasks (the server decides per call whether to make a task).
pub(crate) const MAX_LIVE_PER_SESSION: usize = 16;

/// Most tasks kept in all, running or finished; past it the oldest finished go first,
/// and when none has finished a call is answered inline.
const MAX_TASKS: usize = 1024;

/// How long a task and its result are kept from its creation.
const TTL: Duration = Duration::from_secs(10 * 60);

/// The bounds of a time to live a 2025-11-25 host asks for.
const MIN_TTL: Duration = Duration::from_secs(60);
const MAX_TTL: Duration = Duration::from_secs(60 * 60);

/// Tasks per `tasks/list` page.
const LIST_PAGE: usize = 50;

/// How long a call may run before it becomes a task: one that ends sooner is answered
/// inline, as for a host without tasks.
const INLINE_GRACE: Duration = Duration::from_secs(1);

/// A result finished late in its time to live is kept at least this long after.
const KEEP_AFTER_END: Duration = Duration::from_secs(60);

/// How often the host is asked to poll.
const POLL_INTERVAL_MS: u64 = 500;

/// The `_meta` key that ties a result to its task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// Longest status message kept (a server's status is a line, not a report).
const MAX_STATUS_CHARS: usize = 500;

/// What a task is and how far it got.
struct Entry {
    /// The toolwire session of the connection that made it: only it may read it.
    owner: String,
    created_at: String,
    created: Instant,
    ttl: Duration,
    cancel: CancellationToken,
    state: Mutex<State>,
    /// Turns true when the task ends, however.
    done: tokio::sync::watch::Sender<bool>,
}

struct State {
    status: TaskStatus,
    message: Option<String>,
    last_updated_at: String,
    /// The result as the host gets it (budgeted), or the error the call ended in.
    outcome: Option<Result<JsonObject, ErrorData>>,
    ended: Option<Instant>,
}

/// Every task of one gateway process, by id.
pub(crate) struct Tasks {
    all: Mutex<HashMap<String, Arc<Entry>>>,
    /// Marks what the gateway itself put in a message's `_meta` for the 2025-11-25
    /// rewriting on stdio ([`crate::tasks_wire`]): random per process, so neither a host
    /// nor a tool's result can pose as it.
    pub(crate) nonce: String,
}

impl Default for Tasks {
    fn default() -> Self {
        Tasks {
            all: Mutex::new(HashMap::new()),
            nonce: uuid::Uuid::new_v4().simple().to_string(),
        }
    }
}

fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

fn not_found(task_id: &str) -> ErrorData {
    // The same answer for a task that never was, expired, or is another client's: its
    // existence is not told to whoever cannot read it.
    ErrorData::invalid_params(
        format!("no task {task_id:?} for this client (unknown, expired, or not yours)"),
        None,
    )
}

impl Entry {
    fn is_over(&self, now: Instant) -> bool {
        let Ok(state) = self.state.lock() else {
            return true;
        };
        match state.ended {
            Some(ended) => now > (self.created + self.ttl).max(ended + KEEP_AFTER_END),
            None => false,
        }
    }

    fn is_live(&self) -> bool {
        self.state
            .lock()
            .map(|s| !s.status.is_terminal())
            .unwrap_or(false)
    }

    fn task(&self, id: &str) -> DetailedTask {
        let Ok(state) = self.state.lock() else {
            let failed = TaskPayload::Failed {
                error: error_object(&ErrorData::internal_error("the task's state is lost", None)),
            };
            return DetailedTask::new(self.base(id, TaskStatus::Failed, None, ""), failed);
        };
        let base = self.base(
            id,
            state.status,
            state.message.clone(),
            &state.last_updated_at,
        );
        let payload = match (&state.outcome, state.status) {
            (_, TaskStatus::Cancelled) => TaskPayload::Cancelled,
            (Some(Ok(result)), _) => TaskPayload::Completed {
                result: result.clone(),
            },
            (Some(Err(e)), _) => TaskPayload::Failed {
                error: error_object(e),
            },
            (None, _) => TaskPayload::Working,
        };
        DetailedTask::new(base, payload)
    }

    fn base(&self, id: &str, status: TaskStatus, message: Option<String>, updated: &str) -> Task {
        let updated = if updated.is_empty() {
            self.created_at.clone()
        } else {
            updated.to_owned()
        };
        let ttl_ms = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
        let mut task = Task::new(id, status, self.created_at.clone(), updated)
            .with_ttl_ms(ttl_ms)
            .with_poll_interval_ms(POLL_INTERVAL_MS);
        task.status_message = message;
        task
    }

    /// Records what the call came to, unless the task ended already (a cancelled task
    /// stays cancelled whatever its call does after).
    fn end(&self, outcome: Result<JsonObject, ErrorData>) {
        if let Ok(mut state) = self.state.lock() {
            if state.status.is_terminal() {
                return;
            }
            state.status = if outcome.is_ok() {
                TaskStatus::Completed
            } else {
                TaskStatus::Failed
            };
            if let Err(e) = &outcome {
                state.message = Some(e.message.to_string());
            }
            state.outcome = Some(outcome);
            state.last_updated_at = now_rfc3339();
            state.ended = Some(Instant::now());
        }
        self.done.send_replace(true);
    }

    fn status_message(&self, message: String) {
        if let Ok(mut state) = self.state.lock()
            && !state.status.is_terminal()
        {
            state.message = Some(message.chars().take(MAX_STATUS_CHARS).collect());
            state.last_updated_at = now_rfc3339();
        }
    }
}

/// `result` marked as the result of task `id` (the spec's `related-task`), in place of
/// the server's own task, which the host never saw.
fn related_to(mut result: JsonObject, id: &str) -> JsonObject {
    let meta = result
        .entry("_meta")
        .or_insert_with(|| Json::Object(JsonObject::new()));
    if let Json::Object(meta) = meta {
        meta.insert(RELATED_TASK.into(), json!({"taskId": id}));
    }
    result
}

/// The outcome of a task that ended within the grace, as the inline answer.
fn inline(entry: &Entry) -> Result<CallToolResponse, ErrorData> {
    let mut outcome = entry
        .state
        .lock()
        .map_err(|_| ErrorData::internal_error("the call's state is lost", None))?
        .outcome
        .take()
        .unwrap_or_else(|| Err(ErrorData::internal_error("the call was cancelled", None)))?;
    // Answered inline, it is no task's result.
    if let Some(Json::Object(meta)) = outcome.get_mut("_meta") {
        meta.remove(RELATED_TASK);
    }
    let reply = serde_json::from_value(Json::Object(outcome))
        .map_err(|e| ErrorData::internal_error(format!("unsendable result: {e}"), None))?;
    Ok(CallToolResponse::Complete(reply))
}

fn error_object(e: &ErrorData) -> JsonObject {
    match serde_json::to_value(e) {
        Ok(Json::Object(map)) => map,
        _ => {
            let mut map = JsonObject::new();
            map.insert("code".into(), json!(-32603));
            map.insert("message".into(), json!(e.message));
            map
        }
    }
}

impl Tasks {
    /// Keeps `entry` under a new id, unless its session runs too many already or the
    /// process keeps too many; drops what is over first.
    fn admit(&self, entry: Entry) -> Option<(String, Arc<Entry>)> {
        let mut all = self.all.lock().ok()?;
        let now = Instant::now();
        all.retain(|_, e| !e.is_over(now));
        let live = all
            .values()
            .filter(|e| e.owner == entry.owner && e.is_live())
            .count();
        if live >= MAX_LIVE_PER_SESSION {
            return None;
        }
        if all.len() >= MAX_TASKS {
            let oldest = all
                .iter()
                .filter(|(_, e)| !e.is_live())
                .min_by_key(|(_, e)| e.created)
                .map(|(id, _)| id.clone())?;
            all.remove(&oldest);
        }
        let id = format!("task_{}", uuid::Uuid::new_v4().simple());
        let entry = Arc::new(entry);
        all.insert(id.clone(), Arc::clone(&entry));
        Some((id, entry))
    }

    /// Forgets task `id` (a call answered inline after all).
    fn forget(&self, id: &str) {
        if let Ok(mut all) = self.all.lock() {
            all.remove(id);
        }
    }

    /// `tasks/list` (2025-11-25): `owner`'s tasks, oldest first, a page at a time.
    fn list(&self, owner: &str, params: &Json) -> Result<Json, ErrorData> {
        let start = match params.get("cursor") {
            None | Some(Json::Null) => 0,
            Some(cursor) => cursor
                .as_str()
                .and_then(|c| c.parse::<usize>().ok())
                .ok_or_else(|| ErrorData::invalid_params("not a cursor of tasks/list", None))?,
        };
        let mut mine: Vec<(String, Arc<Entry>)> = {
            let all = self
                .all
                .lock()
                .map_err(|_| ErrorData::internal_error("the tasks are lost", None))?;
            let now = Instant::now();
            all.iter()
                .filter(|(_, e)| e.owner == owner && !e.is_over(now))
                .map(|(id, e)| (id.clone(), Arc::clone(e)))
                .collect()
        };
        mine.sort_by_key(|(_, e)| e.created);
        let page: Vec<Json> = mine
            .iter()
            .skip(start)
            .take(LIST_PAGE)
            .map(|(id, e)| e.legacy(id))
            .collect();
        let mut listed = json!({"tasks": page});
        if start + LIST_PAGE < mine.len() {
            listed["nextCursor"] = json!((start + LIST_PAGE).to_string());
        }
        Ok(listed)
    }

    /// Task `id` if `owner`'s, and not over.
    fn find(&self, id: &str, owner: &str) -> Result<Arc<Entry>, ErrorData> {
        let all = self.all.lock().map_err(|_| not_found(id))?;
        all.get(id)
            .filter(|e| e.owner == owner && !e.is_over(Instant::now()))
            .cloned()
            .ok_or_else(|| not_found(id))
    }
}

/// Whether the host declared the tasks extension for this request (2026-07-28 per
/// request, or at the handshake).
fn host_takes_tasks(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|caps| caps.supports_tasks())
}

impl Gateway {
    /// Whether `context`'s call may become a task ([`Gateway::call_as_task`] can give
    /// one): its host asked for one the 2025-11-25 way, or takes them. A plain call
    /// skips the task's machinery (and its future's size) altogether.
    pub(crate) fn may_be_task(&self, context: &RequestContext<RoleServer>) -> bool {
        context.meta.get(LEGACY_TASK_META).is_some() || host_takes_tasks(context)
    }

    /// The tools whose calls may become tasks, as the host sees them listed.
    pub(crate) fn task_tools(&self) -> std::collections::HashSet<String> {
        let tools = self.shared.host.tools();
        tools
            .schemas()
            .filter(|s| !s.hidden_from_model && s.name != crate::READ_RESULT)
            .filter(|s| self.task_fit(&s.name).is_some())
            .map(|s| s.name.clone())
            .collect()
    }

    /// Whether a call of tool `name` may become a task: it asks nobody (no approval by
    /// policy); and whether its server runs it as a task (`execution.taskSupport`
    /// "optional" or "required", when the server's listing kept it), so it becomes one
    /// at once.
    fn task_fit(&self, name: &str) -> Option<bool> {
        let tool = self.shared.host.tool(name)?;
        let schema = tool.schema();
        if schema.approval != toolwire_tool::ApprovalPolicy::Never {
            return None;
        }
        let support = schema
            .extra
            .get("execution")
            .and_then(|e| e.get("taskSupport"))
            .and_then(Json::as_str);
        Some(matches!(support, Some("optional" | "required")))
    }

    /// Hook of `tools/call` for a host that takes tasks: the call of `name` with
    /// `arguments`, answered inline if it ends within [`INLINE_GRACE`], else by a task
    /// of the gateway's that it runs on behind; `None` to call it as usual (the host
    /// takes no tasks, the call may ask someone, or too many tasks run).
    pub(crate) async fn call_as_task(
        &self,
        name: &str,
        arguments: &JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<CallToolResponse>, ErrorData> {
        if let Some(asked) = self.legacy_task_asked(context) {
            return self
                .legacy_call_as_task(name, arguments, &asked, context)
                .await;
        }
        if !host_takes_tasks(context) {
            return Ok(None);
        }
        let Some(upstream_task) = self.task_fit(name) else {
            return Ok(None);
        };
        let session = self.session(context).await?;
        let Some((id, entry)) = self
            .start_task(name, arguments, &session, TTL, context)
            .await?
        else {
            return Ok(None);
        };
        if !upstream_task {
            let mut done = entry.done.subscribe();
            let quick = tokio::select! {
                quick = tokio::time::timeout(INLINE_GRACE, done.wait_for(|d| *d)) => quick,
                () = context.ct.cancelled() => {
                    // The host cancelled its request before it became a task.
                    entry.cancel.cancel();
                    self.shared.tasks.forget(&id);
                    return Err(ErrorData::internal_error("the call was cancelled", None));
                }
            };
            if quick.is_ok() {
                self.shared.tasks.forget(&id);
                return inline(&entry).map(Some);
            }
        }
        let seed = entry.task(&id).task;
        Ok(Some(CallToolResponse::Task(CreateTaskResult::new(seed))))
    }

    /// Runs the call of `name` as a new task of `session`'s; `None` when it may run no
    /// more tasks.
    async fn start_task(
        &self,
        name: &str,
        arguments: &JsonObject,
        session: &str,
        ttl: Duration,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<(String, Arc<Entry>)>, ErrorData> {
        let trace = crate::trace_of(context);
        let profile = self.profile(context);
        let created_at = now_rfc3339();
        let entry = Entry {
            owner: session.to_owned(),
            created_at: created_at.clone(),
            created: Instant::now(),
            ttl,
            cancel: CancellationToken::new(),
            state: Mutex::new(State {
                status: TaskStatus::Working,
                message: None,
                last_updated_at: created_at,
                outcome: None,
                ended: None,
            }),
            done: tokio::sync::watch::Sender::new(false),
        };
        let Some((id, entry)) = self.shared.tasks.admit(entry) else {
            return Ok(None);
        };
        let call = ToolCall::new(new_id("call"), name, Json::Object(arguments.clone()));
        // The host is not waiting on this request: a person is asked through the web app
        // (a task here cannot put a question to its host), else the call is refused.
        let via = asks::Via::Elsewhere {
            settings: self.shared.asks.clone(),
            suspensions: Arc::clone(self.shared.host.stores().suspensions()),
        };
        let approver = Arc::new(asks::HostAsks::new(via, self.shared.asks.timeout));
        // The call's progress becomes the task's status message as it is reported.
        let working = Arc::clone(&entry);
        let running = self
            .shared
            .host
            .run_call(
                session,
                call.clone(),
                toolwire_agent::CallOptions::new(approver)
                    .scope(toolwire_agent::CallScope {
                        cancel: entry.cancel.clone(),
                        trace,
                        progress: Some(progress::Tap::to(progress::To::Status(Box::new(
                            move |said| working.status_message(said),
                        )))),
                    })
                    .recorded(self.recorder())
                    .without_events(),
            )
            .await;
        let running = match running {
            Ok(running) => running,
            Err(e) => {
                let e = ErrorData::internal_error(format!("the call could not start: {e}"), None);
                entry.end(Err(e.clone()));
                return Err(e);
            }
        };
        let gateway = self.sibling();
        let task_id = id.clone();
        let finished = Arc::clone(&entry);
        tokio::spawn(async move {
            let outcome = match running.finish().await {
                Ok(result) => match gateway.reply(result, call, &profile).await {
                    Ok(CallToolResponse::Complete(reply)) => match serde_json::to_value(reply) {
                        Ok(Json::Object(map)) => Ok(related_to(map, &task_id)),
                        _ => Err(ErrorData::internal_error("unsendable result", None)),
                    },
                    Ok(_) => Err(ErrorData::internal_error("the call did not complete", None)),
                    Err(e) => Err(e),
                },
                Err(e) => Err(ErrorData::internal_error(
                    format!("the call ended badly: {e}"),
                    None,
                )),
            };
            finished.end(outcome);
        });
        Ok(Some((id, entry)))
    }

    /// `tasks/get`: the task's state, its result inline once it completed.
    pub(crate) async fn task_state(
        &self,
        request: GetTaskParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let session = self.session(context).await?;
        let entry = self.shared.tasks.find(&request.task_id, &session)?;
        Ok(GetTaskResult::new(entry.task(&request.task_id)))
    }

    /// `tasks/cancel`: the call is cancelled (the server's own task with it) and the
    /// task is `cancelled` from now on; a task that ended already cannot be.
    pub(crate) async fn cancel_task_of(
        &self,
        request: CancelTaskParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let session = self.session(context).await?;
        let entry = self.shared.tasks.find(&request.task_id, &session)?;
        entry.cancel_by_host(&request.task_id)
    }

    /// The task a 2025-11-25 host asked for in its `tools/call` (`params.task`, moved
    /// into `_meta` on stdio by [`crate::tasks_wire`]), if this request carries one.
    fn legacy_task_asked(&self, context: &RequestContext<RoleServer>) -> Option<Json> {
        let asked = context.meta.get(LEGACY_TASK_META)?;
        (asked.get("nonce").and_then(Json::as_str) == Some(self.shared.tasks.nonce.as_str()))
            .then(|| asked.get("task").cloned().unwrap_or_else(|| json!({})))
    }

    /// A 2025-11-25 task-augmented call: a task at once (the host asked for one), its
    /// `CreateTaskResult` marked for [`crate::tasks_wire`] to shape; `None` to answer it
    /// inline (it may ask someone, or too many tasks run).
    async fn legacy_call_as_task(
        &self,
        name: &str,
        arguments: &JsonObject,
        asked: &Json,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<CallToolResponse>, ErrorData> {
        if self.task_fit(name).is_none() {
            return Ok(None);
        }
        let ttl = asked
            .get("ttl")
            .and_then(Json::as_u64)
            .map_or(TTL, |ms| Duration::from_millis(ms).clamp(MIN_TTL, MAX_TTL));
        let session = self.session(context).await?;
        let Some((id, entry)) = self
            .start_task(name, arguments, &session, ttl, context)
            .await?
        else {
            return Ok(None);
        };
        let marked = json!({
            "content": [],
            "_meta": {CREATED_TASK_META: {
                "nonce": self.shared.tasks.nonce,
                "task": entry.legacy(&id),
            }},
        });
        let reply = serde_json::from_value(marked)
            .map_err(|e| ErrorData::internal_error(format!("unsendable task: {e}"), None))?;
        Ok(Some(CallToolResponse::Complete(reply)))
    }

    /// The 2025-11-25 task requests (`tasks/get`, `tasks/cancel` renamed on stdio by
    /// [`crate::tasks_wire`]; `tasks/result`, `tasks/list` as they come), answered in
    /// that revision's shapes; `None` for any other method.
    pub(crate) async fn legacy_task_request(
        &self,
        method: &str,
        params: &Json,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<Json, ErrorData>> {
        let known = [LEGACY_GET, LEGACY_CANCEL, "tasks/result", "tasks/list"];
        if !known.contains(&method) {
            return None;
        }
        let session = match self.session(context).await {
            Ok(session) => session,
            Err(e) => return Some(Err(e)),
        };
        if method == "tasks/list" {
            return Some(self.shared.tasks.list(&session, params));
        }
        let Some(id) = params.get("taskId").and_then(Json::as_str) else {
            return Some(Err(ErrorData::invalid_params("taskId is missing", None)));
        };
        let entry = match self.shared.tasks.find(id, &session) {
            Ok(entry) => entry,
            Err(e) => return Some(Err(e)),
        };
        Some(match method {
            LEGACY_GET => Ok(entry.legacy(id)),
            LEGACY_CANCEL => entry.cancel_by_host(id).map(|()| entry.legacy(id)),
            _ => entry.result(context).await,
        })
    }
}

impl Entry {
    /// The task as 2025-11-25 shapes it (`ttl`, `pollInterval`, no payload).
    fn legacy(&self, id: &str) -> Json {
        let mut task = serde_json::to_value(self.task(id).task).unwrap_or_else(|_| json!({}));
        if let Some(map) = task.as_object_mut() {
            if let Some(ttl) = map.remove("ttlMs") {
                map.insert("ttl".into(), ttl);
            }
            if let Some(poll) = map.remove("pollIntervalMs") {
                map.insert("pollInterval".into(), poll);
            }
        }
        task
    }

    /// `tasks/result`: once the task ends, what the call would have answered inline.
    async fn result(&self, context: &RequestContext<RoleServer>) -> Result<Json, ErrorData> {
        let mut done = self.done.subscribe();
        tokio::select! {
            _ = done.wait_for(|d| *d) => {}
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("tasks/result was cancelled", None));
            }
        }
        let state = self
            .state
            .lock()
            .map_err(|_| ErrorData::internal_error("the task's state is lost", None))?;
        match (&state.outcome, state.status) {
            (_, TaskStatus::Cancelled) | (None, _) => {
                Err(ErrorData::internal_error("the task was cancelled", None))
            }
            (Some(Ok(result)), _) => Ok(Json::Object(result.clone())),
            (Some(Err(e)), _) => Err(e.clone()),
        }
    }

    /// Cancels the task for its host; one that ended already cannot be.
    fn cancel_by_host(&self, id: &str) -> Result<(), ErrorData> {
        {
            let mut state = self
                .state
                .lock()
                .map_err(|_| ErrorData::internal_error("the task's state is lost", None))?;
            if state.status.is_terminal() {
                return Err(ErrorData::invalid_params(
                    format!("task {id:?} has ended already"),
                    None,
                ));
            }
            state.status = TaskStatus::Cancelled;
            state.message = Some("cancelled by the host".to_owned());
            state.last_updated_at = now_rfc3339();
            state.ended = Some(Instant::now());
        }
        self.cancel.cancel();
        self.done.send_replace(true);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn entry(owner: &str) -> Entry {
        Entry {
            owner: owner.to_owned(),
            created_at: now_rfc3339(),
            created: Instant::now(),
            ttl: TTL,
            cancel: CancellationToken::new(),
            state: Mutex::new(State {
                status: TaskStatus::Working,
                message: None,
                last_updated_at: now_rfc3339(),
                outcome: None,
                ended: None,
            }),
            done: tokio::sync::watch::Sender::new(false),
        }
    }

    #[test]
    fn a_task_is_read_only_by_its_own_session() {
        let tasks = Tasks::default();
        let (id, _) = tasks.admit(entry("a")).unwrap();
        assert!(tasks.find(&id, "a").is_ok());
        let foreign = tasks.find(&id, "b").err().unwrap();
        let unknown = tasks.find("task_nope", "a").err().unwrap();
        // Another's task and no task at all are told apart by nobody.
        assert_eq!(foreign.code, unknown.code);
        assert!(foreign.message.contains("not yours"));
    }

    #[test]
    fn live_tasks_are_capped_per_session() {
        let tasks = Tasks::default();
        for _ in 0..MAX_LIVE_PER_SESSION {
            assert!(tasks.admit(entry("a")).is_some());
        }
        assert!(tasks.admit(entry("a")).is_none());
        // Another session is not held back by this one.
        assert!(tasks.admit(entry("b")).is_some());
        // A finished task frees its place.
        let (_, first) = tasks.admit(entry("b")).unwrap();
        first.end(Ok(JsonObject::new()));
        assert!(tasks.admit(entry("b")).is_some());
    }

    #[test]
    fn a_finished_task_is_dropped_after_its_ttl() {
        let tasks = Tasks::default();
        let mut short = entry("a");
        short.ttl = Duration::ZERO;
        short.created = Instant::now() - KEEP_AFTER_END * 2;
        let (id, short) = tasks.admit(short).unwrap();
        // Running, it stays whatever its ttl.
        assert!(tasks.find(&id, "a").is_ok());
        short.end(Ok(JsonObject::new()));
        if let Ok(mut state) = short.state.lock() {
            state.ended = Some(Instant::now() - KEEP_AFTER_END * 2);
        }
        assert!(tasks.find(&id, "a").is_err());
    }

    #[test]
    fn tasks_list_pages_one_sessions_tasks() {
        let tasks = Tasks::default();
        for _ in 0..LIST_PAGE + 3 {
            let (_, e) = tasks.admit(entry("a")).unwrap();
            // Ended, so the cap on live tasks does not stop the filling.
            e.end(Ok(JsonObject::new()));
        }
        tasks.admit(entry("b")).unwrap();
        let first = tasks.list("a", &Json::Null).unwrap();
        assert_eq!(first["tasks"].as_array().unwrap().len(), LIST_PAGE);
        assert_eq!(first["tasks"][0]["status"], "completed");
        assert!(first["tasks"][0]["ttl"].is_u64() && first["tasks"][0].get("ttlMs").is_none());
        let next = &first["nextCursor"];
        let second = tasks.list("a", &json!({"cursor": next})).unwrap();
        assert_eq!(second["tasks"].as_array().unwrap().len(), 3);
        assert!(second.get("nextCursor").is_none());
        let bad = tasks.list("a", &json!({"cursor": "zz"})).err().unwrap();
        assert_eq!(bad.code, ErrorData::invalid_params("", None).code);
    }

    #[test]
    fn a_cancelled_task_stays_cancelled() {
        let e = entry("a");
        if let Ok(mut state) = e.state.lock() {
            state.status = TaskStatus::Cancelled;
        }
        e.end(Ok(JsonObject::new()));
        let task = e.task("t");
        assert_eq!(task.status(), TaskStatus::Cancelled);
        assert_eq!(task.payload, TaskPayload::Cancelled);
    }

    #[test]
    fn a_completed_task_carries_its_result_and_times() {
        let e = entry("a");
        e.status_message("Gathering sources...".to_owned());
        let mut result = JsonObject::new();
        result.insert("content".into(), json!([{"type": "text", "text": "hi"}]));
        e.end(Ok(result.clone()));
        let wire = serde_json::to_value(GetTaskResult::new(e.task("t"))).unwrap();
        assert_eq!(wire["status"], "completed");
        assert_eq!(wire["result"], Json::Object(result));
        assert_eq!(wire["taskId"], "t");
        assert_eq!(wire["ttlMs"], 600_000);
        assert_eq!(wire["pollIntervalMs"], POLL_INTERVAL_MS);
        assert!(wire["createdAt"].as_str().unwrap().ends_with('Z'));
    }
}
