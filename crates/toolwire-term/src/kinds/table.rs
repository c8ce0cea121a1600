//! Tables with comfy-table: fit to width, numbers right-aligned, and when too long the
//! first and last rows with a count between. Only the shown rows reach comfy-table.

use comfy_table::{Cell, CellAlignment, ContentArrangement, Row, Table, presets};
use serde_json::Value as Json;
use toolwire_core::{Align, ColumnType};

use crate::fmt;
use crate::out::{Out, str_width, truncate};
use crate::sanitize;
use crate::style::{Line, Style};

/// One column to show.
#[derive(Debug, Clone)]
pub(crate) struct ColSpec<'a> {
    pub key: &'a str,
    pub title: &'a str,
    pub align: Option<Align>,
    pub column_type: Option<ColumnType>,
}

impl<'a> ColSpec<'a> {
    /// A declared column of a `table` value, as the value describes it.
    pub(crate) fn declared(c: &toolwire_core::view::ColumnView<'a>) -> Self {
        ColSpec {
            key: c.key,
            title: c.title(),
            align: c.align,
            column_type: c.column_type,
        }
    }

    /// A column titled by its key, aligned by its content.
    pub(crate) fn plain(key: &'a str) -> Self {
        ColSpec {
            key,
            title: key,
            align: None,
            column_type: None,
        }
    }
}

/// Longest cell text handed to comfy-table; a cell is one line anyway unless expanded.
const CELL_CHARS: usize = 256;
/// Lines a table takes besides its rows: top border, header, separator, bottom border.
const CHROME: usize = 4;
/// The fewest columns of screen a table column takes: a border, a padding on each side and
/// one character.
const MIN_COL_WIDTH: usize = 4;

/// A cell's text: strings as they are, numbers and booleans as JSON writes them, null
/// empty, nested values as compact JSON.
fn cell_text(v: Option<&Json>, max_chars: usize) -> String {
    let raw = match v {
        None | Some(Json::Null) => return String::new(),
        Some(Json::String(s)) => std::borrow::Cow::Borrowed(s.as_str()),
        Some(Json::Number(n)) => std::borrow::Cow::Owned(n.to_string()),
        Some(Json::Bool(b)) => std::borrow::Cow::Owned(b.to_string()),
        Some(nested) => std::borrow::Cow::Owned(serde_json::to_string(nested).unwrap_or_default()),
    };
    let mut end = raw.len();
    if let Some((i, _)) = raw.char_indices().nth(max_chars) {
        end = i;
    }
    let mut s = sanitize::inline(&raw[..end]).into_owned();
    if end < raw.len() {
        s.push('…');
    }
    s
}

fn alignment(col: &ColSpec<'_>, shown: &[&Json]) -> CellAlignment {
    match col.align {
        Some(Align::Left) => return CellAlignment::Left,
        Some(Align::Right) => return CellAlignment::Right,
        Some(Align::Center) => return CellAlignment::Center,
        None => {}
    }
    let numeric = col.column_type == Some(ColumnType::Number) || {
        let mut values = shown
            .iter()
            .filter_map(|r| r.get(col.key))
            .filter(|v| !v.is_null())
            .peekable();
        values.peek().is_some() && values.all(Json::is_number)
    };
    if numeric {
        CellAlignment::Right
    } else {
        CellAlignment::Left
    }
}

