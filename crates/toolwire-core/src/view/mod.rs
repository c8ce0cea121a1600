//! Typed, borrowing views of the well-known kinds' `data`, checked field by field.
//!
//! Views borrow from the JSON, so reading a 50 MB file_content or a million-row table
//! costs no copy. The same checks back `validate()`, so a view exists exactly when the
//! data is valid.

use serde_json::{Map, Value as Json};

use crate::data::{Align, ColumnType, EntryType};
use crate::kind::WellKnown;
use crate::source::MediaKind;
use crate::value::Value;
use crate::violation::{Collector, Problem, Violations};

mod fields;
use fields::Fields;

/// A `text` value's data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextView<'a> {
    /// The text (plain or markdown, as the value's `mimeType` says).
    pub content: &'a str,
}

/// A `diff` value's data.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffView<'a> {
    /// The changed file's path.
    pub path: &'a str,
    /// The content before; absent when only the new content was sent.
    pub original: Option<&'a str>,
    /// The content after.
    pub modified: &'a str,
    /// Whether the change created the file.
    pub is_new: bool,
    /// The hunks, when the tool sent them instead of leaving them to be computed.
    pub hunks: Option<Vec<HunkView<'a>>>,
}

/// One hunk of a diff, as in a unified diff's `@@` header and lines.
#[derive(Debug, Clone, PartialEq)]
pub struct HunkView<'a> {
    /// First line of the hunk in the old file (1-based).
    pub old_start: u64,
    /// Number of old-file lines the hunk covers.
    pub old_lines: u64,
    /// First line of the hunk in the new file (1-based).
    pub new_start: u64,
    /// Number of new-file lines the hunk covers.
    pub new_lines: u64,
    /// The hunk's lines, each starting with ` `, `+` or `-`.
    pub lines: Vec<&'a str>,
}

/// A `file_content` value's data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FileContentView<'a> {
    /// The file's path.
    pub path: &'a str,
    /// The file's text (or base64, when `encoding` says so).
    pub content: &'a str,
    /// The file's size in bytes.
    pub size: u64,
    /// How `content` is encoded when not plain text, e.g. `base64`.
    pub encoding: Option<&'a str>,
}

/// A `file_list` value's data.
#[derive(Debug, Clone, PartialEq)]
pub struct FileListView<'a> {
    /// The listed directory.
    pub path: &'a str,
    /// Its entries, in the tool's order.
    pub entries: Vec<EntryView<'a>>,
    /// Whether the listing stopped before the end of the directory.
    pub truncated: bool,
}

/// One entry of a `file_list`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EntryView<'a> {
    /// The entry's name within the directory.
    pub name: &'a str,
    /// File, directory or symlink.
    pub entry_type: EntryType,
    /// Size in bytes, when given.
    pub size: Option<u64>,
    /// Last modification (RFC 3339), when given.
    pub modified: Option<&'a str>,
}

/// Rows stay as borrowed JSON objects: a renderer that shows 40 of a million rows
/// touches 40.
#[derive(Debug, Clone, PartialEq)]
pub struct TableView<'a> {
    /// The columns, in display order.
    pub columns: Vec<ColumnView<'a>>,
    /// The rows, each a JSON object keyed by column key.
    pub rows: &'a [Json],
}

impl<'a> TableView<'a> {
    /// Row `i` as an object (checked when the view was made).
    pub fn row(&self, i: usize) -> Option<&'a Map<String, Json>> {
        self.rows.get(i).and_then(Json::as_object)
    }
}

/// One column of a `table`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColumnView<'a> {
    /// The row key whose cells this column shows.
    pub key: &'a str,
    /// The heading, when it differs from the key.
    pub label: Option<&'a str>,
    /// How to read the cells, when declared.
    pub column_type: Option<ColumnType>,
    /// How to align the cells, when declared.
    pub align: Option<Align>,
}

impl<'a> ColumnView<'a> {
    /// The header to show: the label, else the key.
    pub fn title(&self) -> &'a str {
        self.label.unwrap_or(self.key)
    }
}

