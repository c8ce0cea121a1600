//! The `object_store` backend of `BlobStore`: a local directory now, S3 through the same code.
//!
//! Layout under the store root: `<hh>/<64 hex>` for blobs (two-character fan-out keeps
//! directories small) and `tmp/<unique>` for writes in flight.

use std::ops::Range;
use std::path::{Path as FsPath, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use bytes::Bytes;
use futures::TryStreamExt;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, WriteMultipart};

use super::{BlobInfo, BlobLimits, BlobRef, BlobStore, BlobWriter};
use crate::error::{Result, StoreError};
use crate::ids::BlobKey;

/// Bytes buffered before a part is handed to the object store: S3's minimum part size
/// (every part but the last must be at least 5 MiB), which also makes a local write one
/// syscall per few MiB, and small enough that a video is never held whole.
const PART_SIZE: usize = 5 << 20;
/// Parts in flight at once per writer.
const MAX_PARTS_IN_FLIGHT: usize = 2;
const TEMP_DIR: &str = "tmp";

/// Blobs in an object store: a directory on disk, S3, or anything `object_store` reaches.
#[derive(Debug, Clone)]
pub struct ObjectBlobStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Arc<dyn ObjectStore>,
    limits: BlobLimits,
    used: AtomicU64,
    /// The directory, for a local store: `object_store` hides its own `name#N` staging
    /// files from listings, so a crash's leftovers are found by walking the directory.
    local_root: Option<PathBuf>,
}

impl ObjectBlobStore {
    /// A blob store in a local directory, created if missing. Writes are fsynced (file and
    /// directory) before they return, so a returned put survives power loss.
    pub async fn open_local(dir: &FsPath, limits: BlobLimits) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
            path: dir.to_owned(),
            source,
        })?;
        let store = LocalFileSystem::new_with_prefix(dir)?.with_fsync(true);
        let mut this = Self::new(Arc::new(store), limits).await?;
        if let Some(inner) = Arc::get_mut(&mut this.inner) {
            inner.local_root = Some(dir.to_owned());
        }
        Ok(this)
    }

    /// A blob store from a URL: `file:///abs/dir`, or `s3://bucket/prefix` with the
    /// standard `AWS_*` environment variables (keys, region, `AWS_ENDPOINT_URL`), which
    /// query parameters override (`?endpoint=http://127.0.0.1:9000&region=us-east-1`).
    pub async fn open_url(url: &str, limits: BlobLimits) -> Result<Self> {
        if let Some(path) = url.strip_prefix("file://") {
            if !path.starts_with('/') {
                return Err(StoreError::UnsupportedUrl {
                    url: url.to_owned(),
                    reason: "a file:// URL needs an absolute path (file:///dir)".into(),
                });
            }
            return Self::open_local(&PathBuf::from(path), limits).await;
        }
        if url.starts_with("s3://") {
            return Self::new(s3_store(url)?, limits).await;
        }
        Err(StoreError::UnsupportedUrl {
            url: crate::failed::redact(url),
            reason: "expected file:///DIR or s3://BUCKET/PREFIX".into(),
        })
    }

    /// Wraps any object store; usage is counted once by listing it.
    pub async fn new(store: Arc<dyn ObjectStore>, limits: BlobLimits) -> Result<Self> {
        let this = ObjectBlobStore {
            inner: Arc::new(Inner {
                store,
                limits,
                used: AtomicU64::new(0),
                local_root: None,
            }),
        };
        let used = this.list().await?.iter().map(|b| b.size).sum();
        this.inner.used.store(used, Ordering::Relaxed);
        Ok(this)
    }

    fn check_limits(&self, incoming: u64) -> Result<()> {
        check_limits(
            &self.inner.limits,
            self.inner.used.load(Ordering::Relaxed),
            incoming,
        )
    }
}

fn check_limits(limits: &BlobLimits, used: u64, incoming: u64) -> Result<()> {
    if incoming > limits.max_blob_size {
        return Err(StoreError::BlobTooLarge {
            size: incoming,
            limit: limits.max_blob_size,
        });
    }
    if used.saturating_add(incoming) > limits.quota {
        return Err(StoreError::QuotaExceeded {
            used,
            incoming,
            quota: limits.quota,
        });
    }
    Ok(())
}

