//! Opening the stores under the data directory: `--data-dir`, else `$TOOLWIRE_DATA_DIR`, else
//! the platform data directory.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use toolwire_store::{StoreConfig, Stores};

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