/// Where an image's or file's bytes are, borrowed from the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceView<'a> {
    /// Inline base64 text.
    Base64(&'a str),
    /// A stored blob: its `blake3:` key and decoded size.
    Blob {
        /// `blake3:` and 64 lowercase hex characters.
        key: &'a str,
        /// The decoded size in bytes.
        size: u64,
    },
    /// A URL to fetch.
    Url(&'a str),
}

/// An `image` value's data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImageView<'a> {
    /// Where the image's bytes are.
    pub source: SourceView<'a>,
    /// Alternative text for people who cannot see it.
    pub alt: Option<&'a str>,
    /// The value's `mimeType`.
    pub mime_type: Option<&'a str>,
}

/// A `file` value's data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FileView<'a> {
    /// Where the file's bytes are.
    pub source: SourceView<'a>,
    /// Audio, video, document or binary.
    pub media_kind: MediaKind,
    /// The file name it came with, if any.
    pub filename: Option<&'a str>,
    /// The value's `mimeType`.
    pub mime_type: Option<&'a str>,
}

/// A `resource_link` value's data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResourceLinkView<'a> {
    /// The resource's URI.
    pub uri: &'a str,
    /// Its human name, if any.
    pub name: Option<&'a str>,
    /// What it holds, as its server described it.
    pub description: Option<&'a str>,
    /// Its size in bytes, when known.
    pub size: Option<u64>,
    /// Its MIME type, when known.
    pub mime_type: Option<&'a str>,
}

/// A well-known value, typed.
#[derive(Debug, Clone, PartialEq)]
pub enum KnownView<'a> {
    /// A `text` value.
    Text(TextView<'a>),
    /// A `diff` value.
    Diff(DiffView<'a>),
    /// A `file_content` value.
    FileContent(FileContentView<'a>),
    /// A `file_list` value.
    FileList(FileListView<'a>),
    /// A `table` value.
    Table(TableView<'a>),
    /// An `image` value.
    Image(ImageView<'a>),
    /// A `file` value.
    File(FileView<'a>),
    /// A `resource_link` value.
    ResourceLink(ResourceLinkView<'a>),
    /// A `structured` value: its data, any JSON.
    Structured(&'a Json),
}

impl Value {
    /// The typed view of a well-known value; `None` for a custom kind. `Err` lists what
    /// is wrong with the data, with paths relative to the value (`data.rows[3]`).
    pub fn known(&self) -> Option<Result<KnownView<'_>, Violations>> {
        let kind = self.kind.well_known()?;
        // A valid text value, the most common kind by far (every result of a long agent
        // session is read through here when it is encoded): its content taken straight,
        // with no violation path built for the errors it has none of. The same view as
        // `parse_known` gives; anything else goes there for its checks and errors.
        if kind == WellKnown::Text
            && let Some(content) = self
                .data
                .as_object()
                .and_then(|m| m.get("content"))
                .and_then(Json::as_str)
        {
            return Some(Ok(KnownView::Text(TextView { content })));
        }
        let mut errs = Collector::default();
        let view = parse_known(self, kind, &"", &mut errs);
        Some(match (errs.finish(), view) {
            (Ok(()), Some(view)) => Ok(view),
            (Err(violations), _) => Err(violations),
            (Ok(()), None) => Err(Violations(vec![crate::violation::Violation::new(
                "data",
                Problem::WrongType("object"),
            )])),
        })
    }

    fn typed<'a, T>(
        &'a self,
        expected: WellKnown,
        pick: impl FnOnce(KnownView<'a>) -> Option<T>,
    ) -> Result<T, Violations> {
        let mismatch = || {
            Violations(vec![crate::violation::Violation::new(
                "kind",
                Problem::KindMismatch {
                    found: self.kind.to_string(),
                    expected: expected.name(),
                },
            )])
        };
        match self.known() {
            Some(Ok(view)) => pick(view).ok_or_else(mismatch),
            Some(Err(e)) => Err(e),
            None => Err(mismatch()),
        }
    }

    /// The value as `text`, or the violations that keep it from being one.
    pub fn as_text(&self) -> Result<TextView<'_>, Violations> {
        self.typed(WellKnown::Text, |v| match v {
            KnownView::Text(t) => Some(t),
            _ => None,
        })
    }

    /// The value as a `diff`, or the violations that keep it from being one.
    pub fn as_diff(&self) -> Result<DiffView<'_>, Violations> {
        self.typed(WellKnown::Diff, |v| match v {
            KnownView::Diff(t) => Some(t),
            _ => None,
        })
    }

    /// The value as `file_content`, or the violations that keep it from being one.
    pub fn as_file_content(&self) -> Result<FileContentView<'_>, Violations> {
        self.typed(WellKnown::FileContent, |v| match v {
            KnownView::FileContent(t) => Some(t),
            _ => None,
        })
    }

    /// The value as a `file_list`, or the violations that keep it from being one.
    pub fn as_file_list(&self) -> Result<FileListView<'_>, Violations> {
        self.typed(WellKnown::FileList, |v| match v {
            KnownView::FileList(t) => Some(t),
            _ => None,
        })
    }

    /// The value as a `table`, or the violations that keep it from being one.
    pub fn as_table(&self) -> Result<TableView<'_>, Violations> {
        self.typed(WellKnown::Table, |v| match v {
            KnownView::Table(t) => Some(t),
            _ => None,
        })
    }

    /// The value as an `image`, or the violations that keep it from being one.
    pub fn as_image(&self) -> Result<ImageView<'_>, Violations> {
        self.typed(WellKnown::Image, |v| match v {
            KnownView::Image(t) => Some(t),
            _ => None,
        })
    }

    /// The value as a `file`, or the violations that keep it from being one.
    pub fn as_file(&self) -> Result<FileView<'_>, Violations> {
        self.typed(WellKnown::File, |v| match v {
            KnownView::File(t) => Some(t),
            _ => None,
        })
    }

    /// The value as a `resource_link`, or the violations that keep it from being one.
    pub fn as_resource_link(&self) -> Result<ResourceLinkView<'_>, Violations> {
        self.typed(WellKnown::ResourceLink, |v| match v {
            KnownView::ResourceLink(t) => Some(t),
            _ => None,
        })
    }
}

