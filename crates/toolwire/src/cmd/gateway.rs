//! `toolwire gateway`: toolwire as an MCP server on stdin/stdout (or streamable HTTP with
//! `--http`), for a host (Claude Code, Codex, Gemini CLI, opencode, Cursor, VS Code, Claude
//! Desktop)
//! to use instead of its MCP servers: their tools, through toolwire's pipeline. Nothing
//! but MCP goes to stdout.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use toolwire_agent::{Host, StoreLocation};
use toolwire_gateway::{AskSettings, Behind, Gateway, HOSTS, HostProfile, ToolNews};
use toolwire_mcp::McpServer;
use toolwire_tool::ToolSource;

use crate::Outcome;
use crate::data;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The host this gateway serves, for its result budget and quirks: claude-code,
    /// claude-desktop, codex, gemini, opencode, cursor, vscode or generic. Without it,
    /// the host is known by the name its client gives in `initialize` (any other client
    /// is generic).
    #[arg(long, value_name = "HOST")]
    host: Option<String>,
    /// Offer toolwire's built-in tools (files, `run`) too, confined to the workspace.
    #[arg(long)]
    builtins: bool,
    /// Where the built-in tools work (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio (default address
    /// 127.0.0.1:8931; loopback only). Every request must carry `Authorization: Bearer
    /// TOKEN`, the token in the data directory's `gateway-token` file (made at first use,
    /// readable by you only), which `toolwire mcp install --http` writes into the host's
    /// entry. Port 0 picks a free one; the address is said on stderr.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8931")]
    http: Option<SocketAddr>,
    /// Seconds a call that needs a person waits for the answer (from the host's retry
    /// on 2026-07-28, or from `toolwire serve`'s web app when the host cannot ask)
    /// before it is refused.
    #[arg(long, value_name = "SECONDS", default_value_t = toolwire_gateway::DEFAULT_ASK_TIMEOUT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    ask_timeout: u64,
    /// Seconds a 2026-07-28 host has to call again with its person's answer after the
    /// gateway asked (`input_required`), at most --ask-timeout; past it the call is
    /// refused and its room among the waiting calls freed.
    #[arg(long, value_name = "SECONDS", default_value_t = toolwire_gateway::DEFAULT_RETRY_WAIT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    retry_wait: u64,
    /// Who approves a call: `host` (the default) lets the host's own approval count (it
    /// asks its person before it calls a tool, or was told not to), so toolwire asks only
    /// for the tools your mcpServers config sets to `"approval": "always"`; `toolwire`
    /// also asks for every tool not marked read-only, as `toolwire call` does.
    #[arg(long, value_enum, default_value_t = Approvals::Host, value_name = "WHO")]
    approvals: Approvals,
    #[command(flatten)]
    mcp: crate::mcp::McpArgs,
}

/// Who approves the gateway's calls (`--approvals`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Approvals {
    /// The host; toolwire asks only where the config says `"always"`.
    Host,
    /// toolwire too, by the tools' annotations, as `toolwire call` does.
    Toolwire,
}

