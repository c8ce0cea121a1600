//! The `--mcp` and `--mcp-config` flags every tool-running command takes, toolwire's own
//! config file, and the MCP tools they give.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use futures::future::BoxFuture;
use toolwire_agent::{ProviderSampler, ProviderSettings};
use toolwire_mcp::{
    Limits, McpServer, SampleError, Sampler, ServerConfig, merge_servers, parse_flag,
    parse_servers_json, read_servers_file,
};
use toolwire_oauth::{LOGIN_TIMEOUT, LoopbackRedirect};
use toolwire_tool::Tool;

use crate::out;

/// Environment variable naming toolwire's config file (default: `config.json` in the
/// data directory). Its `mcpServers` are used by every command that runs tools.
pub(crate) const CONFIG_ENV: &str = "TOOLWIRE_CONFIG";

/// Environment variable bounding MCP calls and handshakes (e.g. `30s`, `2m`).
pub(crate) const TIMEOUT_ENV: &str = "TOOLWIRE_MCP_TIMEOUT";

/// How long servers may take to start before what is waited for is said on stderr.
const WAIT_SAID_AFTER: Duration = Duration::from_secs(1);

/// Environment variable bounding the questions one MCP call may ask (default 16).
pub(crate) const ROUNDS_ENV: &str = "TOOLWIRE_MCP_MAX_INPUT_ROUNDS";

#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct McpArgs {
    /// An MCP server whose tools to use, as NAME=COMMAND or NAME=URL (repeatable). Its
    /// tools are named NAME__TOOL.
    #[arg(long = "mcp", value_name = "NAME=COMMAND|URL")]
    pub servers: Vec<String>,
    /// A JSON file of MCP servers, {"mcpServers": {...}}, as Claude Desktop, Cursor and
    /// VS Code write it (repeatable).
    #[arg(long = "mcp-config", value_name = "FILE")]
    pub config_files: Vec<PathBuf>,
}

impl McpArgs {
    /// Every configured server: the config file's, then `--mcp-config` files', then flags.
    pub(crate) fn configs(&self, data_dir: Option<&Path>) -> Result<Vec<ServerConfig>> {
        let mut groups = Vec::new();
        if let Some(file) = own_config_file(data_dir)
            && file.exists()
        {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let doc: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not JSON", file.display()))?;
            // toolwire's own file may hold other settings; servers are optional there.
            if doc.get("mcpServers").is_some() {
                let base = file.parent().unwrap_or(Path::new("."));
                groups.push(
                    parse_servers_json(&doc, base)
                        .with_context(|| format!("in {}", file.display()))?,
                );
            }
        }
        for file in &self.config_files {
            groups.push(read_servers_file(file)?);
        }
        let flags: Result<Vec<ServerConfig>, _> =
            self.servers.iter().map(|f| parse_flag(f)).collect();
        groups.push(flags?);
        Ok(merge_servers(groups)?)
    }

    /// The tools of the configured servers. With `only`, just the server whose tools
    /// that name belongs to is started (servers start when needed). A server that fails
    /// is named on stderr; the others' tools are still given.
    pub(crate) async fn tools(
        &self,
        data_dir: Option<&Path>,
        only: Option<&str>,
        sampler: Option<Arc<dyn Sampler>>,
        workspace: Option<&Path>,
    ) -> Result<Vec<Arc<dyn Tool>>> {
        Ok(self
            .tools_and_failures(data_dir, only, sampler, workspace)
            .await?
            .0)
    }

    /// [`McpArgs::tools`], and the servers that failed (each also named on stderr).
    pub(crate) async fn tools_and_failures(
        &self,
        data_dir: Option<&Path>,
        only: Option<&str>,
        sampler: Option<Arc<dyn Sampler>>,
        workspace: Option<&Path>,
    ) -> Result<(Vec<Arc<dyn Tool>>, Vec<toolwire_mcp::ServerError>)> {
        let setup = Setup::workspace(workspace);
        self.set_up_tools(data_dir, only, sampler, setup).await
    }