/// Parses a well-known value's data, reporting problems under `prefix` (e.g. `output[2].`).
pub(crate) fn parse_known<'a>(
    value: &'a Value,
    kind: WellKnown,
    prefix: &dyn std::fmt::Display,
    errs: &mut Collector,
) -> Option<KnownView<'a>> {
    let base = fields::Joined(prefix, "data");
    let mime = value.mime_type.as_deref();
    if kind == WellKnown::Structured {
        return Some(KnownView::Structured(&value.data));
    }
    let mut f = Fields::of(&value.data, &base, errs)?;
    let view = match kind {
        WellKnown::Text => KnownView::Text(TextView {
            content: f.str("content")?,
        }),
        WellKnown::Diff => {
            let (path, original, modified, is_new) = (
                f.str("path"),
                f.opt_str("original"),
                f.str("modified"),
                f.bool("isNew"),
            );
            let hunks = f.opt_array("hunks").map(|items| {
                f.each(items, "hunks", |h| {
                    Some(HunkView {
                        old_start: h.u64("oldStart")?,
                        old_lines: h.u64("oldLines")?,
                        new_start: h.u64("newStart")?,
                        new_lines: h.u64("newLines")?,
                        lines: {
                            let lines = h.array("lines")?;
                            h.strings(lines, "lines")?
                        },
                    })
                })
            });
            KnownView::Diff(DiffView {
                path: path?,
                original,
                modified: modified?,
                is_new: is_new?,
                hunks: hunks.flatten(),
            })
        }
        WellKnown::FileContent => {
            let (path, content, size, encoding) = (
                f.str("path"),
                f.str("content"),
                f.u64("size"),
                f.opt_str("encoding"),
            );
            KnownView::FileContent(FileContentView {
                path: path?,
                content: content?,
                size: size?,
                encoding,
            })
        }
        WellKnown::FileList => {
            let (path, truncated) = (f.str("path"), f.opt_bool("truncated"));
            let entries = f.array("entries").and_then(|items| {
                f.each(items, "entries", |e| {
                    let (name, entry_type, size, modified) = (
                        e.str("name"),
                        e.enumerated("type", EntryType::from_name, EntryType::NAMES),
                        e.opt_u64("size"),
                        e.opt_str("modified"),
                    );
                    Some(EntryView {
                        name: name?,
                        entry_type: entry_type?,
                        size,
                        modified,
                    })
                })
            });
            KnownView::FileList(FileListView {
                path: path?,
                entries: entries?,
                truncated: truncated.unwrap_or(false),
            })
        }
        WellKnown::Table => {
            let columns = f.array("columns").and_then(|items| {
                f.each(items, "columns", |c| {
                    let (key, label) = (c.str("key"), c.opt_str("label"));
                    let column_type =
                        c.opt_enumerated("type", ColumnType::from_name, ColumnType::NAMES);
                    let align = c.opt_enumerated("align", Align::from_name, Align::NAMES);
                    Some(ColumnView {
                        key: key?,
                        label,
                        column_type,
                        align,
                    })
                })
            });
            let rows = f.array("rows");
            if let Some(rows) = rows {
                let base = f.base;
                for (i, row) in rows.iter().enumerate() {
                    if !row.is_object() {
                        f.errs
                            .push(|| format!("{base}.rows[{i}]"), Problem::WrongType("object"));
                    }
                }
            }
            KnownView::Table(TableView {
                columns: columns?,
                rows: rows?,
            })
        }
        WellKnown::Image => {
            let (source, alt) = (f.source("source"), f.opt_str("alt"));
            match mime {
                Some(m) if !crate::source::mime_essence(m).starts_with("image/") => f.errs.push(
                    || format!("{prefix}mimeType"),
                    Problem::MimeMismatch {
                        found: m.to_owned(),
                        kind: "image",
                        expected: "image/*",
                    },
                ),
                None if !matches!(source, Some(SourceView::Url(_)) | None) => f
                    .errs
                    .push(|| format!("{prefix}mimeType"), Problem::Missing),
                _ => {}
            }
            KnownView::Image(ImageView {
                source: source?,
                alt,
                mime_type: mime,
            })
        }
        WellKnown::File => {
            let (source, media_kind, filename) = (
                f.source("source"),
                f.enumerated(
                    "mediaKind",
                    media_kind_from_name,
                    "audio|video|document|binary",
                ),
                f.opt_str("filename"),
            );
            KnownView::File(FileView {
                source: source?,
                media_kind: media_kind?,
                filename,
                mime_type: mime,
            })
        }
        WellKnown::ResourceLink => {
            let (uri, name, description, size) = (
                f.str("uri"),
                f.opt_str("name"),
                f.opt_str("description"),
                f.opt_u64("size"),
            );
            KnownView::ResourceLink(ResourceLinkView {
                uri: uri?,
                name,
                description,
                size,
                mime_type: mime,
            })
        }
        WellKnown::Structured => KnownView::Structured(&value.data),
    };
    Some(view)
}

