//! MCP servers as toolwire tool sources: configuration, naming, connections and the tools
//! that call them. rmcp is used here only, so that its churn stays in one crate.

#![warn(missing_docs)]

mod client;
mod config;
mod discover;
mod naming;
mod notices;
mod readable;
mod roots;
mod schema;
mod server;
mod stdio;
mod supervise;
mod task;
mod tool;

use std::sync::Arc;

pub use client::{SampleError, Sampler, mcp_stop_reason};
// Named for what it merges: a bare `merge` at the crate root would say nothing.
pub use config::merge as merge_servers;
pub use config::{
    ApprovalRules, BudgetRules, ConfigError, InheritEnv, MAX_RESULT_CHARS_META, RESULT_CHARS_RANGE,
    SAFE_ENV, ServerConfig, Transport, parse_flag, parse_servers_json, read_servers_file,
};
pub use naming::SEPARATOR;
pub use notices::{Notice, OnNotice};
pub use roots::{MAX_PASSED_ROOTS, PassedRoots};
pub use server::{InProcess, Limits, LoggedOut, McpServer, ServerError};
pub use stdio::{HostCalls, HostHandler, host_transport};
pub use supervise::{MAX_BACKGROUND_ATTEMPTS, OnTools, Supervisor, supervise};
pub use tool::McpTool;

/// The tools of every configured server, started together. A server that fails is
/// reported beside the others' tools rather than failing them all.
#[derive(Debug, Default)]
pub struct Connected {
    /// The tools of every server that connected, in server order.
    pub tools: Vec<Arc<McpTool>>,
    /// The servers that did not connect, and why.
    pub failed: Vec<ServerError>,
    /// Each server that answered, and the protocol revision it speaks.
    pub servers: Vec<(Arc<McpServer>, String)>,
}

/// Starts `configs` (all at once) and lists their tools.
pub async fn connect_all(configs: Vec<ServerConfig>, limits: Limits) -> Connected {
    let servers = configs
        .into_iter()
        .map(|config| McpServer::new(config, limits.clone()))
        .collect();
    connect_servers(servers).await
}

/// Starts `servers` (all at once) and lists their tools.
pub async fn connect_servers(servers: Vec<Arc<McpServer>>) -> Connected {
    let started = futures::future::join_all(servers.into_iter().map(|server| async move {
        let listed = server.list_tools().await;
        (server, listed)
    }))
    .await;
    let mut out = Connected::default();
    for (server, listed) in started {
        match listed {
            Ok((conn, defs)) => {
                out.tools.extend(tool::tools_of(&server, defs));
                out.servers
                    .push((Arc::clone(&server), conn.protocol.to_string()));
            }
            Err(e) => out.failed.push(e),
        }
    }
    out
}
