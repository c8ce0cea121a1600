//! Widgets: terminal renderers registered by widget id; without one, or when one fails,
//! the widget's fallback text is shown (docs/contracts.md, "Display widgets").

use toolwire_core::{MCP_APP_WIDGET, Widget};

use crate::kinds::text::EXPAND_HINT;
use crate::kinds::text::{self, TextStyle};
use crate::options::TermOptions;
use crate::out::{Out, str_width, truncate};
pub use crate::registry::{WidgetContext, WidgetError, WidgetRegistry, WidgetRenderer};
use crate::sanitize;
use crate::style::{CYAN, Line, Style};

/// Cuts a line holding SGR codes to `width` visible columns.
fn fit_styled(line: &str, width: usize) -> String {
    let plain_width = str_width(&crate::style::strip_sgr(line));
    if plain_width <= width {
        return line.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            out.push(c);
            for d in chars.by_ref() {
                out.push(d);
                if d == 'm' {
                    break;
                }
            }
            continue;
        }
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    if out.contains('\x1b') {
        out.push_str("\x1b[0m");
    }
    out
}

/// Appends the lines of `w`; with `fallback_above`, its fallback is the text drawn above
/// it (an MCP App's is its call's text), so only its header is drawn.
pub(crate) fn render_widget(
    w: &Widget,
    opts: &TermOptions,
    lines: &mut Vec<String>,
    fallback_above: bool,
) {
    let width = opts.layout_width();
    let ctx = WidgetContext {
        width,
        color: opts.color,
    };
    let renderer = opts.widgets.get(&w.widget);
    let rendered = renderer.map(|r| r.render(&w.data, &ctx));

    let mut header = Line::new(opts.color);
    header.push("▾ ", Style::dim());
    header.push("widget ", Style::fg(CYAN).with_bold());
    let id = match (&w.app, w.widget.as_str()) {
        (Some(app), MCP_APP_WIDGET) => app.uri.as_str(),
        _ => w.widget.as_str(),
    };
    let id = truncate(&sanitize::inline(id), width.saturating_sub(9).max(4));
    header.push(&id, Style::fg(CYAN).with_bold());
    let note = match (&rendered, &w.app) {
        (Some(Ok(_)), _) => String::new(),
        (Some(Err(e)), _) => format!(" · fallback ({e})"),
        (None, Some(_)) if fallback_above => " · app: open in the web app; shown above".to_owned(),
        (None, Some(_)) => " · app: open in the web app; fallback text".to_owned(),
        (None, None) => " · fallback text".to_owned(),
    };
    let room = width.saturating_sub(header.width());
    header.push(&truncate(&sanitize::inline(&note), room), Style::dim());
    lines.push(header.finish());
    if fallback_above && rendered.is_none() {
        return;
    }

    let limit = if opts.expand_all {
        None
    } else {
        opts.max_height
    };
    let mut out = Out::new(opts.color, width, limit);
    match rendered {
        Some(Ok(text)) => {
            let clean = sanitize::keep_sgr(&text, opts.color);
            let mut shown = 0u64;
            let all: Vec<&str> = clean.split('\n').collect();
            for l in &all {
                if !out.push(fit_styled(l, width)) {
                    break;
                }
                shown += 1;
            }
            out.add_more(all.len() as u64 - shown);
        }
        _ => text::render(&mut out, &w.fallback, TextStyle::PLAIN),
    }
    let more = out.more();
    lines.append(&mut out.lines);
    if more > 0 {
        let mut line = Line::new(opts.color);
        line.push(
            &truncate(
                &format!(
                    "{} ({EXPAND_HINT})",
                    crate::fmt::more(more, "line", "lines")
                ),
                width,
            ),
            Style::dim(),
        );
        lines.push(line.finish());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn styled_lines_are_cut_by_visible_width() {
        let s = "\x1b[31mabcdef\x1b[0m";
        assert_eq!(fit_styled(s, 4), "\x1b[31mabc…\x1b[0m");
        assert_eq!(fit_styled("abc", 4), "abc");
    }
}
