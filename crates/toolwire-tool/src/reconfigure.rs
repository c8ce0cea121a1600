//! `reconfigure`: any tool with an adjusted schema, e.g. `run` without approval in a
//! sandbox, or a shorter timeout.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value as Json;

use crate::context::ToolContext;
use crate::schema::ToolSchema;
use crate::tool::{Output, Tool, ToolError};

/// `tool` with its schema edited; execution and prompts are the original's.
///
/// ```
/// # use std::sync::Arc;
/// use toolwire_tool::{ApprovalPolicy, ToolContext, ToolError, reconfigure, tool_fn};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Args { command: String }
///
/// let run = tool_fn("run", "Runs a command.", |a: Args, _ctx: ToolContext| async move {
///     Ok::<_, ToolError>(a.command)
/// })
/// .with_schema(|s| s.approval = ApprovalPolicy::Always);
/// let trusted_run = reconfigure(Arc::new(run), |s| s.approval = ApprovalPolicy::Never);
/// assert_eq!(trusted_run.schema().approval, ApprovalPolicy::Never);
/// ```
pub fn reconfigure(tool: Arc<dyn Tool>, edit: impl FnOnce(&mut ToolSchema)) -> Arc<dyn Tool> {
    let mut schema = tool.schema().clone();
    edit(&mut schema);
    Arc::new(Reconfigured {
        inner: tool,
        schema,
    })
}

struct Reconfigured {
    inner: Arc<dyn Tool>,
    schema: ToolSchema,
}

impl Tool for Reconfigured {
    fn schema(&self) -> &ToolSchema {
        &self.schema
    }

    fn execute(
        &self,
        input: Json,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Output, ToolError>> {
        self.inner.execute(input, ctx)
    }

    fn prompt(&self, input: &Json) -> String {
        self.inner.prompt(input)
    }

    fn resume(
        &self,
        input: Json,
        resume: crate::Resume,
        ctx: ToolContext,
    ) -> Option<BoxFuture<'static, Result<Output, ToolError>>> {
        self.inner.resume(input, resume, ctx)
    }

    fn read_resource(&self, uri: &str) -> Option<BoxFuture<'static, Result<Json, ToolError>>> {
        self.inner.read_resource(uri)
    }
}