    /// [`McpArgs::tools_and_failures`], the servers set up as `setup` says.
    pub(crate) async fn set_up_tools(
        &self,
        data_dir: Option<&Path>,
        only: Option<&str>,
        sampler: Option<Arc<dyn Sampler>>,
        setup: Setup<'_>,
    ) -> Result<(Vec<Arc<dyn Tool>>, Vec<toolwire_mcp::ServerError>)> {
        let servers = self.set_up_servers(data_dir, only, sampler, setup)?;
        if servers.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        Ok(connect(servers).await)
    }

    /// The configured servers, not started yet (with `only`, just the one whose tools
    /// that name belongs to), their roots the workspace (or their entry's own `"roots"`).
    pub(crate) fn servers(
        &self,
        data_dir: Option<&Path>,
        only: Option<&str>,
        sampler: Option<Arc<dyn Sampler>>,
        workspace: Option<&Path>,
    ) -> Result<Vec<Arc<McpServer>>> {
        self.set_up_servers(data_dir, only, sampler, Setup::workspace(workspace))
    }

    /// [`McpArgs::servers`], set up as `setup` says.
    pub(crate) fn set_up_servers(
        &self,
        data_dir: Option<&Path>,
        only: Option<&str>,
        sampler: Option<Arc<dyn Sampler>>,
        Setup { roots, unset }: Setup<'_>,
    ) -> Result<Vec<Arc<McpServer>>> {
        let mut configs = self.configs(data_dir)?;
        for config in &mut configs {
            config.approval.unset = unset;
        }
        if let Some(tool) = only {
            let prefix = tool.split_once(toolwire_mcp::SEPARATOR).map(|(p, _)| p);
            configs.retain(|c| Some(c.prefix.as_str()) == prefix);
        }
        if configs.is_empty() {
            return Ok(Vec::new());
        }
        // The workspace is the servers' root (`roots/list`), as the file tools' is.
        let workspace = match roots {
            ServerRoots::Workspace(Some(dir)) => Some(dir.to_owned()),
            ServerRoots::Workspace(None) => {
                Some(std::env::current_dir().context("cannot read the current directory")?)
            }
            ServerRoots::Host(_) | ServerRoots::None => None,
        };
        let workspace = workspace.map(|root| [root.canonicalize().unwrap_or(root)]);
        let limits = limits()?;
        let tokens = token_dir(data_dir);
        Ok(configs
            .into_iter()
            .map(|config| {
                let mut server = McpServer::new(config, limits.clone());
                // An entry's own `"roots"` wins over both (see `McpServer::with_roots`).
                if let Some(dirs) = &workspace {
                    server = server.with_roots(dirs);
                } else if let ServerRoots::Host(passed) = &roots {
                    server = server.with_passed_roots(passed);
                }
                if let Some(dir) = &tokens {
                    server = server.with_token_dir(dir);
                }
                match &sampler {
                    Some(s) => server.with_sampler(Arc::clone(s)),
                    None => server,
                }
            })
            .collect())
    }
}

/// How the configured servers are set up for the command that uses them.
pub(crate) struct Setup<'a> {
    /// Which roots they are told of.
    pub roots: ServerRoots<'a>,
    /// The approval of a tool no rule of the config covers (see
    /// `toolwire_mcp::ApprovalRules::unset`): the gateway's host decides it.
    pub unset: Option<toolwire_tool::ApprovalPolicy>,
}

impl<'a> Setup<'a> {
    /// `call`, `chat`, `serve`: the workspace as roots, approvals by the config and the
    /// tools' annotations.
    fn workspace(dir: Option<&'a Path>) -> Self {
        Setup {
            roots: ServerRoots::Workspace(dir),
            unset: None,
        }
    }
}

