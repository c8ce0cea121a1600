//! `toolwire sessions`: stored sessions, most recently updated first.

use toolwire_agent::StoreLocation;

use anyhow::Result;
use toolwire_store::Page;

use crate::{Outcome, data, out};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Sessions to list.
    #[arg(long, default_value_t = 50)]
    limit: u32,
    /// Sessions to skip, for paging.
    #[arg(long, default_value_t = 0)]
    offset: u32,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub(crate) async fn run(args: Args, place: &StoreLocation) -> Result<Outcome> {
    let stores = data::open(place).await?;
    let sessions = stores
        .history()
        .list_sessions(Page {
            offset: args.offset,
            limit: args.limit,
        })
        .await?;
    if args.json {
        out::json(&sessions)?;
        return Ok(Outcome::Ok);
    }
    if sessions.is_empty() {
        out::line("no sessions yet");
        return Ok(Outcome::Ok);
    }
    out::line(&format!(
        "{:<38} {:>8}  {:<24} TITLE",
        "SESSION", "MESSAGES", "UPDATED"
    ));
    for s in sessions {
        let updated = humantime::format_rfc3339_seconds(
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(s.updated_at_ms.max(0) as u64),
        );
        let title = match (&s.title, &s.parent_id) {
            (Some(t), Some(p)) => format!("{t} (child of {p})"),
            (Some(t), None) => t.clone(),
            (None, Some(p)) => format!("(child of {p})"),
            (None, None) => String::new(),
        };
        // Titles and ids come from tools and models: sanitized, one line each.
        out::line(&format!(
            "{:<38} {:>8}  {:<24} {}",
            s.id,
            s.message_count,
            updated.to_string(),
            title.replace(['\n', '\r'], " ")
        ));
    }
    Ok(Outcome::Ok)
}
