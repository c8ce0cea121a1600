//! Markdown with pulldown-cmark and a styled-line writer: wrapped prose, highlighted code
//! blocks, lists, quotes and tables. Markup that carries meaning (`#`, backticks, list
//! markers, fences) stays visible, so the text reads the same without colour.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde_json::{Map, Value as Json};
use toolwire_core::Align;

use crate::highlight::{Highlighter, find_syntax};
use crate::kinds::table::{self, ColSpec};
use crate::kinds::text::count_lines;
use crate::out::{Out, Wrap, str_width};
use crate::sanitize;
use crate::style::{BLUE, CYAN, MAGENTA, Span, Style};

/// The most of a code fence's language tag that is shown.
const MAX_LANG_CHARS: usize = 32;

pub(crate) fn render(out: &mut Out, source: &str, expand: bool) {
    if source.trim().is_empty() {
        out.note("(empty)");
        return;
    }
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut w = Writer::new(out, expand);
    for (event, range) in Parser::new_ext(source, options).into_offset_iter() {
        w.event(event);
        if w.full {
            // What is left of the source, in its own lines: the honest count we have
            // without rendering it.
            w.out.add_more(count_lines(&source[range.start..]));
            return;
        }
    }
    w.flush();
}

#[derive(Debug)]
struct CodeBlock {
    lang: String,
    text: String,
}

#[derive(Debug, Default)]
struct TableState {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<String>>,
    cell: String,
    in_head: bool,
    head: Vec<String>,
}

struct Writer<'o> {
    out: &'o mut Out,
    expand: bool,
    inline: Vec<Span>,
    styles: Vec<Style>,
    quote_depth: usize,
    /// Enclosing lists: the next number, or `None` for bullets.
    lists: Vec<Option<u64>>,
    /// Widths of enclosing list items' markers; nested content is indented by their sum.
    indents: Vec<usize>,
    /// The marker of an item whose first line is not written yet.
    marker: Option<String>,
    links: Vec<(String, usize)>,
    code: Option<CodeBlock>,
    table: Option<TableState>,
    blank_before_next: bool,
    full: bool,
}

