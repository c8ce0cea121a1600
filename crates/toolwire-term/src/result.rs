//! A whole `ToolResult`: the header line, the error or the suspension, the values in
//! priority order, then the widgets.

use toolwire_core::{Status, SuspensionReason, ToolResult, Value};

use crate::fmt;
use crate::kinds::tree;
use crate::options::TermOptions;
use crate::out::{Out, Wrap, str_width, truncate};
use crate::sanitize;
use crate::style::{GREEN, Line, RED, Span, Style, YELLOW};
use crate::value::{is_shown, render_value};
use crate::widgets::render_widget;

/// Lines of error details or of an input schema shown before they are cut.
const DETAIL_LINES: usize = 12;

/// The status facts a header line shows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HeaderFacts<'a> {
    pub tool: &'a str,
    pub args: Option<&'a str>,
    pub status: Status,
    pub code: Option<&'a str>,
    pub reason: Option<SuspensionReason>,
    pub duration_ms: Option<u64>,
}

/// `✓ read_file(path: "a.rs") · success · 12 ms`.
pub(crate) fn header_line(opts: &TermOptions, facts: &HeaderFacts<'_>) -> String {
    let width = opts.layout_width();
    let (icon, color) = match facts.status {
        Status::Success => ("✓", GREEN),
        Status::Error => ("✗", RED),
        Status::Suspended => ("⏸", YELLOW),
    };
    let mut status = facts.status.as_str().to_owned();
    if let Some(code) = facts.code {
        status.push_str(&format!(" ({})", sanitize::inline(code)));
    }
    match facts.reason {
        Some(SuspensionReason::Approval) => status.push_str(": awaiting approval"),
        Some(SuspensionReason::Input) => status.push_str(": awaiting input"),
        None => {}
    }
    let mut tail = format!(" · {status}");
    if let Some(ms) = facts.duration_ms {
        tail.push_str(&format!(" · {}", fmt::duration_ms(ms)));
    }
    let mut name = sanitize::inline(facts.tool).into_owned();
    if let Some(args) = facts.args.filter(|a| !a.is_empty()) {
        name.push_str(&format!("({})", sanitize::inline(args)));
    }
    // The status matters more than the arguments: cut the name first.
    let room = width.saturating_sub(2 + str_width(&tail)).max(4);
    let name = truncate(&name, room);
    let tail = truncate(&tail, width.saturating_sub(2 + str_width(&name)));
    let mut line = Line::new(opts.color);
    line.push(&format!("{icon} "), Style::fg(color).with_bold());
    line.push(&name, Style::bold());
    line.push(&tail, Style::fg(color));
    line.finish()
}

pub(crate) fn render_result(r: &ToolResult, opts: &TermOptions, lines: &mut Vec<String>) {
    let facts = HeaderFacts {
        tool: &r.tool_name,
        args: None,
        status: r.status,
        code: r.error.as_ref().and_then(|e| e.code.as_deref()),
        reason: r.suspension.as_ref().map(|s| s.reason),
        duration_ms: r.metadata.duration_ms,
    };
    lines.push(header_line(opts, &facts));
    body(r, opts, lines);
}

/// Everything below the header line; the live renderer prints its own header.
pub(crate) fn body(r: &ToolResult, opts: &TermOptions, lines: &mut Vec<String>) {
    let width = opts.layout_width();
    let detail_limit = if opts.expand_all {
        None
    } else {
        Some(
            opts.max_height
                .map_or(DETAIL_LINES, |m| m.min(DETAIL_LINES)),
        )
    };
    if let Some(err) = &r.error {
        let mut out = Out::new(opts.color, width, None);
        let label = Span::new("Error: ", Style::fg(RED).with_bold());
        let indent = Span::new("       ", Style::PLAIN);
        for (i, part) in err.message.split('\n').enumerate() {
            let first = if i == 0 {
                label.clone()
            } else {
                indent.clone()
            };
            let spans = [Span::new(sanitize::line(part, 0), Style::fg(RED))];
            out.wrapped(&[first], std::slice::from_ref(&indent), &spans, Wrap::Words);
        }
        lines.append(&mut out.lines);
        if let Some(details) = &err.details {
            let mut out = Out::new(opts.color, width, detail_limit);
            tree::render(&mut out, details);
            push_more(&mut out, opts, lines);
        }
    }
    if let Some(s) = &r.suspension {
        let mut out = Out::new(opts.color, width, None);
        let spans = [Span::new(
            sanitize::line(&s.prompt, 0),
            Style::fg(YELLOW).with_bold(),
        )];
        out.wrapped(
            &[Span::new("? ", Style::fg(YELLOW).with_bold())],
            &[Span::new("  ", Style::PLAIN)],
            &spans,
            Wrap::Words,
        );
        let id = sanitize::inline(&s.id);
        let how = match s.reason {
            SuspensionReason::Approval => {
                format!("→ approve or deny to continue (suspension {id})")
            }
            SuspensionReason::Input => {
                format!("→ answer with a JSON value to continue (suspension {id})")
            }
        };
        out.wrapped(
            &[],
            &[Span::new("  ", Style::PLAIN)],
            &[Span::new(how, Style::dim())],
            Wrap::Words,
        );
        lines.append(&mut out.lines);
        if let Some(schema) = &s.input_schema {
            let mut out = Out::new(opts.color, width, detail_limit);
            out.note("  expected input (JSON Schema):");
            tree::render(&mut out, schema);
            push_more(&mut out, opts, lines);
        }
    }

    let mut values: Vec<&Value> = r.output.iter().filter(|v| is_shown(v)).collect();
    // Stable: equal priorities keep the tool's order.
    values.sort_by_key(|v| {
        std::cmp::Reverse(v.display.as_ref().and_then(|d| d.priority).unwrap_or(0))
    });
    let mut first = r.error.is_none() && r.suspension.is_none();
    let mut drew_values = false;
    for v in values {
        let mut block = Vec::new();
        render_value(v, opts, &mut block);
        if block.is_empty() {
            continue;
        }
        if !first {
            lines.push(String::new());
        }
        first = false;
        drew_values = true;
        lines.append(&mut block);
    }
    // An MCP App's fallback is its call's text, which is drawn above already, or stands
    // for what is (the twin of its structured value, kept for the model): said, not
    // printed a second time. Only when something was drawn above.
    let texts: Vec<&str> = r
        .output
        .iter()
        .filter(|v| drew_values && v.is_kind(toolwire_core::WellKnown::Text))
        .filter_map(|v| v.data.get("content").and_then(serde_json::Value::as_str))
        .collect();
    let text_above = texts.join("\n");
    for w in &r.widgets {
        if !first {
            lines.push(String::new());
        }
        first = false;
        let above = w.app.is_some() && !text_above.is_empty() && w.fallback == text_above;
        render_widget(w, opts, lines, above);
    }
}

fn push_more(out: &mut Out, opts: &TermOptions, lines: &mut Vec<String>) {
    let more = out.more();
    lines.append(&mut out.lines);
    if more > 0 {
        let mut line = Line::new(opts.color);
        let text = format!(
            "{} ({})",
            fmt::more(more, "line", "lines"),
            crate::kinds::text::EXPAND_HINT
        );
        line.push(&truncate(&text, opts.layout_width()), Style::dim());
        lines.push(line.finish());
    }
}
