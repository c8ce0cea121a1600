//! `Stores`: the blob and history stores opened together, and the operations that need both.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolwire_core::{Message, ToolResult};

use crate::blob::{BlobLimits, BlobStore, BlobsAndRows, ObjectBlobStore};
use crate::error::{Result, StoreError};
use crate::failed::{redact, store_failed};
use crate::gc::{GcOptions, GcReport};
use crate::history::{
    EventLog, HistoryReader, HistoryStore, InlineBlob, NewSession, PgHistory, Session,
    SqliteHistory, StoredMessage, StoredResult, SuspensionStore,
};
use crate::ids::BlobKey;
use crate::persist::PersistConfig;
use crate::refs::{malformed_blob_refs, message_blob_refs, result_blob_refs};

/// Overrides the platform data directory.
pub const DATA_DIR_ENV: &str = "TOOLWIRE_DATA_DIR";
/// The SQLite history file under the data directory.
pub const HISTORY_FILE: &str = "history.db";

/// The blob directory under the data directory.
pub const BLOB_DIR: &str = "blobs";

/// A raw payload of at most this many bytes is kept in its result's history row
/// ([`InlineBlob`]), committed with it, rather than as a blob of its own. Most MCP
/// results are a few hundred bytes to a few KB, and each blob costs a file, its fsync and
/// a hard link (an object on S3), which a busy gateway paid once a call; a few KB in the
/// row cost a page or two of the commit the row pays anyway. Larger ones stay blobs, so
/// the database does not grow by copies of big results.
pub const INLINE_RAW_LIMIT: usize = 8 << 10;

/// How [`Stores`] limits blobs and externalizes media.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreConfig {
    /// Size limit per blob, and the store's quota.
    pub limits: BlobLimits,
    /// Which media is moved out of results into blobs.
    pub persist: PersistConfig,
}

impl StoreConfig {
    /// Defaults, with the raw-payload debug flag read from the environment.
    pub fn from_env() -> Self {
        StoreConfig {
            persist: PersistConfig::from_env(),
            ..StoreConfig::default()
        }
    }
}

/// The stores a host writes through. The fields are private so that every message
/// reaches the history through [`Stores::append`], which checks its blob references:
/// [`Stores::history`] hands out the read side only.
#[derive(Debug, Clone)]
pub struct Stores {
    pub(crate) blobs: Arc<dyn BlobStore>,
    pub(crate) history: Arc<dyn HistoryStore>,
    pub(crate) events: Arc<dyn EventLog>,
    pub(crate) suspensions: Arc<dyn SuspensionStore>,
    pub(crate) config: StoreConfig,
    /// Whether `history` and `events` are one store (as opened; not once either is
    /// wrapped): only then may a result and its event be written in one commit.
    pub(crate) logs_with_history: bool,
}

impl Stores {
    /// `$TOOLWIRE_DATA_DIR`, else the platform data directory + `toolwire`.
    pub fn default_data_dir() -> Result<PathBuf> {
        match std::env::var_os(DATA_DIR_ENV) {
            Some(dir) if !dir.is_empty() => Ok(PathBuf::from(dir)),
            _ => dirs::data_dir()
                .map(|d| d.join("toolwire"))
                .ok_or(StoreError::NoDataDir),
        }
    }

    /// `history.db` and `blobs/` under `data_dir`, created if missing.
    pub async fn open(data_dir: &Path, config: StoreConfig) -> Result<Self> {
        std::fs::create_dir_all(data_dir).map_err(|source| StoreError::Io {
            path: data_dir.to_owned(),
            source,
        })?;
        let history = SqliteHistory::open(&data_dir.join(HISTORY_FILE)).await?;
        let blobs = ObjectBlobStore::open_local(&data_dir.join(BLOB_DIR), config.limits).await?;
        Ok(Stores::sqlite(Arc::new(blobs), history, config))
    }

