//! Servers kept up in the background, for a host that serves before they are ready: each
//! server's tools are handed over when it answers, a server that dies is started again
//! and its tools listed anew, and one that keeps failing is given up on, with its reason.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::server::McpServer;
use crate::tool::{McpTool, tools_of};

/// Called with a server and its tools each time it (re)connects: the host replaces that
/// server's tools with these.
pub type OnTools = Arc<dyn Fn(&McpServer, Vec<Arc<McpTool>>) + Send + Sync>;

/// Attempts in a row after which a server is left failed: a command that is not
/// installed must not be spawned every 30 s for as long as the host runs.
pub const MAX_BACKGROUND_ATTEMPTS: u32 = 6;

/// How often a ready server is looked at to see whether it died.
const WATCH_EVERY: Duration = Duration::from_millis(500);

/// The background work; dropping it stops it (running calls are not affected).
#[derive(Debug)]
pub struct Supervisor {
    stop: CancellationToken,
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Starts every server at once in the background, calling `on_tools` as each becomes
/// ready. Returns at once; `McpServer::status` tells where each one is.
pub fn supervise(servers: Vec<Arc<McpServer>>, on_tools: OnTools) -> Supervisor {
    let stop = CancellationToken::new();
    for server in servers {
        let on_tools = Arc::clone(&on_tools);
        let stop = stop.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = keep_up(&server, on_tools.as_ref()) => {}
            }
        });
    }
    Supervisor { stop }
}

/// One server's life: connect and list, hand over the tools, watch, and again.
async fn keep_up(
    server: &Arc<McpServer>,
    on_tools: &(dyn Fn(&McpServer, Vec<Arc<McpTool>>) + Send + Sync),
) {
    loop {
        match server.list_tools().await {
            Ok((_, defs)) => {
                on_tools(server, tools_of(server, defs));
                while server.is_up().await {
                    tokio::time::sleep(WATCH_EVERY).await;
                }
                server.show_restarting("the server stopped; starting it again");
            }
            // Nothing to retry until a person logs in: wait for that (or a logout).
            Err(e) if e.needs_login => server.login_changed.notified().await,
            // The authorization server refused the unattended grant: the same
            // credentials would be refused again.
            Err(_) if server.grant_refused().await => {
                server.show_given_up(
                    "its authorization server refused the grant; not tried again until the \"oauth\" settings change and toolwire restarts",
                );
                return;
            }
            Err(_) => {
                // `connection` recorded the failure and its backoff.
                if server.failures().await >= MAX_BACKGROUND_ATTEMPTS {
                    server.show_given_up(&format!(
                        "gave up after {MAX_BACKGROUND_ATTEMPTS} attempts; restart toolwire to try again"
                    ));
                    return;
                }
                tokio::time::sleep(server.retry_in().await).await;
            }
        }
    }
}
