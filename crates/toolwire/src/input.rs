//! Reading a command's input: a file path, `-` or nothing for stdin; JSON with located errors.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::de::DeserializeOwned;

use crate::data::excerpt;

/// The variable that sets the input cap, in bytes.
pub(crate) const MAX_INPUT_ENV: &str = "TOOLWIRE_MAX_INPUT_BYTES";
/// Inputs larger than this are refused (256 MiB): `render /dev/zero` must end with an
/// error, not when memory runs out.
const DEFAULT_MAX_INPUT: u64 = 256 * 1024 * 1024;

fn max_input() -> u64 {
    std::env::var(MAX_INPUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_MAX_INPUT)
}

/// Reads at most the cap, and fails if there is more.
fn read_capped(name: &str, source: impl Read) -> Result<Vec<u8>> {
    let cap = max_input();
    let mut bytes = Vec::new();
    source
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {name}"))?;
    if bytes.len() as u64 > cap {
        bail!(
            "{name}: the input is larger than {cap} bytes (set {MAX_INPUT_ENV} to raise the cap)"
        );
    }
    Ok(bytes)
}

/// A named input, so every error can say where.
pub(crate) struct Input {
    pub name: String,
    pub bytes: Vec<u8>,
}

pub(crate) fn read(path: Option<&Path>) -> Result<Input> {
    match path {
        None => read_stdin(),
        Some(p) if p == Path::new("-") => read_stdin(),
        Some(p) => {
            let name = p.display().to_string();
            let file = std::fs::File::open(p).with_context(|| format!("cannot read {name}"))?;
            Ok(Input {
                bytes: read_capped(&name, file)?,
                name,
            })
        }
    }
}

fn read_stdin() -> Result<Input> {
    let name = "<stdin>".to_owned();
    Ok(Input {
        bytes: read_capped(&name, std::io::stdin())?,
        name,
    })
}

impl Input {
    /// Parses JSON; the error names the input, line and column.
    pub(crate) fn json(&self) -> Result<serde_json::Value> {
        serde_json::from_slice(&self.bytes)
            .map_err(|e| anyhow::anyhow!("{}: not JSON: {}", self.name, excerpt(&e.to_string())))
    }

    /// Parses into `T`; the error names the input and the field path that did not fit.
    pub(crate) fn parse<T: DeserializeOwned>(&self) -> Result<T> {
        let json = self.json()?;
        serde_path_to_error::deserialize(json).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." {
                String::new()
            } else {
                format!("{path}: ")
            };
            // serde quotes the offending value (`unknown variant "…"`): a short excerpt.
            let why = excerpt(&e.into_inner().to_string());
            anyhow::anyhow!("{}: {}{why}", self.name, excerpt(&path))
        })
    }
}
