//! `Value`: one semantic piece of a tool's output, and the builders tool authors use
//! (docs/contracts.md, "Result kinds and display hints").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use crate::data::{Column, DiffData, FileEntry, FileListData, ResourceLinkData};
use crate::display::{Annotations, Audience, DisplayHints, View};
use crate::kind::{Kind, WellKnown};
use crate::source::{MediaKind, Source};

/// A semantic value: a `kind`, its `data`, and optional hints. `data` is kept as JSON so
/// that custom kinds and extra fields of well-known kinds survive untouched; typed,
/// borrowing access is in [`crate::view`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Value {
    /// What the value is (`table`, `diff`, `acme.report`, ...); it fixes the shape of `data`.
    pub kind: Kind,
    /// The payload, in the shape the kind defines; kept as JSON so nothing is lost.
    pub data: Json,
    /// One line for compact display; always shown in a renderer's header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The MIME type of the content, e.g. `text/markdown` or `image/png`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// How the value asks to be shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<DisplayHints>,
    /// MCP annotations: who the value is for, and its importance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// MCP `_meta` of the block this value came from, kept verbatim.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Json>>,
}

/// The `_meta` key of a medium that normalizing moved out of a structured value (a data
/// URI, or bare base64 of a known format, left as `"[image/png → output[N]]"`): the
/// value's index in `output` (`in`), a JSON pointer to the string in it (`at`), and what
/// came before the base64 in the string (`before`, a data URI's `data:…;base64,`), so
/// that the value can be given back as it was sent (the gateway's `structuredContent`).
pub const INLINE_META: &str = "toolwire/inline";

/// Serializes one of our own data structs. They hold only strings, integers, bools and
/// string-keyed maps, which cannot fail to serialize; `Null` is unreachable.
fn to_json<T: Serialize>(data: &T) -> Json {
    serde_json::to_value(data).unwrap_or(Json::Null)
}

/// Inserts one by one: for a few fields this beats `collect`, which sorts via a buffer.
fn object<const N: usize>(fields: [(&str, Json); N]) -> Json {
    let mut map = Map::new();
    for (k, v) in fields {
        map.insert(k.to_owned(), v);
    }
    Json::Object(map)
}

impl Value {
    /// A value of any kind. The kind is checked by `validate()`, not here.
    pub fn new(kind: impl Into<Kind>, data: Json) -> Self {
        Value {
            kind: kind.into(),
            data,
            summary: None,
            mime_type: None,
            display: None,
            annotations: None,
            meta: None,
        }
    }

    /// Plain text; whitespace is significant. No `mimeType` means `text/plain`.
    pub fn text(content: impl Into<String>) -> Self {
        Value::new(
            WellKnown::Text,
            object([("content", Json::String(content.into()))]),
        )
    }

    /// Markdown text.
    pub fn markdown(content: impl Into<String>) -> Self {
        Value::new(
            WellKnown::Text,
            object([("content", Json::String(content.into()))]),
        )
        .mime("text/markdown")
    }

    /// A change to `path`; `original` is `None` for a new file.
    pub fn diff(
        path: impl Into<String>,
        original: Option<String>,
        modified: impl Into<String>,
    ) -> Self {
        let is_new = original.is_none();
        Value::new(
            WellKnown::Diff,
            to_json(&DiffData {
                path: path.into(),
                original,
                modified: modified.into(),
                is_new,
                hunks: None,
            }),
        )
    }

    /// The text of a file; `size` is taken from the content's UTF-8 length.
    pub fn file_content(path: impl Into<String>, content: impl Into<String>) -> Self {
        let content = content.into();
        let size = content.len() as u64;
        Value::new(
            WellKnown::FileContent,
            object([
                ("path", Json::String(path.into())),
                ("content", Json::String(content)),
                ("size", Json::from(size)),
            ]),
        )
    }

    /// A directory listing of `path`; `truncated` says the listing stopped early.
    pub fn file_list(path: impl Into<String>, entries: Vec<FileEntry>, truncated: bool) -> Self {
        let summary = format!("{} entries", entries.len());
        Value::new(
            WellKnown::FileList,
            to_json(&FileListData {
                path: path.into(),
                entries,
                truncated: truncated.then_some(true),
            }),
        )
        .summary(summary)
    }

    /// A table. Rows are JSON objects keyed by column key; anything else is kept as given
    /// and reported by `validate()`.
    pub fn table<C: Into<Column>>(
        columns: impl IntoIterator<Item = C>,
        rows: impl IntoIterator<Item = Json>,
    ) -> Self {
        let columns: Vec<Column> = columns.into_iter().map(Into::into).collect();
        let rows: Vec<Json> = rows.into_iter().collect();
        Value::new(
            WellKnown::Table,
            object([("columns", to_json(&columns)), ("rows", Json::Array(rows))]),
        )
    }

    /// An image from its bytes' source; `mime` must be `image/*`.
    pub fn image(source: Source, mime: impl Into<String>) -> Self {
        Value::new(WellKnown::Image, object([("source", source.into_json())])).mime(mime)
    }

