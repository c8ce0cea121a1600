//! Reading a command's input: a file path, `-` or nothing for stdin; JSON with located errors.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};
use serde::de::DeserializeOwned;

/// A named input, so every error can say where.
pub(crate) struct Input {
    pub name: String,
    pub bytes: Vec<u8>,
}

pub(crate) fn read(path: Option<&Path>) -> Result<Input> {
    match path {
        None => read_stdin(),
        Some(p) if p == Path::new("-") => read_stdin(),
        Some(p) => Ok(Input {
            name: p.display().to_string(),
            bytes: std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?,
        }),
    }
}

fn read_stdin() -> Result<Input> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .context("cannot read stdin")?;
    Ok(Input {
        name: "<stdin>".into(),
        bytes,
    })
}

impl Input {
    /// Parses JSON; the error names the input, line and column.
    pub fn json(&self) -> Result<serde_json::Value> {
        serde_json::from_slice(&self.bytes)
            .map_err(|e| anyhow::anyhow!("{}: not JSON: {e}", self.name))
    }

    /// Parses into `T`; the error names the input and the field path that did not fit.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T> {
        let json = self.json()?;
        serde_path_to_error::deserialize(json).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." {
                String::new()
            } else {
                format!("{path}: ")
            };
            anyhow::anyhow!("{}: {path}{}", self.name, e.into_inner())
        })
    }
}
