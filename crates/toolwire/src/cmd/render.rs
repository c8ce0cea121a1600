//! `toolwire render [FILE|-]`: any ToolResult or Value JSON, rendered for this terminal.

use std::path::PathBuf;

use anyhow::Result;
use toolwire_term::{TermOptions, render_json};

use crate::Outcome;
use crate::{input, out};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A ToolResult, a Value or an array of Values; `-` or nothing reads stdin.
    file: Option<PathBuf>,
    /// Show collapsed values and everything past each value's max height.
    #[arg(long)]
    expand: bool,
    /// Render for this many columns instead of the terminal's width.
    #[arg(long)]
    width: Option<usize>,
}

pub(crate) fn run(args: Args) -> Result<Outcome> {
    let input = input::read(args.file.as_deref())?;
    let json = input.json()?;
    let mut opts = TermOptions::detect();
    if args.expand {
        opts.expand_all = true;
    }
    if let Some(width) = args.width {
        opts.width = width;
    }
    let text = render_json(&json, &opts).map_err(|e| anyhow::anyhow!("{}: {e}", input.name))?;
    // Lines already end in newlines; the renderer sanitized them.
    out::rendered(&text);
    Ok(Outcome::Ok)
}
