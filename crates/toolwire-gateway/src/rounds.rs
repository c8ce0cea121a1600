//! Asking a 2026-07-28 host's person mid-call, by the multi round-trip of that revision
//! (SEP-2322): a server may not send the host requests of its own, so when a call needs
//! an approval or an answer, its `tools/call` returns `resultType: "input_required"` with
//! an `elicitation/create` in `inputRequests` and an opaque `requestState`; the host asks
//! its person and calls again with the answer in `inputResponses` and the same
//! `requestState`.
//!
//! The call itself keeps running in this process between the two requests, waiting for
//! its answer: `requestState` is only a random handle to it, used once, and a retry must
//! repeat the tool, the arguments and the client of the request it answers, so an answer
//! cannot be moved onto another call. A call whose host does not come back with the
//! answer within the retry wait is refused, and its wait is forgotten. One session may
//! keep only a few calls waiting, so a host that never answers fills its own room, not
//! every host's; past it (or past the process's bound) a call is refused in the
//! gateway's words, nobody asked.

use std::collections::HashMap;
use std::sync::Mutex;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, ElicitResult, ElicitationAction, InputRequiredResult, InputResponses,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value as Json, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use toolwire_core::{Resolution, ToolCall, ToolResult};

use crate::{Gateway, client_name, progress};

/// What a call in flight tells the handler of the host's current request.
pub(crate) enum Step {
    /// The person must be asked `form`; the answer goes to `answer`.
    Ask {
        form: Json,
        question: bool,
        answer: oneshot::Sender<Resolution>,
    },
    /// The call ended.
    Done(Box<Result<ToolResult, String>>),
}

/// A call running for a 2026-07-28 host, and what binds a retry to it.
pub(crate) struct Flight {
    pub(crate) call: ToolCall,
    /// The toolwire session of the host's connection (or, stateless, its client name):
    /// whose room among the waiting calls this one takes.
    pub(crate) session: String,
    /// The tool, the arguments and the client as the host sent them: a retry repeats them.
    pub(crate) name: String,
    pub(crate) arguments: Json,
    pub(crate) client: String,
    pub(crate) steps: mpsc::Receiver<Step>,
    /// The call's latest progress: each round passes it on under its own request's token
    /// (the request that started the call has been answered by then).
    pub(crate) progress: progress::Latest,
    /// Stops the call (the host cancelled, or stopped answering).
    pub(crate) cancel: CancellationToken,
}

/// A call waiting for the host's retry.
struct Waiting {
    flight: Flight,
    answer: oneshot::Sender<Resolution>,
    question: bool,
}

/// Calls waiting for their host's retry, by `requestState`.
#[derive(Default)]
pub(crate) struct Waits(Mutex<HashMap<String, Box<Waiting>>>);

/// Most calls that wait for a retry at once; past it a call is refused (memory stays
/// bounded whatever hosts do).
const MAX_WAITING: usize = 1024;

/// Most calls of one session that wait for a retry at once: past it, that session's
/// next question is refused, and other sessions' are still asked.
const MAX_WAITING_PER_SESSION: usize = 16;

/// The key of the one input request the gateway sends.
const INPUT_KEY: &str = "toolwire-ask";

impl Waits {
    /// Keeps `waiting` under `state`; gives it back, with the gateway's reason, when too
    /// many calls of its session, or in all, wait already.
    fn park(&self, state: String, waiting: Box<Waiting>) -> Result<(), (Box<Waiting>, String)> {
        let Ok(mut all) = self.0.lock() else {
            return Err((
                waiting,
                "the gateway's list of waiting calls is broken".to_owned(),
            ));
        };
        // A wait whose call timed out (its answer's receiver is gone) is over.
        all.retain(|_, w| !w.answer.is_closed());
        let session = &waiting.flight.session;
        let of_session = all
            .values()
            .filter(|w| &w.flight.session == session)
            .count();
        if of_session >= MAX_WAITING_PER_SESSION {
            return Err((
                waiting,
                format!(
                    "nobody was asked, as {MAX_WAITING_PER_SESSION} calls of this session \
                     already wait for the host's answer, the most the gateway keeps for one \
                     session; answer or cancel those first"
                ),
            ));
        }
        if all.len() >= MAX_WAITING {
            return Err((
                waiting,
                format!(
                    "nobody was asked, as {MAX_WAITING} calls already wait for their hosts' \
                     answers, the most the gateway keeps"
                ),
            ));
        }
        all.insert(state, waiting);
        Ok(())
    }

