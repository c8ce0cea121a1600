//! `ask_user`: a blocking tool; the executor suspends the call and the person's answer
//! becomes its output.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value as Json;

use toolwire_tool::ToolContext;
use toolwire_tool::{ExecutionMode, ToolSchema};
use toolwire_tool::{Output, Tool, ToolError};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AskUserArgs {
    /// The question, as the person will read it.
    pub question: String,
    /// Suggested answers; the person may still answer freely.
    #[serde(default)]
    pub options: Option<Vec<String>>,
}

/// The `ask_user` tool. Never executed: being [`ExecutionMode::Blocking`], the executor
/// suspends it with [`Tool::prompt`] and resolves it with the person's answer.
#[derive(Debug)]
pub struct AskUser {
    schema: ToolSchema,
}

/// The `ask_user` tool.
pub fn ask_user() -> AskUser {
    let input_schema =
        serde_json::to_value(schemars::schema_for!(AskUserArgs)).unwrap_or(Json::Bool(true));
    let mut schema = ToolSchema::new(
        "ask_user",
        "Asks the person a question and waits for the answer, which is returned as text. \
         Use it when you need a decision or information only they have; offer `options` \
         when the likely answers are known.",
        input_schema,
    );
    schema.execution_mode = ExecutionMode::Blocking;
    AskUser { schema }
}

impl Tool for AskUser {
    fn schema(&self) -> &ToolSchema {
        &self.schema
    }

    fn execute(
        &self,
        _input: Json,
        _ctx: ToolContext,
    ) -> BoxFuture<'static, Result<Output, ToolError>> {
        Box::pin(async {
            Err(ToolError::with_code(
                "blocking_only",
                "ask_user waits for a person: run it through an Executor, which suspends the call until it is answered",
            ))
        })
    }

    /// The question, then the options one per line, so a person sees the choices even in
    /// a client that shows only the prompt.
    fn prompt(&self, input: &Json) -> String {
        // The executor checked the input against the schema before asking.
        let Ok(args) = serde_json::from_value::<AskUserArgs>(input.clone()) else {
            return format!("The assistant asks: {input}");
        };
        let options = args.options.unwrap_or_default();
        if options.is_empty() {
            return args.question;
        }
        let list: Vec<String> = options
            .iter()
            .enumerate()
            .map(|(i, o)| format!("{}. {o}", i + 1))
            .collect();
        format!("{}\n{}", args.question, list.join("\n"))
    }
}