    /// Stores chosen by URL: history at `sqlite://PATH` or `postgres://…`, blobs at
    /// `file:///DIR` or `s3://BUCKET/PREFIX`.
    pub async fn open_urls(history_url: &str, blob_url: &str, config: StoreConfig) -> Result<Self> {
        let blobs = Arc::new(ObjectBlobStore::open_url(blob_url, config.limits).await?);
        if history_url.starts_with("sqlite:") {
            let history = SqliteHistory::open_url(history_url).await?;
            Ok(Stores::sqlite(blobs, history, config))
        } else if history_url.starts_with("postgres://") || history_url.starts_with("postgresql://")
        {
            let history = PgHistory::open_url(history_url).await?;
            Ok(Stores::from_parts(blobs, history, config))
        } else {
            Err(StoreError::UnsupportedUrl {
                url: redact(history_url),
                reason: "expected sqlite://PATH or postgres://USER@HOST/DATABASE".into(),
            })
        }
    }

    /// One SQLite database behind the history, the event log and the suspensions.
    pub fn sqlite(blobs: Arc<dyn BlobStore>, history: SqliteHistory, config: StoreConfig) -> Self {
        Stores::from_parts(blobs, history, config)
    }

    /// One database (any backend) behind the history, the event log and the suspensions.
    pub fn from_parts<H>(blobs: Arc<dyn BlobStore>, history: H, config: StoreConfig) -> Self
    where
        H: HistoryStore + EventLog + SuspensionStore + Clone + 'static,
    {
        // Reads find a blob a row keeps as they find one in the blob store.
        let blobs = Arc::new(BlobsAndRows {
            blobs,
            rows: Arc::new(history.clone()),
        });
        Stores {
            blobs,
            history: Arc::new(history.clone()),
            events: Arc::new(history.clone()),
            suspensions: Arc::new(history),
            config,
            logs_with_history: true,
        }
    }

    /// The same stores with the history wrapped, e.g. by a layer that counts or fails
    /// calls (tests, instrumentation). Writes still go through [`Stores::append`].
    pub fn map_history(
        mut self,
        wrap: impl FnOnce(Arc<dyn HistoryStore>) -> Arc<dyn HistoryStore>,
    ) -> Self {
        self.history = wrap(self.history);
        self.logs_with_history = false;
        self
    }

    /// The same stores with the event log wrapped, e.g. by a layer that counts its reads
    /// (tests, instrumentation).
    pub fn map_events(mut self, wrap: impl FnOnce(Arc<dyn EventLog>) -> Arc<dyn EventLog>) -> Self {
        self.events = wrap(self.events);
        self.logs_with_history = false;
        self
    }

    /// The blob store (content-addressed, so writing to it cannot corrupt history).
    pub fn blobs(&self) -> &Arc<dyn BlobStore> {
        &self.blobs
    }

    /// The history, read side only: writes go through [`Stores::append`] and friends.
    pub fn history(&self) -> &dyn HistoryReader {
        self.history.as_ref()
    }

    /// The read side of the history as a shared handle, for a task or tool that keeps it.
    pub fn history_reader(&self) -> Arc<dyn HistoryReader> {
        self.history.clone()
    }

    /// The per-session event log.
    pub fn events(&self) -> &Arc<dyn EventLog> {
        &self.events
    }

    /// The pending calls waiting for a person or a task.
    pub fn suspensions(&self) -> &Arc<dyn SuspensionStore> {
        &self.suspensions
    }

    /// The limits and persistence settings these stores were opened with.
    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// Creates a session; the id is generated when `new.id` is `None`.
    pub async fn create_session(&self, new: NewSession) -> Result<Session> {
        self.history.create_session(new).await
    }

    /// Deletes a session with its subagents' sessions, messages, events and pending
    /// calls; `false` when there was none. Blobs stay until `gc` finds them unreferenced.
    pub async fn delete_session(&self, id: &str) -> Result<bool> {
        self.history.delete_session(id).await
    }

    /// The persistence step with this store's blobs and config.
    pub async fn persist(&self, result: ToolResult, raw: Option<&[u8]>) -> Result<ToolResult> {
        crate::persist::persist(result, raw, self.blobs.as_ref(), &self.config.persist).await
    }

