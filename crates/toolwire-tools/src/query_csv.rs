//! `query_csv`: rows of a workspace CSV file, filtered by column equality, as a `table`.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value as Json};
use tokio_util::sync::CancellationToken;
use toolwire_core::{Align, Column, ColumnType, Value};

use crate::workspace::Workspace;
use crate::{io_error, not_a_file};
use toolwire_tool::ToolAnnotations;
use toolwire_tool::ToolContext;
use toolwire_tool::{Tool, ToolError, tool_fn};

pub(crate) const DEFAULT_LIMIT: u64 = 100;
pub(crate) const MAX_LIMIT: u64 = 10_000;
/// The largest one record (the header included) may be. The CSV reader holds a whole
/// record in memory, so without a cap one endless line (a sparse 5 GB file) is read
/// until memory runs out.
pub(crate) const MAX_RECORD_BYTES: u64 = 1024 * 1024;

/// Reads on until more than `cap` bytes pass without the caller calling `reset` (which it
/// does after each record), then fails with a clear error.
struct RecordCap<R> {
    inner: R,
    since_reset: std::rc::Rc<std::cell::Cell<u64>>,
    cap: u64,
}

impl<R: std::io::Read> std::io::Read for RecordCap<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.since_reset.get() > self.cap {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                RecordTooLarge,
            ));
        }
        let n = self.inner.read(buf)?;
        self.since_reset.set(self.since_reset.get() + n as u64);
        Ok(n)
    }
}

/// The error [`RecordCap`] reads fail with, told apart from other I/O errors by type.
#[derive(Debug)]
struct RecordTooLarge;

impl std::fmt::Display for RecordTooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a record is larger than {} bytes", MAX_RECORD_BYTES)
    }
}

impl std::error::Error for RecordTooLarge {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct QueryCsvArgs {
    /// Path of a CSV file with a header row, relative to the workspace root.
    pub path: String,
    /// Columns to return, in this order. Default: all.
    #[serde(default)]
    pub columns: Option<Vec<String>>,
    /// Keeps rows whose column equals the value, for every entry: `{"country": "FR",
    /// "year": 2024}`. Numbers compare numerically, booleans as `true`/`false`.
    #[serde(default, rename = "where")]
    pub filter: Option<BTreeMap<String, Scalar>>,
    /// Most rows to return. Default 100, at most 10000.
    #[schemars(range(min = 1, max = 10000))]
    #[serde(default)]
    pub limit: Option<u64>,
}

/// A filter value.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum Scalar {
    Bool(bool),
    Number(f64),
    String(String),
}

impl Scalar {
    fn matches(&self, cell: &str) -> bool {
        let cell = cell.trim();
        match self {
            Scalar::String(s) => cell == s.trim(),
            Scalar::Number(n) => cell.parse::<f64>().is_ok_and(|c| c == *n),
            Scalar::Bool(b) => cell.eq_ignore_ascii_case(if *b { "true" } else { "false" }),
        }
    }
}

/// The `query_csv` tool over `workspace`.
pub fn query_csv(workspace: Arc<Workspace>) -> impl Tool {
    tool_fn(
        "query_csv",
        "Reads a CSV file of the workspace (first row = header) as a table: optionally only \
         some `columns`, only rows where each `where` column equals its value, at most \
         `limit` rows (default 100). Columns whose values are all numbers are typed number. \
         The summary says how many rows matched in all.",
        move |args: QueryCsvArgs, ctx: ToolContext| {
            let workspace = Arc::clone(&workspace);
            async move {
                let resolved = workspace.resolve(&args.path)?;
                let cancel = ctx.cancel.clone();
                tokio::task::spawn_blocking(move || {
                    query(&resolved.path, &resolved.display, &args, &cancel)
                })
                .await
                .map_err(|e| ToolError::failed(format!("reading the CSV failed: {e}")))?
            }
        },
    )
    .with_schema(|s| {
        s.annotations = Some(ToolAnnotations {
            read_only_hint: Some(true),
            ..Default::default()
        });
    })
}

