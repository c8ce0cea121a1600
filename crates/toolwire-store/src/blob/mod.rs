//! `BlobStore`: content-addressed storage of media bytes, keyed `blake3:<hex>`.

#[cfg(feature = "backends")]
mod object;
#[cfg(feature = "backends")]
mod rows;

use std::fmt;
use std::ops::Range;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::Result;
use crate::ids::BlobKey;

#[cfg(feature = "backends")]
pub use object::ObjectBlobStore;
#[cfg(feature = "backends")]
pub(crate) use rows::BlobsAndRows;

/// Errs unless `range` lies within a blob of `size` bytes (start at most end, end at
/// most size): the one check every store's `get_range` makes before reading.
#[cfg(feature = "backends")]
pub(crate) fn check_range(key: &BlobKey, range: &Range<u64>, size: u64) -> Result<()> {
    if range.start > range.end || range.end > size {
        return Err(crate::error::StoreError::InvalidRange {
            key: key.to_string(),
            start: range.start,
            end: range.end,
            size,
        });
    }
    Ok(())
}

/// Size limits, each enforced before or while bytes are written, never after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobLimits {
    /// Largest single blob in bytes.
    pub max_blob_size: u64,
    /// Largest total of all blobs in bytes.
    pub quota: u64,
}

impl Default for BlobLimits {
    fn default() -> Self {
        BlobLimits {
            max_blob_size: 2 << 30,
            quota: u64::MAX,
        }
    }
}

/// A stored blob, as a put returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobRef {
    /// The blob's content address.
    pub key: BlobKey,
    /// Its size in bytes.
    pub size: u64,
    /// True when the same bytes were already stored and nothing new was written.
    pub existed: bool,
}

/// A blob found by listing the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobInfo {
    /// The blob's content address.
    pub key: BlobKey,
    /// Its size in bytes.
    pub size: u64,
    /// Milliseconds since the Unix epoch.
    pub modified_ms: i64,
}

/// Content-addressed blob storage. Keys are the BLAKE3 hash of the bytes, so the same
/// bytes stored twice are one blob, and a blob under its final key is always complete:
/// writes go to a temporary name and are renamed into place once hashed and synced.
#[async_trait]
pub trait BlobStore: Send + Sync + fmt::Debug {
    /// Starts a streaming write; bytes are hashed as they arrive and never held whole.
    /// `size_hint`, when known, lets limits be checked before anything is written.
    async fn writer(&self, size_hint: Option<u64>) -> Result<Box<dyn BlobWriter>>;

    /// Stores bytes already in memory.
    async fn put(&self, bytes: &[u8]) -> Result<BlobRef>;

    /// The whole blob.
    async fn get(&self, key: &BlobKey) -> Result<Bytes>;

    /// Bytes `range.start..range.end` of a blob; the range must lie inside it.
    async fn get_range(&self, key: &BlobKey, range: Range<u64>) -> Result<Bytes>;

    /// The blob's size, or `None` when it is not stored.
    async fn size(&self, key: &BlobKey) -> Result<Option<u64>>;

    /// Removes a blob; `false` when it was not there.
    async fn delete(&self, key: &BlobKey) -> Result<bool>;

    /// Every complete blob.
    async fn list(&self) -> Result<Vec<BlobInfo>>;

    /// Removes temporary files of writes that never finished (a crash, a dropped writer)
    /// and are older than `older_than`; returns how many.
    async fn remove_stale_temps(&self, older_than: Duration) -> Result<usize>;

    /// The size limit per blob and the quota this store enforces.
    fn limits(&self) -> BlobLimits;

    /// Bytes currently stored, as tracked by this handle.
    fn used_bytes(&self) -> u64;
}

/// One streaming write. `finish` publishes the blob; `abort` (or an error from `write`)
/// removes everything written so far.
#[async_trait]
pub trait BlobWriter: Send + fmt::Debug {
    /// Appends a chunk; on error the write is abandoned and its bytes removed.
    async fn write(&mut self, chunk: &[u8]) -> Result<()>;
    /// Publishes the blob under its hash, once every byte is synced.
    async fn finish(self: Box<Self>) -> Result<BlobRef>;
    /// Abandons the write and removes what was written.
    async fn abort(self: Box<Self>) -> Result<()>;
}

/// Stores a stream of chunks, e.g. a download or a file being read.
pub async fn put_stream<S, E>(
    store: &dyn BlobStore,
    stream: S,
    size_hint: Option<u64>,
) -> Result<BlobRef>
where
    S: futures::Stream<Item = Result<Bytes, E>> + Send,
    E: Into<crate::error::StoreError>,
{
    use futures::StreamExt;
    let mut writer = store.writer(size_hint).await?;
    let mut stream = std::pin::pin!(stream);
    while let Some(chunk) = stream.next().await {
        let step = match chunk {
            Ok(bytes) => writer.write(&bytes).await,
            Err(e) => Err(e.into()),
        };
        if let Err(e) = step {
            // `write` already aborted on its own errors; a second abort is harmless.
            let _ = writer.abort().await;
            return Err(e);
        }
    }
    writer.finish().await
}
