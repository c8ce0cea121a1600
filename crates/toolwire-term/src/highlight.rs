//! Syntax highlighting with syntect and two-face's syntaxes, one line at a time so only
//! shown lines are ever highlighted.

use std::sync::OnceLock;

use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme};
use syntect::parsing::{SyntaxReference, SyntaxSet};

use crate::options::ColorMode;
use crate::sanitize;
use crate::style::{Color, Span, Style};

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(two_face::syntax::extra_newlines)
}

/// bat's `ansi` theme: its colours are palette indices, so highlighting follows the
/// person's terminal theme on dark and light backgrounds alike.
fn theme() -> &'static Theme {
    static THEME: OnceLock<Theme> = OnceLock::new();
    THEME.get_or_init(|| {
        two_face::theme::extra()
            .get(two_face::theme::EmbeddedThemeName::Ansi)
            .clone()
    })
}

/// Languages people write that syntect does not know by that name.
fn alias(token: &str) -> &str {
    match token {
        "shell" | "zsh" | "console" => "bash",
        "golang" => "go",
        "javascript" | "node" => "js",
        "typescript" => "ts",
        "python3" => "py",
        "rust" => "rs",
        "yml" => "yaml",
        "jsonc" | "json5" => "json",
        "c++" => "cpp",
        "c#" | "csharp" => "cs",
        other => other,
    }
}

fn by_token(token: &str) -> Option<&'static SyntaxReference> {
    let set = syntaxes();
    let lower = token.trim().to_ascii_lowercase();
    if lower.is_empty() {
        return None;
    }
    set.find_syntax_by_token(alias(&lower))
        .or_else(|| set.find_syntax_by_token(&lower))
}

fn by_mime(mime: &str) -> Option<&'static SyntaxReference> {
    let essence = toolwire_core::mime_essence(mime);
    let token = match essence.as_str() {
        "text/plain" | "application/octet-stream" => return None,
        "application/json" => "json",
        "application/javascript" | "text/javascript" => "js",
        "application/x-sh" | "text/x-shellscript" => "bash",
        "application/xml" | "text/xml" => "xml",
        "application/toml" => "toml",
        "application/yaml" | "text/yaml" | "application/x-yaml" => "yaml",
        "text/markdown" => "md",
        "text/x-c" => "c",
        "text/x-c++" => "cpp",
        other => {
            let sub = other.split('/').nth(1).unwrap_or("");
            let sub = sub.strip_prefix("x-").unwrap_or(sub);
            sub.rsplit('+').next().unwrap_or(sub)
        }
    };
    by_token(token)
}

fn by_path(path: &str) -> Option<&'static SyntaxReference> {
    let set = syntaxes();
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    if let Some((_, ext)) = name.rsplit_once('.') {
        if let Some(s) = set.find_syntax_by_extension(ext) {
            return Some(s);
        }
        if let Some(s) = set.find_syntax_by_extension(&ext.to_ascii_lowercase()) {
            return Some(s);
        }
    }
    // Whole names: Makefile, Dockerfile, .bashrc.
    set.find_syntax_by_extension(name)
}

/// The syntax for a language hint, else a MIME type, else a path, else the first line
/// (`#!/bin/sh`); `None` for plain text.
pub(crate) fn find_syntax(
    language: Option<&str>,
    mime: Option<&str>,
    path: Option<&str>,
    first_line: &str,
) -> Option<&'static SyntaxReference> {
    // A declared MIME type wins over a guess from the path: a `text/plain` resource
    // at `test://static/resource/1` is not troff.
    let declared_plain = mime.is_some_and(|m| toolwire_core::mime_essence(m) == "text/plain");
    if declared_plain && language.is_none() {
        return None;
    }
    let found = language
        .and_then(by_token)
        .or_else(|| mime.and_then(by_mime))
        .or_else(|| path.and_then(by_path))
        .or_else(|| syntaxes().find_syntax_by_first_line(first_line))?;
    (found.name != "Plain Text").then_some(found)
}

/// The display name of a language hint, for headers.
pub(crate) fn syntax_name(syntax: Option<&SyntaxReference>) -> Option<&str> {
    syntax.map(|s| s.name.as_str())
}

/// Lines longer than this are drawn plain. Highlighting costs some hundred regex searches
/// a token, so one minified bundle or base64 blob on a single line (a tool's output, with
/// no height to cut it when piped) would otherwise hold the terminal for seconds; no
/// person reads colour in a line of 16 KiB.
const MAX_HIGHLIGHTED_LINE: usize = 16 * 1024;

/// Highlights successive lines of one text; plain when colour is off or the language
/// is unknown, so the text is identical either way.
pub(crate) struct Highlighter {
    inner: Option<HighlightLines<'static>>,
    base: Style,
}

impl std::fmt::Debug for Highlighter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Highlighter")
            .field("active", &self.inner.is_some())
            .finish()
    }
}

