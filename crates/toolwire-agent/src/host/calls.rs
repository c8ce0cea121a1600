//! A person's calls through the host: stored like a model turn's, landed once, and
//! answers to calls that wait.

use std::sync::Arc;

use serde_json::Value as Json;
use tokio_util::sync::CancellationToken;
use toolwire_core::{Message, ToolCall, ToolResult};

use super::{CallScope, Host, HostError, Running};
use crate::Approver;
use crate::approval::{settle, store_settled};

impl Host {
    /// Runs one tool because a person asked for it, in `session`: the call is stored as a
    /// call made by a person ([`ToolCall::by_person`], through `api`), so the history
    /// pairs it with its result like any model turn and says who made it. A suspended call is put to
    /// `approver` until it ends. Every way out stores exactly one result for the call.
    pub async fn call(
        &self,
        session_id: &str,
        tool: &str,
        input: Json,
        approver: Arc<dyn Approver>,
    ) -> Result<Running<ToolResult>, HostError> {
        let call = ToolCall::new(toolwire_core::new_id("call"), tool, input).by_person("api");
        self.call_as(session_id, call, approver).await
    }

    /// [`Host::call`] with the caller's own call: its id (for callers that wait for that
    /// call's result on the event feed, as the web app's MCP Apps host does) and who made
    /// it (`by_person`, or none for a model's call, such as one an MCP host's model made
    /// through the gateway).
    pub async fn call_as(
        &self,
        session_id: &str,
        call: ToolCall,
        approver: Arc<dyn Approver>,
    ) -> Result<Running<ToolResult>, HostError> {
        self.call_cancellable(session_id, call, approver, CancellationToken::new())
            .await
    }

    /// [`Host::call_as`], stopped by `scope`'s token: while it runs (the tool is dropped)
    /// or while it waits for a person (the wait ends); either way it gets its one stored
    /// result, a `cancelled` error. A bare [`CancellationToken`] is a scope too.
    pub async fn call_cancellable(
        &self,
        session_id: &str,
        call: ToolCall,
        approver: Arc<dyn Approver>,
        scope: impl Into<CallScope>,
    ) -> Result<Running<ToolResult>, HostError> {
        let scope = scope.into();
        // Stored as what it is: a call, with who made it if a person did
        // (`ToolCall::by_person`), not as words a person never typed; the model's view
        // tells the model so (toolwire-model's pairing).
        self.stores
            .append(session_id, Message::assistant("", vec![call.clone()]))
            .await?;
        let host = self.clone();
        let session = session_id.to_owned();
        let call_id = call.id.clone();
        let running = self
            .run(session_id, async move {
                host.finish_call(&session, call, approver.as_ref(), scope)
                    .await
            })
            .await?;
        Ok(running.for_call(call_id))
    }

    async fn finish_call(
        &self,
        session_id: &str,
        call: ToolCall,
        approver: &dyn Approver,
        scope: CallScope,
    ) -> Result<ToolResult, HostError> {
        let cancel = scope.cancel.clone();
        let result = self
            .executor
            .execute(&scope.executor_scope(session_id), call.clone())
            .await;
        // Only the person who asked for this call cancels it, while it runs or waits.
        let (settled, suspended) =
            settle(&self.executor, approver, session_id, &call, result, &cancel).await;
        // Once settled, the result is stored whatever happens: never cancelled.
        let never = CancellationToken::new();
        // A call answered on another instance: its stored result is this call's. The
        // wait is never cancelled, so there always is one.
        let stored = store_settled(
            &self.executor,
            &self.stores,
            session_id,
            &call,
            settled,
            suspended,
            &never,
        )
        .await?
        .ok_or_else(|| HostError::Aborted("the call was cancelled".into()))?;
        match stored.content {
            Message::ToolResult(result) => Ok(result),
            _ => Err(HostError::Aborted(
                "the store returned a message that is not a tool result".into(),
            )),
        }
    }

    /// Answers a pending call that no running turn or call is waiting on (the process
    /// that suspended it ended, or nobody was asked): the call is finished through the
    /// executor and its result stored, once. A call that suspends again (an MCP server's
    /// second question) is returned suspended and stays pending under its new id.
    pub async fn resolve_pending(
        &self,
        session_id: &str,
        suspension_id: &str,
        resolution: toolwire_core::Resolution,
    ) -> Result<ToolResult, HostError> {
        // The id must be one of this session's, so a caller cannot answer another's.
        let listed = self.executor.pending(session_id).await?;
        if !listed.iter().any(|p| p.suspension.id == suspension_id) {
            return Err(toolwire_runtime::ResolveError::NotFound(suspension_id.to_owned()).into());
        }
        let pending = self.executor.resolve(suspension_id, resolution).await?;
        if pending.status == toolwire_core::Status::Suspended {
            let _ = self.executor.settled(suspension_id).await;
            return Ok(pending);
        }
        let stored = self
            .executor
            .land(session_id, pending, vec![suspension_id.to_owned()])
            .await?;
        match stored.content {
            Message::ToolResult(result) => Ok(result),
            _ => Err(HostError::Aborted(
                "the store returned a message that is not a tool result".into(),
            )),
        }
    }
}
