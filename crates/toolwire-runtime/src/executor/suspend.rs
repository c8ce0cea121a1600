//! The executor's suspensions: a call that waits for a person is recorded (so it survives
//! a restart), and an answer resolves it, once, into the call's final result.

use super::*;

impl Executor {
    /// Records the pending call, then returns the suspended result. If it cannot be
    /// recorded, the call fails: a suspension nobody can resume would hang the turn.
    /// `tool_state` is set when the tool suspended itself mid-run; such a suspension gets a
    /// fresh id, since a tool that asks twice in one call (an MCP server's second round)
    /// may well give the same one, and the first is still being settled.
    pub(super) async fn suspend(
        &self,
        scope: &Scope,
        call: &ToolCall,
        mut suspension: Suspension,
        tool_state: Option<Json>,
    ) -> ToolResult {
        let call_ref = CallRef::new(&call.id, &call.name);
        if tool_state.is_some() {
            suspension.id = new_suspension_id();
        }
        let pending = PendingCall {
            suspension: suspension.clone(),
            call: call.clone(),
            session_id: scope.session_id.clone(),
            trace_id: scope.trace_id.clone(),
            user_id: scope.user_id.clone(),
            tool_state,
            suspended_at: Some(now_rfc3339()),
            waited_ms: scope.waited_ms,
            resolving: false,
        };
        if let Err(e) = self.suspensions.put_suspension(&pending).await {
            return ToolResult::error_with_code(
                call_ref,
                ErrorCode::SuspensionFailed,
                format!("could not record the pending call: {e}"),
            );
        }
        self.emit(
            scope,
            EventKind::Suspended {
                call_id: call.id.clone(),
                suspension: suspension.clone(),
            },
        )
        .await;
        ToolResult::suspended(call_ref, suspension)
    }

    /// Answers a call that waits (`finished`, as [`Executor::execute`] or an earlier
    /// answer left it): approve runs it, deny fails it, an answer becomes its output. Its
    /// span and the suspensions it went through carry on into the value returned, which
    /// may wait again (a second question).
    pub async fn resume(
        &self,
        finished: Finished,
        resolution: Resolution,
    ) -> Result<Finished, ResolveError> {
        let Finished {
            result,
            span,
            suspensions,
            progress,
            ..
        } = finished;
        let Some(suspension) = result
            .suspension
            .filter(|_| result.status == Status::Suspended)
        else {
            return Err(ResolveError::NotWaiting(result.call_id));
        };
        self.answer(&suspension.id, resolution, span, suspensions, progress)
            .await
    }

    /// Finishes a suspended call by its suspension id alone: what a caller without the
    /// call's value does (another process, or after a restart). Works in any process that
    /// shares the suspension store. The pending call is claimed, not deleted: whoever
    /// lands the result forgets it (its suspensions ride in the value), so a crash in
    /// between leaves the call listed (as resolving) rather than lost.
    pub async fn resolve(
        &self,
        suspension_id: &str,
        resolution: Resolution,
    ) -> Result<Finished, ResolveError> {
        self.answer(
            suspension_id,
            resolution,
            None,
            vec![suspension_id.to_owned()],
            None,
        )
        .await
    }

