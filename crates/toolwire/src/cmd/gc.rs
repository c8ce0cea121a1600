//! `toolwire gc`: removes blobs that no stored message references.

use std::time::Duration;
use toolwire_agent::StoreLocation;

use anyhow::Result;
use toolwire_store::GcOptions;

use crate::{Outcome, data, out};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// List what would be removed; remove nothing.
    #[arg(long)]
    dry_run: bool,
    /// Keep unreferenced blobs younger than this many seconds: a result may be persisted
    /// and not yet appended by a running process.
    #[arg(long, default_value_t = 3600)]
    min_age_secs: u64,
}

pub(crate) async fn run(args: Args, place: &StoreLocation) -> Result<Outcome> {
    let stores = data::open(place).await?;
    let report = stores
        .gc(GcOptions {
            dry_run: args.dry_run,
            min_age: Duration::from_secs(args.min_age_secs),
        })
        .await?;
    for blob in &report.unreferenced {
        out::line(&format!(
            "{} {}",
            if report.dry_run {
                "would remove"
            } else {
                "removed"
            },
            blob.key
        ));
    }
    out::line(&format!(
        "{} blobs scanned, {} unreferenced, {} kept as younger than {}s, {} removed ({} bytes freed), {} stale temporary files removed",
        report.scanned,
        report.unreferenced.len(),
        report.kept_young,
        args.min_age_secs,
        report.removed,
        report.freed_bytes,
        report.temps_removed
    ));
    Ok(Outcome::Ok)
}