pub(crate) async fn run(args: Args, place: &StoreLocation) -> Result<Outcome> {
    let profile = match &args.host {
        Some(host) => match HostProfile::named(host) {
            Some(profile) => Some(profile),
            None => bail!("unknown host {host:?}; one of: {}", HOSTS.join(", ")),
        },
        None => None,
    };
    if let Some(addr) = args.http
        && !addr.ip().is_loopback()
    {
        bail!(
            "--http {addr}: the gateway speaks plain HTTP, which would carry its token across \
             the network in the clear, so it listens on loopback only"
        );
    }
    // A host that cannot ask sends its person to the web app of a `toolwire serve` on
    // the same data directory, which announces itself there.
    let data_dir = match &place.data_dir {
        Some(dir) => Some(dir.clone()),
        None => toolwire_store::Stores::default_data_dir().ok(),
    };
    // No token, no listener (a caller without one could answer the approvals its own
    // calls ask); found or made before any server is started.
    let http_token = match (&args.http, &data_dir) {
        (None, _) => None,
        (Some(_), Some(dir)) => Some(toolwire_gateway::http_token(dir)?),
        (Some(_), None) => bail!("--http needs a data directory for its token: give --data-dir"),
    };
    // The servers' roots are the host's (asked of it once it is connected), never the
    // gateway's working directory; over HTTP, where the servers serve every host at once,
    // they get none (a server's own `"roots"` entry wins over both).
    let passed = args.http.is_none().then(toolwire_mcp::PassedRoots::new);
    // The host asked its person before it called (or was told not to ask): a tool no
    // rule of the config covers runs on that decision, unless `--approvals toolwire`.
    let unset = match args.approvals {
        Approvals::Host => Some(toolwire_tool::ApprovalPolicy::Never),
        Approvals::Toolwire => None,
    };
    let roots = match &passed {
        Some(passed) => crate::mcp::ServerRoots::Host(passed.clone()),
        None => crate::mcp::ServerRoots::None,
    };
    let servers = args.mcp.set_up_servers(
        place.data_dir.as_deref(),
        None,
        None,
        crate::mcp::Setup { roots, unset },
    )?;
    // The servers' log messages and resource notices go on to the hosts.
    let behind = Behind::default();
    let servers: Vec<Arc<McpServer>> = servers
        .into_iter()
        .map(|server| server.with_notices(behind.on_notice()))
        .collect();
    let sources = servers
        .iter()
        .map(|s| Arc::clone(s) as Arc<dyn ToolSource>)
        .collect();
    let host =
        data::host_for_gateway(place, args.workspace.as_deref(), sources, args.builtins).await?;
    let asks = AskSettings {
        data_dir,
        timeout: std::time::Duration::from_secs(args.ask_timeout),
        retry_wait: std::time::Duration::from_secs(args.retry_wait),
        host_decides: args.approvals == Approvals::Host,
    };
    let mut gateway = match profile {
        Some(profile) => Gateway::with_asks(host.clone(), profile, asks),
        None => Gateway::with_asks(host.clone(), HostProfile::generic(), asks).profile_by_client(),
    };
    gateway = gateway
        .servers_starting(servers.len())
        .passing(behind.with_servers(servers.clone()));
    // The servers start behind the answer to `initialize`: the host lists what is ready
    // and is told as each of the others comes up.
    let starting = start_servers(servers, &host, &gateway.tool_news());
    if let Some(passed) = passed {
        gateway = gateway.passing_roots(passed);
    }
    match (args.http, http_token) {
        (Some(addr), Some((token, token_file))) => {
            // Before the port is open: a SIGTERM from anyone who saw it open stops the
            // gateway and stores what it answered.
            let stop = toolwire_http::shutdown_signal();
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?;
            let bound = listener.local_addr()?;
            eprintln!(
                "toolwire gateway: callers must send Authorization: Bearer <the token in {}>",
                token_file.display()
            );
            eprintln!("toolwire gateway: listening on http://{bound}/mcp");
            let settings = toolwire_gateway::HttpSettings::new(token);
            toolwire_gateway::serve_http_until(gateway, listener, settings, stop).await?;
        }
        _ => {
            let served = toolwire_gateway::serve_stdio(gateway).await;
            // A host that left before a server was up still has the server's failure
            // said (its stderr quoted), when it comes soon.
            let _ = tokio::time::timeout(REPORT_GRACE, futures::future::join_all(starting)).await;
            served?;
        }
    }
    Ok(Outcome::Ok)
}

/// How long a gateway whose host left waits for the servers still starting, so that a
/// server that fails at once is still reported.
const REPORT_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Starts each of `servers` in the background: its tools are put in `host`'s set as it
/// comes up, and `news` tells the gateway's hosts; a server that fails is said on stderr,
/// sanitized (it quotes the server's stderr), since stdout is the protocol.
fn start_servers(
    servers: Vec<Arc<McpServer>>,
    host: &Host,
    news: &ToolNews,
) -> Vec<tokio::task::JoinHandle<()>> {
    servers
        .into_iter()
        .map(|server| {
            let host = host.clone();
            let news = news.clone();
            tokio::spawn(async move {
                let owned = format!("{}{}", server.prefix(), toolwire_mcp::SEPARATOR);
                let (tools, failed) = crate::mcp::connect(vec![Arc::clone(&server)]).await;
                for failure in &failed {
                    crate::out::eprintln(&format!("toolwire gateway: {failure}"));
                }
                if !tools.is_empty() {
                    match host.replace_tools(|name| name.starts_with(&owned), tools) {
                        Ok(()) => news.tools_changed(),
                        Err(e) => crate::out::eprintln(&format!(
                            "toolwire gateway: MCP server `{}`: its tools cannot be offered: {e}",
                            server.name()
                        )),
                    }
                }
                news.started();
            })
        })
        .collect()
}
