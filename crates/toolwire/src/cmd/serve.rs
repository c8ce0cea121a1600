//! `toolwire serve`: the HTTP API and live events on the embedded stores, until Ctrl-C or
//! SIGTERM; work still running then is given time to store its results.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use toolwire_agent::{Host, StoreLocation};
use toolwire_tool::{Tool, ToolSource};

use anyhow::Result;
use toolwire_server::{ServeConfig, Server};

use crate::{Outcome, data, out};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Where to listen. Any address but loopback needs --token.
    #[arg(long, default_value = "127.0.0.1:7777", env = "TOOLWIRE_ADDR")]
    addr: SocketAddr,
    /// The origin a reverse proxy serves this instance under, e.g.
    /// `https://toolwire.example.com` (repeatable; needs --token).
    #[arg(long, value_name = "URL")]
    public_origin: Vec<String>,
    /// The token every request must carry (at least 16 characters). Shown by `ps`:
    /// prefer --token-file or TOOLWIRE_TOKEN.
    #[arg(long, env = "TOOLWIRE_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// A file holding the token (its first line).
    #[arg(long, value_name = "FILE", conflicts_with = "token")]
    token_file: Option<PathBuf>,
    /// Print the one-time login URL, token included, on stderr. Off by default: logs
    /// (journald, docker) keep stderr, and the token is yours already.
    #[arg(long)]
    print_login_url: bool,
    /// The provider agent turns use (keys from the provider's usual variable); without
    /// one, posting a message answers 409.
    #[command(flatten)]
    provider: crate::provider::ProviderArgs,
    /// Where file tools work (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    #[command(flatten)]
    mcp: crate::mcp::McpArgs,
    /// Most connections open at once; past it a new one is answered 503 at once (at most
    /// half the open-file limit is used).
    #[arg(long, value_name = "N", default_value_t = toolwire_server::MAX_CONNECTIONS as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_connections: u64,
    /// Most event feeds (SSE and WebSocket) open at once; past it 503.
    #[arg(long, value_name = "N", default_value_t = toolwire_server::MAX_FEEDS as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_feeds: u64,
    /// Seconds a client has to send a request's headers before it is dropped.
    #[arg(long, value_name = "SECONDS",
          default_value_t = toolwire_server::HEADER_READ_TIMEOUT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    header_timeout: u64,
    /// Seconds a kept-alive connection may wait for its next request.
    #[arg(long, value_name = "SECONDS",
          default_value_t = toolwire_server::IDLE_TIMEOUT.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..))]
    idle_timeout: u64,
    /// Follow an external AG-UI agent (its endpoint URL): POST /api/agui/follow forwards
    /// each RunAgentInput to it, streams its events back unchanged, and records the run
    /// as a session (the threadId's).
    #[arg(long, value_name = "URL")]
    agui_follow: Option<String>,
}

pub(crate) async fn run(args: Args, place: &StoreLocation) -> Result<Outcome> {
    let provider = if args.provider.given() {
        Some(
            args.provider
                .settings(toolwire_agent::DEFAULT_MAX_ITERATIONS, true)?,
        )
    } else {
        None
    };
    let sampler = provider.as_ref().and_then(crate::mcp::sampler);
    // Servers connect in the background: the app is up at once, a slow or silent server
    // holds up nobody, and `GET /api/servers` shows where each one is.
    let servers = args.mcp.servers(
        place.data_dir.as_deref(),
        None,
        sampler,
        args.workspace.as_deref(),
    )?;
    let sources = servers
        .iter()
        .map(|s| Arc::clone(s) as Arc<dyn ToolSource>)
        .collect();
    let host = data::host_with_sources(place, args.workspace.as_deref(), sources).await?;
    let _supervisor = toolwire_mcp::supervise(servers, hand_over(&host));
    let token = match &args.token_file {
        Some(file) => Some(read_token(file)?),
        None => args.token.clone(),
    };
    let mut config = ServeConfig::new(args.addr);
    config.token = token.clone();
    config.public_origins = args.public_origin.clone();
    config.provider = provider;
    config.max_connections = usize::try_from(args.max_connections).unwrap_or(usize::MAX);
    config.max_feeds = usize::try_from(args.max_feeds).unwrap_or(usize::MAX);
    config.header_read_timeout = std::time::Duration::from_secs(args.header_timeout);
    config.idle_timeout = std::time::Duration::from_secs(args.idle_timeout);
    config.agui_follow = args
        .agui_follow
        .as_deref()
        .map(|url| {
            // A followed agent's diagnostics quote it: printed sanitized, as all else.
            toolwire_agui::FollowTarget::new(url)
                .map(|target| target.report_to(|line| out::eprintln(&format!("toolwire: {line}"))))
        })
        .transpose()?;
    // Before the port is open: a SIGTERM from anyone who saw it open stops the server.
    let shutdown = toolwire_http::shutdown_signal();
    let server = Server::bind(host, config).await?;
    let url = server.url().to_owned();
    match &token {
        // The one-time URL trades the token for a login cookie; printed only on request.
        Some(token) if args.print_login_url => {
            out::eprintln(&format!("toolwire is serving at {url}?token={token}"))
        }
        Some(_) => out::eprintln(&format!(
            "toolwire is serving at {url} (a token is required: open {url}?token=<your token> \
             once, or pass --print-login-url)"
        )),
        None => out::eprintln(&format!("toolwire is serving at {url}")),
    }
    if let Some(agent) = &args.agui_follow {
        out::eprintln(&format!(
            "following the AG-UI agent at {agent}: point the front end at {url}api/agui/follow"
        ));
    }
    let announced = announce(place, &url);
    let ran = server.run(shutdown).await;
    if let Some(file) = announced {
        // Another serve may have announced itself since: its file is left alone.
        if std::fs::read_to_string(&file).is_ok_and(|text| text.trim() == url) {
            let _ = std::fs::remove_file(&file);
        }
    }
    ran?;
    out::eprintln("stopped; every finished result is stored");
    Ok(Outcome::Ok)
}

/// Writes this instance's URL into the data directory (`serve.url`), where a
/// `toolwire gateway` on the same directory finds the web app to send approvals to when its
/// host cannot ask. Best effort: without it the gateway refuses such calls, as before.
fn announce(place: &StoreLocation, url: &str) -> Option<PathBuf> {
    let dir = match &place.data_dir {
        Some(dir) => dir.clone(),
        None => toolwire_store::Stores::default_data_dir().ok()?,
    };
    let file = dir.join(toolwire_gateway::SERVE_URL_FILE);
    std::fs::write(&file, format!("{url}\n")).ok()?;
    Some(file)
}

/// Puts a server's tools in the host's set each time it (re)connects, in place of the
/// ones it had.
fn hand_over(host: &Host) -> toolwire_mcp::OnTools {
    let host = host.clone();
    Arc::new(move |server, tools| {
        let owned = format!("{}{}", server.prefix(), toolwire_mcp::SEPARATOR);
        let tools = tools.into_iter().map(|t| t as Arc<dyn Tool>).collect();
        if let Err(e) = host.replace_tools(|name| name.starts_with(&owned), tools) {
            out::eprintln(&format!(
                "warning: MCP server `{}`: its tools cannot be offered: {e}",
                server.name()
            ));
        }
    })
}

/// The token in `file`: its first line, trimmed.
fn read_token(file: &std::path::Path) -> Result<String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| anyhow::anyhow!("--token-file {}: {e}", file.display()))?;
    let token = text.lines().next().unwrap_or_default().trim().to_owned();
    if token.is_empty() {
        anyhow::bail!("--token-file {}: the file is empty", file.display());
    }
    Ok(token)
}
