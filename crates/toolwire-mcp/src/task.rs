//! MCP tasks, both revisions: a call the server runs as a task (2025-11-25's
//! `taskSupport: "required"`, or a 2026-07-28 `resultType: "task"`) is polled with
//! `tasks/get` until it ends, its status messages shown as progress, cancellable, and its
//! final result fetched once (inline in 2026-07-28, `tasks/result` in 2025-11-25).

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CancelTaskParams, GetTaskParams};
use serde_json::{Value as Json, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use toolwire_tool::{ToolContext, ToolError};

use crate::server::{Connection, request_raw};

/// How long a task lives on the server if it is abandoned, asked for on creation.
pub(crate) const TASK_TTL_MS: u64 = 10 * 60 * 1000;

/// Polling bounds, whatever the server suggests: often enough to feel live, rarely
/// enough not to flood it.
const MIN_POLL: Duration = Duration::from_millis(100);
const MAX_POLL: Duration = Duration::from_secs(5);

/// Whether a call's answer is a task rather than its result.
pub(crate) fn is_task(answer: &Json) -> bool {
    answer.get("resultType").and_then(Json::as_str) == Some("task")
        || answer
            .get("task")
            .and_then(|t| t.get("taskId"))
            .is_some_and(Json::is_string)
}

/// A request by method name and JSON params; its answer as JSON. Tasks are JSON-level
/// here because rmcp models only one revision's task messages.
pub(crate) async fn request(
    conn: &Connection,
    method: &str,
    params: Json,
) -> Result<Json, ToolError> {
    request_raw(conn, method, params)
        .await
        .map_err(|e| {
            let why = crate::readable::readable(&e);
            ToolError::failed(format!("{method} failed: {why}"))
        })?
        .map_err(|e| ToolError::failed(format!("{method}: {e}")))
}

/// Finishes the task `created` describes in a task of its own, so that the call waiting
/// for it can still take the server's questions: a task that needs input asks through
/// `tasks/result` (`relatedTask`), and the call must be free to put that question to a
/// person and be resumed, while the task's request stays open. `stop` ends it early (the
/// call was dropped: cancelled, timed out or abandoned), telling the server.
pub(crate) fn spawn_finish(
    conn: Arc<Connection>,
    created: Json,
    ctx: ToolContext,
    stop: CancellationToken,
) -> oneshot::Receiver<Result<Json, ToolError>> {
    let (tx, rx) = oneshot::channel();
    tokio::spawn(async move {
        let done = finish(&conn, &created, &ctx, &stop).await;
        let _ = tx.send(done);
    });
    rx
}

/// Polls the task `created` describes until it ends; its final result, as JSON.
async fn finish(
    conn: &Connection,
    created: &Json,
    ctx: &ToolContext,
    stop: &CancellationToken,
) -> Result<Json, ToolError> {
    let task = created.get("task").unwrap_or(created);
    let Some(task_id) = task.get("taskId").and_then(Json::as_str).map(str::to_owned) else {
        return Err(ToolError::failed(
            "the server created a task without a taskId",
        ));
    };
    let mut poll = poll_interval(task);
    let mut last_message: Option<String> = None;
    let mut polls = 0u64;
    loop {
        tokio::select! {
            biased;
            _ = stop.cancelled() => {
                // Tell the server, then end as cancelled whatever it answers.
                cancel(conn, &task_id).await;
                return Err(ToolError::Cancelled);
            }
            _ = tokio::time::sleep(poll) => {}
        }
        polls += 1;
        let got = until_stopped(conn, &task_id, stop, get(conn, &task_id)).await?;
        let state = got.get("task").unwrap_or(&got);
        poll = poll_interval(state);
        let message = state
            .get("statusMessage")
            .and_then(Json::as_str)
            .map(str::to_owned);
        if message.is_some() && message != last_message {
            ctx.progress(polls, None, message.as_deref()).await;
            last_message = message;
        }
        match state
            .get("status")
            .and_then(Json::as_str)
            .unwrap_or("working")
        {
            "working" => {}
            "completed" => {
                // 2026-07-28 inlines the result; 2025-11-25 hands it out on request.
                if let Some(result) = got.get("result") {
                    return Ok(result.clone());
                }
                return request(conn, "tasks/result", json!({"taskId": task_id})).await;
            }
            "failed" => {
                let why = got
                    .get("error")
                    .and_then(|e| e.get("message"))
                    .and_then(Json::as_str)
                    .or(state.get("statusMessage").and_then(Json::as_str))
                    .unwrap_or("no reason given");
                return Err(ToolError::failed(format!(
                    "the server's task failed: {why}"
                )));
            }
            "cancelled" => return Err(ToolError::failed("the server cancelled the task")),
            // 2025-11-25: the server asks through `tasks/result`, which waits for the end;
            // its questions arrive meanwhile as requests of their own (`relatedTask`).
            "input_required" if got.get("inputRequests").is_none() => {
                let result = request(conn, "tasks/result", json!({"taskId": task_id}));
                return until_stopped(conn, &task_id, stop, result).await;
            }
            "input_required" => {
                return Err(ToolError::failed(
                    "the task needs input, which toolwire cannot give a 2026-07-28 task yet",
                ));
            }
            other => {
                return Err(ToolError::failed(format!(
                    "the task is in an unknown state {other:?}"
                )));
            }
        }
    }
}

/// `work` on the task, unless `stop` comes first: then the server is told to cancel it.
async fn until_stopped(
    conn: &Connection,
    task_id: &str,
    stop: &CancellationToken,
    work: impl std::future::Future<Output = Result<Json, ToolError>>,
) -> Result<Json, ToolError> {
    tokio::select! {
        biased;
        _ = stop.cancelled() => {
            cancel(conn, task_id).await;
            Err(ToolError::Cancelled)
        }
        done = work => done,
    }
}

/// `tasks/get`: typed for 2026-07-28, where rmcp routes it; as JSON for 2025-11-25, whose
/// shape rmcp does not model.
async fn get(conn: &Connection, task_id: &str) -> Result<Json, ToolError> {
    if conn.protocol.has_initialize() {
        return request(conn, "tasks/get", json!({"taskId": task_id})).await;
    }
    let got = conn
        .peer()
        .get_task(GetTaskParams::new(task_id))
        .await
        .map_err(|e| ToolError::failed(format!("tasks/get failed: {e}")))?;
    serde_json::to_value(got).map_err(|e| ToolError::failed(format!("tasks/get: {e}")))
}

/// Asks the server to stop the task; its answer changes nothing here.
async fn cancel(conn: &Connection, task_id: &str) {
    if conn.protocol.has_initialize() {
        let _ = request(conn, "tasks/cancel", json!({"taskId": task_id})).await;
    } else {
        let _ = conn
            .peer()
            .cancel_task(CancelTaskParams::new(task_id))
            .await;
    }
}

fn poll_interval(task: &Json) -> Duration {
    task.get("pollInterval")
        .and_then(Json::as_u64)
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_millis(500))
        .clamp(MIN_POLL, MAX_POLL)
}
