//! Reading externalized media while encoding: a small trait the store is adapted to.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

/// Why a blob could not be read. Encoding turns it into a placeholder and a diagnostic,
/// never a failed request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BlobError {
    /// No blob has that key.
    #[error("blob {0} not found")]
    NotFound(String),
    /// The blob exists but could not be read.
    #[error("blob {key} could not be read: {message}")]
    Io {
        /// The blob's key.
        key: String,
        /// What the store said.
        message: String,
    },
}

/// The future a [`BlobReader`] returns; boxed so the trait stays object-safe.
pub type BlobFuture<'a> = Pin<Box<dyn Future<Output = Result<Vec<u8>, BlobError>> + Send + 'a>>;

/// Reads the bytes behind a `blake3:<hex>` key. The runtime adapts the BlobStore to it;
/// tests use [`MemoryBlobs`].
pub trait BlobReader: Send + Sync {
    /// The bytes of blob `key`.
    fn read<'a>(&'a self, key: &'a str) -> BlobFuture<'a>;
}

/// An in-memory reader, for tests and for conversations that carry no blobs.
#[derive(Debug, Clone, Default)]
pub struct MemoryBlobs {
    blobs: HashMap<String, Vec<u8>>,
}

impl MemoryBlobs {
    /// An empty reader.
    pub fn new() -> Self {
        MemoryBlobs::default()
    }

    /// Adds a blob under `key`.
    pub fn insert(&mut self, key: impl Into<String>, bytes: Vec<u8>) {
        self.blobs.insert(key.into(), bytes);
    }
}

impl BlobReader for MemoryBlobs {
    fn read<'a>(&'a self, key: &'a str) -> BlobFuture<'a> {
        let found = self.blobs.get(key).cloned();
        Box::pin(async move { found.ok_or_else(|| BlobError::NotFound(key.to_owned())) })
    }
}

/// A reader that has no blobs: every read is `NotFound`.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoBlobs;

impl BlobReader for NoBlobs {
    fn read<'a>(&'a self, key: &'a str) -> BlobFuture<'a> {
        Box::pin(async move { Err(BlobError::NotFound(key.to_owned())) })
    }
}
