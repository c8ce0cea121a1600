//! The one error type of the store: every failure a caller can act on, with a clear message.

use std::path::PathBuf;

/// Why a store operation failed. Variants that describe bad input are checked before
/// anything is written, so the store is unchanged when they are returned.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("invalid blob key {key:?}: expected `blake3:` followed by 64 lowercase hex characters")]
    InvalidBlobKey { key: String },

    #[error("invalid {what} {value:?}: {reason}")]
    InvalidId {
        what: &'static str,
        value: String,
        reason: &'static str,
    },

    #[error("blob {key} not found")]
    BlobNotFound { key: String },

    #[error("blob is {size} bytes, over the limit of {limit} bytes per blob")]
    BlobTooLarge { size: u64, limit: u64 },

    #[error(
        "blob store quota exceeded: {used} bytes used + {incoming} new > quota of {quota} bytes"
    )]
    QuotaExceeded {
        used: u64,
        incoming: u64,
        quota: u64,
    },

    #[error("range {start}..{end} is outside blob {key} of {size} bytes")]
    InvalidRange {
        key: String,
        start: u64,
        end: u64,
        size: u64,
    },

    #[error("invalid base64 in {path}: {message}")]
    InvalidBase64 { path: String, message: String },

    #[error("the database at {path} is corrupt or not a toolwire database: {message}")]
    CorruptDatabase { path: PathBuf, message: String },

    #[error("event {seq} of session {session_id:?} is unreadable: {message}")]
    CorruptEvent {
        session_id: String,
        seq: i64,
        message: String,
    },

    #[error("pending call {id:?} is unreadable: {message}")]
    CorruptSuspension { id: String, message: String },

    #[error("session {id:?} not found")]
    SessionNotFound { id: String },

    #[error("session {id:?} already exists")]
    SessionExists { id: String },

    #[error("parent session {id:?} not found")]
    ParentNotFound { id: String },

    #[error("a stored message is unreadable (session {session_id:?}, seq {seq}): {message}")]
    CorruptRow {
        session_id: String,
        seq: i64,
        message: String,
    },

    #[error("result references blob {key}, which is not in the blob store")]
    MissingBlob { key: String },

    #[error("unsupported store URL {url:?}: {reason}")]
    UnsupportedUrl { url: String, reason: String },

    /// A store server (Postgres, S3) that cannot be reached or refuses us; the URL is
    /// shown without its password.
    #[error("cannot open {url}: {message}")]
    Unreachable { url: String, message: String },

    #[error("cannot migrate session {session_id}: {message}")]
    MigrateConflict { session_id: String, message: String },

    #[error("blob {key} is damaged in the source: its bytes hash to {actual}")]
    BlobHashMismatch { key: String, actual: String },

    #[error("no data directory: set TOOLWIRE_DATA_DIR or pass --data-dir")]
    NoDataDir,

    #[error("the history transaction could not be committed: {message}")]
    CommitFailed { message: String },

    #[error("the history writer has stopped")]
    WriterGone,

    #[cfg(feature = "backends")]
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),

    #[cfg(feature = "backends")]
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),

    #[cfg(feature = "backends")]
    #[error("blob storage error: {0}")]
    Object(#[from] object_store::Error),

    /// The blob store failed (unreachable, refusing) while a result's media was stored:
    /// names which media, so the stored error says what was lost.
    #[error("could not store the media at {path}: {message}")]
    MediaNotStored { path: String, message: String },

    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("JSON error: {0}")]
    Json(#[from] serde_json::Error),
}

impl StoreError {
    /// The blob store itself failed (unreachable, refusing, its writer gone), as opposed
    /// to a limit or bad input, which keep their own errors.
    pub fn is_blob_store_failure(&self) -> bool {
        match self {
            StoreError::Io { .. } | StoreError::WriterGone => true,
            #[cfg(feature = "backends")]
            StoreError::Object(_) => true,
            _ => false,
        }
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
