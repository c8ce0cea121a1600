//! `toolwire gateway`: toolwire as an MCP server on stdin/stdout (or streamable HTTP with
//! `--http`), for a host (Claude Code, Codex, Gemini CLI, opencode, Cursor, VS Code, Claude
//! Desktop)
//! to use instead of its MCP servers: their tools, through toolwire's pipeline. Nothing
//! but MCP goes to stdout.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use toolwire_agent::StoreLocation;
use toolwire_gateway::{AskSettings, Gateway, HOSTS, HostProfile};

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
    let (mcp_tools, failed) = args
        .mcp
        .set_up_tools(
            place.data_dir.as_deref(),
            None,
            None,
            crate::mcp::Setup { roots, unset },
        )
        .await?;
    // stdout is the protocol: what went wrong with a server is said on stderr,
    // sanitized (it quotes the server's own stderr).
    for failure in &failed {
        crate::out::eprintln(&format!("toolwire gateway: {failure}"));
    }
    let host =
        data::host_for_gateway(place, args.workspace.as_deref(), mcp_tools, args.builtins).await?;
    let asks = AskSettings {
        data_dir,
        timeout: std::time::Duration::from_secs(args.ask_timeout),
        retry_wait: std::time::Duration::from_secs(args.retry_wait),
        host_decides: args.approvals == Approvals::Host,
    };
    let mut gateway = match profile {
        Some(profile) => Gateway::with_asks(host, profile, asks),
        None => Gateway::with_asks(host, HostProfile::generic(), asks).profile_by_client(),
    };
    if let Some(passed) = passed {
        gateway = gateway.passing_roots(passed);
    }
    match (args.http, http_token) {
        (Some(addr), Some((token, token_file))) => {
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
            toolwire_gateway::serve_http(gateway, listener, settings).await?;
        }
        _ => toolwire_gateway::serve_stdio(gateway).await?,
    }
    Ok(Outcome::Ok)
}
