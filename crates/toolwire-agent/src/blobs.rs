//! The store's blob store as toolwire-model's `BlobReader`, so media persisted to blobs is
//! rehydrated when a request is encoded.

use std::sync::Arc;

use toolwire_model::{BlobError, BlobFuture, BlobReader};
use toolwire_store::{BlobKey, BlobStore, StoreError};

/// Reads `blake3:<hex>` keys from a [`BlobStore`].
#[derive(Debug, Clone)]
pub struct StoreBlobs(pub Arc<dyn BlobStore>);

impl BlobReader for StoreBlobs {
    fn read<'a>(&'a self, key: &'a str) -> BlobFuture<'a> {
        Box::pin(async move {
            let parsed = BlobKey::parse(key).map_err(|e| BlobError::Io {
                key: key.to_owned(),
                message: e.to_string(),
            })?;
            match self.0.get(&parsed).await {
                Ok(bytes) => Ok(bytes.to_vec()),
                Err(StoreError::BlobNotFound { .. }) => Err(BlobError::NotFound(key.to_owned())),
                Err(e) => Err(BlobError::Io {
                    key: key.to_owned(),
                    message: e.to_string(),
                }),
            }
        })
    }
}
