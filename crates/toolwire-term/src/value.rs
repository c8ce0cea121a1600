//! One value: audience and `hidden`, the header line, `collapsed`, the height limit, and
//! the dispatch kind → `display.preferredView` → `mimeType` → JSON.

use serde_json::Value as Json;
use toolwire_core::view::{KnownView, SourceView};
use toolwire_core::{Audience, Value, View};

use crate::fmt;
use crate::highlight::{find_syntax, syntax_name};
use crate::kinds::diff::{Diff, DiffInput};
use crate::kinds::image::ImageInput;
use crate::kinds::table::ColSpec;
use crate::kinds::text::{EXPAND_HINT, TextStyle, count_lines};
use crate::kinds::{card, diff, file_list, image, markdown, records, table, text, tree};
use crate::options::TermOptions;
use crate::out::{Out, fit, str_width, truncate};
use crate::sanitize;
use crate::style::{CYAN, Line, Span, Style};

/// Whether the person should see `v` at all.
pub(crate) fn is_shown(v: &Value) -> bool {
    let for_assistant_only = v
        .annotations
        .as_ref()
        .is_some_and(|a| a.excludes(Audience::User));
    let hidden = v.display.as_ref().and_then(|d| d.preferred_view) == Some(View::Hidden);
    !for_assistant_only && !hidden
}

/// Appends the lines of `v` to `lines`.
pub(crate) fn render_value(v: &Value, opts: &TermOptions, lines: &mut Vec<String>) {
    if !is_shown(v) {
        return;
    }
    let f = Frame { v, opts };
    match v.known() {
        Some(Ok(known)) => f.known(known, lines),
        Some(Err(violations)) => {
            let first = violations
                .0
                .first()
                .map(ToString::to_string)
                .unwrap_or_default();
            let extra = violations.0.len().saturating_sub(1);
            let more = if extra > 0 {
                format!(" and {extra} more")
            } else {
                String::new()
            };
            let view = match v.inferred_view() {
                View::Raw => View::Tree,
                other => other,
            };
            let note = format!(
                "⚠ data does not match kind `{}` ({first}{more}); shown as {}",
                v.kind,
                view_name(view)
            );
            f.generic(view, Some(note), lines);
        }
        None => f.generic(v.inferred_view(), None, lines),
    }
}

fn view_name(view: View) -> &'static str {
    match view {
        View::Text => "text",
        View::Markdown => "markdown",
        View::Code => "code",
        View::Diff => "a diff",
        View::Table => "a table",
        View::Tree => "a tree",
        View::Image => "an image",
        View::Raw => "JSON",
        View::Hidden => "nothing",
    }
}

struct Frame<'a> {
    v: &'a Value,
    opts: &'a TermOptions,
}

