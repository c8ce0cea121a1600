//! The server's approver: a suspended call waits until someone answers it through the API
//! (`POST /api/sessions/{id}/suspensions/{sid}`). After a restart nobody waits, and the
//! answer finishes the call through `Host::resolve_pending` instead.

use std::collections::HashMap;
use std::sync::Mutex;

use futures::future::BoxFuture;
use tokio::sync::oneshot;
use toolwire_agent::{ApprovalRequest, Approver};
use toolwire_core::Resolution;

/// Most calls that may wait for a person at once: beyond it a call is denied at once
/// (memory stays bounded whatever a client posts; the person has that many to answer).
pub const MAX_WAITING: usize = 1000;

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
            // Waits whose call is gone (its turn was cancelled) are dropped here.
            waiting.retain(|_, tx| !tx.is_closed());
            if waiting.len() >= MAX_WAITING {
                let reason = format!(
                    "{MAX_WAITING} calls are already waiting for a person; answer those first"
                );
                return Box::pin(async move {
                    Resolution::Deny {
                        reason: Some(reason),
                    }
                });
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use toolwire_core::{Suspension, SuspensionReason, ToolCall};

    fn request(n: usize) -> ApprovalRequest {
        ApprovalRequest {
            session_id: "s".into(),
            call: ToolCall::new(format!("c{n}"), "run", serde_json::json!({})),
            suspension: Suspension {
                id: format!("susp_{n}"),
                reason: SuspensionReason::Approval,
                prompt: "run?".into(),
                input_schema: None,
            },
        }
    }

    #[tokio::test]
    async fn waiting_calls_are_capped_and_forgotten_when_their_call_is_gone() {
        let approver = WebApprover::default();
        let requests: Vec<ApprovalRequest> = (0..=MAX_WAITING).map(request).collect();
        let mut waits: Vec<_> = requests[..MAX_WAITING]
            .iter()
            .map(|r| approver.decide(r))
            .collect();
        let over = approver.decide(&requests[MAX_WAITING]).await;
        assert!(matches!(over, Resolution::Deny { .. }), "{over:?}");
        // The calls go away (their futures dropped): room again.
        waits.clear();
        let again = request(MAX_WAITING + 1);
        let wait = approver.decide(&again);
        assert!(approver.answer("susp_1001", Resolution::Approve).is_ok());
        assert_eq!(wait.await, Resolution::Approve);
    }
}