impl Inner {
    /// Marks an existing blob as just written. A result that reuses old, unreferenced
    /// bytes is persisted before it is appended; `gc` spares blobs younger than its
    /// `min_age`, so the reused blob must look young, or gc could delete it in between.
    /// Local stores only; best effort, since the blob itself is already whole.
    async fn touch(&self, key: &BlobKey) {
        let Some(root) = self.local_root.clone() else {
            return;
        };
        let hex = key.hex().to_owned();
        let path = root.join(hex.get(..2).unwrap_or_default()).join(&hex);
        let _ = tokio::task::spawn_blocking(move || {
            std::fs::File::options()
                .write(true)
                .open(&path)
                .and_then(|f| f.set_modified(std::time::SystemTime::now()))
        })
        .await;
    }
}

/// Retries of one S3 request: enough to ride out a blip, few enough that an unavailable
/// store fails the result within seconds rather than object_store's default minutes.
const S3_RETRIES: usize = 3;
const S3_RETRY_TIMEOUT: Duration = Duration::from_secs(15);

/// An S3 (or S3-compatible) store for `s3://bucket/prefix?key=value…`.
fn s3_store(url: &str) -> Result<Arc<dyn ObjectStore>> {
    use object_store::RetryConfig;
    use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
    use object_store::prefix::PrefixStore;
    use std::str::FromStr;

    let bad = |reason: String| StoreError::UnsupportedUrl {
        url: crate::failed::redact(url.split('?').next().unwrap_or(url)),
        reason,
    };
    let parsed = url::Url::parse(url).map_err(|e| bad(e.to_string()))?;
    let bucket = parsed
        .host_str()
        .filter(|b| !b.is_empty())
        .ok_or_else(|| bad("the URL names no bucket (s3://BUCKET/PREFIX)".into()))?;
    let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
    for (key, value) in parsed.query_pairs() {
        // Only the key is named in the error: a value may be a secret.
        let key = AmazonS3ConfigKey::from_str(&key)
            .map_err(|_| bad(format!("unknown S3 setting {key:?}")))?;
        builder = builder.with_config(key, value);
    }
    // An http:// endpoint (a local MinIO or moto) is allowed when it is chosen explicitly.
    if builder
        .get_config_value(&AmazonS3ConfigKey::Endpoint)
        .is_some_and(|e| e.starts_with("http://"))
    {
        builder = builder.with_allow_http(true);
    }
    let retry = RetryConfig {
        max_retries: S3_RETRIES,
        retry_timeout: S3_RETRY_TIMEOUT,
        ..RetryConfig::default()
    };
    let store = builder
        .with_retry(retry)
        .build()
        .map_err(|e| bad(e.to_string()))?;
    let prefix = parsed.path().trim_matches('/');
    Ok(if prefix.is_empty() {
        Arc::new(store)
    } else {
        Arc::new(PrefixStore::new(store, prefix))
    })
}

fn blob_path(key: &BlobKey) -> Path {
    let hex = key.hex();
    Path::from_iter([hex.get(..2).unwrap_or_default(), hex])
}

/// The key stored at `path`, when `path` is a blob's final name.
fn key_of(path: &Path) -> Option<BlobKey> {
    let mut parts = path.parts();
    let (fan, name, rest) = (parts.next()?, parts.next()?, parts.next());
    if rest.is_some() || name.as_ref().get(..2) != Some(fan.as_ref()) {
        return None;
    }
    BlobKey::parse(&format!("blake3:{}", name.as_ref())).ok()
}

/// A name no other writer, in this process or another, will pick.
fn temp_path() -> Path {
    Path::from_iter([TEMP_DIR.to_owned(), toolwire_core::new_id("tmp")])
}

fn not_found(e: &object_store::Error) -> bool {
    matches!(e, object_store::Error::NotFound { .. })
}

#[async_trait]
impl BlobStore for ObjectBlobStore {
    async fn writer(&self, size_hint: Option<u64>) -> Result<Box<dyn BlobWriter>> {
        if let Some(size) = size_hint {
            self.check_limits(size)?;
        }
        let temp = temp_path();
        let upload = self.inner.store.put_multipart(&temp).await?;
        Ok(Box::new(ObjectBlobWriter {
            inner: Arc::clone(&self.inner),
            upload: Some(WriteMultipart::new_with_chunk_size(upload, PART_SIZE)),
            temp,
            hasher: blake3::Hasher::new(),
            written: 0,
        }))
    }

