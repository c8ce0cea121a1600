//! Opening the stores under the data directory: `--data-dir`, else `$TOOLWIRE_DATA_DIR`, else
//! the platform data directory.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use toolwire_core::ToolResult;
use toolwire_store::{DEFAULT_REHYDRATE_LIMIT, StoreConfig, Stores, rehydrate_images};
use toolwire_term::{ImageProtocol, TermOptions};

pub(crate) fn data_dir(flag: Option<&Path>) -> Result<PathBuf> {
    match flag {
        Some(dir) => Ok(dir.to_owned()),
        None => Stores::default_data_dir()
            .context("no data directory: pass --data-dir or set TOOLWIRE_DATA_DIR"),
    }
}

pub(crate) async fn open(flag: Option<&Path>) -> Result<Stores> {
    let dir = data_dir(flag)?;
    Stores::open(&dir, StoreConfig::from_env())
        .await
        .with_context(|| format!("cannot open the stores in {}", dir.display()))
}

/// The result as the terminal should draw it: when it can draw images, blob-backed ones
/// are read back inline, so a reloaded image is shown, not just named.
pub(crate) async fn for_display(
    result: &ToolResult,
    stores: &Stores,
    opts: &TermOptions,
) -> Result<ToolResult> {
    if opts.images == ImageProtocol::None {
        return Ok(result.clone());
    }
    Ok(rehydrate_images(result, stores.blobs.as_ref(), DEFAULT_REHYDRATE_LIMIT).await?)
}
