//! One user message's turn: the loop itself, approvals included.

use std::collections::HashSet;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;
use toolwire_core::{EventKind, Message, ToolCall, TraceContext};
use toolwire_model::AssistantReply;
use toolwire_runtime::trace::Span;
use toolwire_runtime::{Finished, Scope};
use toolwire_store::StoredMessage;

use crate::drive::{Driver, Land};
use crate::history::turns_so_far;
use crate::request::ModelRequest;
use crate::spans::{record_reply, record_turn};
use crate::task::CHILD_SESSION_KEY;
use crate::{Agent, AgentError, StopReason, StoreBlobs, TurnOutcome};

/// How long a cancelled turn waits for its subagents to store their results.
const CHILD_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

impl Agent {
    /// Runs one user message to the end of its turn. `cancel` (Ctrl-C, a UI's stop button)
    /// ends the turn: calls still running get `cancelled` error results, which are stored,
    /// so the history stays valid for the next message.
    pub async fn run_turn(
        &self,
        session_id: &str,
        user_text: &str,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, AgentError> {
        self.run_turn_in(session_id, user_text, cancel, None, None)
            .await
    }

    /// A turn traced under `parent` (a `task` call's span, named by `parent_call`), or
    /// as a trace of its own: its `invoke_agent` span holds the turn's model requests and
    /// calls.
    pub(crate) async fn run_turn_in(
        &self,
        session_id: &str,
        user_text: &str,
        cancel: CancellationToken,
        parent: Option<&TraceContext>,
        parent_call: Option<&str>,
    ) -> Result<TurnOutcome, AgentError> {
        let mut span = self.turn_span(session_id, parent, parent_call);
        let outcome = self
            .turn(session_id, user_text, cancel, span.as_deref())
            .await;
        if let Some(span) = span.as_deref_mut() {
            record_turn(span, &outcome);
        }
        outcome
    }

    async fn turn(
        &self,
        session_id: &str,
        user_text: &str,
        cancel: CancellationToken,
        span: Option<&dyn Span>,
    ) -> Result<TurnOutcome, AgentError> {
        let user = self
            .stores
            .append(
                session_id,
                Message::User {
                    text: user_text.to_owned(),
                },
            )
            .await?;
        // The session is loaded once per turn and then kept in step with what this turn
        // stores: reloading it before every model request made a long turn quadratic.
        let mut stored = self.stores.history().load(session_id).await?;
        if stored.last().map(|m| m.seq) != Some(user.seq) {
            stored.push(user);
        }
        let mut seen: HashSet<String> = stored
            .iter()
            .filter_map(|m| m.content.call_id().map(str::to_owned))
            .collect();
        // The same request `toolwire export` prints: one definition of its options.
        let request = ModelRequest::new(self.provider(), &self.config, &self.executor.registry());
        let blobs = StoreBlobs(std::sync::Arc::clone(self.stores.blobs()));
        let mut outcome = TurnOutcome {
            stop: StopReason::MaxIterations,
            text: String::new(),
            iterations: 0,
        };
        while outcome.iterations < self.config.max_iterations {
            if cancel.is_cancelled() {
                outcome.stop = StopReason::Cancelled;
                return Ok(outcome);
            }
            let turn = turns_so_far(&stored) + 1;
            // Written straight from the stored messages, borrowed: no copy of the session.
            let (body, _diagnostics) = request.body(&stored, &blobs).await?;
            self.emit(session_id, EventKind::TurnStarted { turn }).await;
            outcome.iterations += 1;
            let reply = tokio::select! {
                biased;
                _ = cancel.cancelled() => None,
                reply = self.ask_model(session_id, body, span) => Some(reply),
            };
            let Some(reply) = reply else {
                self.emit(session_id, EventKind::TurnEnded { turn }).await;
                outcome.stop = StopReason::Cancelled;
                return Ok(outcome);
            };
            let reply = match reply {
                Ok(r) => r,
                Err(e) => {
                    self.emit(session_id, EventKind::TurnEnded { turn }).await;
                    return Err(e);
                }
            };
            let calls = unique_calls(&reply, turn, &mut seen);
            stored.push(
                self.stores
                    .append(
                        session_id,
                        Message::Assistant {
                            text: reply.text.clone(),
                            tool_calls: calls.clone(),
                        },
                    )
                    .await?,
            );
            outcome.text = reply.text;
            if calls.is_empty() {
                self.emit(session_id, EventKind::TurnEnded { turn }).await;
                outcome.stop = StopReason::Done;
                return Ok(outcome);
            }
            self.execute(session_id, calls, &cancel, &mut stored, span)
                .await?;
            self.emit(session_id, EventKind::TurnEnded { turn }).await;
        }
        Ok(outcome)
    }

    /// One model request; streamed text becomes `assistant_delta` events as it arrives.
    async fn ask_model(
        &self,
        session_id: &str,
        body: Vec<u8>,
        turn: Option<&dyn Span>,
    ) -> Result<AssistantReply, AgentError> {
        // A cancelled request drops its span, which ends it there.
        let mut span = self.chat_span(turn);
        let reply = self.request(session_id, body).await;
        if let Some(span) = span.as_deref_mut() {
            record_reply(span, &reply);
        }
        reply
    }

    /// Sends the bytes as encoded (with the stream flags when the agent streams).
    async fn request(&self, session_id: &str, body: Vec<u8>) -> Result<AssistantReply, AgentError> {
        if !self.config.stream {
            return Ok(self.client.send_bytes(&self.config.model, body).await?);
        }
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let stream = self
            .client
            .stream_bytes(&self.config.model, body, move |text| {
                // The receiver lives until the stream ends; a send cannot fail before then.
                let _ = tx.send(text.to_owned());
            });
        // Each delta is a durable event; whatever text arrived while the last one was
        // being stored goes out as one, so a fast stream costs a commit per batch, not
        // per token.
        let forward = async {
            let mut texts = Vec::new();
            while rx.recv_many(&mut texts, 256).await > 0 {
                let text = texts.concat();
                texts.clear();
                self.emit(session_id, EventKind::AssistantDelta { text })
                    .await;
            }
        };
        let (reply, ()) = tokio::join!(stream, forward);
        Ok(reply?)
    }

    /// Runs the calls and stores their results: the finished ones at once, then each
    /// suspended one as the approver settles it, in call order. A crash while a call waits
    /// for its answer so loses none of the results that were already there (the model
    /// view puts results in call order whatever order they were stored in). A call's
    /// suspensions are forgotten when its result lands (a crash before leaves them
    /// listed).
    async fn execute(
        &self,
        session_id: &str,
        calls: Vec<ToolCall>,
        cancel: &CancellationToken,
        stored: &mut Vec<StoredMessage>,
        turn: Option<&dyn Span>,
    ) -> Result<(), AgentError> {
        let scope = Scope {
            cancel: cancel.child_token(),
            trace: turn.map(|s| s.context().clone()),
            ..Scope::new(session_id)
        };
        // Each finished call lands as it finishes (stored, then announced), so a person
        // sees a fast result while a slow one still runs; the suspended ones wait below.
        let concurrency = self.executor.config().concurrency.max(1);
        let scope = &scope;
        let mut running = futures::stream::iter(calls.into_iter().enumerate())
            .map(|(i, call)| async move {
                let finished = self.executor.execute(scope, call.clone()).await;
                (i, call, finished)
            })
            .buffer_unordered(concurrency);
        let mut waiting = Vec::new();
        while let Some((i, call, mut finished)) = running.next().await {
            if finished.is_suspended() {
                waiting.push((i, call, finished));
                continue;
            }
            self.name_child(session_id, &mut finished).await;
            // A refused result lands as a `store_failed` one: every call keeps exactly
            // one stored result.
            stored.extend(self.conclude(call, finished, cancel).await?);
        }
        drop(running);
        waiting.sort_by_key(|(i, _, _)| *i);
        // In call order: the approver is asked about each suspended call in turn. A call
        // answered on another instance goes on with the result stored there.
        for (_, call, finished) in waiting {
            stored.extend(self.conclude(call, finished, cancel).await?);
        }
        // Subagents of calls that waited end with their turn too.
        for child in self.take_children(session_id) {
            let _ = tokio::time::timeout(CHILD_GRACE, child.done.cancelled()).await;
        }
        Ok(())
    }

    /// Settles and lands one call of the turn, as stored; `None` when the turn was
    /// cancelled while another instance still runs it.
    async fn conclude(
        &self,
        call: ToolCall,
        finished: Finished,
        cancel: &CancellationToken,
    ) -> Result<Option<StoredMessage>, AgentError> {
        let driver = Driver {
            executor: &self.executor,
            stores: &self.stores,
        };
        let approver = self.approver.as_ref();
        let concluded = driver
            .conclude(call, finished, approver, cancel, cancel, Land::Now)
            .await?;
        Ok(concluded
            .and_then(|c| c.into_stored())
            .map(StoredMessage::from))
    }

    /// Waits for the subagent of `finished`'s call, if it started one, to end (a
    /// cancelled `task` call's future is dropped by the executor while its subagent still
    /// stores its cancelled results), and names the child session in the result.
    async fn name_child(&self, session_id: &str, finished: &mut Finished) {
        let result = finished.result_mut();
        let Some(child) = self.take_child(session_id, &result.call_id) else {
            return;
        };
        // A subagent ends promptly once cancelled; a stuck one must not hang the turn.
        let _ = tokio::time::timeout(CHILD_GRACE, child.done.cancelled()).await;
        result
            .metadata
            .extra
            .entry(CHILD_SESSION_KEY.to_owned())
            .or_insert_with(|| serde_json::Value::String(child.child_session.clone()));
    }
}

/// The reply's calls with ids unique in the session: providers that number calls per
/// reply (Gemini without ids) would otherwise reuse an id an earlier result holds. An id
/// the store would refuse (empty, over 256 bytes, control characters, path separators,
/// `..`) is replaced by a safe one, so one hostile id cannot abort the whole turn; the
/// call and its result are stored and sent back under the same replacement, so they
/// still pair.
fn unique_calls(reply: &AssistantReply, turn: u32, seen: &mut HashSet<String>) -> Vec<ToolCall> {
    reply
        .tool_calls
        .iter()
        .map(|c| {
            let mut id = if toolwire_store::validate_id("call id", &c.id).is_ok() {
                c.id.clone()
            } else {
                format!("call_{turn}")
            };
            let base = id.clone();
            let mut n = 1;
            while seen.contains(&id) {
                id = format!("{base}_t{turn}_{n}");
                n += 1;
            }
            seen.insert(id.clone());
            ToolCall {
                id,
                // A nameless call is answered as an unknown tool under a name every
                // provider accepts back, rather than dropped or sent back empty.
                name: if c.name.is_empty() {
                    "unnamed_tool".to_owned()
                } else {
                    c.name.clone()
                },
                input: c.input.clone(),
                signature: c.signature.clone(),
                by_person: None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolwire_core::ToolCall as ModelCall;

    #[test]
    fn repeated_call_ids_are_made_unique() {
        let reply = AssistantReply {
            tool_calls: vec![
                ModelCall::new("gemini_call_0", "a", json!({})),
                ModelCall::new("gemini_call_0", "b", json!({})),
                ModelCall::new("", "c", json!({})),
                ModelCall::new("bad\u{1b}[2Jid", "d", json!({})),
                ModelCall::new("x".repeat(300), "e", json!({})),
                ModelCall::new("../etc", "f", json!({})),
                ModelCall::new("", "", json!({"x": 1})),
            ],
            ..AssistantReply::default()
        };
        let mut seen = HashSet::from(["gemini_call_0".to_owned()]);
        let calls = unique_calls(&reply, 3, &mut seen);
        assert_eq!(calls[6].name, "unnamed_tool");
        let ids: Vec<String> = calls.into_iter().map(|c| c.id).collect();
        assert_eq!(
            ids,
            [
                "gemini_call_0_t3_1",
                "gemini_call_0_t3_2",
                "call_3",
                "call_3_t3_1",
                "call_3_t3_2",
                "call_3_t3_3",
                "call_3_t3_4"
            ]
        );
    }
}
