//! Per-kind text for the model: each value becomes a [`Shape`], which knows its full text
//! and how to cut itself to a budget by structure.

use std::borrow::Cow;

use serde_json::Value as Json;
use toolwire_core::view::KnownView;
use toolwire_core::view::{DiffView, SourceView};
use toolwire_core::{Audience, EntryType, MediaKind, Value};

use crate::budget::{chars_up_to, fair_shares, fits};
use crate::truncate::{
    Amount, COUNT_LIMIT, CutContext, Run, Weight, bare_marker, cut_diff, cut_json, cut_lines,
    cut_text, keep_ends, run_marker, run_marker_bound,
};

/// What kind of media a value holds, for routing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaClass {
    /// An image.
    Image,
    /// A PDF document.
    Pdf,
    /// Audio.
    Audio,
    /// Video.
    Video,
    /// Any other document or binary.
    Other,
}

impl MediaClass {
    /// The word used in placeholders and notes: `image`, `pdf`, `audio`, `video`, `file`.
    pub fn label(self) -> &'static str {
        match self {
            MediaClass::Image => "image",
            MediaClass::Pdf => "pdf",
            MediaClass::Audio => "audio",
            MediaClass::Video => "video",
            MediaClass::Other => "file",
        }
    }
}

/// A media value, borrowed from the result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MediaRef<'a> {
    pub class: MediaClass,
    pub mime: String,
    pub source: SourceView<'a>,
    pub name: Option<&'a str>,
}

/// A value as the model will see it, before budgeting.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shape<'a> {
    Text {
        prefix: String,
        /// Borrowed from the result, or owned when toolwire wrote it (an error's text).
        body: Cow<'a, str>,
        weight: TextWeight<'a>,
    },
    Lines {
        header: Vec<String>,
        items: Vec<String>,
        footer: Vec<String>,
        unit: &'static str,
    },
    Diff(String),
    Json {
        summary: Option<&'a str>,
        value: &'a Json,
    },
    Line(String),
    Media(MediaRef<'a>),
}

/// Which end of a text matters more, decided only when the text must be cut: most texts
/// fit their budget, and reading the tool's name and the value's hints for each of them
/// was a pointer chase (a cache miss in a long session) and an allocation per result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum TextWeight<'a> {
    /// Known already (text toolwire wrote).
    Fixed(Weight),
    /// From the tool's name and the value's hints ([`is_log_like`]).
    Of {
        /// The tool that returned the value.
        tool_name: &'a str,
        /// The value the text came from.
        value: &'a Value,
    },
}

impl TextWeight<'_> {
    /// The weight: [`Weight::Tail`] for logs and terminals, else [`Weight::Balanced`].
    pub(crate) fn get(self) -> Weight {
        match self {
            TextWeight::Fixed(weight) => weight,
            TextWeight::Of { tool_name, value } if is_log_like(tool_name, value) => Weight::Tail,
            TextWeight::Of { .. } => Weight::Balanced,
        }
    }
}

/// Tools whose output is a log or a terminal: the end (where errors are) matters most.
fn is_log_like(tool_name: &str, value: &Value) -> bool {
    let tool_says = [
        "bash", "shell", "exec", "terminal", "command", "run", "log", "sh",
    ]
    .iter()
    .any(|w| {
        tool_name.eq_ignore_ascii_case(w)
            || tool_name
                .split(['_', '.', '-'])
                .any(|part| part.eq_ignore_ascii_case(w))
    });
    let lang_says = value
        .display
        .as_ref()
        .and_then(|d| d.language.as_deref())
        .is_some_and(|l| matches!(l, "shell" | "bash" | "sh" | "console" | "log" | "ansi"));
    let mime_says = value
        .mime_type
        .as_deref()
        .is_some_and(|m| m.contains("x-log") || m.contains("x-shellscript-output"));
    // The built-in `run` tool marks its output so (`toolwire/output: shell`).
    let meta_says = value
        .meta
        .as_ref()
        .and_then(|m| m.get("toolwire/output"))
        .and_then(Json::as_str)
        .is_some_and(|k| matches!(k, "shell" | "log"));
    tool_says || lang_says || mime_says || meta_says
}

