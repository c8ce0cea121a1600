//! The `task` tool (docs/contracts.md, "Provider tool-result blocks and subagents"):
//! runs a subagent with a fresh context and every tool but
//! `task`, in a child session linked to the caller's, and returns only its final report.

use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value as Json;
use toolwire_core::{CallRef, ToolResult, Value};
use toolwire_store::NewSession;

use tokio_util::sync::CancellationToken;

use super::{Agent, ChildRun, SUBAGENT_INSTRUCTIONS, StopReason};
use toolwire_core::{ErrorCode, EventKind};
use toolwire_tool::{Output, Tool, ToolContext, ToolError, ToolSchema};

/// The tool's name; subagents get the registry without it, so they cannot nest.
pub const TASK_TOOL: &str = "task";

/// The most of a subagent's report the caller sees, in characters.
pub const MAX_TASK_RESULT_CHARS: usize = 10_000;

/// Where the child session id is put in the result's `metadata`.
pub const CHILD_SESSION_KEY: &str = "childSessionId";

/// A subagent may work much longer than one ordinary tool call.
const TASK_TIMEOUT: Duration = Duration::from_secs(60 * 60);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TaskArgs {
    /// A short (3-5 word) description of the task.
    pub description: String,
    /// The task for the subagent, with everything it needs to know: it sees nothing of
    /// this conversation.
    pub prompt: String,
    /// explore, plan, bash or general_purpose (the default).
    #[serde(default)]
    pub subagent_type: Option<SubagentType>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SubagentType {
    Explore,
    Plan,
    Bash,
    GeneralPurpose,
}

impl SubagentType {
    fn role(self) -> &'static str {
        match self {
            SubagentType::Explore => {
                "Your role: explore. Search the workspace, find files and explain how things \
                 work. Do not change anything."
            }
            SubagentType::Plan => {
                "Your role: plan. Read what you need and design an implementation approach; \
                 do not change anything."
            }
            SubagentType::Bash => {
                "Your role: run commands (git, builds, tests) and report their outcome."
            }
            SubagentType::GeneralPurpose => {
                "Your role: general purpose. Explore and act as the task requires."
            }
        }
    }
}

/// The `task` tool. Register it, build the [`Agent`] over that registry, then
/// [`TaskTool::bind`] the agent: the tool holds it weakly, as the agent owns the tool.
#[derive(Clone)]
pub struct TaskTool {
    schema: Arc<ToolSchema>,
    agent: Arc<OnceLock<Weak<Agent>>>,
}

impl std::fmt::Debug for TaskTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskTool")
            .field("bound", &self.agent.get().is_some())
            .finish()
    }
}

impl Default for TaskTool {
    fn default() -> Self {
        TaskTool::new()
    }
}

impl TaskTool {
    /// The `task` tool, with its schema.
    pub fn new() -> Self {
        let input_schema =
            serde_json::to_value(schemars::schema_for!(TaskArgs)).unwrap_or(Json::Bool(true));
        let mut schema = ToolSchema::new(
            TASK_TOOL,
            "Launches a subagent with a fresh, isolated context and the same tools (except \
             task) to carry out an open-ended, multi-step task such as exploring a codebase. \
             It returns only the subagent's final report. Give it a complete prompt: it \
             sees nothing of this conversation.",
            input_schema,
        );
        schema.timeout = Some(TASK_TIMEOUT);
        TaskTool {
            schema: Arc::new(schema),
            agent: Arc::new(OnceLock::new()),
        }
    }

    /// Binds the agent whose subagents this tool runs; the first binding wins.
    pub fn bind(&self, agent: &Arc<Agent>) {
        let _ = self.agent.set(Arc::downgrade(agent));
    }
}

impl Tool for TaskTool {
    fn schema(&self) -> &ToolSchema {
        &self.schema
    }