    async fn put(&self, bytes: &[u8]) -> Result<BlobRef> {
        let size = bytes.len() as u64;
        let key = BlobKey::from_hash(&blake3::hash(bytes));
        let path = blob_path(&key);
        if self.size(&key).await?.is_some() {
            self.inner.touch(&key).await;
            return Ok(BlobRef {
                key,
                size,
                existed: true,
            });
        }
        self.check_limits(size)?;
        // `PutMode::Create` publishes by hard link from a synced staging file, so the final
        // name never holds a partial blob; losing a race to the same bytes is success.
        let opts = PutOptions {
            mode: PutMode::Create,
            ..PutOptions::default()
        };
        let payload = PutPayload::from(Bytes::copy_from_slice(bytes));
        let existed = match self.inner.store.put_opts(&path, payload, opts).await {
            Ok(_) => false,
            Err(object_store::Error::AlreadyExists { .. }) => true,
            Err(e) => return Err(e.into()),
        };
        if !existed {
            self.inner.used.fetch_add(size, Ordering::Relaxed);
        }
        Ok(BlobRef { key, size, existed })
    }

    async fn get(&self, key: &BlobKey) -> Result<Bytes> {
        match self.inner.store.get(&blob_path(key)).await {
            Ok(got) => Ok(got.bytes().await?),
            Err(e) if not_found(&e) => Err(StoreError::BlobNotFound {
                key: key.to_string(),
            }),
            Err(e) => Err(e.into()),
        }
    }

    async fn get_range(&self, key: &BlobKey, range: Range<u64>) -> Result<Bytes> {
        let size = self
            .size(key)
            .await?
            .ok_or_else(|| StoreError::BlobNotFound {
                key: key.to_string(),
            })?;
        super::check_range(key, &range, size)?;
        if range.start == range.end {
            return Ok(Bytes::new());
        }
        Ok(self.inner.store.get_range(&blob_path(key), range).await?)
    }

