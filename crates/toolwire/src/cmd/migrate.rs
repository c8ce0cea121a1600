//! `toolwire migrate`: copies a store into another (e.g. SQLite + files → Postgres + S3),
//! every message checked byte for byte and every blob by its hash; run it again after an
//! interruption and it copies only the rest.

use anyhow::{Context, Result};
use toolwire_store::{StoreConfig, Stores, migrate};

use crate::{Outcome, out};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The source history: sqlite://PATH or postgres://USER@HOST/DB.
    #[arg(long, value_name = "URL")]
    from: String,
    /// The target history.
    #[arg(long, value_name = "URL")]
    to: String,
    /// The source blobs (default: `blobs/` beside a sqlite:// source's file).
    #[arg(long, value_name = "URL")]
    from_blobs: Option<String>,
    /// Where the blobs go: file:///DIR or s3://BUCKET/PREFIX (default: the source's, so
    /// only the history moves).
    #[arg(long, value_name = "URL")]
    blobs_to: Option<String>,
}

pub(crate) async fn run(args: Args) -> Result<Outcome> {
    let from_blobs = match args.from_blobs {
        Some(url) => url,
        None => beside_sqlite(&args.from)?,
    };
    let blobs_to = args.blobs_to.unwrap_or_else(|| from_blobs.clone());
    let from = Stores::open_urls(&args.from, &from_blobs, StoreConfig::from_env())
        .await
        // The store's error names the URL (password hidden); it is not repeated here.
        .context("cannot open the source")?;
    let to = Stores::open_urls(&args.to, &blobs_to, StoreConfig::from_env())
        .await
        .context("cannot open the target")?;
    let r = migrate(&from, &to).await.context(
        "the copy stopped; what was copied is kept, and running the command again goes on",
    )?;
    out::line(&format!(
        "{} sessions ({} new), {} messages copied, {} verified, {} events, {} pending calls \
         ({} being answered left out), {} blobs ({} bytes)",
        r.sessions,
        r.sessions_created,
        r.messages_copied,
        r.messages_verified,
        r.events_copied,
        r.suspensions_copied,
        r.suspensions_skipped,
        r.blobs_copied,
        r.blob_bytes_copied
    ));
    Ok(Outcome::Ok)
}

/// `file://<dir>/blobs` for `sqlite://<dir>/history.db`.
fn beside_sqlite(url: &str) -> Result<String> {
    let path = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .context("--from-blobs is needed when the source is not sqlite://")?;
    let path = std::path::Path::new(path.split('?').next().unwrap_or(path));
    let dir = std::path::absolute(path.parent().unwrap_or(std::path::Path::new(".")))
        .context("cannot resolve the source's directory")?;
    Ok(format!(
        "file://{}",
        dir.join(toolwire_store::BLOB_DIR).display()
    ))
}
