//! Owned `data` shapes of the well-known kinds: what builders write and the schema documents.
//!
//! Reading goes through [`crate::view`], which borrows from the JSON instead of copying it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::source::{MediaKind, Source};

/// `text`: plain text or markdown (the value's `mimeType` says which).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TextData {
    pub content: String,
}

/// `diff`: a file change. `hunks` is optional because `original`/`modified` carry it all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffData {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    pub modified: String,
    pub is_new: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hunks: Option<Vec<DiffHunk>>,
}

/// One hunk of a structured diff, as jsdiff's `structuredPatch` writes it: each line
/// starts with ` `, `+` or `-`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffHunk {
    pub old_start: u64,
    pub old_lines: u64,
    pub new_start: u64,
    pub new_lines: u64,
    pub lines: Vec<String>,
}

/// `file_content`: the text of one file. `size` is the file's size in bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileContentData {
    pub path: String,
    pub content: String,
    pub size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
}

/// `file_list`: a directory listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileListData {
    pub path: String,
    pub entries: Vec<FileEntry>,
    /// True when the listing stopped before the end of the directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileEntry {
    pub name: String,
    #[serde(rename = "type")]
    pub entry_type: EntryType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// RFC 3339 timestamp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
}

impl FileEntry {
    pub fn file(name: impl Into<String>, size: u64) -> Self {
        FileEntry {
            name: name.into(),
            entry_type: EntryType::File,
            size: Some(size),
            modified: None,
        }
    }

    pub fn dir(name: impl Into<String>) -> Self {
        FileEntry {
            name: name.into(),
            entry_type: EntryType::Directory,
            size: None,
            modified: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EntryType {
    File,
    Directory,
    Symlink,
}

impl EntryType {
    pub const NAMES: &'static str = "file|directory|symlink";

    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "file" => Some(EntryType::File),
            "directory" => Some(EntryType::Directory),
            "symlink" => Some(EntryType::Symlink),
            _ => None,
        }
    }
}

/// `table`: columns, and rows as objects keyed by column key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TableData {
    pub columns: Vec<Column>,
    pub rows: Vec<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Column {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub column_type: Option<ColumnType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align: Option<Align>,
}

impl Column {
    pub fn new(key: impl Into<String>) -> Self {
        Column {
            key: key.into(),
            label: None,
            column_type: None,
            align: None,
        }
    }

    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    pub fn typed(mut self, column_type: ColumnType) -> Self {
        self.column_type = Some(column_type);
        self
    }

    pub fn align(mut self, align: Align) -> Self {
        self.align = Some(align);
        self
    }
}

impl From<&str> for Column {
    fn from(key: &str) -> Self {
        Column::new(key)
    }
}

impl From<String> for Column {
    fn from(key: String) -> Self {
        Column::new(key)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ColumnType {
    String,
    Number,
    Boolean,
    Date,
}

impl ColumnType {
    pub const NAMES: &'static str = "string|number|boolean|date";

    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "string" => Some(ColumnType::String),
            "number" => Some(ColumnType::Number),
            "boolean" => Some(ColumnType::Boolean),
            "date" => Some(ColumnType::Date),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Align {
    Left,
    Center,
    Right,
}

impl Align {
    pub const NAMES: &'static str = "left|center|right";

    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "left" => Some(Align::Left),
            "center" => Some(Align::Center),
            "right" => Some(Align::Right),
            _ => None,
        }
    }
}

/// `image`: the value's `mimeType` is `image/*`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImageData {
    pub source: Source,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alt: Option<String>,
}

/// `file`: audio, video, a document or other binary content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileData {
    pub source: Source,
    pub media_kind: MediaKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
}

/// `resource_link`: a pointer to a resource the tool did not inline (MCP `resource_link`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceLinkData {
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}
