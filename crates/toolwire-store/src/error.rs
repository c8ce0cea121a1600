//! The one error type of the store: every failure a caller can act on, with a clear message.

use std::path::PathBuf;

/// Why a store operation failed. Variants that describe bad input are checked before
/// anything is written, so the store is unchanged when they are returned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A blob key is not `blake3:` and 64 lowercase hex characters.
    #[error("invalid blob key {key:?}: expected `blake3:` followed by 64 lowercase hex characters")]
    InvalidBlobKey {
        /// The key as given, cut if long.
        key: String,
    },

    /// A session, call or suspension id breaks the id rule.
    #[error("invalid {what} {value:?}: {reason}")]
    InvalidId {
        /// Which id, e.g. `session id`.
        what: &'static str,
        /// The id as given, cut if long.
        value: String,
        /// Which rule it breaks.
        reason: &'static str,
    },

    /// No blob has this key.
    #[error("blob {key} not found")]
    BlobNotFound {
        /// The key looked up.
        key: String,
    },

    /// A blob is over the per-blob size limit.
    #[error("blob is {size} bytes, over the limit of {limit} bytes per blob")]
    BlobTooLarge {
        /// The blob's size in bytes.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },

    /// Storing the blob would go over the store's quota.
    #[error(
        "blob store quota exceeded: {used} bytes used + {incoming} new > quota of {quota} bytes"
    )]
    QuotaExceeded {
        /// Bytes stored already.
        used: u64,
        /// Bytes of the new blob.
        incoming: u64,
        /// The quota in bytes.
        quota: u64,
    },

    /// A byte range does not lie inside the blob.
    #[error("range {start}..{end} is outside blob {key} of {size} bytes")]
    InvalidRange {
        /// The blob.
        key: String,
        /// First byte asked for.
        start: u64,
        /// Byte after the last one asked for.
        end: u64,
        /// The blob's size.
        size: u64,
    },

    /// Inline media of a result is not valid base64.
    #[error("invalid base64 in {path}: {message}")]
    InvalidBase64 {
        /// Where in the result the media is.
        path: String,
        /// What the decoder said.
        message: String,
    },

    /// The database file is damaged, or another program's.
    #[error("the database at {path} is corrupt or not a toolwire database: {message}")]
    CorruptDatabase {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        message: String,
    },

    /// A logged event cannot be read back.
    #[error("event {seq} of session {session_id:?} is unreadable: {message}")]
    CorruptEvent {
        /// The event's session.
        session_id: String,
        /// The event's number.
        seq: i64,
        /// Why it cannot be read.
        message: String,
    },

    /// A pending call cannot be read back.
    #[error("pending call {id:?} is unreadable: {message}")]
    CorruptSuspension {
        /// The suspension id.
        id: String,
        /// Why it cannot be read.
        message: String,
    },

    /// No session has this id.
    #[error("session {id:?} not found")]
    SessionNotFound {
        /// The id looked up.
        id: String,
    },

    /// A session with this id exists already.
    #[error("session {id:?} already exists")]
    SessionExists {
        /// The id asked for.
        id: String,
    },

    /// A new session names a parent session that does not exist.
    #[error("parent session {id:?} not found")]
    ParentNotFound {
        /// The parent id given.
        id: String,
    },

    /// A stored message cannot be read back.
    #[error("a stored message is unreadable (session {session_id:?}, seq {seq}): {message}")]
    CorruptRow {
        /// The message's session.
        session_id: String,
        /// The message's position.
        seq: i64,
        /// Why it cannot be read.
        message: String,
    },

    /// A result references a blob the blob store does not hold.
    #[error("result references blob {key}, which is not in the blob store")]
    MissingBlob {
        /// The missing blob.
        key: String,
    },

    /// A store URL has a scheme or form the store does not take.
    #[error("unsupported store URL {url:?}: {reason}")]
    UnsupportedUrl {
        /// The URL, without its password.
        url: String,
        /// What is wrong with it.
        reason: String,
    },

    /// A store server (Postgres, S3) that cannot be reached or refuses us; the URL is
    /// shown without its password.
    #[error("cannot open {url}: {message}")]
    Unreachable {
        /// The URL, without its password.
        url: String,
        /// What the connection attempt said.
        message: String,
    },

    /// The migration target holds different data for a session.
    #[error("cannot migrate session {session_id}: {message}")]
    MigrateConflict {
        /// The session.
        session_id: String,
        /// How source and target differ.
        message: String,
    },

    /// A blob's bytes do not hash to its key.
    #[error("blob {key} is damaged in the source: its bytes hash to {actual}")]
    BlobHashMismatch {
        /// The key the blob is stored under.
        key: String,
        /// What its bytes hash to.
        actual: String,
    },

    /// No data directory was given and none could be found.
    #[error("no data directory: set TOOLWIRE_DATA_DIR or pass --data-dir")]
    NoDataDir,

    /// A history transaction did not commit.
    #[error("the history transaction could not be committed: {message}")]
    CommitFailed {
        /// What the database said.
        message: String,
    },

    /// The history's writer task stopped, so nothing more can be written.
    #[error("the history writer has stopped")]
    WriterGone,

    /// The database failed.
    #[cfg(feature = "backends")]
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),

    /// The database schema could not be migrated.
    #[cfg(feature = "backends")]
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),

    /// The object store failed.
    #[cfg(feature = "backends")]
    #[error("blob storage error: {0}")]
    Object(#[from] object_store::Error),

    /// The blob store failed (unreachable, refusing) while a result's media was stored:
    /// names which media, so the stored error says what was lost.
    #[error("could not store the media at {path}: {message}")]
    MediaNotStored {
        /// Where in the result the media is.
        path: String,
        /// What the blob store said.
        message: String,
    },

    /// A file could not be read or written.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },

    /// A value could not be written or read as JSON.
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

/// A store operation's result.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