    async fn answer(
        &self,
        suspension_id: &str,
        resolution: Resolution,
        span: Option<spans::OpenCall>,
        suspensions: Vec<String>,
        progress: Option<Arc<dyn ProgressSink>>,
    ) -> Result<Finished, ResolveError> {
        let pending = self
            .suspensions
            .claim_suspension(suspension_id)
            .await?
            .ok_or_else(|| ResolveError::NotFound(suspension_id.to_owned()))?;
        let scope = Scope {
            session_id: pending.session_id.clone(),
            trace_id: pending.trace_id.clone(),
            user_id: pending.user_id.clone(),
            cancel: CancellationToken::new(),
            waited_ms: pending
                .waited_ms
                .saturating_add(waited_since(pending.suspended_at.as_deref())),
            trace: None,
            progress,
        };
        let started = Started::now();
        let call = &pending.call;
        let call_ref = CallRef::new(&call.id, &call.name);
        let span = self.resumed_span(span, &scope, call, answered_name(resolution.outcome()));
        let trace = span.as_ref().map(|open| open.context().clone());
        self.emit(
            &scope,
            EventKind::Resolved {
                call_id: call.id.clone(),
                suspension_id: suspension_id.to_owned(),
                resolution: resolution.outcome(),
            },
        )
        .await;
        if let Some(state) = &pending.tool_state {
            // Only the tool knows how to carry on from where it stopped.
            let registry = self.registry();
            let Some(reg) = registry.get(&call.name) else {
                let ran = Ran::from(ToolResult::error_with_code(
                    call_ref,
                    ErrorCode::UnknownTool,
                    format!(
                        "tool `{}` is no longer registered; the call cannot be resumed",
                        call.name
                    ),
                ));
                return Ok(self.finish(&scope, started, ran, span, suspensions).await);
            };
            let resume = Resume {
                suspension: pending.suspension.clone(),
                state: Some(state.clone()),
                resolution: resolution.clone(),
            };
            let (ctx, throttle) = self.context(&scope, call, true, trace.clone());
            if let Some(fut) = reg.tool.resume(call.input.clone(), resume, ctx.clone()) {
                let ran = self
                    .run_future(&scope, reg, call, (ctx, throttle), fut)
                    .await;
                return Ok(self.finish(&scope, started, ran, span, suspensions).await);
            }
        }
        let ran = match resolution {
            Resolution::Deny { reason } => Ran::from({
                let why = reason.map(|r| format!(": {r}")).unwrap_or_default();
                ToolResult::error_with_code(
                    call_ref,
                    ErrorCode::Denied,
                    format!("The user denied this call to {}{why}.", call.name),
                )
            }),
            Resolution::Cancel { reason } => Ran::from({
                let why = reason.map(|r| format!(": {r}")).unwrap_or_default();
                ToolResult::error_with_code(
                    call_ref,
                    ErrorCode::Cancelled,
                    format!("The user dismissed {} without answering{why}.", call.name),
                )
            }),
            Resolution::Refuse { reason } => Ran::from(ToolResult::error_with_code(
                call_ref,
                ErrorCode::Denied,
                format!("toolwire refused this call to {}: {reason}.", call.name),
            )),
            Resolution::Answer { value } => {
                Ran::from(ToolResult::success(call_ref, answer_value(value)))
            }
            Resolution::Approve => match self.registry().get(&call.name).cloned() {
                Some(reg) => self.run(&scope, &reg, call, true, trace).await,
                None => Ran::from(ToolResult::error_with_code(
                    call_ref,
                    ErrorCode::UnknownTool,
                    format!("tool `{}` is no longer registered", call.name),
                )),
            },
        };
        Ok(self.finish(&scope, started, ran, span, suspensions).await)
    }

    /// Forgets a suspension once its call's final result is stored. Unknown ids are fine:
    /// settling twice, or a suspension another process settled, is not an error.
    pub async fn settled(&self, suspension_id: &str) -> Result<(), ResolveError> {
        Ok(self.suspensions.finish_suspension(suspension_id).await?)
    }

    /// The calls of a session that wait for a person (and those being finished), also
    /// after a restart: what a UI lists to be answered.
    pub async fn pending(&self, session_id: &str) -> Result<Vec<PendingCall>, ResolveError> {
        Ok(self.suspensions.suspensions(session_id).await?)
    }
}

/// A person's answer as a value: text stays text, anything else is structured.
fn answer_value(value: Json) -> Value {
    match value {
        Json::String(s) => Value::text(s),
        other => Value::structured(other),
    }
}

/// How a `resolved` event names an answer.
fn answered_name(answered: toolwire_core::Answered) -> &'static str {
    use toolwire_core::Answered;
    match answered {
        Answered::Approved => "approved",
        Answered::Denied => "denied",
        Answered::Answered => "answered",
        Answered::Cancelled => "cancelled",
    }
}
