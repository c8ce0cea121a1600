//! toolwire-store: content-addressed blobs, session history, and lossless rehydration.
//!
//! ```no_run
//! # async fn demo() -> toolwire_store::Result<()> {
//! use toolwire_store::{NewSession, StoreConfig, Stores};
//! use toolwire_core::{CallRef, ToolResult, Value};
//!
//! let stores = Stores::open(&Stores::default_data_dir()?, StoreConfig::default()).await?;
//! let session = stores.create_session(NewSession::default()).await?;
//! let result = ToolResult::success(CallRef::new("call_1", "echo"), Value::text("hi"));
//! stores.record_result(&session.id, result, None).await?;
//! let messages = stores.history().load(&session.id).await?;
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod blob;
mod error;
mod failed;
mod gc;
mod history;
mod ids;
mod memory;
#[cfg(feature = "backends")]
mod migrate;
mod persist;
mod refs;
mod rehydrate;
#[cfg(feature = "backends")]
mod stores;

#[cfg(feature = "backends")]
pub use blob::ObjectBlobStore;
pub use blob::{BlobInfo, BlobLimits, BlobRef, BlobStore, BlobWriter, put_stream};
pub use error::{Result, StoreError};
pub use failed::{redact, store_failed};
pub use gc::{GcOptions, GcReport, gc};
#[cfg(feature = "backends")]
pub use history::{EVENTS_CHANNEL, PgHistory, SqliteHistory};
pub use history::{
    EventLog, EventWake, HistoryReader, HistoryStore, InlineBlob, MessagePage, NewSession, Page,
    QueuedEvent, RawStoredMessage, Session, StoredMessage, StoredResult, SuspensionStore,
};
pub use ids::{BlobKey, validate_id};
pub use memory::{
    MEMORY_EVENT_BYTES_KEPT, MEMORY_EVENTS_KEPT, MEMORY_SESSIONS_REMEMBERED, MemoryEventLog,
    MemorySuspensions,
};
#[cfg(feature = "backends")]
pub use migrate::{MigrateReport, migrate};
pub use persist::{PersistConfig, RAW_ENV, has_inline_media, persist};
pub use refs::{message_blob_refs, result_blob_refs};
pub use rehydrate::{DEFAULT_REHYDRATE_LIMIT, rehydrate_images};
#[cfg(feature = "backends")]
pub use stores::{BLOB_DIR, DATA_DIR_ENV, HISTORY_FILE, INLINE_RAW_LIMIT, StoreConfig, Stores};
