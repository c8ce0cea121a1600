//! What the MCP tests and the conformance client share: a stdio server's
//! configuration, and an executor over the tools of connected servers.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub(crate) mod peers;

use std::sync::Arc;

use toolwire_mcp::{Connected, Limits, McpServer, ServerConfig, Transport};
use toolwire_runtime::{EventBus, Executor, Registry};

/// A server started as `command args...` over stdio, its calls run without asking (the
/// tests of approvals use [`stdio_as_configured`]).
pub(crate) fn stdio(name: &str, command: &str, args: &[String]) -> ServerConfig {
    trusted(stdio_as_configured(name, command, args))
}

/// The same with the default rules: tools not marked read-only ask first.
pub(crate) fn stdio_as_configured(name: &str, command: &str, args: &[String]) -> ServerConfig {
    ServerConfig::new(
        name,
        Transport::Stdio {
            command: command.into(),
            args: args.to_vec(),
            env: Default::default(),
            cwd: None,
            inherit: Default::default(),
        },
    )
}

/// `config` with every call run without asking, as `"approval": "never"` does.
pub(crate) fn trusted(mut config: ServerConfig) -> ServerConfig {
    config.approval.server = Some(toolwire_tool::ApprovalPolicy::Never);
    config
}

/// An executor over every tool of `connected`, which must have no failed server; and
/// the tools' names, in order.
pub(crate) fn executor_of(connected: Connected) -> (Executor, Vec<String>) {
    assert!(connected.failed.is_empty(), "{:?}", connected.failed);
    let mut registry = Registry::new();
    let mut names = Vec::new();
    for tool in connected.tools {
        names.push(toolwire_tool::Tool::schema(&*tool).name.clone());
        registry.register_arc(tool).unwrap();
    }
    let ex = Executor::builder(registry).build();
    (ex, names)
}

/// An executor over the tools of `configs`, and the event bus its events go to.
pub(crate) async fn executor_and_events(
    configs: Vec<ServerConfig>,
    limits: Limits,
) -> (Executor, Arc<EventBus>) {
    let connected = toolwire_mcp::connect_all(configs, limits).await;
    assert!(connected.failed.is_empty(), "{:?}", connected.failed);
    let mut registry = Registry::new();
    for tool in connected.tools {
        registry.register_arc(tool).unwrap();
    }
    let events = EventBus::in_memory();
    let ex = Executor::builder(registry)
        .events(Arc::clone(&events))
        .build();
    (ex, events)
}

/// Connects `configs` and gives an executor over their tools.
pub(crate) async fn executor(
    configs: Vec<ServerConfig>,
    limits: Limits,
) -> (Executor, Vec<String>) {
    executor_of(toolwire_mcp::connect_all(configs, limits).await)
}

/// The same for servers already made (in-process ones).
pub(crate) async fn executor_over(servers: Vec<Arc<McpServer>>) -> (Executor, Vec<String>) {
    executor_of(toolwire_mcp::connect_servers(servers).await)
}