    /// Keeps `raw`, a payload as the tool sent it (an MCP result), and points
    /// `result.metadata.rawRef` at it, so it can be downloaded beside the result. One of
    /// at most [`INLINE_RAW_LIMIT`] bytes is returned, to be kept by the row that stores
    /// `result` ([`Stores::append_many_inline`]); a larger one is stored as a blob now.
    pub async fn keep_raw(
        &self,
        result: &mut ToolResult,
        raw: &[u8],
    ) -> Result<Option<InlineBlob>> {
        if raw.len() <= INLINE_RAW_LIMIT && self.history.keeps_inline_blobs() {
            let blob = InlineBlob {
                key: BlobKey::from_hash(&blake3::hash(raw)),
                bytes: bytes::Bytes::copy_from_slice(raw),
            };
            result.metadata.raw_ref = Some(blob.key.to_string());
            return Ok(Some(blob));
        }
        let stored = crate::persist::store_bytes(self.blobs.as_ref(), raw).await?;
        result.metadata.raw_ref = Some(stored.key.to_string());
        Ok(None)
    }

    /// Appends a message after checking that every blob it references is stored, so no
    /// row ever points at a missing blob.
    pub async fn append(&self, session_id: &str, content: Message) -> Result<StoredMessage> {
        self.check_blobs(&content, &[]).await?;
        self.history.append(session_id, content).await
    }

    /// Appends several messages atomically (all or none), each checked as by
    /// [`Stores::append`].
    pub async fn append_many(
        &self,
        session_id: &str,
        contents: Vec<Message>,
    ) -> Result<Vec<StoredMessage>> {
        self.append_many_inline(session_id, contents, Vec::new())
            .await
    }

    /// [`Stores::append_many`], the rows that reference `inline`'s blobs keeping them
    /// (raw payloads from [`Stores::keep_raw`]), in the same commit: durable together.
    pub async fn append_many_inline(
        &self,
        session_id: &str,
        contents: Vec<Message>,
        inline: Vec<InlineBlob>,
    ) -> Result<Vec<StoredMessage>> {
        check_inline(&inline)?;
        for content in &contents {
            self.check_blobs(content, &inline).await?;
        }
        self.history
            .append_many_inline(session_id, contents, inline)
            .await
    }

    /// Errs unless every blob `content` references is well formed and stored, or among
    /// `inline`, stored with it.
    async fn check_blobs(&self, content: &Message, inline: &[InlineBlob]) -> Result<()> {
        match content {
            Message::ToolResult(result) => self.check_result(result, inline).await,
            other => {
                self.check_refs(None, message_blob_refs(other), inline)
                    .await
            }
        }
    }

    /// [`Stores::check_blobs`] for a tool result not (yet) wrapped in its message.
    async fn check_result(&self, result: &ToolResult, inline: &[InlineBlob]) -> Result<()> {
        let bad = malformed_blob_refs(result).pop();
        self.check_refs(bad, result_blob_refs(result), inline).await
    }

    /// Errs on `bad` (a malformed reference), and unless each of `keys` is stored or
    /// among `inline`.
    async fn check_refs(
        &self,
        bad: Option<String>,
        keys: BTreeSet<String>,
        inline: &[InlineBlob],
    ) -> Result<()> {
        if let Some(bad) = bad {
            return Err(StoreError::InvalidBlobKey {
                key: crate::ids::truncate_for_message(&bad),
            });
        }
        for key in keys {
            let key = BlobKey::parse(&key)?;
            if inline.iter().any(|blob| blob.key == key) {
                continue;
            }
            if self.blobs.size(&key).await?.is_none() {
                return Err(StoreError::MissingBlob {
                    key: key.to_string(),
                });
            }
        }
        Ok(())
    }

    /// Persist, then append: what a host does with each tool result.
    pub async fn record_result(
        &self,
        session_id: &str,
        result: ToolResult,
        raw: Option<&[u8]>,
    ) -> Result<StoredMessage> {
        let result = self.persist(result, raw).await?;
        self.append(session_id, Message::ToolResult(result)).await
    }