/// Which roots the configured servers are told of (a server's own `"roots"` entry wins
/// over each).
pub(crate) enum ServerRoots<'a> {
    /// The workspace (default: the current directory): `call`, `serve`, `chat`.
    Workspace(Option<&'a Path>),
    /// The gateway's host's, passed on as they change (none until it gives some).
    Host(toolwire_mcp::PassedRoots),
    /// None at all: the HTTP gateway, whose servers serve several hosts at once.
    None,
}

/// Where MCP servers' OAuth tokens are kept: `mcp-auth/` in the data directory.
pub(crate) fn token_dir(data_dir: Option<&Path>) -> Option<PathBuf> {
    let dir = match data_dir {
        Some(d) => d.to_owned(),
        None => toolwire_store::Stores::default_data_dir().ok()?,
    };
    Some(dir.join("mcp-auth"))
}

/// Starts `servers` (all at once): their tools, and the ones that failed, each also
/// named on stderr. A server that needs a login gets one first when a person is at the
/// terminal (the browser opens; the first use is the login).
pub(crate) async fn connect(
    servers: Vec<Arc<McpServer>>,
) -> (Vec<Arc<dyn Tool>>, Vec<toolwire_mcp::ServerError>) {
    // Servers often take 5 to 20 s to start (a Python one importing its libraries, an
    // npx download): what is waited for is said, once, rather than nothing for that long.
    let waiting = {
        let servers = servers.clone();
        tokio::spawn(async move {
            tokio::time::sleep(WAIT_SAID_AFTER).await;
            for server in &servers {
                let status = server.status();
                if matches!(
                    status.state,
                    toolwire_tool::SourceState::Connecting | toolwire_tool::SourceState::Restarting
                ) {
                    out::eprintln(&format!(
                        "waiting for MCP server `{}` ({}) to start…",
                        status.name, status.target
                    ));
                }
            }
        })
    };
    let mut connected = toolwire_mcp::connect_servers(servers.clone()).await;
    waiting.abort();
    if std::io::IsTerminal::is_terminal(&std::io::stdin())
        && std::io::IsTerminal::is_terminal(&std::io::stderr())
    {
        let (login, failed): (Vec<_>, Vec<_>) = std::mem::take(&mut connected.failed)
            .into_iter()
            .partition(|f| f.needs_login);
        connected.failed = failed;
        for refused in login {
            let Some(server) = servers.iter().find(|s| s.name() == refused.server) else {
                continue;
            };
            if let Err(e) = self::login(server, true).await {
                connected
                    .failed
                    .push(server.error_of(&crate::error_line(&e)));
                continue;
            }
            let again = toolwire_mcp::connect_servers(vec![Arc::clone(server)]).await;
            connected.tools.extend(again.tools);
            connected.failed.extend(again.failed);
            connected.servers.extend(again.servers);
        }
    }
    for failed in &connected.failed {
        out::eprintln(&format!("warning: {failed}"));
    }
    // A server speaking an older revision than asked for, without having said so itself:
    // said here, with why (`McpServer::status`'s warning).
    for (server, _) in &connected.servers {
        if let Some(warning) = server.status().warning {
            out::eprintln(&format!("warning: {}", server.error_of(&warning)));
        }
    }
    let tools = connected
        .tools
        .into_iter()
        .map(|t| t as Arc<dyn Tool>)
        .collect();
    (tools, connected.failed)
}

fn own_config_file(data_dir: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(CONFIG_ENV) {
        return Some(PathBuf::from(path));
    }
    let dir = match data_dir {
        Some(d) => d.to_owned(),
        None => toolwire_store::Stores::default_data_dir().ok()?,
    };
    Some(dir.join("config.json"))
}