/// Whether the value is for the model at all (`audience: ["user"]` keeps it away).
pub(crate) fn for_model(value: &Value) -> bool {
    !value
        .annotations
        .as_ref()
        .is_some_and(|a| a.excludes(Audience::Assistant))
}

/// The shape of one value, or `Err(shape)` when a well-known kind's data was invalid and
/// the raw JSON is sent instead.
pub(crate) fn shape<'a>(value: &'a Value, tool_name: &'a str) -> Result<Shape<'a>, Shape<'a>> {
    let summary = value.summary.as_deref();
    let raw = Shape::Json {
        summary,
        value: &value.data,
    };
    let view = match value.known() {
        None => return Ok(raw),
        Some(Err(_)) => return Err(raw),
        Some(Ok(view)) => view,
    };
    let weight = TextWeight::Of { tool_name, value };
    Ok(match view {
        KnownView::Text(t) => Shape::Text {
            prefix: String::new(),
            body: Cow::Borrowed(t.content),
            weight,
        },
        KnownView::FileContent(f) => Shape::Text {
            prefix: format!("File: {}\n", f.path),
            body: Cow::Borrowed(f.content),
            weight,
        },
        KnownView::Diff(d) => Shape::Diff(unified_diff(&d)),
        KnownView::Table(t) => {
            let header = t
                .columns
                .iter()
                .map(|c| cell(c.title()))
                .collect::<Vec<_>>()
                .join(" | ");
            let items = t
                .rows
                .iter()
                .map(|row| {
                    t.columns
                        .iter()
                        .map(|c| match row.get(c.key) {
                            None | Some(Json::Null) => String::new(),
                            Some(Json::String(s)) => cell(s),
                            Some(other) => cell(&other.to_string()),
                        })
                        .collect::<Vec<_>>()
                        .join(" | ")
                })
                .collect();
            let n = t.rows.len();
            Shape::Lines {
                header: vec![header],
                items,
                footer: vec![format!(
                    "{} {}",
                    crate::truncate::count(n),
                    plural(n, "row", "rows")
                )],
                unit: "rows",
            }
        }
        KnownView::FileList(l) => {
            let items = l
                .entries
                .iter()
                .map(|e| match (e.entry_type, e.size) {
                    (EntryType::Directory, _) => format!("{}/", e.name),
                    (EntryType::Symlink, _) => format!("{}@", e.name),
                    (EntryType::File, Some(size)) => format!("{}  {}", e.name, human_size(size)),
                    (EntryType::File, None) => e.name.to_owned(),
                })
                .collect();
            let n = l.entries.len();
            let mut footer = format!(
                "{} {}",
                crate::truncate::count(n),
                plural(n, "entry", "entries")
            );
            if l.truncated {
                footer.push_str(" (the listing stopped before the end of the directory)");
            }
            Shape::Lines {
                header: vec![format!("{}:", l.path)],
                items,
                footer: vec![footer],
                unit: "entries",
            }
        }
        KnownView::ResourceLink(r) => {
            let mut line = format!("Resource: {}", r.name.unwrap_or(r.uri));
            if r.name.is_some() {
                line.push_str(&format!(" <{}>", r.uri));
            }
            let mut facts = Vec::new();
            if let Some(m) = r.mime_type {
                facts.push(m.to_owned());
            }
            if let Some(s) = r.size {
                facts.push(human_size(s));
            }
            if !facts.is_empty() {
                line.push_str(&format!(" ({})", facts.join(", ")));
            }
            if let Some(d) = r.description {
                line.push_str(&format!(" — {}", d.replace('\n', " ")));
            }
            Shape::Line(line)
        }
        KnownView::Structured(data) => Shape::Json {
            summary,
            value: data,
        },
        KnownView::Image(i) => Shape::Media(MediaRef {
            class: MediaClass::Image,
            mime: i
                .mime_type
                .map_or_else(|| "image/*".to_owned(), toolwire_core::mime_essence),
            source: i.source,
            name: i.alt.or(summary),
        }),
        KnownView::File(f) => {
            let mime = f.mime_type.map_or_else(
                || "application/octet-stream".to_owned(),
                toolwire_core::mime_essence,
            );
            let class = match f.media_kind {
                MediaKind::Audio => MediaClass::Audio,
                MediaKind::Video => MediaClass::Video,
                _ if mime == "application/pdf" => MediaClass::Pdf,
                _ => MediaClass::Other,
            };
            Shape::Media(MediaRef {
                class,
                mime,
                source: f.source,
                name: f.filename.or(summary),
            })
        }
    })
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// A table cell on one line: newlines and the column separator are escaped.
fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('\n', "\\n")
        .replace('|', "\\|")
}

