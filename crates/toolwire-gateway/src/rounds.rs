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
//! cannot be moved onto another call. A call nobody answers is refused after the ask
//! timeout, and its wait is forgotten.

use std::collections::HashMap;
use std::sync::Mutex;

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, ElicitResult, InputRequiredResult, InputResponses};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value as Json, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use toolwire_core::{Resolution, ToolCall, ToolResult};

use crate::asks::resolution_of;
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
const MAX_WAITING: usize = 256;

/// The key of the one input request the gateway sends.
const INPUT_KEY: &str = "toolwire-ask";

impl Waits {
    /// Keeps `waiting` under `state`; gives it back when too many wait already.
    fn park(&self, state: String, waiting: Box<Waiting>) -> Result<(), Box<Waiting>> {
        let Ok(mut all) = self.0.lock() else {
            return Err(waiting);
        };
        // A wait whose call timed out (its answer's receiver is gone) is over.
        all.retain(|_, w| !w.answer.is_closed());
        if all.len() >= MAX_WAITING {
            return Err(waiting);
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
                    Ok(result) => return self.reply(result, flight.call).await,
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
                        Err(back) => {
                            let _ = back.answer.send(Resolution::Deny {
                                reason: Some(format!(
                                    "{MAX_WAITING} calls already wait for their host's answer"
                                )),
                            });
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
            // The call waits on for the retry that is its own; this one is refused.
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
