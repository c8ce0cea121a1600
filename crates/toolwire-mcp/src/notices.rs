//! What a server tells its client unasked, beyond a call's progress, that a gateway passes
//! on to its hosts: its log messages, a subscribed resource's update, and that its lists
//! of resources or prompts changed.

use std::sync::Arc;

use serde_json::Value as Json;

/// One notification of a server, for the host behind toolwire.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Notice {
    /// `notifications/message`: its params as the server sent them.
    Log(Json),
    /// `notifications/resources/updated`: the resource at this URI changed.
    ResourceUpdated(String),
    /// `notifications/resources/list_changed`.
    ResourcesChanged,
    /// `notifications/prompts/list_changed`.
    PromptsChanged,
}

/// Called with the prefix of the server that sent it (its tools' `PREFIX__`) and each
/// [`Notice`]; set with `McpServer::with_notices`.
pub type OnNotice = Arc<dyn Fn(&str, Notice) + Send + Sync>;