impl Frame<'_> {
    fn width(&self) -> usize {
        self.opts.layout_width()
    }

    fn hint_view(&self) -> Option<View> {
        self.v.display.as_ref().and_then(|d| d.preferred_view)
    }

    fn language(&self) -> Option<&str> {
        self.v.display.as_ref().and_then(|d| d.language.as_deref())
    }

    fn limit(&self) -> Option<usize> {
        if self.opts.expand_all {
            return None;
        }
        let own = self
            .v
            .display
            .as_ref()
            .and_then(|d| d.max_height)
            .map(|h| (h as usize).max(1));
        match (own, self.opts.max_height) {
            (Some(a), Some(b)) => Some(a.min(b).max(1)),
            (a, b) => a.or(b.map(|b| b.max(1))),
        }
    }

    fn collapsed(&self) -> bool {
        !self.opts.expand_all
            && self
                .v
                .display
                .as_ref()
                .and_then(|d| d.collapsed)
                .unwrap_or(false)
    }

    /// Writes the header (when wanted), then the body unless collapsed, then the count of
    /// what the height limit left out.
    fn frame(
        &self,
        lines: &mut Vec<String>,
        detail: &str,
        always_header: bool,
        body: impl FnOnce(&mut Out),
    ) {
        let collapsed = self.collapsed();
        if collapsed || always_header || self.v.summary.is_some() {
            lines.push(self.header(detail, collapsed));
        }
        if collapsed {
            return;
        }
        let mut out = Out::new(self.opts.color, self.width(), self.limit());
        body(&mut out);
        let more = out.more();
        lines.append(&mut out.lines);
        if more > 0 {
            let text = format!("{} ({EXPAND_HINT})", fmt::more(more, "line", "lines"));
            let mut line = Line::new(self.opts.color);
            line.push(&truncate(&text, self.width()), Style::dim());
            lines.push(line.finish());
        }
    }

    fn header(&self, detail: &str, collapsed: bool) -> String {
        let width = self.width();
        let glyph = if collapsed { "▸ " } else { "▾ " };
        let mut spans = vec![
            Span::new(glyph, Style::dim()),
            Span::new(
                sanitize::inline(self.v.kind.as_str()),
                Style::fg(CYAN).with_bold(),
            ),
        ];
        if !detail.is_empty() {
            spans.push(Span::new(format!(" {detail}"), Style::PLAIN));
        }
        if let Some(s) = &self.v.summary {
            spans.push(Span::new(
                format!(" · {}", sanitize::inline(s)),
                Style::PLAIN.with_italic(),
            ));
        }
        let title_width: usize = spans.iter().map(|s| str_width(&s.text)).sum();
        // The longest way to say how to expand that still leaves the title half the line.
        let hint = if collapsed {
            let wanted = title_width.min(width / 2);
            [
                format!(" (collapsed: {EXPAND_HINT})"),
                " (--expand)".to_owned(),
            ]
            .into_iter()
            .find(|h| str_width(h) + wanted <= width)
            .unwrap_or_default()
        } else {
            String::new()
        };
        let room = width.saturating_sub(str_width(&hint));
        let mut line = Line::new(self.opts.color);
        for s in fit(spans, room) {
            line.push(&s.text, s.style);
        }
        line.push(&hint, Style::dim());
        line.finish()
    }

    fn known(&self, known: KnownView<'_>, lines: &mut Vec<String>) {
        let opts = self.opts;
        match known {
            KnownView::Text(t) => {
                let markdown = self.hint_view() == Some(View::Markdown)
                    || self
                        .v
                        .mime_type
                        .as_deref()
                        .is_some_and(|m| toolwire_core::mime_essence(m) == "text/markdown");
                let code = self.hint_view() == Some(View::Code);
                let detail = if markdown { "markdown" } else { "" };
                self.frame(lines, detail, false, |out| {
                    if markdown {
                        markdown::render(out, t.content, opts.expand_all);
                    } else if code {
                        let first = t.content.lines().next().unwrap_or("");
                        let syntax =
                            find_syntax(self.language(), self.v.mime_type.as_deref(), None, first);
                        text::render(
                            out,
                            t.content,
                            TextStyle {
                                syntax,
                                ..TextStyle::PLAIN
                            },
                        );
                    } else {
                        text::render(out, t.content, TextStyle::PLAIN);
                    }
                });
            }
            KnownView::Diff(d) => {
                let input = DiffInput {
                    original: d.original,
                    modified: d.modified,
                    hunks: d.hunks.as_deref(),
                };
                let diff = Diff::new(&input);
                let mut detail = format!("{} {}", sanitize::inline(d.path), diff.stat());
                if d.is_new {
                    detail.push_str(" (new file)");
                }
                self.frame(lines, &detail, true, |out| diff::render(out, &diff));
            }
            KnownView::FileContent(fc) => {
                let first = fc.content.lines().next().unwrap_or("");
                let syntax = find_syntax(
                    self.language(),
                    self.v.mime_type.as_deref(),
                    Some(fc.path),
                    first,
                );
                let mut detail = sanitize::inline(fc.path).into_owned();
                if let Some(name) = syntax_name(syntax) {
                    detail.push_str(&format!(" · {name}"));
                }
                detail.push_str(&format!(" · {}", fmt::size(fc.size)));
                self.frame(lines, &detail, true, |out| {
                    text::render(
                        out,
                        fc.content,
                        TextStyle {
                            syntax,
                            line_numbers: true,
                            base: Style::PLAIN,
                        },
                    );
                });
            }
            KnownView::FileList(fl) => {
                let plus = if fl.truncated { "+" } else { "" };
                let mut detail = sanitize::inline(fl.path).into_owned();
                if self.v.summary.is_none() {
                    detail.push_str(&format!(
                        " · {}{plus}",
                        fmt::plural(fl.entries.len() as u64, "entry", "entries")
                    ));
                }
                self.frame(lines, &detail, true, |out| file_list::render(out, &fl));
            }
            KnownView::Table(t) => {
                let cols: Vec<ColSpec<'_>> = t.columns.iter().map(ColSpec::declared).collect();
                let detail = format!(
                    "{} × {}",
                    fmt::plural(cols.len() as u64, "column", "columns"),
                    fmt::plural(t.rows.len() as u64, "row", "rows")
                );
                self.frame(lines, &detail, true, |out| {
                    table::render(out, &cols, t.rows, opts.expand_all)
                });
            }
            KnownView::Image(img) => {
                let input = ImageInput {
                    source: img.source,
                    alt: img.alt,
                    mime: img.mime_type,
                };
                self.frame(lines, "", false, |out| {
                    image::render(out, &input, opts.images)
                });
            }
            KnownView::File(f) => self.frame(lines, "", false, |out| card::file(out, &f)),
            KnownView::ResourceLink(r) => {
                self.frame(lines, "", false, |out| card::resource_link(out, &r))
            }
            KnownView::Structured(data) => {
                let hint = self.hint_view();
                self.frame(lines, "", true, |out| match hint {
                    Some(View::Raw) => raw_json(out, data),
                    // Asked for a tree: a tree, even of records.
                    Some(View::Tree) => tree::render(out, data),
                    _ => records::render_or_tree(out, data, opts.expand_all),
                });
            }
        }
    }

    /// Views for kinds this renderer does not know, and for data that does not match
    /// its kind.
    fn generic(&self, view: View, note: Option<String>, lines: &mut Vec<String>) {
        let v = self.v;
        let data = &v.data;
        let opts = self.opts;
        self.frame(lines, "", true, |out| {
            if let Some(note) = &note {
                out.note(note);
            }
            match view {
                View::Hidden => {}
                View::Text => match text_of(data) {
                    Some(t) => text::render(out, t, TextStyle::PLAIN),
                    None => raw_json(out, data),
                },
                View::Markdown => match text_of(data) {
                    Some(t) => markdown::render(out, t, opts.expand_all),
                    None => fallback(out, data, "markdown text"),
                },
                View::Code => match text_of(data) {
                    Some(t) => {
                        let first = t.lines().next().unwrap_or("");
                        let syntax =
                            find_syntax(self.language(), v.mime_type.as_deref(), None, first);
                        text::render(
                            out,
                            t,
                            TextStyle {
                                syntax,
                                ..TextStyle::PLAIN
                            },
                        );
                    }
                    None => raw_json(out, data),
                },
                View::Diff => generic_diff(out, data),
                View::Table => generic_table(out, data, opts.expand_all),
                View::Tree if self.hint_view() == Some(View::Tree) => tree::render(out, data),
                View::Tree => records::render_or_tree(out, data, opts.expand_all),
                View::Image => generic_image(out, v, opts),
                View::Raw => raw_json(out, data),
            }
        });
    }
}

