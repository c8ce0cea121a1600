//! `toolwire show SESSION`: a session's messages, rendered (or as JSON).

use std::io::Write;
use std::path::Path;

use anyhow::{Result, bail};
use toolwire_store::MessageContent;
use toolwire_term::{TermOptions, render};

use crate::{Outcome, data};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session id (see `toolwire sessions`).
    session: String,
    /// Print the stored messages as JSON.
    #[arg(long)]
    json: bool,
    /// Show collapsed values and everything past each value's max height.
    #[arg(long)]
    expand: bool,
}

pub(crate) async fn run(args: Args, data_dir: Option<&Path>) -> Result<Outcome> {
    let stores = data::open(data_dir).await?;
    if stores.history.session(&args.session).await?.is_none() {
        bail!("no session {:?} (see `toolwire sessions`)", args.session);
    }
    let messages = stores.history.load(&args.session).await?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&messages)?)?;
        return Ok(Outcome::Ok);
    }
    let mut opts = TermOptions::detect();
    opts.expand_all = args.expand;
    for m in &messages {
        let text = match &m.content {
            MessageContent::User { text } => format!("› user\n{text}\n"),
            MessageContent::Assistant { text, tool_calls } => {
                let mut s = format!("‹ assistant\n{text}\n");
                for c in tool_calls {
                    s.push_str(&format!("  → {} {} [{}]\n", c.name, c.input, c.id));
                }
                s
            }
            MessageContent::ToolResult(r) => {
                render(&data::for_display(r, &stores, &opts).await?, &opts)
            }
            MessageContent::Widget { widget, .. } => {
                format!("▣ {}\n{}\n", widget.widget, widget.fallback)
            }
        };
        if let Err(e) = out.write_all(text.as_bytes()) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(Outcome::Ok);
            }
            return Err(e.into());
        }
    }
    Ok(Outcome::Ok)
}
