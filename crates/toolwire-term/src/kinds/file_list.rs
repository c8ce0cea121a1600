//! Directory listings: a tree (nested when names hold paths) with sizes and dates in
//! aligned columns, cut with a count of the entries left out.

use toolwire_core::EntryType;
use toolwire_core::view::{EntryView, FileListView};

use crate::fmt;
use crate::out::{Out, str_width, truncate};
use crate::sanitize;
use crate::style::{BLUE, CYAN, Line, Style};

/// One row to draw: tree glyphs, a name, and the entry when the row is a real entry
/// (not a directory implied by a nested path).
struct Row<'a> {
    prefix: String,
    name: String,
    entry: Option<&'a EntryView<'a>>,
    is_dir: bool,
}

#[derive(Default)]
struct Node<'a> {
    name: String,
    entry: Option<&'a EntryView<'a>>,
    children: Vec<Node<'a>>,
}

impl<'a> Node<'a> {
    fn insert(&mut self, parts: &[&str], entry: &'a EntryView<'a>) {
        let Some((first, rest)) = parts.split_first() else {
            return;
        };
        let pos = match self.children.iter().position(|c| c.name == *first) {
            Some(p) => p,
            None => {
                self.children.push(Node {
                    name: (*first).to_owned(),
                    ..Node::default()
                });
                self.children.len() - 1
            }
        };
        let child = &mut self.children[pos];
        if rest.is_empty() {
            child.entry = Some(entry);
        } else {
            child.insert(rest, entry);
        }
    }

    fn flatten(&self, prefix: &str, rows: &mut Vec<Row<'a>>) {
        let n = self.children.len();
        for (i, c) in self.children.iter().enumerate() {
            let last = i + 1 == n;
            rows.push(Row {
                prefix: format!("{prefix}{}", if last { "└─ " } else { "├─ " }),
                name: c.name.clone(),
                entry: c.entry,
                is_dir: !c.children.is_empty()
                    || c.entry
                        .is_some_and(|e| e.entry_type == EntryType::Directory),
            });
            c.flatten(
                &format!("{prefix}{}", if last { "   " } else { "│  " }),
                rows,
            );
        }
    }
}

fn rows_of<'a>(list: &'a FileListView<'a>, max: Option<usize>) -> (Vec<Row<'a>>, usize) {
    let nested = list
        .entries
        .iter()
        .any(|e| e.name.trim_matches('/').contains('/'));
    if !nested {
        // Flat: only the rows that will be shown are built.
        let n = list.entries.len();
        let take = max.map_or(n, |m| m.min(n));
        let rows = list.entries[..take]
            .iter()
            .enumerate()
            .map(|(i, e)| Row {
                prefix: if i + 1 == n { "└─ " } else { "├─ " }.to_owned(),
                name: e.name.to_owned(),
                entry: Some(e),
                is_dir: e.entry_type == EntryType::Directory,
            })
            .collect();
        return (rows, n);
    }
    let mut root = Node::default();
    for e in &list.entries {
        let parts: Vec<&str> = e.name.split('/').filter(|p| !p.is_empty()).collect();
        root.insert(&parts, e);
    }
    let mut rows = Vec::new();
    root.flatten("", &mut rows);
    let total = rows.len();
    if let Some(m) = max {
        rows.truncate(m);
    }
    (rows, total)
}

pub(crate) fn render(out: &mut Out, list: &FileListView<'_>) {
    if list.entries.is_empty() {
        out.note(if list.truncated {
            "(no entries listed; the listing was cut by the tool)"
        } else {
            "(empty directory)"
        });
        return;
    }
    // Keep a line for the count when the listing is cut.
    let max = out.remaining().map(|r| r.saturating_sub(1).max(1));
    let (mut rows, total) = rows_of(list, max);
    if out.remaining().is_some_and(|r| total <= r) {
        // It all fits after all: no count line needed.
        let (all, _) = rows_of(list, None);
        rows = all;
    }

    let label = |r: &Row<'_>| {
        let mut name = sanitize::inline(&r.name).into_owned();
        match r.entry.map(|e| e.entry_type) {
            Some(EntryType::Symlink) => name.push('@'),
            _ if r.is_dir => name.push('/'),
            _ => {}
        }
        name
    };
    let labels: Vec<String> = rows.iter().map(label).collect();
    let sizes: Vec<String> = rows
        .iter()
        .map(|r| match r.entry {
            Some(e) if !r.is_dir => e.size.map(fmt::size).unwrap_or_default(),
            _ => String::new(),
        })
        .collect();
    let dates: Vec<String> = rows
        .iter()
        .map(|r| {
            r.entry
                .and_then(|e| e.modified)
                .map(|d| sanitize::inline(&fmt::date_display(d)).into_owned())
                .unwrap_or_default()
        })
        .collect();

    let name_w = rows
        .iter()
        .zip(&labels)
        .map(|(r, l)| str_width(&r.prefix) + str_width(l))
        .max()
        .unwrap_or(0);
    let size_w = sizes.iter().map(|s| str_width(s)).max().unwrap_or(0);
    let date_w = dates.iter().map(|s| str_width(s)).max().unwrap_or(0);
    // Drop the date column, then sizes, before squeezing names.
    let with_date = date_w > 0 && name_w + 2 + size_w + 2 + date_w <= out.width;
    let with_size = size_w > 0 && name_w + 2 + size_w <= out.width;

    for (i, r) in rows.iter().enumerate() {
        let mut line = Line::new(out.mode);
        line.push(&r.prefix, Style::dim());
        let name_room = out.width.saturating_sub(str_width(&r.prefix));
        let style = match r.entry.map(|e| e.entry_type) {
            Some(EntryType::Symlink) => Style::fg(CYAN),
            _ if r.is_dir => Style::fg(BLUE).with_bold(),
            _ => Style::PLAIN,
        };
        line.push(&truncate(&labels[i], name_room), style);
        let show_size = with_size && !sizes[i].is_empty();
        let show_date = with_date && !dates[i].is_empty();
        if show_size || show_date {
            line.pad_to(name_w);
        }
        if show_size || (with_size && show_date) {
            line.push(&format!("  {:>size_w$}", sizes[i]), Style::PLAIN);
        }
        if show_date {
            line.push(&format!("  {}", dates[i]), Style::dim());
        }
        out.push_always(line.finish());
    }
    if rows.len() < total {
        out.note(&fmt::more((total - rows.len()) as u64, "entry", "entries"));
    }
    if list.truncated {
        out.note("(the tool cut this listing short)");
    }
}