fn build(
    cols: &[ColSpec<'_>],
    head: &[&Json],
    tail: &[&Json],
    width: usize,
    expand: bool,
) -> Vec<String> {
    let mut table = Table::new();
    table
        .load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(u16::try_from(width).unwrap_or(u16::MAX))
        .set_truncation_indicator("…");
    let mut header = Row::from(cols.iter().map(|c| Cell::new(sanitize::inline(c.title))));
    header.max_height(2);
    table.set_header(header);
    let max_chars = if expand { 4 * CELL_CHARS } else { CELL_CHARS };
    let row_of = |r: &Json| {
        let mut row = Row::from(
            cols.iter()
                .map(|c| Cell::new(cell_text(r.get(c.key), max_chars))),
        );
        if !expand {
            row.max_height(1);
        }
        row
    };
    for r in head {
        table.add_row(row_of(r));
    }
    if !tail.is_empty() {
        let mut gap = Row::from(cols.iter().map(|_| Cell::new("⋮")));
        gap.max_height(1);
        table.add_row(gap);
        for r in tail {
            table.add_row(row_of(r));
        }
    }
    let shown: Vec<&Json> = head.iter().chain(tail).copied().collect();
    for (i, col) in cols.iter().enumerate() {
        if let Some(c) = table.column_mut(i) {
            c.set_cell_alignment(alignment(col, &shown));
        }
    }
    table.lines().collect()
}

/// Renders the table into `out`, keeping head and tail rows when it does not fit.
pub(crate) fn render(out: &mut Out, cols: &[ColSpec<'_>], rows: &[Json], expand: bool) {
    render_with(out, cols, rows, expand, MIN_COL_WIDTH);
}

/// [`render`], laying out only the columns that get at least `min_col_width` columns of
/// screen each (border and padding included); a count says how many more there are.
pub(crate) fn render_with(
    out: &mut Out,
    cols: &[ColSpec<'_>],
    rows: &[Json],
    expand: bool,
    min_col_width: usize,
) {
    if cols.is_empty() {
        out.note(&format!(
            "(table without columns, {})",
            fmt::plural(rows.len() as u64, "row", "rows")
        ));
        return;
    }
    // Only the columns that can show are laid out: a million-column table must cost what
    // its first screenful costs, not gigabytes of cells nobody can see.
    let max_cols = (out.width.saturating_sub(1) / min_col_width.max(MIN_COL_WIDTH)).max(1);
    let hidden_cols = cols.len().saturating_sub(max_cols);
    let cols = &cols[..cols.len() - hidden_cols];
    let n = rows.len();
    let budget = out.remaining();
    let fits = budget.is_none_or(|b| n + CHROME <= b);
    // Room for the gap row and the count line when cut.
    let mut shown = if fits {
        n
    } else {
        budget.unwrap_or(0).saturating_sub(CHROME + 2).clamp(1, n)
    };
    loop {
        let cut = shown < n;
        let head_n = if cut { shown.div_ceil(2) } else { n };
        let tail_n = if cut { shown - head_n } else { 0 };
        let head: Vec<&Json> = rows[..head_n].iter().collect();
        let tail: Vec<&Json> = rows[n - tail_n..].iter().collect();
        let lines = build(cols, &head, &tail, out.width, expand);
        let needed = lines.len() + usize::from(cut);
        // A wrapped header can take an extra line; show fewer rows rather than overflow.
        if budget.is_some_and(|b| needed > b) && shown > 1 {
            shown = shown.saturating_sub(needed - budget.unwrap_or(0)).max(1);
            if shown < n {
                continue;
            }
        }
        emit(out, lines);
        if hidden_cols > 0 {
            out.note(&fmt::more(hidden_cols as u64, "column", "columns"));
        }
        if cut {
            let hidden = (n - head_n - tail_n) as u64;
            let text = format!(
                "{} (showing {} of {})",
                fmt::more(hidden, "row", "rows"),
                fmt::count((head_n + tail_n) as u64),
                fmt::count(n as u64)
            );
            out.note(&text);
        }
        if n == 0 {
            out.note("(no rows)");
        }
        return;
    }
}

fn is_border(c: char) -> bool {
    matches!(
        c,
        '┌' | '┐' | '└' | '┘' | '┬' | '┴' | '─' | '│' | '┆' | '╞' | '╡' | '╪' | '═'
    )
}

/// Styles comfy-table's plain lines: borders dim, header bold. Done here rather than in
/// comfy-table so its width arithmetic never sees an escape sequence.
fn emit(out: &mut Out, lines: Vec<String>) {
    let mut in_header = true;
    for (i, text) in lines.into_iter().enumerate() {
        let text = if str_width(&text) > out.width {
            truncate(&text, out.width)
        } else {
            text
        };
        if text.starts_with('╞') {
            in_header = false;
        }
        let cell_style = if in_header && i > 0 {
            Style::bold()
        } else {
            Style::PLAIN
        };
        let mut line = Line::new(out.mode);
        let mut run = String::new();
        let mut run_border = false;
        for c in text.chars() {
            let b = is_border(c);
            if b != run_border && !run.is_empty() {
                line.push(&run, if run_border { Style::dim() } else { cell_style });
                run.clear();
            }
            run_border = b;
            run.push(c);
        }
        line.push(&run, if run_border { Style::dim() } else { cell_style });
        out.push_always(line.finish());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::ColorMode;
    use serde_json::json;

    fn cols() -> Vec<ColSpec<'static>> {
        ["id", "name"].into_iter().map(ColSpec::plain).collect()
    }

    #[test]
    fn long_tables_keep_head_and_tail() {
        let rows: Vec<Json> = (0..1000)
            .map(|i| json!({"id": i, "name": format!("n{i}")}))
            .collect();
        let mut out = Out::new(ColorMode::Off, 40, Some(12));
        render(&mut out, &cols(), &rows, false);
        assert_eq!(out.lines.len(), 12, "{:#?}", out.lines);
        let text = out.lines.join("\n");
        assert!(text.contains("n0") && text.contains("n999") && text.contains("⋮"));
        assert!(
            text.contains("… 994 more rows (showing 6 of 1,000)"),
            "{text}"
        );
    }

    #[test]
    fn numbers_align_right() {
        let rows = vec![
            json!({"id": 5, "name": "a"}),
            json!({"id": 12345, "name": "b"}),
        ];
        let mut out = Out::new(ColorMode::Off, 40, None);
        render(&mut out, &cols(), &rows, false);
        assert!(
            out.lines.iter().any(|l| l.contains("│     5 ┆")),
            "{:#?}",
            out.lines
        );
    }

    #[test]
    fn only_the_columns_that_fit_are_laid_out() {
        let keys: Vec<String> = (0..200_000).map(|i| format!("c{i}")).collect();
        let cols: Vec<ColSpec<'_>> = keys.iter().map(|k| ColSpec::plain(k)).collect();
        let row: serde_json::Map<String, Json> =
            keys.iter().map(|k| (k.clone(), json!(1))).collect();
        let rows = vec![Json::Object(row)];
        let mut out = Out::new(ColorMode::Off, 80, Some(20));
        render(&mut out, &cols, &rows, false);
        let text = out.lines.join("\n");
        assert!(text.contains("c0"), "{text}");
        assert!(!text.contains("c100"), "{text}");
        assert!(text.contains("… 199,981 more columns"), "{text}");
        assert!(out.lines.iter().all(|l| str_width(l) <= 80));
    }
}