    fn take(&self, state: &str) -> Option<Box<Waiting>> {
        let mut all = self.0.lock().ok()?;
        all.remove(state).filter(|w| !w.answer.is_closed())
    }
}

impl Gateway {
    /// Reads `flight`'s steps for the host's current request: its result, or the
    /// `input_required` that asks the next question.
    pub(crate) async fn fly(
        &self,
        mut flight: Flight,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let token = context.meta.get_progress_token();
        // A round that starts after some progress tells its request where the call is.
        let mut progress_open = token.is_some();
        let seen = flight.progress.borrow_and_update().clone();
        if let (Some(token), Some(step)) = (&token, seen) {
            let _ = context.peer.notify_progress(step.note(token)).await;
        }
        loop {
            // Biased: the last progress step is published before the call's end is sent,
            // so it reaches the host before the result does.
            let step = tokio::select! {
                biased;
                () = context.ct.cancelled() => {
                    flight.cancel.cancel();
                    return Err(ErrorData::internal_error("the call was cancelled", None));
                }
                changed = flight.progress.changed(), if progress_open => {
                    let step = flight.progress.borrow_and_update().clone();
                    match (changed, step, &token) {
                        (Ok(()), Some(step), Some(token)) => {
                            let _ = context.peer.notify_progress(step.note(token)).await;
                        }
                        // The call's progress ended (its task is done).
                        (Err(_), _, _) => progress_open = false,
                        _ => {}
                    }
                    continue;
                }
                step = flight.steps.recv() => step,
            };
            match step {
                None => {
                    return Err(ErrorData::internal_error(
                        "the call ended without a result",
                        None,
                    ));
                }
                Some(Step::Done(done)) => match *done {
                    Ok(result) => {
                        return self
                            .reply(result, flight.call, &self.profile(context))
                            .await;
                    }
                    Err(e) => {
                        return Err(ErrorData::internal_error(
                            format!("the call ended badly: {e}"),
                            None,
                        ));
                    }
                },
                Some(Step::Ask {
                    form,
                    question,
                    answer,
                }) => {
                    let requests =
                        json!({INPUT_KEY: {"method": "elicitation/create", "params": form}});
                    let requests = match serde_json::from_value(requests) {
                        Ok(requests) => requests,
                        Err(e) => {
                            let _ = answer.send(Resolution::Cancel {
                                reason: Some(format!("the question could not be asked: {e}")),
                            });
                            continue;
                        }
                    };
                    let state = format!("ask_{}", uuid::Uuid::new_v4().simple());
                    let waiting = Box::new(Waiting {
                        flight,
                        answer,
                        question,
                    });
                    match self.shared.waits.park(state.clone(), waiting) {
                        Ok(()) => {
                            let asked = InputRequiredResult::new(Some(requests), Some(state));
                            return Ok(CallToolResponse::InputRequired(asked));
                        }
                        Err((back, reason)) => {
                            let _ = back.answer.send(Resolution::Refuse { reason });
                            flight = back.flight;
                        }
                    }
                }
            }
        }
    }

