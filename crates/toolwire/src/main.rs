//! The `toolwire` binary: a thin clap front end over the toolwire crates.

mod approve;
mod cmd;
mod data;
mod form;
mod input;
mod mcp;
mod out;
mod provider;
mod telemetry;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Normalize, validate, store, render and serve the results of AI-agent tool calls.
#[derive(Debug, Parser)]
#[command(name = "toolwire", version, about, propagate_version = true)]
struct Cli {
    /// Where history and blobs live (default: $TOOLWIRE_DATA_DIR, else the platform data dir).
    #[arg(long, global = true, env = "TOOLWIRE_DATA_DIR", value_name = "DIR")]
    data_dir: Option<PathBuf>,

    /// The history database: sqlite://PATH or postgres://USER@HOST/DB (default: history.db
    /// in the data dir). Postgres lets several machines share one history.
    #[arg(
        long,
        global = true,
        env = "TOOLWIRE_DATABASE_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    database_url: Option<String>,

    /// The blob store: file:///DIR or s3://BUCKET/PREFIX, with the standard AWS_*
    /// variables (default: blobs/ in the data dir).
    #[arg(
        long,
        global = true,
        env = "TOOLWIRE_BLOB_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    blob_url: Option<String>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the canonical ToolResult JSON of a raw tool payload (MCP, ART, golem-forge, bare JSON).
    Normalize(cmd::normalize::Args),
    /// Check a ToolResult against the contract; one line per violation.
    Validate(cmd::validate::Args),
    /// Render a ToolResult or Value JSON for the terminal (colour, tables, diffs, images).
    Render(cmd::render::Args),
    /// Print the JSON Schema (2020-12) of the ToolResult wire format.
    Schema,
    /// List stored sessions.
    Sessions(cmd::sessions::Args),
    /// Print a session's messages, rendered.
    Show(cmd::show::Args),
    /// Remove blobs that no stored message references.
    Gc(cmd::gc::Args),
    /// Write a stored blob (media a tool returned) to a file or stdout.
    Blob(cmd::blob::Args),
    /// Chat with a model that uses the tools (interactive, or one message with -p).
    Chat(cmd::chat::Args),
    /// Run one tool (built-in or MCP), render its result and store it.
    Call(cmd::call::Args),
    /// List the tools (built-in and MCP) with their descriptions, or their schemas as JSON.
    Tools(cmd::tools::Args),
    /// Print the request body a provider would be sent for a session.
    Export(cmd::export::Args),
    /// Copy a store into another (SQLite + files to Postgres + S3), verified and resumable.
    Migrate(cmd::migrate::Args),
    /// Serve the HTTP API and live events (loopback by default; a token for anything else).
    Serve(cmd::serve::Args),
    /// Be an MCP server (stdio) for a host: the configured MCP servers' tools through
    /// toolwire (stored, budgeted for the host, media kept, approvals asked).
    Gateway(cmd::gateway::Args),
    /// MCP servers themselves: log in to a protected one, log out.
    Mcp(cmd::mcp::Args),
    /// External AG-UI agents: run one from the terminal and record its run as a session.
    Agui(cmd::agui::Args),
}

/// How a command ended when it did not fail outright.
pub(crate) enum Outcome {
    Ok,
    /// Findings were printed (e.g. violations); exit 1 without a further message.
    Reported,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // `serve` answers many clients at once and writes every event to each of its
    // subscribers: it takes every core. The other commands are one client's work, where a
    // single thread starts faster and is enough.
    let mut runtime = if matches!(cli.command, Command::Serve(_)) {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    let result = runtime
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)
        .and_then(|rt| rt.block_on(dispatch(cli)));
    match result {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Reported) => ExitCode::FAILURE,
        Err(err) => {
            out::eprintln(&format!("error: {}", error_line(&err)));
            ExitCode::FAILURE
        }
    }
}

/// An error as one line: its chain of causes joined by ": ", never a backtrace. A cause
/// whose text the previous one already quotes is left out, since many errors embed their
/// source's message and the line would otherwise say the same thing twice.
pub(crate) fn error_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// Runs the command, traced when the `OTEL_*` variables ask for it; queued spans are
/// sent before the process ends.
async fn dispatch(cli: Cli) -> anyhow::Result<Outcome> {
    telemetry::start();
    let outcome = command(cli).await;
    telemetry::finish().await;
    outcome
}

async fn command(cli: Cli) -> anyhow::Result<Outcome> {
    let place = toolwire_agent::StoreLocation {
        data_dir: cli.data_dir,
        database_url: cli.database_url,
        blob_url: cli.blob_url,
    };
    match cli.command {
        Command::Normalize(args) => cmd::normalize::run(args, &place).await,
        Command::Validate(args) => cmd::validate::run(args),
        Command::Render(args) => cmd::render::run(args),
        Command::Schema => cmd::schema::run(),
        Command::Sessions(args) => cmd::sessions::run(args, &place).await,
        Command::Show(args) => cmd::show::run(args, &place).await,
        Command::Gc(args) => cmd::gc::run(args, &place).await,
        Command::Blob(args) => cmd::blob::run(args, &place).await,
        Command::Chat(args) => cmd::chat::run(args, &place).await,
        Command::Call(args) => cmd::call::run(args, &place).await,
        Command::Tools(args) => cmd::tools::run(args, &place).await,
        Command::Export(args) => cmd::export::run(args, &place).await,
        Command::Migrate(args) => cmd::migrate::run(args).await,
        Command::Serve(args) => cmd::serve::run(args, &place).await,
        Command::Gateway(args) => cmd::gateway::run(args, &place).await,
        Command::Mcp(args) => cmd::mcp::run(args, &place).await,
        Command::Agui(args) => cmd::agui::run(args, &place).await,
    }
}