/// `34 KB`, `1.2 MB`, `512 B`: the one byte-size format, shared with the terminal.
pub(crate) fn human_size(bytes: u64) -> String {
    toolwire_core::humanize::bytes(bytes)
}

/// A unified diff: from the tool's hunks when it gave them, else computed.
fn unified_diff(d: &DiffView<'_>) -> String {
    let old_name = if d.is_new {
        "/dev/null".to_owned()
    } else {
        format!("a/{}", d.path)
    };
    let new_name = format!("b/{}", d.path);
    if let Some(hunks) = &d.hunks {
        let mut out = format!("--- {old_name}\n+++ {new_name}\n");
        for h in hunks {
            out.push_str(&format!(
                "@@ -{},{} +{},{} @@\n",
                h.old_start, h.old_lines, h.new_start, h.new_lines
            ));
            for line in &h.lines {
                out.push_str(line);
                out.push('\n');
            }
        }
        return out;
    }
    let original = d.original.unwrap_or("");
    similar::TextDiff::from_lines(original, d.modified)
        .unified_diff()
        .context_radius(3)
        .header(&old_name, &new_name)
        .to_string()
}

impl<'a> Shape<'a> {
    /// Characters of the full text, exact up to `budget` (beyond it, any larger bound).
    pub(crate) fn cost(&self, budget: usize) -> usize {
        let chars = |s: &str| s.chars().count();
        self.measure(chars, |body| chars_up_to(body, budget))
    }

    /// The bytes of a plain text's full form (prefix and body), which bound its characters
    /// from above; `None` for the other shapes, whose text is built to be measured.
    pub(crate) fn text_bytes(&self) -> Option<usize> {
        match self {
            Shape::Text { prefix, body, .. } => Some(prefix.len() + body.len()),
            _ => None,
        }
    }

    /// The bytes of the full text (what [`Shape::cost`] counts in characters).
    fn full_bytes(&self) -> usize {
        self.measure(str::len, str::len)
    }

    /// The full text's size with `len` for each piece (`body` for a plain text's body,
    /// which may be measured only up to a bound): one definition of what the full text
    /// is, for both units.
    fn measure(&self, len: impl Fn(&str) -> usize, body: impl Fn(&str) -> usize) -> usize {
        match self {
            Shape::Text {
                prefix, body: b, ..
            } => len(prefix) + body(b),
            Shape::Lines {
                header,
                items,
                footer,
                ..
            } => header
                .iter()
                .chain(items)
                .chain(footer)
                .map(|l| len(l) + 1)
                .sum::<usize>()
                .saturating_sub(1),
            Shape::Diff(d) => len(d),
            Shape::Json { summary, value } => {
                summary.map_or(0, |s| len(s) + 1) + len(&value.to_string())
            }
            Shape::Line(l) => len(l),
            Shape::Media(_) => 0,
        }
    }

