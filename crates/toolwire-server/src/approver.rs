//! The server's approver: a suspended call waits until someone answers it through the API
//! (`POST /api/sessions/{id}/suspensions/{sid}`). After a restart nobody waits, and the
//! answer finishes the call through `Host::resolve_pending` instead. Several instances on
//! one store: an answer posted to another instance finishes the call there (its claim
//! wins), and the wait here ends when it sees the claim, taking the result stored there.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::oneshot;
use toolwire_agent::{ApprovalRequest, Approver};
use toolwire_core::Resolution;
use toolwire_store::SuspensionStore;

/// Most calls that may wait for a person at once: beyond it a call is denied at once
/// (memory stays bounded whatever a client posts; the person has that many to answer).
pub(crate) const MAX_WAITING: usize = 1000;

/// A call waiting for a person: its session, and where its answer goes.
type Waits = HashMap<String, (String, oneshot::Sender<Resolution>)>;

/// Calls waiting for a person, by suspension id.
#[derive(Debug, Default)]
pub(crate) struct WebApprover {
    waiting: Arc<Mutex<Waits>>,
    /// The shared suspension store, when other instances may answer: a wait also ends
    /// when another instance has claimed the call (answered there), and the call is
    /// then theirs to finish.
    shared: Option<Arc<dyn SuspensionStore>>,
    /// Whether the one task that looks for such claims has been started.
    watching: std::sync::OnceLock<()>,
}

/// How often the waiting calls are looked up in the shared store.
const CLAIM_POLL: Duration = Duration::from_millis(500);

/// What a wait ends with when another instance claimed the call: the settle loop's own
/// claim then fails, and it takes the result the other instance stores.
const CLAIMED_ELSEWHERE: &str = "answered on another instance";

impl WebApprover {
    /// An approver whose waits also end when another instance sharing `suspensions`
    /// claims the call.
    pub(crate) fn shared(suspensions: Arc<dyn SuspensionStore>) -> Self {
        WebApprover {
            shared: Some(suspensions),
            ..WebApprover::default()
        }
    }

    /// Hands `resolution` to the call waiting on `suspension_id`; gives it back when no
    /// call in this process waits (the answer must then finish the call itself).
    pub(crate) fn answer(
        &self,
        suspension_id: &str,
        resolution: Resolution,
    ) -> Result<(), Resolution> {
        let waiter = self
            .waiting
            .lock()
            .ok()
            .and_then(|mut w| w.remove(suspension_id));
        match waiter {
            Some((_, tx)) => tx.send(resolution),
            None => Err(resolution),
        }
    }

    /// [`WebApprover::answer`], allowing the call `within` to start waiting: a call's
    /// `suspended` event goes out a moment before its turn asks here, and a client that
    /// answers at once (an AG-UI resume, a script) must not find nobody waiting and
    /// finish the call behind its live turn's back.
    pub(crate) async fn answer_soon(
        &self,
        suspension_id: &str,
        resolution: Resolution,
        within: std::time::Duration,
    ) -> Result<(), Resolution> {
        let deadline = tokio::time::Instant::now() + within;
        let mut resolution = resolution;
        loop {
            match self.answer(suspension_id, resolution) {
                Ok(()) => return Ok(()),
                Err(back) if tokio::time::Instant::now() >= deadline => return Err(back),
                Err(back) => resolution = back,
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Starts, once, the task that ends waits claimed elsewhere. It reads each session
    /// with waits once per tick, however many calls wait in it, and stops with the
    /// approver.
    fn watch(&self) {
        let Some(store) = self.shared.clone() else {
            return;
        };
        let waiting = Arc::downgrade(&self.waiting);
        self.watching.get_or_init(|| {
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(CLAIM_POLL).await;
                    let Some(waiting) = waiting.upgrade() else {
                        return;
                    };
                    end_claimed_waits(store.as_ref(), &waiting).await;
                }
            });
        });
    }
}

/// Denies, with [`CLAIMED_ELSEWHERE`], every wait whose call is no longer waiting in the
/// store (claimed or gone). A store that cannot be read is asked again next tick.
async fn end_claimed_waits(store: &dyn SuspensionStore, waiting: &Mutex<Waits>) {
    let sessions: std::collections::BTreeSet<String> = match waiting.lock() {
        Ok(w) => w.values().map(|(session, _)| session.clone()).collect(),
        Err(_) => return,
    };
    for session in sessions {
        let Ok(listed) = store.suspensions(&session).await else {
            continue;
        };
        let still: std::collections::HashSet<&str> = listed
            .iter()
            .filter(|p| !p.resolving)
            .map(|p| p.suspension.id.as_str())
            .collect();
        let Ok(mut w) = waiting.lock() else {
            return;
        };
        let claimed: Vec<String> = w
            .iter()
            .filter(|(id, (s, _))| *s == session && !still.contains(id.as_str()))
            .map(|(id, _)| id.clone())
            .collect();
        for id in claimed {
            if let Some((_, tx)) = w.remove(&id) {
                let _ = tx.send(Resolution::Deny {
                    reason: Some(CLAIMED_ELSEWHERE.into()),
                });
            }
        }
    }
}

impl Approver for WebApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Resolution> {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut waiting) = self.waiting.lock() {
            // Waits whose call is gone (its turn was cancelled) are dropped here.
            waiting.retain(|_, (_, tx)| !tx.is_closed());
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
            waiting.insert(
                request.suspension.id.clone(),
                (request.session_id.clone(), tx),
            );
        }
        self.watch();
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

    #[tokio::test]
    async fn a_wait_ends_when_another_instance_claims_its_call() {
        use toolwire_core::PendingCall;
        use toolwire_store::MemorySuspensions;

        let store = Arc::new(MemorySuspensions::default());
        let pending = |n: usize| PendingCall {
            suspension: request(n).suspension,
            call: request(n).call,
            session_id: "s".into(),
            trace_id: "t".into(),
            user_id: None,
            tool_state: None,
            suspended_at: None,
            waited_ms: 0,
            resolving: false,
        };
        store.put_suspension(&pending(1)).await.unwrap();
        store.put_suspension(&pending(2)).await.unwrap();
        let approver = WebApprover::shared(store.clone());
        let (one, two) = (request(1), request(2));
        let first = approver.decide(&one);
        let mut second = approver.decide(&two);
        // Another instance claims the first call; the second still waits.
        assert!(store.claim_suspension("susp_1").await.unwrap().is_some());
        assert_eq!(
            first.await,
            Resolution::Deny {
                reason: Some(CLAIMED_ELSEWHERE.into())
            }
        );
        let still = tokio::time::timeout(CLAIM_POLL * 3, &mut second).await;
        assert!(still.is_err(), "an unclaimed call keeps waiting");
        assert!(approver.answer("susp_2", Resolution::Approve).is_ok());
        assert_eq!(second.await, Resolution::Approve);
    }
}