fn limits() -> Result<Limits> {
    let mut limits = Limits::default();
    if let Ok(text) = std::env::var(TIMEOUT_ENV) {
        let timeout: Duration = humantime::parse_duration(text.trim())
            .with_context(|| format!("{TIMEOUT_ENV}={text:?} is not a duration like 30s"))?;
        limits.call_timeout = timeout;
        limits.connect_timeout = timeout;
    }
    if let Ok(text) = std::env::var(ROUNDS_ENV) {
        limits.max_input_rounds = text
            .trim()
            .parse()
            .with_context(|| format!("{ROUNDS_ENV}={text:?} is not a whole number"))?;
    }
    Ok(limits)
}

/// MCP servers' sampling requests answered by the chat's provider.
struct Sampling(ProviderSampler);

impl Sampler for Sampling {
    fn sample(
        &self,
        params: serde_json::Value,
    ) -> BoxFuture<'_, Result<serde_json::Value, SampleError>> {
        Box::pin(async move {
            self.0.sample(&params).await.map_err(|e| {
                if e.is_invalid_request() {
                    SampleError::InvalidRequest(e.to_string())
                } else {
                    SampleError::Failed(e.to_string())
                }
            })
        })
    }
}

/// The sampler for a session whose provider is `settings` (none when it cannot connect).
pub(crate) fn sampler(settings: &ProviderSettings) -> Option<Arc<dyn Sampler>> {
    ProviderSampler::new(settings)
        .ok()
        .map(|s| Arc::new(Sampling(s)) as Arc<dyn Sampler>)
}

/// Sampling as `export` offers it: `chat` always has a provider, so its servers are always
/// offered sampling, and some list more tools then (server-everything's
/// `trigger-sampling-request`); `export` must see the same tools, but runs no call, so a
/// request is refused.
struct ExportOnly;

impl Sampler for ExportOnly {
    fn sample(
        &self,
        _params: serde_json::Value,
    ) -> BoxFuture<'_, Result<serde_json::Value, SampleError>> {
        Box::pin(async {
            Err(SampleError::Failed(
                "toolwire export runs no tool calls and samples nothing".into(),
            ))
        })
    }
}

/// The sampler `export` connects its servers with (see [`ExportOnly`]).
pub(crate) fn export_sampler() -> Arc<dyn Sampler> {
    Arc::new(ExportOnly)
}

/// Logs in to `server` as a person does: a loopback redirect, the authorization page
/// printed (and opened in a browser when `open_browser`), the code taken when it comes.
/// Here rather than in `cmd/mcp.rs`, since connecting (this file) logs in too.
pub(crate) async fn login(server: &McpServer, open_browser: bool) -> Result<()> {
    let redirect = LoopbackRedirect::bind().await?;
    let pending = server
        .begin_login(redirect.uri())
        .await
        .with_context(|| format!("cannot log in to {}", server.name()))?;
    out::eprintln(&format!(
        "To log in to {}, open this page in a browser (waiting up to {} minutes):\n  {}",
        server.name(),
        LOGIN_TIMEOUT.as_secs() / 60,
        pending.url()
    ));
    if open_browser {
        open(pending.url());
    }
    redirect
        .complete(server, pending, LOGIN_TIMEOUT)
        .await
        .with_context(|| format!("cannot log in to {}", server.name()))?;
    Ok(())
}

/// Opens `url` in the system browser when there is one: `$BROWSER`, else the platform's
/// opener (on Linux only with a display). Failing is fine: the address was printed.
fn open(url: &str) {
    let opener = match std::env::var("BROWSER") {
        Ok(browser) if !browser.trim().is_empty() => Some(browser),
        _ if cfg!(target_os = "macos") => Some("open".to_owned()),
        _ if cfg!(windows) => Some("explorer".to_owned()),
        _ if std::env::var_os("DISPLAY").is_some()
            || std::env::var_os("WAYLAND_DISPLAY").is_some() =>
        {
            Some("xdg-open".to_owned())
        }
        _ => None,
    };
    if let Some(opener) = opener {
        // The URL is one argument, never through a shell.
        let _ = std::process::Command::new(opener)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
}
