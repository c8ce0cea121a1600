//! Pending calls awaiting a person: stored so they survive a restart and resume anywhere.

use std::collections::HashMap;
use std::sync::Mutex;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use toolwire_core::Suspension;

/// One model tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub input: Json,
}

impl ToolCall {
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: Json) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            input,
        }
    }
}

/// A suspended call and what is needed to finish it in another process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingCall {
    pub suspension: Suspension,
    pub call: ToolCall,
    pub session_id: String,
    pub trace_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
}

/// How a person answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Resolution {
    /// Run the call.
    Approve,
    /// Do not run it; the model is told the user denied it.
    Deny {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// The answer to a blocking tool; it becomes the output with no re-execution.
    Answer { value: Json },
}

impl Resolution {
    pub fn label(&self) -> &'static str {
        match self {
            Resolution::Approve => "approved",
            Resolution::Deny { .. } => "denied",
            Resolution::Answer { .. } => "answered",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SuspensionStoreError {
    #[error("suspension store: {0}")]
    Backend(String),
}

/// Durable pending calls. `take` removes atomically, so a call resolves exactly once even
/// when two processes answer at the same moment.
pub trait SuspensionStore: Send + Sync + 'static {
    fn put(&self, pending: &PendingCall) -> BoxFuture<'_, Result<(), SuspensionStoreError>>;
    fn take(
        &self,
        suspension_id: &str,
    ) -> BoxFuture<'_, Result<Option<PendingCall>, SuspensionStoreError>>;
    fn list(
        &self,
        session_id: &str,
    ) -> BoxFuture<'_, Result<Vec<PendingCall>, SuspensionStoreError>>;
}

/// In-process pending calls, for tests and embedding without a store.
#[derive(Debug, Default)]
pub struct MemorySuspensions {
    pending: Mutex<HashMap<String, PendingCall>>,
}

fn poisoned<T>(_: T) -> SuspensionStoreError {
    SuspensionStoreError::Backend("lock poisoned".into())
}

impl SuspensionStore for MemorySuspensions {
    fn put(&self, pending: &PendingCall) -> BoxFuture<'_, Result<(), SuspensionStoreError>> {
        let pending = pending.clone();
        Box::pin(async move {
            self.pending
                .lock()
                .map_err(poisoned)?
                .insert(pending.suspension.id.clone(), pending);
            Ok(())
        })
    }

    fn take(
        &self,
        suspension_id: &str,
    ) -> BoxFuture<'_, Result<Option<PendingCall>, SuspensionStoreError>> {
        let id = suspension_id.to_owned();
        Box::pin(async move { Ok(self.pending.lock().map_err(poisoned)?.remove(&id)) })
    }

    fn list(
        &self,
        session_id: &str,
    ) -> BoxFuture<'_, Result<Vec<PendingCall>, SuspensionStoreError>> {
        let session = session_id.to_owned();
        Box::pin(async move {
            let map = self.pending.lock().map_err(poisoned)?;
            let mut out: Vec<PendingCall> = map
                .values()
                .filter(|p| p.session_id == session)
                .cloned()
                .collect();
            out.sort_by(|a, b| a.suspension.id.cmp(&b.suspension.id));
            Ok(out)
        })
    }
}