    fn execute(
        &self,
        input: Json,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Output, ToolError>> {
        let slot = Arc::clone(&self.agent);
        Box::pin(async move {
            let args: TaskArgs = serde_json::from_value(input)
                .map_err(|e| ToolError::InvalidInput(e.to_string()))?;
            let parent = slot.get().and_then(Weak::upgrade).ok_or_else(|| {
                ToolError::with_code("unavailable", "the task tool is not bound to an agent")
            })?;
            run_subagent(&parent, args, &ctx).await.map(Output::from)
        })
    }
}

async fn run_subagent(
    parent: &Arc<Agent>,
    args: TaskArgs,
    ctx: &ToolContext,
) -> Result<ToolResult, ToolError> {
    let mut child = parent.subagent();
    let kind = args.subagent_type.unwrap_or(SubagentType::GeneralPurpose);
    child.config.instructions = format!("{SUBAGENT_INSTRUCTIONS}\n\n{}", kind.role());
    let session = child
        .stores
        .create_session(NewSession {
            title: Some(args.description.clone()),
            ..NewSession::child_of(&*ctx.session_id)
        })
        .await
        .map_err(|e| {
            ToolError::with_code(
                "store",
                format!("could not create the subagent's session: {e}"),
            )
        })?;
    let done = CancellationToken::new();
    parent.track_child(ChildRun {
        parent_session: ctx.session_id.to_string(),
        call_id: ctx.call_id.to_string(),
        child_session: session.id.clone(),
        done: done.clone(),
    });
    // The subagent runs as its own task: when this call is cancelled the executor drops
    // this future, and the subagent must still store its cancelled results and end.
    let child_session = session.id.clone();
    let (parent_call, prompt, cancel) = (ctx.call_id.to_string(), args.prompt, ctx.cancel.clone());
    // The subagent's turn is traced under this call's span.
    let trace = ctx.trace.clone();
    let run = tokio::spawn(async move {
        let _done = done.drop_guard();
        child
            .emit(
                &child_session,
                EventKind::SessionStarted {
                    parent_call_id: Some(parent_call.clone()),
                },
            )
            .await;
        let outcome = child
            .run_turn_in(
                &child_session,
                &prompt,
                cancel,
                trace.as_ref(),
                Some(&parent_call),
            )
            .await;
        child.end_session(&child_session).await;
        outcome
    });
    let outcome = run.await.map_err(|e| {
        ToolError::with_code(
            "subagent_failed",
            format!("the subagent's task failed: {e}"),
        )
    })?;
    // callId and toolName are overwritten by the executor with the call's own.
    let call = CallRef::new(&*ctx.call_id, TASK_TOOL);
    let mut result = match outcome {
        Ok(o) => match o.stop {
            StopReason::Done => ToolResult::success(call, Value::text(cap(&o.text, &session.id))),
            StopReason::Cancelled => ToolResult::error_with_code(
                call,
                ErrorCode::Cancelled,
                "cancelled: the subagent was interrupted before it finished",
            ),
            StopReason::MaxIterations => ToolResult::error_with_code(
                call,
                "max_iterations",
                format!(
                    "the subagent stopped after {} model requests without a final report; \
                     its last words: {}",
                    o.iterations,
                    cap(&o.text, &session.id)
                ),
            ),
        },
        Err(e) => ToolResult::error_with_code(
            call,
            "subagent_failed",
            format!("the subagent failed: {e}"),
        ),
    };
    result.metadata.extra.insert(
        CHILD_SESSION_KEY.to_owned(),
        Json::String(session.id.clone()),
    );
    Ok(result)
}

/// The report, cut to [`MAX_TASK_RESULT_CHARS`] characters with a marker that says how
/// much there was and where the whole transcript is.
fn cap(text: &str, child_session: &str) -> String {
    let total = text.chars().count();
    if total <= MAX_TASK_RESULT_CHARS {
        return text.to_owned();
    }
    let cut: String = text.chars().take(MAX_TASK_RESULT_CHARS).collect();
    format!(
        "{cut}...\n\n[Result truncated - {total} chars total; the subagent's full transcript \
         is session {child_session}]"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_are_capped_by_characters_with_a_marker() {
        assert_eq!(cap("short", "s1"), "short");
        let long = "é".repeat(MAX_TASK_RESULT_CHARS + 5);
        let capped = cap(&long, "s1");
        assert!(capped.starts_with(&"é".repeat(MAX_TASK_RESULT_CHARS)));
        assert!(capped.ends_with(&format!(
            "...\n\n[Result truncated - {} chars total; the subagent's full transcript is session s1]",
            MAX_TASK_RESULT_CHARS + 5
        )));
    }

    #[test]
    fn schema_offers_the_three_fields() {
        let tool = TaskTool::new();
        let props = &tool.schema().input_schema["properties"];
        assert!(props.get("description").is_some());
        assert!(props.get("prompt").is_some());
        assert!(props.get("subagent_type").is_some());
    }
}