    /// Like [`Stores::record_result`], but a result that cannot be stored as it is (a bad
    /// blob, a full quota) is replaced by a `store_failed` error result, so the call still
    /// gets exactly one stored result. Errs only when even that cannot be stored. Its row
    /// keeps `inline`, the result's small raw payload from [`Stores::keep_raw`] (empty
    /// when there is none), in the same commit.
    pub async fn record_result_or_failure(
        &self,
        session_id: &str,
        result: ToolResult,
        raw: Option<&[u8]>,
        inline: Vec<InlineBlob>,
    ) -> Result<StoredResult> {
        let (stored, _) = self
            .record_or_failure(session_id, result, raw, inline, None)
            .await?;
        Ok(stored)
    }

    /// [`Stores::record_result_or_failure`] for a result to be announced at once: where
    /// the history is also the event log and can ([`HistoryStore::announces_appends`]),
    /// its `tool_result` event (a reference to its row, logged at `at`) is written with
    /// it (SQLite: in the same commit), and its number comes back beside it; else, and
    /// for a result stored as a `store_failed` one instead, the number is `None` and the
    /// caller logs the event itself. One commit (and one wait for the writer) a result
    /// instead of two, and no result stored without its event.
    pub async fn record_result_announced(
        &self,
        session_id: &str,
        result: ToolResult,
        inline: Vec<InlineBlob>,
        at: String,
    ) -> Result<(StoredResult, Option<u64>)> {
        self.record_or_failure(session_id, result, None, inline, Some(at))
            .await
    }

    /// Both of the above: `result` stored (announced at `announce` where the stores can),
    /// or, if it cannot be, a `store_failed` result in its place.
    async fn record_or_failure(
        &self,
        session_id: &str,
        result: ToolResult,
        raw: Option<&[u8]>,
        inline: Vec<InlineBlob>,
        announce: Option<String>,
    ) -> Result<(StoredResult, Option<u64>)> {
        let announce =
            announce.filter(|_| self.logs_with_history && self.history.announces_appends());
        let call = result.call();
        let stored = async {
            let result = self.persist(result, raw).await?;
            match announce {
                Some(at) => {
                    check_inline(&inline)?;
                    self.check_result(&result, &inline).await?;
                    self.history
                        .append_announced(session_id, result, inline, at)
                        .await
                }
                None => {
                    let mut stored = self
                        .append_many_inline(session_id, vec![Message::ToolResult(result)], inline)
                        .await?;
                    Ok((stored.pop().ok_or(StoreError::WriterGone)?, None))
                }
            }
        }
        .await;
        let (stored, seq) = match stored {
            Ok(stored) => stored,
            Err(e) => {
                let failed = self
                    .record_result(session_id, store_failed(call, &e), None)
                    .await?;
                (failed, None)
            }
        };
        // Appended as a result, read back as one: a writer that gave back another
        // message stored something else.
        let stored = StoredResult::from_message(stored).ok_or(StoreError::WriterGone)?;
        Ok((stored, seq))
    }

    /// Deletes blobs no stored message references (see [`GcOptions`]).
    pub async fn gc(&self, opts: GcOptions) -> Result<GcReport> {
        crate::gc::gc(self.blobs.as_ref(), self.history.as_ref(), opts).await
    }

    /// Resolves a blob source for display or a model request.
    pub async fn blob(&self, key: &str) -> Result<bytes::Bytes> {
        self.blobs.get(&BlobKey::parse(key)?).await
    }
}

/// Errs unless `inline` holds only what rows are meant to keep: bytes under their own
/// hash, of a size the rows are meant for (a large one belongs in the blob store).
fn check_inline(inline: &[InlineBlob]) -> Result<()> {
    for blob in inline {
        let actual = BlobKey::from_hash(&blake3::hash(&blob.bytes));
        if actual != blob.key {
            return Err(StoreError::CommitFailed {
                message: format!("the bytes given for blob {} hash to {actual}", blob.key),
            });
        }
        if blob.bytes.len() > INLINE_RAW_LIMIT {
            return Err(StoreError::BlobTooLarge {
                size: blob.bytes.len() as u64,
                limit: INLINE_RAW_LIMIT as u64,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redact("postgres://u:secret@db:5432/x"),
            "postgres://u:***@db:5432/x"
        );
        assert_eq!(redact("postgres://db/x"), "postgres://db/x");
    }
}