    /// A host's retry with its person's answer: the call waiting under `state` gets it
    /// and goes on, if the retry repeats that call.
    pub(crate) async fn resume(
        &self,
        state: &str,
        name: &str,
        arguments: &Json,
        responses: Option<InputResponses>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(waiting) = self.shared.waits.take(state) else {
            return Err(ErrorData::invalid_params(
                "no call waits for an answer under this requestState (it was answered \
                 already, timed out, or never asked)",
                None,
            ));
        };
        let flight = &waiting.flight;
        if flight.name != name
            || flight.arguments != *arguments
            || flight.client != client_name(context)
        {
            // The call waits on for the retry that is its own (its room was its own a
            // moment ago); this one is refused.
            let _ = self.shared.waits.park(state.to_owned(), waiting);
            return Err(ErrorData::invalid_params(
                "this requestState belongs to another call: a retry must repeat the tool \
                 and the arguments of the call it answers",
                None,
            ));
        }
        let answer = responses.and_then(|mut r| r.remove(INPUT_KEY));
        let resolution = match answer.map(serde_json::from_value::<ElicitResult>) {
            Some(Ok(answer)) => resolution_of(answer.action, answer.content, waiting.question),
            Some(Err(e)) => Resolution::Cancel {
                reason: Some(format!(
                    "the host's answer is not an elicitation result: {e}"
                )),
            },
            None => Resolution::Cancel {
                reason: Some("the host called again without the person's answer".to_owned()),
            },
        };
        // A call that timed out meanwhile was refused already; its result still comes.
        let _ = waiting.answer.send(resolution);
        self.fly(waiting.flight, context).await
    }
}

/// The person's answer to a form as the call's resolution (both revisions' asks use it): an approval needs
/// `{"approve": true}`, anything else accepted is a no.
pub(crate) fn resolution_of(
    action: ElicitationAction,
    content: Option<Json>,
    question: bool,
) -> Resolution {
    match (action, question) {
        (ElicitationAction::Accept, true) => Resolution::Answer {
            value: content.unwrap_or(Json::Null),
        },
        (ElicitationAction::Accept, false)
            if content
                .as_ref()
                .and_then(|c| c.get("approve"))
                .and_then(Json::as_bool)
                == Some(true) =>
        {
            Resolution::Approve
        }
        (ElicitationAction::Cancel, _) => Resolution::Cancel {
            reason: Some("the person dismissed the question".to_owned()),
        },
        _ => Resolution::Deny {
            reason: Some("the person said no".to_owned()),
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    /// A call of `session` waiting for its host's retry, and the receiver its call
    /// holds for the answer (dropped when the call stops waiting).
    fn waiting(session: &str) -> (Box<Waiting>, oneshot::Receiver<Resolution>) {
        let (_steps_in, steps) = mpsc::channel(1);
        let (_latest, progress) = tokio::sync::watch::channel(None);
        let (answer, answered) = oneshot::channel();
        let flight = Flight {
            call: ToolCall::new("call_1", "ev__echo", json!({})),
            session: session.to_owned(),
            name: "ev__echo".to_owned(),
            arguments: json!({}),
            client: "host".to_owned(),
            steps,
            progress,
            cancel: CancellationToken::new(),
        };
        let waiting = Box::new(Waiting {
            flight,
            answer,
            question: false,
        });
        (waiting, answered)
    }

    /// One session's calls left unanswered fill that session's room, not the others':
    /// its next is refused in the gateway's words, another session's is kept, and a call
    /// that stopped waiting frees its room.
    #[test]
    fn one_session_fills_only_its_own_room() {
        let waits = Waits::default();
        let mut calls = Vec::new();
        for n in 0..MAX_WAITING_PER_SESSION {
            let (w, answered) = waiting("flood");
            calls.push(answered);
            assert!(waits.park(format!("flood-{n}"), w).is_ok(), "{n}");
        }
        let (w, _over) = waiting("flood");
        let Err((_, reason)) = waits.park("flood-over".to_owned(), w) else {
            panic!("a 17th call of one session was kept");
        };
        assert_eq!(
            reason,
            "nobody was asked, as 16 calls of this session already wait for the host's \
             answer, the most the gateway keeps for one session; answer or cancel those first"
        );
        let (w, _calm) = waiting("calm");
        assert!(waits.park("calm-0".to_owned(), w).is_ok());
        // A call that stopped waiting (refused at its retry wait) frees its room.
        drop(calls.pop());
        let (w, _again) = waiting("flood");
        assert!(waits.park("flood-again".to_owned(), w).is_ok());
        assert!(waits.take("flood-again").is_some());
        assert!(
            waits
                .take(&format!("flood-{}", MAX_WAITING_PER_SESSION - 1))
                .is_none()
        );
    }
}
