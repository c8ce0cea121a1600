//! MCP servers as toolwire tool sources: configuration, naming, connections and the tools
//! that call them. rmcp is used here only, so that its churn stays in one crate.

pub mod config;
pub mod naming;

pub use config::{ConfigError, ServerConfig, Transport};