    /// Audio, video, a document or other binary content.
    pub fn file(source: Source, mime: impl Into<String>, filename: Option<String>) -> Self {
        let mime = mime.into();
        let media_kind = MediaKind::from_mime(&mime).unwrap_or(MediaKind::Binary);
        let mut data = Map::new();
        data.insert("source".into(), source.into_json());
        data.insert("mediaKind".into(), to_json(&media_kind));
        if let Some(name) = filename {
            data.insert("filename".into(), Json::String(name));
        }
        Value::new(WellKnown::File, Json::Object(data)).mime(mime)
    }

    /// A link to a resource that was not inlined.
    pub fn resource_link(link: ResourceLinkData) -> Self {
        Value::new(WellKnown::ResourceLink, to_json(&link))
    }

    /// Any JSON, shown as a tree.
    pub fn structured(data: Json) -> Self {
        Value::new(WellKnown::Structured, data)
    }

    /// The same value with a one-line summary.
    pub fn summary(mut self, summary: impl Into<String>) -> Self {
        self.summary = Some(summary.into());
        self
    }

    /// The same value with its MIME type set.
    pub fn mime(mut self, mime: impl Into<String>) -> Self {
        self.mime_type = Some(mime.into());
        self
    }

    fn hints(&mut self) -> &mut DisplayHints {
        self.display.get_or_insert_with(DisplayHints::default)
    }

    /// The same value asking for the generic `view`.
    pub fn view(mut self, view: View) -> Self {
        self.hints().preferred_view = Some(view);
        self
    }

    /// The same value asking for code highlighting in `language`.
    pub fn language(mut self, language: impl Into<String>) -> Self {
        self.hints().language = Some(language.into());
        self
    }

    /// The same value asking to start folded, or not.
    pub fn collapsed(mut self, collapsed: bool) -> Self {
        self.hints().collapsed = Some(collapsed);
        self
    }

    /// The same value asking to be cut or scrolled after `lines`.
    pub fn max_height(mut self, lines: u32) -> Self {
        self.hints().max_height = Some(lines);
        self
    }

    /// The same value with a display priority (higher first).
    pub fn priority(mut self, priority: i64) -> Self {
        self.hints().priority = Some(priority);
        self
    }

    /// Restricts who sees the value: `[User]` keeps it from the model.
    pub fn audience(mut self, audience: impl IntoIterator<Item = Audience>) -> Self {
        self.annotations
            .get_or_insert_with(Annotations::default)
            .audience = Some(audience.into_iter().collect());
        self
    }

    /// Whether the value is of the well-known `kind`.
    pub fn is_kind(&self, kind: WellKnown) -> bool {
        self.kind == kind.name()
    }

    /// The view a renderer should use when it does not know the kind: the hint, else
    /// inferred from `mimeType`, else from the data's shape (docs/contracts.md, "Result
    /// kinds and display hints").
    pub fn inferred_view(&self) -> View {
        if let Some(view) = self.display.as_ref().and_then(|d| d.preferred_view) {
            return view;
        }
        if let Some(mime) = &self.mime_type {
            let mime = crate::source::mime_essence(mime);
            if mime == "text/markdown" {
                return View::Markdown;
            }
            if mime.starts_with("text/") {
                return View::Text;
            }
            if mime.starts_with("image/") {
                return View::Image;
            }
            if mime == "application/json" || mime.ends_with("+json") {
                return View::Tree;
            }
        }
        match &self.data {
            Json::Array(items) if is_tabular(items) => View::Table,
            Json::String(_) => View::Text,
            _ => View::Raw,
        }
    }
}

/// An array is tabular when it is non-empty and every item is an object.
pub fn is_tabular(items: &[Json]) -> bool {
    !items.is_empty() && items.iter().all(Json::is_object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builders_write_the_wire_shape() {
        let v = Value::table(["name", "size"], [json!({"name": "a", "size": 1})]).summary("1 row");
        assert_eq!(
            serde_json::to_value(&v).unwrap(),
            json!({"kind": "table", "summary": "1 row",
                   "data": {"columns": [{"key": "name"}, {"key": "size"}], "rows": [{"name": "a", "size": 1}]}})
        );
        let v = Value::diff("a.rs", None, "fn main() {}");
        assert_eq!(v.data["isNew"], json!(true));
        let v = Value::file(Source::base64("AAAA"), "audio/wav", Some("a.wav".into()));
        assert_eq!(v.data["mediaKind"], json!("audio"));
    }

    #[test]
    fn inferred_view_follows_hint_then_mime_then_shape() {
        let custom = |data| Value::new("acme.thing", data);
        assert_eq!(
            custom(json!({})).view(View::Tree).inferred_view(),
            View::Tree
        );
        assert_eq!(
            custom(json!({})).mime("text/markdown").inferred_view(),
            View::Markdown
        );
        assert_eq!(
            custom(json!({})).mime("image/png").inferred_view(),
            View::Image
        );
        assert_eq!(
            custom(json!({})).mime("application/json").inferred_view(),
            View::Tree
        );
        assert_eq!(custom(json!([{"a": 1}])).inferred_view(), View::Table);
        assert_eq!(custom(json!("hi")).inferred_view(), View::Text);
        assert_eq!(custom(json!(3)).inferred_view(), View::Raw);
    }
}
