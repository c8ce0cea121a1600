//! Owned `data` shapes of the well-known kinds: what builders write and the schema documents.
//!
//! Reading goes through [`crate::view`], which borrows from the JSON instead of copying it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::source::{MediaKind, Source};

/// `text`: plain text or markdown (the value's `mimeType` says which).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct TextData {
    pub content: String,
}

/// `diff`: a file change. `hunks` is optional because `original`/`modified` carry it all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DiffData {
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
pub(crate) struct DiffHunk {
    pub old_start: u64,
    pub old_lines: u64,
    pub new_start: u64,
    pub new_lines: u64,
    pub lines: Vec<String>,
}

/// `file_content`: the text of one file. `size` is the file's size in bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct FileContentData {
    pub path: String,
    pub content: String,
    pub size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
}

/// `file_list`: a directory listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct FileListData {
    pub path: String,
    pub entries: Vec<FileEntry>,
    /// True when the listing stopped before the end of the directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
/// One entry of a `file_list`.
pub struct FileEntry {
    /// The entry's name within the listed directory (not a full path).
    pub name: String,
    #[serde(rename = "type")]
    /// File, directory or symlink.
    pub entry_type: EntryType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Size in bytes; directories usually leave it out.
    pub size: Option<u64>,
    /// RFC 3339 timestamp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
}

impl FileEntry {
    /// A regular file of `size` bytes.
    pub fn file(name: impl Into<String>, size: u64) -> Self {
        FileEntry {
            name: name.into(),
            entry_type: EntryType::File,
            size: Some(size),
            modified: None,
        }
    }

    /// A directory, without a size.
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
/// What an entry of a listing is.
pub enum EntryType {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link (not followed).
    Symlink,
}

impl EntryType {
    /// The accepted names, `|`-separated, for error messages and schemas.
    pub const NAMES: &'static str = "file|directory|symlink";

    /// The type named `s` (`file`, `directory`, `symlink`), if it is one.
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
pub(crate) struct TableData {
    pub columns: Vec<Column>,
    pub rows: Vec<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
/// One column of a `table`: the row key it reads, and how to show it.
pub struct Column {
    /// The key of each row object this column shows.
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The heading; the key when absent.
    pub label: Option<String>,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    /// How to read and sort the cells; inferred from them when absent.
    pub column_type: Option<ColumnType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Cell alignment; numbers go right when absent.
    pub align: Option<Align>,
}

impl Column {
    /// A column reading `key`, with no label, type or alignment.
    pub fn new(key: impl Into<String>) -> Self {
        Column {
            key: key.into(),
            label: None,
            column_type: None,
            align: None,
        }
    }

    /// The same column with a heading other than its key.
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// The same column with its cells' type declared.
    pub fn typed(mut self, column_type: ColumnType) -> Self {
        self.column_type = Some(column_type);
        self
    }

    /// The same column with its cells aligned.
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
/// How a column's cells are read: for sorting and alignment.
pub enum ColumnType {
    /// Text, sorted as text.
    String,
    /// Numbers, sorted and aligned as numbers.
    Number,
    /// `true`/`false`.
    Boolean,
    /// Dates (RFC 3339 strings), sorted in time order.
    Date,
}

impl ColumnType {
    /// The accepted names, `|`-separated, for error messages and schemas.
    pub const NAMES: &'static str = "string|number|boolean|date";

    /// The type named `s` (`string`, `number`, `boolean`, `date`), if it is one.
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
/// How a column's cells are aligned.
pub enum Align {
    /// Flush left (the default for text).
    Left,
    /// Centered.
    Center,
    /// Flush right (the default for numbers).
    Right,
}

impl Align {
    /// The accepted names, `|`-separated, for error messages and schemas.
    pub const NAMES: &'static str = "left|center|right";

    /// The alignment named `s` (`left`, `center`, `right`), if it is one.
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
pub(crate) struct ImageData {
    pub source: Source,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alt: Option<String>,
}

/// `file`: audio, video, a document or other binary content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileData {
    pub source: Source,
    pub media_kind: MediaKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
}

/// `resource_link`: a pointer to a resource the tool did not inline (MCP `resource_link`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceLinkData {
    /// Where the resource is (any URI; `toolwire-blob:` for a stored blob).
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// A human name for the resource.
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// What the resource holds, as its server described it.
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Its size in bytes, when known.
    pub size: Option<u64>,
}
