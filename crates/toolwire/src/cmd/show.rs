//! `toolwire show SESSION`: a session's messages, rendered (or as JSON).

use toolwire_agent::StoreLocation;

use anyhow::{Result, bail};
use toolwire_core::Message;
use toolwire_term::TermOptions;

use crate::{Outcome, data, out};

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

pub(crate) async fn run(args: Args, place: &StoreLocation) -> Result<Outcome> {
    let stores = data::open(place).await?;
    if stores.history().session(&args.session).await?.is_none() {
        bail!("no session {:?} (see `toolwire sessions`)", args.session);
    }
    let messages = stores.history().load(&args.session).await?;
    if args.json {
        out::json(&messages)?;
        return Ok(Outcome::Ok);
    }
    let mut opts = TermOptions::detect();
    opts.expand_all = args.expand;
    for m in &messages {
        // Stored text came from people, models and tools: it is sanitized on the way
        // out; a rendered result already is.
        match &m.content {
            Message::System { text } => out::text(&format!("⚙ system\n{text}\n")),
            Message::User { text } => out::text(&format!("› user\n{text}\n")),
            Message::Assistant { text, tool_calls } => {
                // A person's calls are shown as theirs, not the model's.
                let by = match tool_calls.first().and_then(|c| c.by_person.as_ref()) {
                    Some(person) if text.is_empty() => {
                        format!("you ({})", person.via)
                    }
                    _ => "assistant".to_owned(),
                };
                let mut s = format!("‹ {by}\n{text}\n");
                for c in tool_calls {
                    s.push_str(&format!("  → {} {} [{}]\n", c.name, c.input, c.id));
                }
                out::text(&s);
            }
            Message::ToolResult(r) => {
                out::render(data::for_display(r, &stores, &opts).await?.as_ref(), &opts)
            }
            Message::Widget { widget, .. } => {
                out::text(&format!("▣ {}\n{}\n", widget.widget, widget.fallback))
            }
        }
    }
    Ok(Outcome::Ok)
}