/// The text of generic data: a string, or an object's `content` or `text` string.
fn text_of(data: &Json) -> Option<&str> {
    match data {
        Json::String(s) => Some(s),
        Json::Object(map) => ["content", "text"]
            .iter()
            .find_map(|k| map.get(*k).and_then(Json::as_str)),
        _ => None,
    }
}

fn fallback(out: &mut Out, data: &Json, what: &str) {
    out.note(&format!("(data is not {what}; shown as a tree)"));
    tree::render(out, data);
}

/// Pretty JSON, highlighted, cut like any text.
fn raw_json(out: &mut Out, data: &Json) {
    let pretty = serde_json::to_string_pretty(data).unwrap_or_default();
    let syntax = find_syntax(Some("json"), None, None, "");
    text::render(
        out,
        &pretty,
        TextStyle {
            syntax,
            ..TextStyle::PLAIN
        },
    );
}

fn generic_diff(out: &mut Out, data: &Json) {
    if let Some(modified) = data.get("modified").and_then(Json::as_str) {
        // The well-known shape, perhaps with extra or missing fields: use what is there.
        let as_known = Value::new("diff", data.clone());
        if let Ok(d) = as_known.as_diff() {
            let diff = Diff::new(&DiffInput {
                original: d.original,
                modified: d.modified,
                hunks: d.hunks.as_deref(),
            });
            diff::render(out, &diff);
            return;
        }
        let original = data.get("original").and_then(Json::as_str);
        let diff = Diff::new(&DiffInput {
            original,
            modified,
            hunks: None,
        });
        diff::render(out, &diff);
        return;
    }
    match text_of(data) {
        Some(patch) => patch_text(out, patch),
        None => fallback(out, data, "a diff"),
    }
}

