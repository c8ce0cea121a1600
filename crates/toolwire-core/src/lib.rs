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

pub mod conversation;
pub mod data;
pub mod display;
pub mod error_code;
pub mod event;
pub mod humanize;
pub mod ids;
pub mod kind;
pub mod pending;
pub mod result;
pub mod schema;
pub mod source;
pub mod trace;
mod validate;
pub mod value;
pub mod view;
pub mod violation;
pub mod widget;

pub use conversation::{ByPerson, Message, ToolCall};
pub use data::{Align, Column, ColumnType, EntryType, FileEntry, ResourceLinkData};
pub use display::{Annotations, Audience, DisplayHints, View};
pub use error_code::ErrorCode;
pub use event::{Event, EventKind};
pub use ids::{CallId, ID_PATTERN, InvalidId, MAX_ID_LEN, SessionId, check_id};
pub use kind::{KIND_PATTERN, Kind, WellKnown, is_valid_kind};
pub use pending::{Answered, PendingCall, Resolution};
pub use result::{
    CallRef, ErrorInfo, IntoOutput, Metadata, Status, Suspension, SuspensionReason, ToolResult,
};
pub use source::{MediaKind, Source, is_base64, is_blob_key, mime_essence};
pub use trace::TraceContext;
pub use value::Value;
pub use view::KnownView;
pub use violation::{Problem, Violation, Violations};
pub use widget::{MCP_APP_WIDGET, Resource, ResourceKind, Widget, WidgetApp};