    async fn size(&self, key: &BlobKey) -> Result<Option<u64>> {
        match self.inner.store.head(&blob_path(key)).await {
            Ok(meta) => Ok(Some(meta.size)),
            Err(e) if not_found(&e) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    async fn delete(&self, key: &BlobKey) -> Result<bool> {
        let Some(size) = self.size(key).await? else {
            return Ok(false);
        };
        match self.inner.store.delete(&blob_path(key)).await {
            Ok(()) => {
                self.inner
                    .used
                    .fetch_sub(size.min(self.used_bytes()), Ordering::Relaxed);
                Ok(true)
            }
            Err(e) if not_found(&e) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    async fn list(&self) -> Result<Vec<BlobInfo>> {
        let metas: Vec<_> = self.inner.store.list(None).try_collect().await?;
        let mut blobs: Vec<BlobInfo> = metas
            .into_iter()
            .filter_map(|meta| {
                Some(BlobInfo {
                    key: key_of(&meta.location)?,
                    size: meta.size,
                    modified_ms: meta.last_modified.timestamp_millis(),
                })
            })
            .collect();
        blobs.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(blobs)
    }

    async fn remove_stale_temps(&self, older_than: Duration) -> Result<usize> {
        if let Some(root) = self.inner.local_root.clone() {
            return tokio::task::spawn_blocking(move || remove_stale_local(&root, older_than))
                .await
                .map_err(|e| StoreError::Io {
                    path: PathBuf::from(TEMP_DIR),
                    source: std::io::Error::other(e),
                })?;
        }
        let prefix = Path::from(TEMP_DIR);
        let metas: Vec<_> = self.inner.store.list(Some(&prefix)).try_collect().await?;
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or_default();
        let mut removed = 0;
        for meta in metas {
            if now_ms - meta.last_modified.timestamp_millis() >= older_than.as_millis() as i64 {
                match self.inner.store.delete(&meta.location).await {
                    Ok(()) => removed += 1,
                    Err(e) if not_found(&e) => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Ok(removed)
    }

    fn limits(&self) -> BlobLimits {
        self.inner.limits
    }

    fn used_bytes(&self) -> u64 {
        self.inner.used.load(Ordering::Relaxed)
    }
}

/// Deletes, under a local store's root, every unfinished write older than `older_than`:
/// anything in `tmp/`, and `object_store` staging files (`name#N`) anywhere.
fn remove_stale_local(root: &FsPath, older_than: Duration) -> Result<usize> {
    let io_err = |path: &FsPath| {
        let path = path.to_owned();
        move |source| StoreError::Io { path, source }
    };
    let now = SystemTime::now();
    let mut removed = 0;
    let Ok(top) = std::fs::read_dir(root) else {
        return Ok(0);
    };
    for dir in top.flatten() {
        let dir_path = dir.path();
        let in_temp = dir.file_name() == TEMP_DIR;
        if !dir_path.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&dir_path)
            .map_err(io_err(&dir_path))?
            .flatten()
        {
            let name = entry.file_name();
            let unfinished = in_temp || name.to_string_lossy().contains('#');
            let age = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|m| now.duration_since(m).ok())
                .unwrap_or_default();
            if unfinished && age >= older_than {
                match std::fs::remove_file(entry.path()) {
                    Ok(()) => removed += 1,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(io_err(&entry.path())(e)),
                }
            }
        }
    }
    Ok(removed)
}

#[derive(Debug)]
struct ObjectBlobWriter {
    inner: Arc<Inner>,
    /// `None` once finished or aborted.
    upload: Option<WriteMultipart>,
    temp: Path,
    hasher: blake3::Hasher,
    written: u64,
}

impl ObjectBlobWriter {
    async fn abort_inner(&mut self) -> Result<()> {
        if let Some(upload) = self.upload.take() {
            upload.abort().await?;
        }
        Ok(())
    }
}

#[async_trait]
impl BlobWriter for ObjectBlobWriter {
    async fn write(&mut self, chunk: &[u8]) -> Result<()> {
        let total = self.written + chunk.len() as u64;
        let used = self.inner.used.load(Ordering::Relaxed);
        if let Err(e) = check_limits(&self.inner.limits, used, total) {
            let _ = self.abort_inner().await;
            return Err(e);
        }
        let Some(upload) = self.upload.as_mut() else {
            return Err(StoreError::WriterGone);
        };
        self.hasher.update(chunk);
        upload.write(chunk);
        self.written = total;
        if let Err(e) = upload.wait_for_capacity(MAX_PARTS_IN_FLIGHT).await {
            let _ = self.abort_inner().await;
            return Err(e.into());
        }
        Ok(())
    }

    async fn finish(mut self: Box<Self>) -> Result<BlobRef> {
        let Some(upload) = self.upload.take() else {
            return Err(StoreError::WriterGone);
        };
        upload.finish().await?;
        let key = BlobKey::from_hash(&self.hasher.finalize());
        let size = self.written;
        let store = &self.inner.store;
        let final_path = blob_path(&key);
        let existed = match store.head(&final_path).await {
            Ok(_) => true,
            Err(e) if not_found(&e) => false,
            Err(e) => {
                let _ = store.delete(&self.temp).await;
                return Err(e.into());
            }
        };
        if existed {
            store.delete(&self.temp).await?;
            self.inner.touch(&key).await;
        } else {
            // The temp file is complete and synced; rename is atomic, and a concurrent
            // writer of the same bytes renames identical content over it.
            if let Err(e) = store.rename(&self.temp, &final_path).await {
                let _ = store.delete(&self.temp).await;
                return Err(e.into());
            }
            self.inner.used.fetch_add(size, Ordering::Relaxed);
        }
        Ok(BlobRef { key, size, existed })
    }

    async fn abort(mut self: Box<Self>) -> Result<()> {
        self.abort_inner().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_and_reject_strangers() {
        let key = BlobKey::parse(&format!("blake3:{}", "ab".repeat(32))).unwrap();
        let path = blob_path(&key);
        assert_eq!(path.as_ref(), format!("ab/{}", "ab".repeat(32)));
        assert_eq!(key_of(&path), Some(key));
        assert_eq!(key_of(&Path::from("tmp/123-4-5")), None);
        assert_eq!(key_of(&Path::from(format!("cd/{}", "ab".repeat(32)))), None);
        assert_eq!(
            key_of(&Path::from(format!("ab/{}#1", "ab".repeat(32)))),
            None
        );
    }
}
