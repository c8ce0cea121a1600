//! `toolwire mcp …`: MCP servers themselves rather than their tools. `login NAME` logs in
//! to a protected HTTP server (browser, loopback redirect) and `logout NAME` forgets its
//! tokens; `install --host HOST` writes the entry that starts `toolwire gateway` into a
//! host's MCP config (cmd/install.rs).

use std::sync::Arc;

use anyhow::{Context, Result, bail};
use toolwire_agent::StoreLocation;
use toolwire_mcp::McpServer;

use crate::{Outcome, out};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Log in to a server that needs authorization (OAuth): opens the browser (or prints
    /// the page to open) and waits for the login to finish on a loopback redirect.
    Login(LoginArgs),
    /// Forget a server's tokens (they stay valid at the server until they expire).
    Logout(NameArgs),
    /// Write the one entry that starts `toolwire gateway` into a host's MCP config
    /// (a backup of the file is kept beside it), replacing the entries it routes.
    Install(InstallArgs),
}

#[derive(Debug, clap::Args)]
struct InstallArgs {
    /// The host: claude-code, claude-desktop, cursor, vscode, codex, gemini or opencode.
    #[arg(long, value_name = "HOST")]
    host: String,
    /// The host's config file (default: where the host keeps its user-wide one).
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// The entry's name in the host's config.
    #[arg(long, default_value = "toolwire")]
    name: String,
    /// A JSON file of MCP servers for the gateway to offer (repeatable; toolwire's own
    /// config is read anyway).
    #[arg(long = "mcp-config", value_name = "FILE")]
    config_files: Vec<std::path::PathBuf>,
    /// Print the entry instead of writing it.
    #[arg(long)]
    print: bool,
    /// Write the entry that reaches a running `toolwire gateway --http ADDR` (default
    /// 127.0.0.1:8931) instead of one that starts the gateway: its URL, and the
    /// gateway's token (the data directory's `gateway-token`, made if there is none) in
    /// an Authorization header. The config file is then made readable by you only.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8931",
          conflicts_with = "config_files")]
    http: Option<std::net::SocketAddr>,
}

#[derive(Debug, clap::Args)]
struct LoginArgs {
    /// Print the page to open instead of opening a browser.
    #[arg(long)]
    no_browser: bool,
    #[command(flatten)]
    server: NameArgs,
}

#[derive(Debug, clap::Args)]
struct NameArgs {
    /// The server's name, as configured.
    name: String,
    #[command(flatten)]
    mcp: crate::mcp::McpArgs,
}

pub(crate) async fn run(args: Args, place: &StoreLocation) -> Result<Outcome> {
    match args.command {
        Command::Install(install_args) => install(&install_args, place)?,
        Command::Login(login_args) => {
            let server = named(&login_args.server, place)?;
            crate::mcp::login(&server, !login_args.no_browser).await?;
            out::eprintln(&format!("logged in to {}", server.name()));
        }
        Command::Logout(name_args) => {
            let server = named(&name_args, place)?;
            let done = server.log_out().await?;
            let revoked = match &done.revoked {
                None => String::new(),
                Some(Ok(())) => " and revoked at its authorization server".to_owned(),
                Some(Err(why)) => {
                    format!("; revoking them at its authorization server failed: {why}")
                }
            };
            out::eprintln(&if done.removed {
                format!(
                    "logged out of {} (its tokens are removed{revoked})",
                    server.name()
                )
            } else {
                format!("{} had no stored tokens", server.name())
            });
        }
    }
    Ok(Outcome::Ok)
}

/// The configured server named `args.name`.
fn named(args: &NameArgs, place: &StoreLocation) -> Result<Arc<McpServer>> {
    let servers = args
        .mcp
        .servers(place.data_dir.as_deref(), None, None, None)?;
    let names: Vec<String> = servers.iter().map(|s| s.name().to_owned()).collect();
    match servers.into_iter().find(|s| s.name() == args.name) {
        Some(server) => Ok(server),
        None if names.is_empty() => bail!("no MCP servers are configured"),
        None => bail!(
            "no MCP server is named {:?} (configured: {})",
            args.name,
            names.join(", ")
        ),
    }
}

/// Logs in to `server` as a person: the authorization page in the browser (its address
/// printed too, for a terminal without one), the redirect taken on loopback.
fn install(args: &InstallArgs, place: &StoreLocation) -> Result<()> {
    use super::install::{Entry, INSTALL_HOSTS, default_config_path};
    if !INSTALL_HOSTS.contains(&args.host.as_str()) {
        bail!(
            "unknown host {:?}; one of: {}",
            args.host,
            INSTALL_HOSTS.join(", ")
        );
    }
    let entry = match args.http {
        Some(addr) => http_entry(addr, place)?,
        None => stdio_entry(args, place)?,
    };
    if args.print {
        let shown = super::install::shown_entry(&args.host, &entry);
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({args.name.clone(): shown}))?
        );
        return Ok(());
    }
    let path = match &args.config {
        Some(path) => path.clone(),
        None => {
            let home = std::env::var_os("HOME").context("HOME is not set: give --config FILE")?;
            default_config_path(&args.host, std::path::Path::new(&home))
                .context("no default config for this host: give --config FILE")?
        }
    };
    let done = super::install::install_entry(&args.host, &path, &args.name, &entry)?;
    out::eprintln(&format!(
        "{} {:?} in {}{}{}; remove the servers it now routes from that file",
        if done.replaced { "replaced" } else { "added" },
        args.name,
        done.path.display(),
        if matches!(entry, Entry::Http { .. }) {
            " (readable by you only now: it holds the gateway's token)"
        } else {
            ""
        },
        done.backup
            .map(|b| format!(" (the file as it was: {})", b.display()))
            .unwrap_or_default(),
    ));
    Ok(())
}

/// The entry that starts this binary's gateway on stdio.
fn stdio_entry(args: &InstallArgs, place: &StoreLocation) -> Result<super::install::Entry> {
    // The absolute path of this binary, so the host needs no PATH to find it.
    let command = std::env::current_exe()
        .context("cannot tell where this toolwire binary is")?
        .display()
        .to_string();
    let mut gateway_args = Vec::new();
    if let Some(dir) = &place.data_dir {
        gateway_args.push("--data-dir".to_owned());
        gateway_args.push(std::path::absolute(dir)?.display().to_string());
    }
    gateway_args.extend(["gateway".to_owned(), "--host".to_owned(), args.host.clone()]);
    for file in &args.config_files {
        gateway_args.push("--mcp-config".to_owned());
        gateway_args.push(std::path::absolute(file)?.display().to_string());
    }
    Ok(super::install::Entry::Stdio {
        command,
        args: gateway_args,
    })
}

/// The entry that reaches `toolwire gateway --http ADDR` with the gateway's token, the
/// one a gateway on the same data directory reads.
fn http_entry(addr: std::net::SocketAddr, place: &StoreLocation) -> Result<super::install::Entry> {
    if !addr.ip().is_loopback() {
        bail!("--http {addr}: the gateway listens on loopback only");
    }
    let dir = match &place.data_dir {
        Some(dir) => dir.clone(),
        None => toolwire_store::Stores::default_data_dir()
            .context("no data directory for the gateway's token: give --data-dir")?,
    };
    let (token, _) = toolwire_gateway::http_token(&dir)?;
    Ok(super::install::Entry::Http {
        url: format!("http://{addr}/mcp"),
        token,
    })
}