fn media_kind_from_name(s: &str) -> Option<MediaKind> {
    match s {
        "audio" => Some(MediaKind::Audio),
        "video" => Some(MediaKind::Video),
        "document" => Some(MediaKind::Document),
        "binary" => Some(MediaKind::Binary),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Source;
    use serde_json::json;

    #[test]
    pub(super) fn views_borrow_the_data() {
        let v = Value::text("hello");
        assert_eq!(v.as_text().unwrap().content, "hello");
        let t = Value::table(["a"], [json!({"a": 1}), json!({"a": 2})]);
        let view = t.as_table().unwrap();
        assert_eq!(view.columns[0].title(), "a");
        assert_eq!(view.row(1).unwrap()["a"], json!(2));
        let img = Value::image(Source::base64("AAAA"), "image/png");
        assert_eq!(img.as_image().unwrap().source, SourceView::Base64("AAAA"));
    }

    #[test]
    pub(super) fn shape_errors_name_the_path() {
        let bad = Value::new("table", json!({"columns": [{"key": 1}], "rows": {}}));
        let errs = bad.as_table().unwrap_err().to_string();
        assert_eq!(
            errs,
            "data.columns[0].key: expected string\ndata.rows: expected array"
        );
        let bad = Value::new(
            "file_list",
            json!({"path": "/", "entries": [{"name": "a", "type": "socket"}]}),
        );
        assert_eq!(
            bad.as_file_list().unwrap_err().to_string(),
            "data.entries[0].type: unknown value \"socket\", expected one of file|directory|symlink"
        );
        assert!(
            Value::text("x")
                .as_table()
                .unwrap_err()
                .to_string()
                .contains("not table")
        );
    }
}
