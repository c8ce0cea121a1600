//! The server's approver: a suspended call waits until someone answers it through the API
//! (`POST /api/sessions/{id}/suspensions/{sid}`). After a restart nobody waits, and the
//! answer finishes the call through `Host::resolve_pending` instead.

use std::collections::HashMap;
use std::sync::Mutex;

use futures::future::BoxFuture;
use tokio::sync::oneshot;
use toolwire_agent::{ApprovalRequest, Approver};
use toolwire_core::Resolution;

/// Calls waiting for a person, by suspension id.
#[derive(Debug, Default)]
pub struct WebApprover {
    waiting: Mutex<HashMap<String, oneshot::Sender<Resolution>>>,
}

impl WebApprover {
    /// Hands `resolution` to the call waiting on `suspension_id`; gives it back when no
    /// call in this process waits (the answer must then finish the call itself).
    pub fn answer(&self, suspension_id: &str, resolution: Resolution) -> Result<(), Resolution> {
        let waiter = self
            .waiting
            .lock()
            .ok()
            .and_then(|mut w| w.remove(suspension_id));
        match waiter {
            Some(tx) => tx.send(resolution),
            None => Err(resolution),
        }
    }
}

impl Approver for WebApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Resolution> {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.insert(request.suspension.id.clone(), tx);
        }
        Box::pin(async move {
            // The turn's own cancel ends the wait (the settle loop denies the call then);
            // a dropped sender means the server is shutting down.
            rx.await.unwrap_or(Resolution::Deny {
                reason: Some("the server stopped before the call was answered".into()),
            })
        })
    }
}