    /// The text cut to `budget` characters; `None` for media.
    /// A text that fits as it is stays borrowed from the result.
    pub(crate) fn fit(&self, budget: usize, ctx: CutContext<'_>) -> Option<Cow<'a, str>> {
        Some(Cow::Owned(match self {
            Shape::Text {
                prefix,
                body,
                weight,
            } => {
                // Most texts fit as they are (and need no weight, see [`TextWeight`]).
                if prefix.is_empty() && fits(body, budget) {
                    return Some(body.clone());
                }
                // A text that is JSON (what a server sends beside its structured value) is
                // cut as JSON: what is left stays valid, never a string cut in its middle.
                if prefix.is_empty()
                    && let Some(value) = json_text(body)
                {
                    return Some(Cow::Owned(cut_json(None, &value, budget, ctx)));
                }
                let weight = weight.get();
                return Some(match body {
                    Cow::Borrowed(body) => cut_text(prefix, body, budget, weight, ctx),
                    Cow::Owned(body) => {
                        Cow::Owned(cut_text(prefix, body, budget, weight, ctx).into_owned())
                    }
                });
            }
            Shape::Lines {
                header,
                items,
                footer,
                unit,
            } => {
                let header: Vec<&str> = header.iter().map(String::as_str).collect();
                let footer: Vec<&str> = footer.iter().map(String::as_str).collect();
                cut_lines(&header, items, &footer, unit, budget, ctx)
            }
            Shape::Diff(d) => cut_diff(d, budget, ctx),
            Shape::Json { summary, value } => cut_json(*summary, value, budget, ctx),
            Shape::Line(l) => cut_text("", l, budget, Weight::Balanced, ctx).into_owned(),
            Shape::Media(_) => return None,
        }))
    }
}

/// `text` as the JSON object or array it holds, when it is one (parsed only for a text
/// that must be cut anyway).
fn json_text(text: &str) -> Option<Json> {
    let trimmed = text.trim_start();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return None;
    }
    serde_json::from_str(text).ok()
}

/// Separator between text parts of one result.
pub(crate) const PART_SEPARATOR: &str = "\n\n";

/// Cuts several texts of one result (`(part index, shape)`) to fit `budget` together;
/// returns the texts in order, `None` for one left out (a marker before it stands for it).
/// Separators between them are paid from the budget.
///
/// A few texts share the budget fairly, each cut by its structure. When a share would be
/// too small to be worth a cut (hundreds of search hits, 50,000 one-character blocks: each
/// would get less than its own marker), whole texts are kept from the head and the tail
/// instead, and the run between them is one marker ([`fit_ends`]).
pub(crate) fn fit_all<'s, 'a: 's>(
    texts: impl Iterator<Item = (usize, &'s Shape<'a>)> + Clone,
    budget: usize,
    call_id: &str,
) -> Vec<Option<Cow<'a, str>>> {
    let fit = |(part, shape): (usize, &Shape<'a>), share| {
        shape
            .fit(share, CutContext { call_id, part })
            .unwrap_or_default()
    };
    // Plain texts whose bytes (at least their characters) fit together are all kept whole
    // whatever their shares: a share of its bytes keeps each one, no character counted
    // (and nothing allocated but the result: this is every result of a usual session).
    let (mut count, mut bytes) = (0usize, Some(0usize));
    for (_, shape) in texts.clone() {
        count += 1;
        bytes = bytes.zip(shape.text_bytes()).map(|(sum, b)| sum + b);
    }
    let seps = count.saturating_sub(1) * PART_SEPARATOR.len();
    let room = budget.saturating_sub(seps);
    if bytes.is_some_and(|bytes| bytes <= room) {
        return texts
            .map(|text| {
                let share = text.1.text_bytes().unwrap_or_default();
                Some(fit(text, share))
            })
            .collect();
    }
    let costs: Vec<usize> = texts.clone().map(|(_, s)| s.cost(room)).collect();
    let shares = fair_shares(&costs, room);
    let texts: Vec<(usize, &Shape<'a>)> = texts.collect();
    // One text is always cut by its structure, however small its budget.
    let least = match texts.last() {
        Some(&(last_part, _)) if count > 1 => least_cut(call_id, last_part),
        _ => 0,
    };
    let worth_cutting = shares
        .iter()
        .zip(&costs)
        .all(|(&share, &cost)| share >= cost || share >= least);
    if worth_cutting {
        return texts
            .into_iter()
            .zip(shares)
            .map(|(text, share)| Some(fit(text, share)))
            .collect();
    }
    fit_ends(&texts, &costs, budget, least, call_id)
}

