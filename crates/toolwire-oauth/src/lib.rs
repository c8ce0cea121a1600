//! MCP authorization for servers over HTTP: OAuth 2.1 logins and unattended grants
//! driven through rmcp's auth module, the token file kept per server and resource, the
//! loopback redirect listener, DPoP (RFC 9449) proofs and the HTTP clients that present
//! them, and the address policy that keeps discovery and token requests off private
//! networks. toolwire-mcp is its one user: an `McpServer` logs in and connects with it.

#![warn(missing_docs)]

mod auth;
mod dpop;
mod dpop_http;
mod dpop_mcp;
mod oauth_address;

pub use auth::{
    FinishLogin, GrantError, IdpSettings, LOGIN_TIMEOUT, LoginError, LoopbackRedirect,
    OAuthSettings, PendingLogin, TokenFile, begin, probe_challenge, revoke, stored_manager,
    unattended,
};
pub use dpop::{DpopError, DpopKey};
pub use dpop_mcp::DpopHttpClient;
