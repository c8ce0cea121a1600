//! toolwire-term: renders toolwire results for a terminal.
//!
//! Dispatch: a well-known kind gets its own renderer; any other kind is
//! shown by `display.preferredView`, else by what its `mimeType` and data shape suggest,
//! else as JSON. Rendering is a pure function of the input and [`TermOptions`]; tool text
//! is sanitized so that no escape sequence but our own colour codes reaches the terminal.
//!
//! ```
//! use toolwire_core::{CallRef, ToolResult, Value};
//! use toolwire_term::{TermOptions, render};
//!
//! let result = ToolResult::success(CallRef::new("c1", "echo"), Value::text("hi"));
//! assert_eq!(render(&result, &TermOptions::plain(80)), "✓ echo · success\nhi\n");
//! ```

#![warn(missing_docs)]

mod fmt;
mod highlight;
mod json;
mod kinds;
mod live;
mod modes;
mod options;
mod out;
mod registry;
mod result;
mod sanitize;
mod style;
mod value;
mod widgets;

pub use json::{RenderError, render_json};
pub use live::LiveRenderer;
pub use options::{ColorMode, ImageProtocol, TermOptions};
pub use sanitize::{json as sanitize_json, text as sanitize_text};
pub use style::strip_sgr;
pub use widgets::{WidgetContext, WidgetError, WidgetRegistry, WidgetRenderer};

use toolwire_core::{ToolResult, Value};

/// Something [`render`] can draw: a `ToolResult`, one `Value`, or several.
pub trait Render {
    #[doc(hidden)]
    fn render_lines(&self, opts: &TermOptions, lines: &mut Vec<String>);
}

impl Render for ToolResult {
    fn render_lines(&self, opts: &TermOptions, lines: &mut Vec<String>) {
        result::render_result(self, opts, lines);
    }
}

impl Render for Value {
    fn render_lines(&self, opts: &TermOptions, lines: &mut Vec<String>) {
        value::render_value(self, opts, lines);
    }
}

impl Render for [Value] {
    fn render_lines(&self, opts: &TermOptions, lines: &mut Vec<String>) {
        for v in self {
            let mut block = Vec::new();
            value::render_value(v, opts, &mut block);
            if block.is_empty() {
                continue;
            }
            if !lines.is_empty() {
                lines.push(String::new());
            }
            lines.append(&mut block);
        }
    }
}

impl Render for Vec<Value> {
    fn render_lines(&self, opts: &TermOptions, lines: &mut Vec<String>) {
        self.as_slice().render_lines(opts, lines);
    }
}

/// Renders `item` to text for a terminal: lines each ending in `\n`, each at most
/// `opts.width` columns wide; empty when nothing is to be shown (`hidden`).
pub fn render<R: Render + ?Sized>(item: &R, opts: &TermOptions) -> String {
    let mut lines = Vec::new();
    item.render_lines(opts, &mut lines);
    join(lines)
}

/// [`render`] straight into `out`, each line freed once written: a 200 MB result is not
/// held a second time as one joined string.
pub fn render_to<R: Render + ?Sized>(
    item: &R,
    opts: &TermOptions,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    let mut lines = Vec::new();
    item.render_lines(opts, &mut lines);
    for line in lines {
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

fn join(lines: Vec<String>) -> String {
    let len = lines.iter().map(|l| l.len() + 1).sum();
    let mut s = String::with_capacity(len);
    for l in lines {
        s.push_str(&l);
        s.push('\n');
    }
    s
}
