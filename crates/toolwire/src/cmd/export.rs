//! `toolwire export SESSION --provider P`: the exact request body that would be sent.

use toolwire_agent::StoreLocation;

use anyhow::{Result, bail};
use toolwire_agent::{HostError, export_request};
use toolwire_model::{EncodeOptions, Provider};

use crate::{Outcome, data, out};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The session id (see `toolwire sessions`).
    session: String,
    /// anthropic, openai-chat, openai-responses or gemini.
    #[arg(long)]
    provider: Provider,
    /// Characters per tool result before it is cut (default 60,000).
    #[arg(long, value_name = "N")]
    max_chars: Option<usize>,
    /// The model named in the body (default: the provider's usual one).
    #[arg(long)]
    model: Option<String>,
    /// A system prompt to put first.
    #[arg(long, default_value = "")]
    system: String,
}

pub(crate) async fn run(args: Args, place: &StoreLocation) -> Result<Outcome> {
    let stores = data::open(place).await?;
    let mut options = EncodeOptions::for_model(
        args.model
            .unwrap_or_else(|| args.provider.default_model().to_owned()),
    );
    if let Some(n) = args.max_chars {
        options.budget.max_chars = n;
    }
    let (body, diagnostics) = match export_request(
        &stores,
        &args.session,
        args.provider,
        &options,
        &args.system,
    )
    .await
    {
        Err(HostError::NoSession(id)) => bail!("no session {id:?} (see `toolwire sessions`)"),
        other => other?,
    };
    out::json(&body)?;
    for d in diagnostics {
        out::eprintln(&format!("note: {d}"));
    }
    Ok(Outcome::Ok)
}
