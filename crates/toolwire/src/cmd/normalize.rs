//! `toolwire normalize [FILE|-]`: raw tool payload in, canonical ToolResult JSON out.

use anyhow::Result;
use serde_json::Value as Json;
use toolwire_agent::StoreLocation;
use toolwire_core::CallRef;
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
    let own = |key: &str| {
        raw.get(key)
            .and_then(Json::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let call = CallRef::new(
        args.call_id
            .or_else(|| own("callId"))
            .unwrap_or_else(|| "call_1".into()),
        args.tool
            .or_else(|| own("toolName"))
            .unwrap_or_else(|| "tool".into()),
    );
    let mut normalized = normalize_value(raw, &call);
    if args.store {
        let stores = data::open(place).await?;
        let raw = keep_raw.then_some(input.bytes.as_slice());
        let existing =
            match &args.session {
                Some(id) => Some(stores.history().session(id).await?.ok_or_else(|| {
                    anyhow::anyhow!("no session {id:?} (see `toolwire sessions`)")
                })?),
                None => None,
            };
        // Persist and check before creating anything: a result the store refuses must not
        // leave an empty new session behind.
        let persisted = stores.persist(normalized.result, raw).await?;
        toolwire_store::validate_id("call id", &persisted.call_id)?;
        let session = match existing {
            Some(session) => session,
            None => {
                stores
                    .create_session(NewSession {
                        id: None,
                        parent_id: None,
                        title: Some(format!("normalize {}", input.name)),
                    })
                    .await?
            }
        };
        // Appended, not landed and announced as a call's result is: an import has no call
        // waiting on it, and its `tool_result` event would hold the whole result a second
        // time (a 48 MiB text made SQLite hold both rows at once: 654 MB peak against 278).
        let message = stores
            .append(&session.id, toolwire_core::Message::ToolResult(persisted))
            .await?;
        let seq = message.seq;
        normalized.result = toolwire_store::StoredResult::from_message(message)
            .ok_or_else(|| {
                anyhow::anyhow!("the store returned a message that is not a tool result")
            })?
            .result;
        out::eprintln(&format!(
            "stored in session {} as message {}",
            session.id, seq
        ));
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