impl Highlighter {
    pub(crate) fn new(
        syntax: Option<&'static SyntaxReference>,
        mode: ColorMode,
        base: Style,
    ) -> Self {
        let inner = match (mode, syntax) {
            (ColorMode::Off, _) | (_, None) => None,
            (_, Some(s)) => Some(HighlightLines::new(s, theme())),
        };
        Highlighter { inner, base }
    }

    /// Spans of one line (given without its `\n`), sanitized, tabs expanded. A line over
    /// [`MAX_HIGHLIGHTED_LINE`] is plain and leaves the highlighter's state where it was,
    /// so the lines after it are coloured as if it were not there.
    pub(crate) fn line(&mut self, line: &str) -> Vec<Span> {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let hl = match self.inner.as_mut() {
            Some(hl) if line.len() <= MAX_HIGHLIGHTED_LINE => hl,
            _ => return vec![Span::new(sanitize::line(line, 0), self.base)],
        };
        let with_newline = format!("{line}\n");
        let pieces = match hl.highlight_line(&with_newline, syntaxes()) {
            Ok(p) => p,
            Err(_) => return vec![Span::new(sanitize::line(line, 0), self.base)],
        };
        let mut col = 0;
        let mut spans = Vec::with_capacity(pieces.len());
        for (style, text) in pieces {
            let text = text.strip_suffix('\n').unwrap_or(text);
            if text.is_empty() {
                continue;
            }
            let clean = sanitize::line(text, col);
            col += crate::out::str_width(&clean);
            spans.push(Span::new(clean, self.base.merge(convert(style))));
        }
        spans
    }
}

fn convert(s: syntect::highlighting::Style) -> Style {
    let c = s.foreground;
    // bat's encoding: alpha 0 = palette index in `r`, alpha 1 = the default colour.
    let fg = match c.a {
        0 => Some(if c.r < 16 {
            Color::Ansi(c.r)
        } else {
            Color::Fixed(c.r)
        }),
        1 => None,
        _ => Some(Color::Rgb(c.r, c.g, c.b)),
    };
    Style {
        fg,
        bold: s.font_style.contains(FontStyle::BOLD),
        italic: s.font_style.contains(FontStyle::ITALIC),
        underline: s.font_style.contains(FontStyle::UNDERLINE),
        ..Style::PLAIN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declared_plain_text_is_not_guessed_from_its_path() {
        assert!(
            find_syntax(
                None,
                Some("text/plain"),
                Some("test://static/resource/1"),
                ""
            )
            .is_none()
        );
        assert!(find_syntax(None, None, Some("test://static/resource/1"), "").is_some());
        assert!(find_syntax(Some("rust"), Some("text/plain"), None, "").is_some());
    }

    #[test]
    fn syntax_from_hint_mime_path_or_first_line() {
        let name = |s: Option<&SyntaxReference>| s.map(|s| s.name.clone());
        assert_eq!(
            name(find_syntax(Some("rust"), None, None, "")).as_deref(),
            Some("Rust")
        );
        assert_eq!(
            name(find_syntax(None, Some("application/json"), None, "")).as_deref(),
            Some("JSON")
        );
        assert_eq!(
            name(find_syntax(None, None, Some("a/b/Cargo.toml"), "")).as_deref(),
            Some("TOML")
        );
        assert_eq!(
            name(find_syntax(None, None, Some("x.unknownext"), "#!/bin/bash")).as_deref(),
            Some("Bourne Again Shell (bash)")
        );
        assert!(find_syntax(None, Some("text/plain"), Some("notes.txt"), "hello").is_none());
    }

    #[test]
    fn highlighted_text_is_the_same_text() {
        let syntax = find_syntax(Some("rust"), None, None, "");
        let mut on = Highlighter::new(syntax, ColorMode::Ansi256, Style::PLAIN);
        let spans = on.line("fn main() {\t// hi");
        let text: String = spans.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(text, "fn main() { // hi");
        assert!(spans.iter().any(|s| s.style.fg.is_some()));
    }

    #[test]
    fn a_line_past_the_cap_is_plain_and_the_next_is_coloured() {
        let syntax = find_syntax(Some("rust"), None, None, "");
        let mut hl = Highlighter::new(syntax, ColorMode::Ansi256, Style::PLAIN);
        let long = "let x = 1; ".repeat(MAX_HIGHLIGHTED_LINE / 11 + 1);
        assert!(long.len() > MAX_HIGHLIGHTED_LINE);
        let spans = hl.line(&long);
        assert_eq!(spans.len(), 1);
        assert_eq!(spans[0].style, Style::PLAIN);
        assert_eq!(spans[0].text, long);
        let next = hl.line("fn main() {}");
        assert!(next.iter().any(|s| s.style.fg.is_some()));
        // At the cap exactly, still coloured.
        let at_cap = &long[..MAX_HIGHLIGHTED_LINE];
        assert!(hl.line(at_cap).len() > 1);
    }
}
