//! The inverse of `persist` for display: blob-backed images read back into inline base64,
//! so a reloaded result can be drawn, not just named. The stored result is not changed.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value as Json;
use toolwire_core::{ToolResult, WellKnown};

use crate::blob::BlobStore;
use crate::error::Result;
use crate::ids::BlobKey;

/// Images larger than this stay references: a terminal gains nothing from drawing them.
pub const DEFAULT_REHYDRATE_LIMIT: u64 = 8 << 20;

/// A copy of `result` whose `image` values with a blob source of at most `limit` bytes
/// carry the bytes inline again. A missing blob is left as a reference; the caller's
/// renderer shows it as a card.
pub async fn rehydrate_images(
    result: &ToolResult,
    blobs: &dyn BlobStore,
    limit: u64,
) -> Result<ToolResult> {
    let mut out = result.clone();
    for value in &mut out.output {
        if !value.is_kind(WellKnown::Image) {
            continue;
        }
        let Some(source) = value.data.get_mut("source") else {
            continue;
        };
        let (Some(key), Some(size)) = (
            source.get("blob").and_then(Json::as_str),
            source.get("size").and_then(Json::as_u64),
        ) else {
            continue;
        };
        if size > limit {
            continue;
        }
        let key = BlobKey::parse(key)?;
        // The claimed `size` is only what the stored result says; a hostile or damaged
        // result could claim 10 bytes for a 2 GB blob. The store's own figure decides.
        match blobs.size(&key).await? {
            Some(real) if real <= limit => {}
            _ => continue,
        }
        match blobs.get(&key).await {
            Ok(bytes) => *source = serde_json::json!({ "base64": STANDARD.encode(&bytes) }),
            Err(crate::StoreError::BlobNotFound { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}
