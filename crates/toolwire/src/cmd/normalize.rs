//! `toolwire normalize [FILE|-]`: raw tool payload in, canonical ToolResult JSON out.

use anyhow::Result;
use serde_json::Value as Json;
use toolwire_core::CallRef;
use toolwire_normalize::normalize_value;

use crate::Outcome;
use std::path::PathBuf;

use crate::input;

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
}

pub(crate) fn run(args: Args) -> Result<Outcome> {
    let input = input::read(args.file.as_deref())?;
    let raw = if args.text {
        Json::String(
            String::from_utf8(input.bytes.clone())
                .map_err(|e| anyhow::anyhow!("{}: not UTF-8 text: {e}", input.name))?,
        )
    } else {
        input.json()?
    };
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
    let normalized = normalize_value(raw, &call);
    let out = if args.compact {
        serde_json::to_string(&normalized.result)?
    } else {
        serde_json::to_string_pretty(&normalized.result)?
    };
    println!("{out}");
    for d in &normalized.diagnostics {
        eprintln!("note: {}: {d}", input.name);
    }
    Ok(if args.strict && !normalized.diagnostics.is_empty() {
        Outcome::Reported
    } else {
        Outcome::Ok
    })
}
