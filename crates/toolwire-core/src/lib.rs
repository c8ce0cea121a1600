//! toolwire-core: the canonical `ToolResult` model every other toolwire crate speaks.
//!
//! No I/O lives here; a tool author can depend on this crate alone.
//!
//! ```
//! use toolwire_core::{CallRef, ToolResult, Value};
//! use serde_json::json;
//!
//! let rows = vec![json!({"name": "a.txt", "size": 12})];
//! let result = ToolResult::success(
//!     CallRef::new("call_1", "list_files"),
//!     Value::table(["name", "size"], rows).summary("1 row"),
//! );
//! assert!(result.validate().is_ok());
//! ```
//!
//! Every item has one path: the crate root, except two deliberate namespaces,
//! [`view`] (the typed, borrowed readers of a [`Value`]'s data) and [`humanize`]
//! (number and text formatting whose short names would be ambiguous at the root).

#![warn(missing_docs)]

mod conversation;
mod data;
mod display;
mod error_code;
mod event;
// A namespace: `humanize::bytes` reads better than a root `bytes`.
pub mod humanize;
mod ids;
mod kind;
mod pending;
mod result;
mod schema;
mod source;
mod trace;
mod validate;
mod value;
// A namespace: the family of typed views over a `Value`'s data, one per well-known kind.
pub mod view;
mod violation;
mod widget;

pub use conversation::{ByPerson, Message, ToolCall};
pub use data::{Align, Column, ColumnType, EntryType, FileEntry, ResourceLinkData};
pub use display::{Annotations, Audience, DisplayHints, View};
pub use error_code::ErrorCode;
pub use event::{Event, EventKind, StoredAt};
pub use ids::{CallId, ID_PATTERN, InvalidId, MAX_ID_LEN, SessionId, check_id, new_id};
pub use kind::{KIND_PATTERN, Kind, WellKnown, is_valid_kind};
pub use pending::{Answered, PendingCall, Resolution};
pub use result::{
    CallRef, ErrorInfo, IntoOutput, Metadata, Status, Suspension, SuspensionReason, ToolResult,
};
pub use schema::{tool_result_schema, tool_result_schema_json};
pub use source::{MediaKind, Source, base64_decoded_len, is_base64, is_blob_key, mime_essence};
pub use trace::{TraceContext, hex_id};
pub use value::{INLINE_META, Value, is_tabular};
pub use violation::{Problem, Violation, Violations};
pub use widget::{MCP_APP_WIDGET, Resource, ResourceKind, Widget, WidgetApp};
