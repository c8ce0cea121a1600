//! The conversation vocabulary every crate shares: a [`Message`] of a session and the
//! [`ToolCall`]s a model makes. The store persists these, the model views encode them,
//! the runtime executes them; nothing converts between look-alikes.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::result::ToolResult;
use crate::widget::Widget;

/// One call a model made (or a person asked for): which tool, with what input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call; its result carries the same id back.
    pub id: String,
    /// The registered name of the tool to run.
    pub name: String,
    /// The parsed JSON input. Providers that send arguments as a JSON string have it
    /// parsed; an unparsable string is kept as a string so the tool can say why.
    #[serde(default, alias = "arguments")]
    pub input: Json,
    /// Opaque provider data the call must carry back to the model in later requests (a
    /// Gemini thought signature; Gemini 3 answers 400 without it), kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Set when a person made the call (`toolwire call`, the web app, an MCP App's view,
    /// the API) rather than the model: the history says who did, and the model is told
    /// it did not choose this call.
    #[serde(default, rename = "byPerson", skip_serializing_if = "Option::is_none")]
    pub by_person: Option<ByPerson>,
}

/// How a person made a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ByPerson {
    /// Where they asked: `cli`, `web`, `api`, or `app:TOOL` (the view of tool TOOL's
    /// MCP App, on their screen).
    pub via: String,
    /// The call was an MCP App's own, of a tool only apps may call (its `visibility`
    /// leaves out `"model"`): kept in the record for people, left out of every model
    /// view. MCP Apps keeps such tools and their results from the model, and a monitor
    /// app polling every 2 s would otherwise put a turn in the model's context each time.
    #[serde(
        default,
        rename = "appOnly",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub app_only: bool,
}

impl ToolCall {
    /// A call the model made, with no signature and no person behind it.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: Json) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            input,
            signature: None,
            by_person: None,
        }
    }

    /// The same call, made by a person through `via` (see [`ByPerson::via`]).
    pub fn by_person(mut self, via: impl Into<String>) -> Self {
        self.by_person = Some(ByPerson {
            via: via.into(),
            app_only: false,
        });
        self
    }

    /// The same call, made by the MCP App in the view of tool `app`; `app_only` when the
    /// tool it calls is for apps alone (see [`ByPerson::app_only`]).
    pub fn by_app(mut self, app: &str, app_only: bool) -> Self {
        self.by_person = Some(ByPerson {
            via: format!("app:{app}"),
            app_only,
        });
        self
    }

    /// Whether the call is an MCP App's own, of a tool the model never sees.
    pub fn is_app_only(&self) -> bool {
        self.by_person.as_ref().is_some_and(|by| by.app_only)
    }
}

/// One message of a session, in order. Tool results hold the canonical [`ToolResult`],
/// so the same stored value feeds every renderer and every provider's view.
// Tool results are most messages; boxing them would cost an allocation each for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "role",
    content = "content",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Message {
    /// Instructions; providers that take one system prompt get them joined in order.
    System {
        /// The instruction text.
        text: String,
    },
    /// What the person typed.
    User {
        /// The message text.
        text: String,
    },
    /// What the model said: text, then the calls it made, in the order it made them.
    Assistant {
        #[serde(default)]
        /// The reply text; empty when the model only called tools.
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        /// The calls it made, in the order it made them.
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one call; results may be stored in completion order.
    ToolResult(ToolResult),
    /// A widget shown outside any tool result (one a subagent pushed). For people only:
    /// no model view includes it.
    Widget {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        /// The call that pushed the widget, when one did.
        call_id: Option<String>,
        /// The widget to show.
        widget: Widget,
    },
}

impl Message {
    /// A system message with these instructions.
    pub fn system(text: impl Into<String>) -> Self {
        Message::System { text: text.into() }
    }

    /// A user message with this text.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User { text: text.into() }
    }

    /// An assistant message: its text, then the calls it made.
    pub fn assistant(text: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message::Assistant {
            text: text.into(),
            tool_calls,
        }
    }

    /// A tool result message.
    pub fn tool(result: ToolResult) -> Self {
        Message::ToolResult(result)
    }

    /// The call id a message belongs to: a result's or a widget's.
    pub fn call_id(&self) -> Option<&str> {
        match self {
            Message::ToolResult(r) => Some(&r.call_id),
            Message::Widget { call_id, .. } => call_id.as_deref(),
            _ => None,
        }
    }

    /// The result, when this message is one.
    pub fn as_tool_result(&self) -> Option<&ToolResult> {
        match self {
            Message::ToolResult(r) => Some(r),
            _ => None,
        }
    }
}
