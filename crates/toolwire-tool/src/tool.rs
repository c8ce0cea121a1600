//! The `Tool` trait, what a tool returns, and `tool_fn` for the common few-line case.

use std::future::Future;
use std::marker::PhantomData;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value as Json;
use toolwire_core::{Resolution, Suspension, ToolResult, Value};

use crate::context::ToolContext;
use crate::schema::ToolSchema;

/// A tool. Implement it directly, or build one from an async fn with [`tool_fn`].
pub trait Tool: Send + Sync + 'static {
    /// The tool's name, description, schemas and policies.
    fn schema(&self) -> &ToolSchema;

    /// Runs the call. `input` has already been checked against `inputSchema`.
    fn execute(
        &self,
        input: Json,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Output, ToolError>>;

    /// For blocking tools: what the person is asked, given the call's input. The default
    /// asks the input's `question`/`prompt` field, else shows the input.
    fn prompt(&self, input: &Json) -> String {
        ["question", "prompt", "message"]
            .iter()
            .find_map(|k| input.get(*k).and_then(Json::as_str))
            .map(str::to_owned)
            .unwrap_or_else(|| format!("{} needs your input: {input}", self.schema().name))
    }

    /// Finishes a call that suspended itself mid-run ([`ToolError::Suspend`], or a result
    /// whose status is `suspended`) once a person answered, in this process or another
    /// after a restart. `None`, the default, leaves it to the executor: an answer becomes
    /// the output, an approval runs the call again, a denial fails it. A tool that must
    /// carry on where it stopped (an MCP server waiting for `inputResponses`) returns its
    /// continuation, which may suspend again.
    fn resume(
        &self,
        input: Json,
        resume: Resume,
        ctx: ToolContext,
    ) -> Option<BoxFuture<'static, Result<Output, ToolError>>> {
        let _ = (input, resume, ctx);
        None
    }

    /// Reads a resource of this tool's source (an MCP server's `resources/read`, for an
    /// MCP App's view or a person opening a link), as that source's JSON. `None`, the
    /// default: the tool has no resources.
    fn read_resource(&self, uri: &str) -> Option<BoxFuture<'static, Result<Json, ToolError>>> {
        let _ = uri;
        None
    }
}

/// What [`Tool::resume`] is given: the suspension, the state the tool kept with it, and
/// the person's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Resume {
    /// The suspension the person answered.
    pub suspension: Suspension,
    /// `state` of [`ToolError::Suspend`], or the `metadata` of a suspended result.
    pub state: Option<Json>,
    /// The person's answer.
    pub resolution: Resolution,
}

/// What a tool returns on success.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Semantic values, used as they are.
    Values(Vec<Value>),
    /// Any raw payload (bare JSON, an MCP `CallToolResult`, ...), normalized.
    Raw(Json),
    /// A complete result; its `callId`/`toolName` are overwritten with the call's.
    Result(Box<ToolResult>),
}

impl From<Value> for Output {
    fn from(v: Value) -> Self {
        Output::Values(vec![v])
    }
}

impl From<Vec<Value>> for Output {
    fn from(v: Vec<Value>) -> Self {
        Output::Values(v)
    }
}

impl From<String> for Output {
    fn from(s: String) -> Self {
        Output::Values(vec![Value::text(s)])
    }
}

impl From<&str> for Output {
    fn from(s: &str) -> Self {
        Output::Values(vec![Value::text(s)])
    }
}

impl From<Json> for Output {
    fn from(j: Json) -> Self {
        Output::Raw(j)
    }
}

impl From<ToolResult> for Output {
    fn from(r: ToolResult) -> Self {
        Output::Result(Box::new(r))
    }
}

/// Why a call failed. The message is shown to the model and the person alike.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The input failed a check the schema could not express; the model may retry.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The tool failed; `message` says why.
    #[error("{message}")]
    Failed {
        /// What went wrong, for the model and the person.
        message: String,
        /// A machine-readable code, e.g. `not_found`.
        code: Option<String>,
        /// Structured detail for programs.
        details: Option<Json>,
    },
    /// The tool needs a person mid-call (e.g. a confirmation it discovered it needs, or
    /// an MCP server's question). `state` is stored with the pending call and handed back
    /// to [`Tool::resume`] with the answer.
    #[error("suspended: {}", .suspension.prompt)]
    Suspend {
        /// What the person is asked.
        suspension: Box<Suspension>,
        /// State to keep with the pending call and hand back to [`Tool::resume`].
        state: Option<Json>,
    },
    /// The call was cancelled (the tool saw its token fire).
    #[error("cancelled")]
    Cancelled,
}

impl ToolError {
    /// A suspension mid-call, keeping `state` for [`Tool::resume`].
    pub fn suspend(suspension: Suspension, state: Option<Json>) -> Self {
        ToolError::Suspend {
            suspension: Box::new(suspension),
            state,
        }
    }

    /// A failure with this message and no code.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed {
            message: message.into(),
            code: None,
            details: None,
        }
    }

    /// A failure with a machine-readable code.
    pub fn with_code(code: impl Into<String>, message: impl Into<String>) -> Self {
        ToolError::Failed {
            message: message.into(),
            code: Some(code.into()),
            details: None,
        }
    }
}

impl From<std::io::Error> for ToolError {
    fn from(e: std::io::Error) -> Self {
        ToolError::with_code("io", e.to_string())
    }
}

/// A tool made from an async fn over a typed input; the input schema comes from the
/// type's `JsonSchema`.
pub struct FnTool<I, F> {
    schema: ToolSchema,
    f: F,
    _input: PhantomData<fn(I)>,
}

impl<I, F> std::fmt::Debug for FnTool<I, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnTool")
            .field("name", &self.schema.name)
            .finish()
    }
}

/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use toolwire_core::Value;
/// use toolwire_tool::{tool_fn, ToolContext, ToolError};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Args { name: String }
///
/// let greet = tool_fn("greet", "Greets someone by name.", |args: Args, _ctx: ToolContext| async move {
///     Ok::<_, ToolError>(Value::text(format!("Hello, {}!", args.name)))
/// });
/// ```
pub fn tool_fn<I, F, Fut, O>(name: &str, description: &str, f: F) -> FnTool<I, F>
where
    I: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
    O: Into<Output>,
{
    let input_schema = serde_json::to_value(schemars::schema_for!(I)).unwrap_or(Json::Bool(true));
    FnTool {
        schema: ToolSchema::new(name, description, input_schema),
        f,
        _input: PhantomData,
    }
}

impl<I, F> FnTool<I, F> {
    /// Adjusts the schema: mode, approval, timeout, output schema, examples.
    pub fn with_schema(mut self, edit: impl FnOnce(&mut ToolSchema)) -> Self {
        edit(&mut self.schema);
        self
    }
}

impl<I, F, Fut, O> Tool for FnTool<I, F>
where
    I: DeserializeOwned + JsonSchema + Send + 'static,
    F: Fn(I, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
    O: Into<Output>,
{
    fn schema(&self) -> &ToolSchema {
        &self.schema
    }

    fn execute(
        &self,
        input: Json,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Output, ToolError>> {
        match serde_json::from_value::<I>(input) {
            Ok(args) => {
                let fut = (self.f)(args, ctx);
                Box::pin(async move { fut.await.map(Into::into) })
            }
            Err(e) => Box::pin(async move { Err(ToolError::InvalidInput(e.to_string())) }),
        }
    }
}
