//! `toolwire validate [FILE|-]`: checks a ToolResult, one line per violation.

use anyhow::Result;
use toolwire_core::ToolResult;

use crate::Outcome;
use std::path::PathBuf;

use crate::{input, out};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A ToolResult JSON file; `-` or nothing reads stdin.
    file: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> Result<Outcome> {
    let input = input::read(args.file.as_deref())?;
    let result: ToolResult = input.parse()?;
    match result.validate() {
        Ok(()) => {
            out::line(&format!(
                "ok: {} ({}, {} values)",
                input.name,
                result.status.as_str(),
                result.output.len()
            ));
            Ok(Outcome::Ok)
        }
        Err(violations) => {
            for v in violations.iter() {
                out::eprintln(&v.to_string());
            }
            Ok(Outcome::Reported)
        }
    }
}