/// A unified diff given as text, coloured by line prefix.
fn patch_text(out: &mut Out, patch: &str) {
    use crate::style::{GREEN, RED};
    let mut rest = patch;
    while !rest.is_empty() {
        if !out.room() {
            out.add_more(count_lines(rest));
            return;
        }
        let (line, next) = rest.split_once('\n').unwrap_or((rest, ""));
        let style = if line.starts_with("+++") || line.starts_with("---") {
            Style::bold()
        } else if line.starts_with('+') {
            Style::fg(GREEN)
        } else if line.starts_with('-') {
            Style::fg(RED)
        } else if line.starts_with("@@") {
            Style::fg(CYAN)
        } else {
            Style::PLAIN
        };
        let spans = [Span::new(sanitize::line(line, 0), style)];
        if !out.wrapped(&[], &[], &spans, crate::out::Wrap::Chars) {
            out.add_more(1 + count_lines(next));
            return;
        }
        rest = next;
    }
}

/// Rows scanned to find an array's columns; keys first seen later are left out.
const COLUMN_SCAN_ROWS: usize = 1000;

fn generic_table(out: &mut Out, data: &Json, expand: bool) {
    if data.get("columns").is_some() && data.get("rows").is_some() {
        let as_known = Value::new("table", data.clone());
        if let Ok(t) = as_known.as_table() {
            let cols: Vec<ColSpec<'_>> = t.columns.iter().map(ColSpec::declared).collect();
            table::render(out, &cols, t.rows, expand);
            return;
        }
    }
    let rows = match data {
        Json::Array(items) if toolwire_core::is_tabular(items) => items.as_slice(),
        _ => return fallback(out, data, "an array of objects"),
    };
    let mut keys: Vec<&str> = Vec::new();
    for row in rows.iter().take(COLUMN_SCAN_ROWS) {
        if let Some(map) = row.as_object() {
            for k in map.keys() {
                if !keys.contains(&k.as_str()) {
                    keys.push(k);
                }
            }
        }
    }
    let cols: Vec<ColSpec<'_>> = keys.iter().map(|k| ColSpec::plain(k)).collect();
    table::render(out, &cols, rows, expand);
}

fn generic_image(out: &mut Out, v: &Value, opts: &TermOptions) {
    let as_known = Value {
        kind: "image".into(),
        ..v.clone()
    };
    if let Ok(img) = as_known.as_image() {
        let input = ImageInput {
            source: img.source,
            alt: img.alt,
            mime: img.mime_type,
        };
        image::render(out, &input, opts.images);
        return;
    }
    let url = v
        .data
        .as_str()
        .or_else(|| v.data.get("url").and_then(Json::as_str));
    if let Some(url) = url {
        // `data:image/png;base64,....` carries the bytes; anything else is a link.
        if let Some((meta, b64)) = url.strip_prefix("data:").and_then(|r| r.split_once(',')) {
            let mime = meta.split(';').next().filter(|m| !m.is_empty());
            let input = ImageInput {
                source: SourceView::Base64(b64),
                alt: None,
                mime: mime.or(v.mime_type.as_deref()),
            };
            image::render(out, &input, opts.images);
        } else {
            let input = ImageInput {
                source: SourceView::Url(url),
                alt: v.data.get("alt").and_then(Json::as_str),
                mime: v.mime_type.as_deref(),
            };
            image::render(out, &input, opts.images);
        }
        return;
    }
    fallback(out, &v.data, "an image");
}
