//! `toolwire normalize [FILE|-]`: raw tool payload in, canonical ToolResult JSON out.

use anyhow::Result;
use serde_json::Value as Json;
use toolwire_agent::{Host, StoreLocation};
use toolwire_normalize::normalize_value;

use crate::Outcome;
use std::path::PathBuf;

use toolwire_store::NewSession;

use crate::{data, input, out};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The raw payload; `-` or nothing reads stdin.
    file: Option<PathBuf>,
    /// Tool name to record (default: the payload's own `toolName`, else `tool`).
    #[arg(long = "tool")]
    tool: Option<String>,
    /// Call id to record (default: the payload's own `callId`, else `call_1`).
    #[arg(long)]
    call_id: Option<String>,
    /// Take the input as plain text instead of requiring JSON.
    #[arg(long)]
    text: bool,
    /// Exit 1 if anything had to be diagnosed.
    #[arg(long)]
    strict: bool,
    /// Print compact JSON instead of pretty.
    #[arg(long)]
    compact: bool,
    /// Also persist: media to the blob store, the result to the history (a new session
    /// unless --session is given).
    #[arg(long)]
    store: bool,
    /// The session to append to with --store.
    #[arg(long, requires = "store")]
    session: Option<String>,
}

pub(crate) async fn run(args: Args, place: &StoreLocation) -> Result<Outcome> {
    let mut input = input::read(args.file.as_deref())?;
    let raw = if args.text {
        Json::String(
            String::from_utf8(input.bytes.clone())
                .map_err(|e| anyhow::anyhow!("{}: not UTF-8 text: {e}", input.name))?,
        )
    } else {
        input.json()?
    };
    // The payload's bytes are only kept for `keep_raw`; a 200 MB input is not held
    // beside its parsed form while it is stored and printed.
    let keep_raw = args.store && toolwire_store::PersistConfig::from_env().keep_raw;
    if !keep_raw {
        input.bytes = Vec::new();
    }
    let call = toolwire_normalize::payload_call(&raw, args.tool, args.call_id);
    let mut normalized = normalize_value(raw, &call);
    if args.store {
        let stores = data::open(place).await?;
        let existing =
            match &args.session {
                Some(id) => Some(stores.history().session(id).await?.ok_or_else(|| {
                    anyhow::anyhow!("no session {id:?} (see `toolwire sessions`)")
                })?),
                None => None,
            };
        // Checked before anything is created: a result the store refuses must not leave an
        // empty new session behind.
        toolwire_store::validate_id("call id", &normalized.result.call_id)?;
        let host = Host::builder()
            .stores(stores.clone())
            .without_builtins()
            .build()
            .await?;
        let (session, created) = match existing {
            Some(session) => (session, false),
            None => {
                let session = stores
                    .create_session(NewSession {
                        id: None,
                        parent_id: None,
                        title: Some(format!("normalize {}", input.name)),
                    })
                    .await?;
                (session, true)
            }
        };
        // Landed like any call's result (media to blobs, the payload as received kept
        // beside it, stored, then announced), so a session open in `serve` shows it live.
        let raw = keep_raw.then(|| std::mem::take(&mut input.bytes));
        let landed = host
            .land_elsewhere(&session.id, normalized.result, raw)
            .await;
        let stored = match landed {
            Ok(stored) => stored,
            Err(e) => {
                if created {
                    // Best effort: the error below is what the person needs to read.
                    let _ = stores.delete_session(&session.id).await;
                }
                return Err(e.into());
            }
        };
        out::eprintln(&format!(
            "stored in session {} as message {}",
            session.id, stored.seq
        ));
        normalized.result = stored.result;
    }
    if args.compact {
        out::json_compact(&normalized.result)?;
    } else {
        out::json(&normalized.result)?;
    }
    for d in &normalized.diagnostics {
        out::eprintln(&format!("note: {}: {d}", input.name));
    }
    Ok(if args.strict && !normalized.diagnostics.is_empty() {
        Outcome::Reported
    } else {
        Outcome::Ok
    })
}