/// The least share a text is cut into: room for a cut's marker (its words and counts,
/// under 100 characters, and its `read_result` call) and as much again of the text.
fn least_cut(call_id: &str, last_part: usize) -> usize {
    let call = CutContext {
        call_id,
        part: last_part,
    }
    .read_call(usize::MAX);
    2 * (100 + call.chars().count())
}

/// Whole texts from the head and the tail of `texts` (whose [`Shape::cost`] at the
/// separators' room is `costs`), the run between them one marker, all within `budget`
/// with the separators. When no whole text fits, the first is cut by its structure into
/// the room left (if worth a cut), so the model sees some of the result. A budget too
/// small for any marker gets the first characters of one (`bare_marker`), as a single cut
/// text does.
fn fit_ends<'a>(
    texts: &[(usize, &Shape<'a>)],
    costs: &[usize],
    budget: usize,
    least: usize,
    call_id: &str,
) -> Vec<Option<Cow<'a, str>>> {
    let n = texts.len();
    let sep = PART_SEPARATOR.chars().count();
    let mut out: Vec<Option<Cow<'a, str>>> = vec![None; n];
    let Some(&(first_part, _)) = texts.first() else {
        return out;
    };
    let last_part = texts.last().map_or(0, |(part, _)| *part);
    // What the run could hold at most, in bytes (a character is at most 4): the costs
    // of shapes other than plain text are whole counts already.
    let most = texts
        .iter()
        .zip(costs)
        .map(|((_, s), &c)| s.text_bytes().unwrap_or(c.saturating_mul(4)))
        .fold(0usize, usize::saturating_add);
    let marker_bound = run_marker_bound(call_id, n, last_part, most);
    let Some(room) = budget.checked_sub(marker_bound) else {
        out[0] = Some(Cow::Owned(bare_marker(
            CutContext {
                call_id,
                part: first_part,
            },
            budget,
        )));
        return out;
    };
    // Characters of text `i`, exact up to the budget: plain texts were counted only up to
    // the separators' room, which 50,000 separators can make nothing.
    let exact = |i: usize| match texts[i].1.text_bytes() {
        Some(_) => texts[i].1.cost(budget),
        None => costs[i],
    };
    let (head, tail) = keep_ends(n, room, sep, exact);
    let whole = |i: usize| {
        let (part, shape) = texts[i];
        shape
            .fit(exact(i), CutContext { call_id, part })
            .unwrap_or_default()
    };
    let mut left_from = head;
    if head == 0 && tail == n && room > sep && room - sep >= least {
        let (part, shape) = texts[0];
        out[0] = shape.fit(room - sep, CutContext { call_id, part });
        left_from = 1;
    }
    for (i, slot) in out.iter_mut().enumerate().take(head) {
        *slot = Some(whole(i));
    }
    let run = texts.get(left_from..tail).unwrap_or_default();
    if let (Some(&(first, _)), Some(&(last, _))) = (run.first(), run.last()) {
        let run = Run {
            first,
            last,
            parts: run.len(),
            amount: amount_of(run),
        };
        out[left_from] = Some(Cow::Owned(run_marker(call_id, &run)));
    }
    for (i, slot) in out.iter_mut().enumerate().skip(tail) {
        *slot = Some(whole(i));
    }
    out
}

/// What a left-out run held: its characters, or its bytes when it is too large to count
/// cheaply (as a cut text's marker does).
fn amount_of(run: &[(usize, &Shape<'_>)]) -> Amount {
    let text_bytes: usize = run.iter().filter_map(|(_, s)| s.text_bytes()).sum();
    if text_bytes <= COUNT_LIMIT {
        return Amount::Chars(run.iter().map(|(_, s)| s.cost(usize::MAX)).sum());
    }
    Amount::Bytes(run.iter().map(|(_, s)| s.full_bytes()).sum())
}