impl<'o> Writer<'o> {
    fn new(out: &'o mut Out, expand: bool) -> Self {
        Writer {
            out,
            expand,
            inline: Vec::new(),
            styles: vec![Style::PLAIN],
            quote_depth: 0,
            lists: Vec::new(),
            indents: Vec::new(),
            marker: None,
            links: Vec::new(),
            code: None,
            table: None,
            blank_before_next: false,
            full: false,
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, s: Style) {
        let top = self.style().merge(s);
        self.styles.push(top);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    fn text(&mut self, text: &str, style: Style) {
        if let Some(t) = self.table.as_mut() {
            t.cell.push_str(text);
            return;
        }
        self.inline.push(Span::new(sanitize::inline(text), style));
    }

    /// Prefixes for the next block's first and following lines.
    fn prefixes(&mut self) -> (Vec<Span>, Vec<Span>) {
        let quote = Span::new("│ ".repeat(self.quote_depth), Style::dim());
        let indent: usize = self.indents.iter().sum();
        let cont = vec![quote.clone(), Span::new(" ".repeat(indent), Style::PLAIN)];
        let first = match self.marker.take() {
            Some(m) => {
                let before = indent.saturating_sub(str_width(&m));
                vec![
                    quote,
                    Span::new(" ".repeat(before), Style::PLAIN),
                    Span::new(m, Style::fg(BLUE)),
                ]
            }
            None => cont.clone(),
        };
        (first, cont)
    }

    fn push_line(&mut self, spans: &[Span]) {
        if !self.full && !self.out.push_spans(spans) {
            self.full = true;
        }
    }

    fn blank(&mut self) {
        if self.blank_before_next && !self.out.lines.is_empty() {
            // Inside a quote the blank line keeps its bar, so the quote reads as one.
            let bar = "│ ".repeat(self.quote_depth);
            let spans = [Span::new(bar.trim_end(), Style::dim())];
            self.push_line(&spans);
        }
        self.blank_before_next = false;
    }

    /// Writes the pending inline text as a wrapped block.
    fn flush(&mut self) {
        if self.inline.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.inline);
        let (first, cont) = self.prefixes();
        if !self.full && !self.out.wrapped(&first, &cont, &spans, Wrap::Words) {
            self.full = true;
        }
    }

    fn start_block(&mut self) {
        self.flush();
        self.blank();
    }

    fn end_block(&mut self) {
        self.flush();
        self.blank_before_next = true;
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => {
                if let Some(code) = self.code.as_mut() {
                    code.text.push_str(&t);
                } else {
                    self.text(&t, self.style());
                }
            }
            Event::Code(t) => {
                let s = self.style().merge(Style::fg(CYAN));
                self.text(&format!("`{t}`"), s);
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => {
                let s = self.style().merge(Style::fg(CYAN));
                self.text(&format!("${t}$"), s);
            }
            Event::Html(t) | Event::InlineHtml(t) => {
                let s = self.style().merge(Style::dim());
                for (i, part) in t.split('\n').enumerate() {
                    if i > 0 && self.table.is_none() {
                        self.flush();
                    }
                    if !part.is_empty() {
                        self.text(part, s);
                    }
                }
            }
            Event::SoftBreak => self.text(" ", self.style()),
            Event::HardBreak => {
                if self.table.is_none() {
                    self.flush();
                }
            }
            Event::Rule => {
                self.start_block();
                let (first, _) = self.prefixes();
                let used: usize = first.iter().map(|s| str_width(&s.text)).sum();
                let mut spans = first;
                spans.push(Span::new(
                    "─".repeat(self.out.width.saturating_sub(used)),
                    Style::dim(),
                ));
                self.push_line(&spans);
                self.blank_before_next = true;
            }
            Event::TaskListMarker(done) => {
                self.text(if done { "[x] " } else { "[ ] " }, Style::fg(BLUE))
            }
            Event::FootnoteReference(name) => self.text(&format!("[^{name}]"), Style::dim()),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.start_block(),
            Tag::Heading { level, .. } => {
                self.start_block();
                let n = heading_level(level);
                let mut s = Style::fg(MAGENTA).with_bold();
                if n == 1 {
                    s = s.with_underline();
                }
                self.push_style(s);
                self.text(&format!("{} ", "#".repeat(n)), s);
            }
            Tag::BlockQuote(_) => {
                self.start_block();
                self.quote_depth += 1;
                self.push_style(Style::PLAIN.with_italic());
            }
            Tag::CodeBlock(kind) => {
                self.start_block();
                let lang = match kind {
                    // The tag is shown on the fence line: untrusted text like the rest,
                    // so sanitized, and short (a megabyte "language" is not one).
                    CodeBlockKind::Fenced(info) => {
                        crate::sanitize::inline(info.split_whitespace().next().unwrap_or(""))
                            .chars()
                            .take(MAX_LANG_CHARS)
                            .collect()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some(CodeBlock {
                    lang,
                    text: String::new(),
                });
            }
            Tag::HtmlBlock | Tag::MetadataBlock(_) => self.start_block(),
            Tag::List(start) => {
                if self.lists.is_empty() {
                    self.start_block();
                } else {
                    self.flush();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_owned(),
                };
                self.indents.push(str_width(&marker));
                self.marker = Some(marker);
            }
            Tag::Table(aligns) => {
                self.start_block();
                self.table = Some(TableState {
                    aligns,
                    ..TableState::default()
                });
            }
            Tag::TableHead => {
                if let Some(t) = self.table.as_mut() {
                    t.in_head = true;
                }
            }
            Tag::TableRow => {
                if let Some(t) = self.table.as_mut() {
                    t.rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                if let Some(t) = self.table.as_mut() {
                    t.cell.clear();
                }
            }
            Tag::Emphasis => self.push_style(Style::PLAIN.with_italic()),
            Tag::Strong => self.push_style(Style::bold()),
            Tag::Strikethrough => self.push_style(Style {
                strike: true,
                ..Style::PLAIN
            }),
            Tag::Link { dest_url, .. } => {
                let at = self.inline.len();
                self.links.push((dest_url.into_string(), at));
                self.push_style(Style::fg(BLUE).with_underline());
            }
            Tag::Image { dest_url, .. } => {
                self.links.push((dest_url.into_string(), self.inline.len()));
                self.text("[image: ", Style::dim());
                self.push_style(Style::PLAIN);
            }
            Tag::FootnoteDefinition(name) => {
                self.start_block();
                self.text(&format!("[^{name}]: "), Style::dim());
            }
            Tag::DefinitionList | Tag::DefinitionListTitle | Tag::DefinitionListDefinition => {
                self.start_block()
            }
            Tag::Superscript | Tag::Subscript => self.push_style(Style::PLAIN),
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph
            | TagEnd::HtmlBlock
            | TagEnd::MetadataBlock(_)
            | TagEnd::FootnoteDefinition => self.end_block(),
            TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition => self.end_block(),
            TagEnd::Heading(_) => {
                self.pop_style();
                self.end_block();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.pop_style();
                self.quote_depth = self.quote_depth.saturating_sub(1);
                self.blank_before_next = true;
            }
            TagEnd::CodeBlock => {
                if let Some(code) = self.code.take() {
                    self.code_block(&code);
                }
                self.blank_before_next = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                if self.lists.is_empty() {
                    self.blank_before_next = true;
                }
            }
            TagEnd::Item => {
                self.flush();
                self.indents.pop();
                self.marker = None;
                // Items of a tight list follow each other without blank lines.
                self.blank_before_next = false;
            }
            TagEnd::Table => {
                if let Some(t) = self.table.take() {
                    self.table_block(t);
                }
                self.blank_before_next = true;
            }
            TagEnd::TableHead => {
                if let Some(t) = self.table.as_mut() {
                    t.in_head = false;
                }
            }
            TagEnd::TableRow => {}
            TagEnd::TableCell => {
                if let Some(t) = self.table.as_mut() {
                    let cell = std::mem::take(&mut t.cell);
                    if t.in_head {
                        t.head.push(cell);
                    } else if let Some(row) = t.rows.last_mut() {
                        row.push(cell);
                    }
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Superscript | TagEnd::Subscript => self.pop_style(),
            TagEnd::Link => {
                self.pop_style();
                if let Some((url, at)) = self.links.pop() {
                    let shown: String = self.inline[at.min(self.inline.len())..]
                        .iter()
                        .map(|s| s.text.as_str())
                        .collect();
                    if !url.is_empty() && shown != url && !url.starts_with('#') {
                        self.text(&format!(" ({url})"), Style::dim());
                    }
                }
            }
            TagEnd::Image => {
                self.pop_style();
                if let Some((url, _)) = self.links.pop() {
                    self.text(&format!("] ({url})"), Style::dim());
                }
            }
        }
    }

    fn code_block(&mut self, code: &CodeBlock) {
        let (first, cont) = self.prefixes();
        let mut fence = first.clone();
        fence.push(Span::new(format!("```{}", code.lang), Style::dim()));
        self.push_line(&fence);
        let first_line = code.text.lines().next().unwrap_or("");
        let syntax = find_syntax(
            (!code.lang.is_empty()).then_some(code.lang.as_str()),
            None,
            None,
            first_line,
        );
        let mut hl = Highlighter::new(syntax, self.out.mode, Style::PLAIN);
        let body = code.text.strip_suffix('\n').unwrap_or(&code.text);
        for line in body.split('\n') {
            if self.full {
                return;
            }
            let spans = hl.line(line);
            if !self.out.wrapped(&cont, &cont, &spans, Wrap::Chars) {
                self.full = true;
                return;
            }
        }
        let mut fence = cont;
        fence.push(Span::new("```", Style::dim()));
        self.push_line(&fence);
    }

    fn table_block(&mut self, t: TableState) {
        let keys: Vec<String> = (0..t.head.len()).map(|i| i.to_string()).collect();
        let cols: Vec<ColSpec<'_>> = t
            .head
            .iter()
            .zip(&keys)
            .enumerate()
            .map(|(i, (title, key))| ColSpec {
                key,
                title,
                align: match t.aligns.get(i) {
                    Some(Alignment::Left) => Some(Align::Left),
                    Some(Alignment::Right) => Some(Align::Right),
                    Some(Alignment::Center) => Some(Align::Center),
                    _ => None,
                },
                column_type: None,
            })
            .collect();
        let rows: Vec<Json> = t
            .rows
            .iter()
            .map(|r| {
                let map: Map<String, Json> = r
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (i.to_string(), Json::String(c.clone())))
                    .collect();
                Json::Object(map)
            })
            .collect();
        table::render(self.out, &cols, &rows, self.expand);
        if !self.out.room() {
            self.full = true;
        }
    }
}

fn heading_level(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::ColorMode;

    fn md(src: &str, width: usize) -> Vec<String> {
        let mut out = Out::new(ColorMode::Off, width, None);
        render(&mut out, src, false);
        out.lines
    }

    #[test]
    fn a_fence_tag_cannot_smuggle_escapes() {
        let src = format!(
            "```rust\u{1b}]52;c;ZXZpbA==\u{7}{}\nfn x() {{}}\n```\n",
            "x".repeat(500)
        );
        let lines = md(&src, 80);
        let all = lines.concat();
        assert!(!all.contains('\u{1b}') && !all.contains('\u{7}'), "{all:?}");
        assert!(
            lines[0].starts_with("```rust␛]52;c;ZXZpbA==␇"),
            "{:?}",
            lines[0]
        );
        assert!(
            lines[0].chars().count() <= 3 + MAX_LANG_CHARS,
            "{:?}",
            lines[0]
        );
    }

    #[test]
    fn prose_lists_and_code() {
        let lines = md(
            "# Title\n\nSome *words* that wrap here.\n\n- one\n- two\n  1. nested\n\n```rust\nfn x() {}\n```\n",
            16,
        );
        assert_eq!(
            lines,
            [
                "# Title",
                "",
                "Some words that",
                "wrap here.",
                "",
                "• one",
                "• two",
                "  1. nested",
                "",
                "```rust",
                "fn x() {}",
                "```",
            ]
        );
    }

    #[test]
    fn links_show_their_target_and_quotes_their_bar() {
        let lines = md("> see [docs](https://x.y)", 40);
        assert_eq!(lines, ["│ see docs (https://x.y)"]);
    }
}
