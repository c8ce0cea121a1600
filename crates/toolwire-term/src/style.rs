//! Styled lines: text runs with SGR colour codes, the only escape sequences we ever emit
//! into rendered text (image protocols aside).

use std::fmt::Write as _;

use unicode_width::UnicodeWidthStr;

use crate::options::ColorMode;

/// A foreground colour. `Ansi` uses the terminal's own palette, so a user's theme wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Color {
    /// Palette index 0–15.
    Ansi(u8),
    /// Palette index 16–255.
    Fixed(u8),
    Rgb(u8, u8, u8),
}

pub(crate) const RED: Color = Color::Ansi(1);
pub(crate) const GREEN: Color = Color::Ansi(2);
pub(crate) const YELLOW: Color = Color::Ansi(3);
pub(crate) const BLUE: Color = Color::Ansi(4);
pub(crate) const MAGENTA: Color = Color::Ansi(5);
pub(crate) const CYAN: Color = Color::Ansi(6);

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Style {
    pub fg: Option<Color>,
    pub bold: bool,
    pub dim: bool,
    pub italic: bool,
    pub underline: bool,
    pub strike: bool,
}

impl Style {
    pub(crate) const PLAIN: Style = Style {
        fg: None,
        bold: false,
        dim: false,
        italic: false,
        underline: false,
        strike: false,
    };

    pub(crate) const fn fg(color: Color) -> Style {
        Style {
            fg: Some(color),
            ..Style::PLAIN
        }
    }

    pub(crate) const fn dim() -> Style {
        Style {
            dim: true,
            ..Style::PLAIN
        }
    }

    pub(crate) const fn bold() -> Style {
        Style {
            bold: true,
            ..Style::PLAIN
        }
    }

    pub(crate) const fn with_bold(mut self) -> Style {
        self.bold = true;
        self
    }

    pub(crate) const fn with_italic(mut self) -> Style {
        self.italic = true;
        self
    }

    pub(crate) const fn with_underline(mut self) -> Style {
        self.underline = true;
        self
    }

    /// Layers `top` over `self`: set attributes accumulate, a set colour replaces.
    pub(crate) fn merge(self, top: Style) -> Style {
        Style {
            fg: top.fg.or(self.fg),
            bold: self.bold || top.bold,
            dim: self.dim || top.dim,
            italic: self.italic || top.italic,
            underline: self.underline || top.underline,
            strike: self.strike || top.strike,
        }
    }

    /// Writes the SGR sequence that turns this style on; nothing for the plain style.
    fn write_sgr(&self, mode: ColorMode, buf: &mut String) {
        if *self == Style::PLAIN || mode == ColorMode::Off {
            return;
        }
        let mut codes: Vec<String> = Vec::with_capacity(4);
        if self.bold {
            codes.push("1".into());
        }
        if self.dim {
            codes.push("2".into());
        }
        if self.italic {
            codes.push("3".into());
        }
        if self.underline {
            codes.push("4".into());
        }
        if self.strike {
            codes.push("9".into());
        }
        match self.fg {
            Some(Color::Ansi(n)) if n < 8 => codes.push(format!("{}", 30 + n)),
            Some(Color::Ansi(n)) if n < 16 => codes.push(format!("{}", 90 + n - 8)),
            Some(Color::Ansi(n) | Color::Fixed(n)) => codes.push(format!("38;5;{n}")),
            Some(Color::Rgb(r, g, b)) => match mode {
                ColorMode::TrueColor => codes.push(format!("38;2;{r};{g};{b}")),
                _ => codes.push(format!("38;5;{}", rgb_to_256(r, g, b))),
            },
            None => {}
        }
        if codes.is_empty() {
            return;
        }
        let _ = write!(buf, "\x1b[{}m", codes.join(";"));
    }
}

/// The nearest entry of the xterm 6×6×6 colour cube.
fn rgb_to_256(r: u8, g: u8, b: u8) -> u8 {
    let level = |c: u8| -> u8 {
        match c {
            0..=47 => 0,
            48..=114 => 1,
            _ => (c - 35) / 40,
        }
    };
    16 + 36 * level(r) + 6 * level(g) + level(b)
}

/// One output line under construction. Text pushed here must already be sanitized and
/// free of newlines and tabs; the width is tracked in terminal columns.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    buf: String,
    width: usize,
    mode: ColorMode,
}

impl Line {
    pub(crate) fn new(mode: ColorMode) -> Self {
        Line {
            buf: String::new(),
            width: 0,
            mode,
        }
    }

    pub(crate) fn width(&self) -> usize {
        self.width
    }

    pub(crate) fn push(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        self.width += text.width();
        if self.mode == ColorMode::Off || style == Style::PLAIN {
            self.buf.push_str(text);
            return;
        }
        let before = self.buf.len();
        style.write_sgr(self.mode, &mut self.buf);
        self.buf.push_str(text);
        if self.buf.len() > before + text.len() {
            self.buf.push_str("\x1b[0m");
        }
    }

    /// Appends spaces up to `width` columns.
    pub(crate) fn pad_to(&mut self, width: usize) {
        if self.width < width {
            let n = width - self.width;
            self.buf.extend(std::iter::repeat_n(' ', n));
            self.width = width;
        }
    }

    pub(crate) fn finish(self) -> String {
        self.buf
    }
}

/// A run of text in one style; text sanitized, single-line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    pub text: String,
    pub style: Style,
}

impl Span {
    pub(crate) fn new(text: impl Into<String>, style: Style) -> Self {
        Span {
            text: text.into(),
            style,
        }
    }
}

/// Builds a finished line from spans.
pub(crate) fn line_of(mode: ColorMode, spans: &[Span]) -> String {
    let mut line = Line::new(mode);
    for s in spans {
        line.push(&s.text, s.style);
    }
    line.finish()
}

/// `s` without its SGR sequences (`ESC [ … m`): what a person reads.
pub fn strip_sgr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(pos) = rest.find("\x1b[") {
        out.push_str(&rest[..pos]);
        let body = &rest[pos + 2..];
        match body.find(|c: char| !(c.is_ascii_digit() || c == ';')) {
            Some(end) if body.as_bytes()[end] == b'm' => rest = &body[end + 1..],
            _ => {
                out.push_str("\x1b[");
                rest = body;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_style_emits_no_escape_and_colour_off_never_does() {
        let mut l = Line::new(ColorMode::Ansi256);
        l.push("a", Style::PLAIN);
        l.push("b", Style::fg(RED).with_bold());
        assert_eq!(l.finish(), "a\x1b[1;31mb\x1b[0m");
        let mut l = Line::new(ColorMode::Off);
        l.push("b", Style::fg(RED));
        assert_eq!(l.finish(), "b");
    }

    #[test]
    fn rgb_degrades_to_the_cube() {
        assert_eq!(rgb_to_256(0, 0, 0), 16);
        assert_eq!(rgb_to_256(255, 255, 255), 231);
        let mut l = Line::new(ColorMode::TrueColor);
        l.push("x", Style::fg(Color::Rgb(1, 2, 3)));
        assert_eq!(l.finish(), "\x1b[38;2;1;2;3mx\x1b[0m");
    }
}
