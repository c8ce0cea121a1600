//! What the MCP tests and the conformance client share: a stdio server's
//! configuration, and an executor over the tools of connected servers.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use toolwire_mcp::{Connected, Limits, McpServer, ServerConfig, Transport};
use toolwire_runtime::{EventBus, Executor, ExecutorConfig, MemorySuspensions, Registry};

/// A server started as `command args...` over stdio.
pub fn stdio(name: &str, command: &str, args: &[String]) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        transport: Transport::Stdio {
            command: command.into(),
            args: args.to_vec(),
            env: Default::default(),
            cwd: None,
        },
    }
}

/// An executor over every tool of `connected`, which must have no failed server; and
/// the tools' names, in order.
pub fn executor_of(connected: Connected) -> (Executor, Vec<String>) {
    assert!(connected.failed.is_empty(), "{:?}", connected.failed);
    let mut registry = Registry::new();
    let mut names = Vec::new();
    for tool in connected.tools {
        names.push(toolwire_runtime::Tool::schema(&*tool).name.clone());
        registry.register_arc(tool).unwrap();
    }
    let ex = Executor::with(
        Arc::new(registry),
        EventBus::in_memory(),
        Arc::new(MemorySuspensions::default()),
        ExecutorConfig::default(),
    );
    (ex, names)
}

/// Connects `configs` and gives an executor over their tools.
pub async fn executor(configs: Vec<ServerConfig>, limits: Limits) -> (Executor, Vec<String>) {
    executor_of(toolwire_mcp::connect_all(configs, limits).await)
}

/// The same for servers already made (in-process ones).
pub async fn executor_over(servers: Vec<Arc<McpServer>>) -> (Executor, Vec<String>) {
    executor_of(toolwire_mcp::connect_servers(servers).await)
}
