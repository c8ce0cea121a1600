//! `toolwire serve`: the HTTP API and live events on the embedded stores, until Ctrl-C or
//! SIGTERM; work still running then is given time to store its results.

use std::net::SocketAddr;
use std::path::PathBuf;
use toolwire_agent::StoreLocation;

use anyhow::Result;
use toolwire_server::{ServeConfig, Server};

use crate::{Outcome, data, out};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Where to listen. Any address but loopback needs --token.
    #[arg(long, default_value = "127.0.0.1:7777", env = "TOOLWIRE_ADDR")]
    addr: SocketAddr,
    /// The origin a reverse proxy serves this instance under, e.g.
    /// https://toolwire.example.com (repeatable; needs --token).
    #[arg(long, value_name = "URL")]
    public_origin: Vec<String>,
    /// The token every request must carry (at least 16 characters).
    #[arg(long, env = "TOOLWIRE_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// The provider agent turns use (keys from the provider's usual variable); without
    /// one, posting a message answers 409.
    #[command(flatten)]
    provider: crate::provider::ProviderArgs,
    /// Where file tools work (default: the current directory).
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    #[command(flatten)]
    mcp: crate::mcp::McpArgs,
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
    let mcp_tools = args
        .mcp
        .tools(place.data_dir.as_deref(), None, sampler)
        .await?;
    let host = data::host(place, args.workspace.as_deref(), mcp_tools).await?;
    let mut config = ServeConfig::new(args.addr);
    config.token = args.token.clone();
    config.public_origins = args.public_origin.clone();
    config.provider = provider;
    let server = Server::bind(host, config).await?;
    let url = server.url().to_owned();
    match &args.token {
        // The one-time URL trades the token for a cookie; it is printed here only.
        Some(token) => out::eprintln(&format!("toolwire is serving at {url}?token={token}")),
        None => out::eprintln(&format!("toolwire is serving at {url}")),
    }
    server.run(shutdown_signal()).await?;
    out::eprintln("stopped; every finished result is stored");
    Ok(Outcome::Ok)
}

/// Ctrl-C, or SIGTERM where there is one.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    {
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    }
    #[cfg(not(unix))]
    ctrl_c.await;
}
