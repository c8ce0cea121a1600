//! Garbage collection: remove blobs that no stored message references.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::blob::{BlobInfo, BlobStore};
use crate::error::Result;
use crate::history::HistoryStore;

/// What [`gc`](crate::gc()) may remove.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcOptions {
    /// List what would be removed; remove nothing.
    pub dry_run: bool,
    /// Blobs and unfinished writes younger than this are kept even when unreferenced: a
    /// result may have been persisted and not yet appended.
    pub min_age: Duration,
}

impl Default for GcOptions {
    fn default() -> Self {
        GcOptions {
            dry_run: false,
            min_age: Duration::from_secs(3600),
        }
    }
}

/// What a [`gc`](crate::gc()) run found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Whether the run only listed what it would remove.
    pub dry_run: bool,
    /// Blobs in the store.
    pub scanned: usize,
    /// Unreferenced blobs old enough to go: removed, or listed when `dry_run`.
    pub unreferenced: Vec<BlobInfo>,
    /// Unreferenced blobs kept because they are younger than `min_age`.
    pub kept_young: usize,
    /// Unreferenced blobs removed.
    pub removed: usize,
    /// Bytes those blobs held.
    pub freed_bytes: u64,
    /// Leftovers of unfinished writes removed (0 when `dry_run`).
    pub temps_removed: usize,
}

/// Lists the store first, then reads the references, so a blob written and referenced
/// while gc runs is either not listed or seen as referenced.
pub async fn gc(
    blobs: &dyn BlobStore,
    history: &dyn HistoryStore,
    opts: GcOptions,
) -> Result<GcReport> {
    let listed = blobs.list().await?;
    let referenced = history.referenced_blobs().await?;
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default();
    let min_age_ms = opts.min_age.as_millis() as i64;
    let mut report = GcReport {
        dry_run: opts.dry_run,
        scanned: listed.len(),
        ..GcReport::default()
    };
    for blob in listed {
        if referenced.contains(&blob.key) {
            continue;
        }
        if now_ms - blob.modified_ms < min_age_ms {
            report.kept_young += 1;
            continue;
        }
        if !opts.dry_run && blobs.delete(&blob.key).await? {
            report.removed += 1;
            report.freed_bytes += blob.size;
        }
        report.unreferenced.push(blob);
    }
    if !opts.dry_run {
        report.temps_removed = blobs.remove_stale_temps(opts.min_age).await?;
    }
    Ok(report)
}
