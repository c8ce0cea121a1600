//! The blob store as the stores read it: the blob store itself, then the small blobs
//! history rows keep ([`InlineBlob`](crate::InlineBlob)), so a reader of a key never
//! needs to know where its bytes are kept.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

use super::{BlobInfo, BlobLimits, BlobRef, BlobStore, BlobWriter};
use crate::error::{Result, StoreError};
use crate::history::HistoryReader;
use crate::ids::BlobKey;

/// Writes, deletes and listings go to the blob store alone (`gc` lists and deletes
/// only what is there; a row's blob goes with its row). Reads that miss it look in the
/// history's rows.
#[derive(Debug)]
pub(crate) struct BlobsAndRows {
    pub(crate) blobs: Arc<dyn BlobStore>,
    pub(crate) rows: Arc<dyn HistoryReader>,
}

impl BlobsAndRows {
    async fn in_rows(&self, key: &BlobKey) -> Result<Bytes> {
        self.rows
            .inline_blob(key)
            .await?
            .ok_or_else(|| StoreError::BlobNotFound {
                key: key.to_string(),
            })
    }
}

#[async_trait]
impl BlobStore for BlobsAndRows {
    async fn writer(&self, size_hint: Option<u64>) -> Result<Box<dyn BlobWriter>> {
        self.blobs.writer(size_hint).await
    }

    async fn put(&self, bytes: &[u8]) -> Result<BlobRef> {
        self.blobs.put(bytes).await
    }

    async fn get(&self, key: &BlobKey) -> Result<Bytes> {
        match self.blobs.get(key).await {
            Err(StoreError::BlobNotFound { .. }) => self.in_rows(key).await,
            other => other,
        }
    }

    async fn get_range(&self, key: &BlobKey, range: Range<u64>) -> Result<Bytes> {
        match self.blobs.get_range(key, range.clone()).await {
            Err(StoreError::BlobNotFound { .. }) => {
                let bytes = self.in_rows(key).await?;
                super::check_range(key, &range, bytes.len() as u64)?;
                // Both ends are at most `size`, a `usize`.
                Ok(bytes.slice(range.start as usize..range.end as usize))
            }
            other => other,
        }
    }

    async fn size(&self, key: &BlobKey) -> Result<Option<u64>> {
        match self.blobs.size(key).await? {
            Some(size) => Ok(Some(size)),
            None => Ok(self
                .rows
                .inline_blob(key)
                .await?
                .map(|bytes| bytes.len() as u64)),
        }
    }

    async fn delete(&self, key: &BlobKey) -> Result<bool> {
        self.blobs.delete(key).await
    }

    async fn list(&self) -> Result<Vec<BlobInfo>> {
        self.blobs.list().await
    }

    async fn remove_stale_temps(&self, older_than: Duration) -> Result<usize> {
        self.blobs.remove_stale_temps(older_than).await
    }

    fn limits(&self) -> BlobLimits {
        self.blobs.limits()
    }

    fn used_bytes(&self) -> u64 {
        self.blobs.used_bytes()
    }
}