fn query(
    path: &Path,
    display: &str,
    args: &QueryCsvArgs,
    cancel: &CancellationToken,
) -> Result<Value, ToolError> {
    let invalid = |e: csv::Error| csv_error(display, e);
    let meta = std::fs::metadata(path).map_err(|e| io_error(display, &e))?;
    if meta.is_dir() {
        return Err(ToolError::with_code(
            "is_directory",
            format!("`{display}` is a directory; give the path of a CSV file"),
        ));
    }
    if !meta.is_file() {
        return Err(not_a_file(display));
    }
    let file = std::fs::File::open(path).map_err(|e| io_error(display, &e))?;
    let since_reset = std::rc::Rc::new(std::cell::Cell::new(0));
    let capped = RecordCap {
        inner: file,
        since_reset: std::rc::Rc::clone(&since_reset),
        cap: MAX_RECORD_BYTES,
    };
    let mut reader = csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(capped);
    let headers = unique_headers(reader.headers().map_err(invalid)?);
    if headers.is_empty() {
        return Err(ToolError::with_code(
            "invalid_csv",
            format!("`{display}` is empty; query_csv needs a header row"),
        ));
    }
    let index_of = |name: &str| -> Result<usize, ToolError> {
        headers.iter().position(|h| h == name).ok_or_else(|| {
            ToolError::InvalidInput(format!(
                "`{display}` has no column `{name}`; its columns are: {}",
                headers.join(", ")
            ))
        })
    };
    let selected: Vec<usize> = match &args.columns {
        Some(cols) if !cols.is_empty() => {
            cols.iter().map(|c| index_of(c)).collect::<Result<_, _>>()?
        }
        _ => (0..headers.len()).collect(),
    };
    let filters: Vec<(usize, &Scalar)> = args
        .filter
        .iter()
        .flatten()
        .map(|(c, v)| index_of(c).map(|i| (i, v)))
        .collect::<Result<_, _>>()?;
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT) as usize;

    let mut kept: Vec<Vec<String>> = Vec::new();
    let mut matched = 0u64;
    let mut read = 0u64;
    let mut record = csv::StringRecord::new();
    while reader.read_record(&mut record).map_err(invalid)? {
        since_reset.set(0);
        read += 1;
        if read.is_multiple_of(4096) && cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let cell = |i: usize| record.get(i).unwrap_or_default();
        if !filters.iter().all(|(i, want)| want.matches(cell(*i))) {
            continue;
        }
        matched += 1;
        if kept.len() < limit {
            kept.push(selected.iter().map(|&i| cell(i).to_owned()).collect());
        }
    }

    let numeric: Vec<bool> = (0..selected.len())
        .map(|c| {
            let mut values = kept
                .iter()
                .map(|row| row[c].trim())
                .filter(|v| !v.is_empty());
            let mut any = false;
            let all = values.all(|v| {
                any = true;
                parse_number(v).is_some()
            });
            any && all
        })
        .collect();
    let columns: Vec<Column> = selected
        .iter()
        .zip(&numeric)
        .map(|(&i, &num)| {
            let col = Column::new(headers[i].clone());
            if num {
                col.typed(ColumnType::Number).align(Align::Right)
            } else {
                col.typed(ColumnType::String)
            }
        })
        .collect();
    let rows: Vec<Json> = kept
        .into_iter()
        .map(|row| {
            let mut obj = Map::new();
            for ((cell, &i), &num) in row.into_iter().zip(&selected).zip(&numeric) {
                let v = if !num {
                    Json::String(cell)
                } else {
                    parse_number(cell.trim()).unwrap_or(Json::Null)
                };
                obj.insert(headers[i].clone(), v);
            }
            Json::Object(obj)
        })
        .collect();
    let shown = rows.len() as u64;
    let noun = |n: u64| if n == 1 { "row" } else { "rows" };
    let summary = if shown == matched {
        format!("{shown} {}", noun(shown))
    } else {
        format!("{shown} of {matched} {} (limit {limit})", noun(matched))
    };
    Ok(Value::table(columns, rows).summary(summary))
}

/// The csv crate's errors, reworded to name the file and the line a person would look at.
fn csv_error(display: &str, e: csv::Error) -> ToolError {
    let line = |pos: &Option<csv::Position>| {
        pos.as_ref()
            .map(|p| format!("line {}", p.line()))
            .unwrap_or_else(|| "a record".to_owned())
    };
    let what = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            pos,
            expected_len,
            len,
        } => format!(
            "{} has {len} fields, but the header has {expected_len}",
            line(pos)
        ),
        csv::ErrorKind::Utf8 { pos, err } => format!(
            "{} is not valid UTF-8 (field {}); query_csv reads UTF-8 CSV only",
            line(pos),
            err.field() + 1
        ),
        csv::ErrorKind::Io(io) if io.get_ref().is_some_and(|e| e.is::<RecordTooLarge>()) => {
            return ToolError::with_code(
                "record_too_large",
                format!(
                    "`{display}` has a record (or header) over {} KiB; query_csv reads \
                     records up to that size",
                    MAX_RECORD_BYTES / 1024
                ),
            );
        }
        csv::ErrorKind::Io(io) => return io_error(display, io),
        _ => e.to_string(),
    };
    ToolError::with_code(
        "invalid_csv",
        format!("`{display}` is not valid CSV: {what}"),
    )
}

/// A JSON number for a cell, keeping integers integral; `None` for anything else,
/// including `NaN` and `inf`, which Rust parses but JSON cannot hold.
fn parse_number(s: &str) -> Option<Json> {
    if let Ok(i) = s.parse::<i64>() {
        return Some(Json::from(i));
    }
    let f = s.parse::<f64>().ok().filter(|f| f.is_finite())?;
    // Rust accepts "infinity"/"nan" spellings; only digits make a number here.
    if !s.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    serde_json::Number::from_f64(f).map(Json::Number)
}

/// Header names as row keys: blanks get `column_N`, duplicates a `_2`, `_3` suffix, so no
/// column overwrites another in a row object.
fn unique_headers(record: &csv::StringRecord) -> Vec<String> {
    let mut seen = HashSet::new();
    record
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let base = if h.trim().is_empty() {
                format!("column_{}", i + 1)
            } else {
                h.trim().to_owned()
            };
            let mut name = base.clone();
            let mut n = 2;
            while !seen.insert(name.clone()) {
                name = format!("{base}_{n}");
                n += 1;
            }
            name
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_number("42"), Some(Json::from(42)));
        assert_eq!(parse_number("-1.5"), Some(Json::from(-1.5)));
        assert_eq!(parse_number("1e3"), Some(Json::from(1000.0)));
        assert_eq!(parse_number("NaN"), None);
        assert_eq!(parse_number("inf"), None);
        assert_eq!(parse_number("12 apples"), None);
    }

    #[test]
    fn headers_are_unique() {
        let r = csv::StringRecord::from(vec!["a", "", "a", " b "]);
        assert_eq!(unique_headers(&r), ["a", "column_2", "a_2", "b"]);
    }

    #[test]
    fn filters() {
        assert!(Scalar::Number(3.0).matches(" 3.0 "));
        assert!(!Scalar::Number(3.0).matches("three"));
        assert!(Scalar::Bool(true).matches("TRUE"));
        assert!(Scalar::String("FR".into()).matches("FR"));
        assert!(!Scalar::String("FR".into()).matches("fr"));
    }
}
