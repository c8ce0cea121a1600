//! `toolwire render` in a real 80×24 terminal (tmux): a 2,000-row table, a 5,000-line
//! diff, a 20,000-line log and 3,000 structured records must each fit on one screen, cut
//! with a count, in colour; the log keeps its last line.
//!
//! Needs tmux: with CI set a missing tmux fails the test; without CI it skips, saying why.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod tmux_pane;

use std::path::{Path, PathBuf};

use tmux_pane::{Pane, tmux_available};

use serde_json::json;

const WIDTH: usize = 80;
const HEIGHT: usize = 24;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_toolwire")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolwire-tmux-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `toolwire render file` in a fresh 80×24 pane and returns the screen once the
/// command has exited: plain text, and with the escape sequences tmux kept (`-e`).
fn render(name: &str, file: &Path) -> (String, String) {
    let script = format!(
        "unset NO_COLOR CLICOLOR_FORCE COLUMNS LINES; TERM=xterm-256color '{}' render '{}'; echo \"__EXIT $?__\"; sleep 60",
        bin(),
        file.display()
    );
    let pane = Pane::start(name, WIDTH, HEIGHT, &script);
    pane.wait_for("__EXIT ", 30);
    // Only the visible screen: whether anything scrolled away is what the test checks.
    (pane.screen(false), pane.screen(true))
}

fn lines(screen: &str) -> Vec<&str> {
    screen.lines().collect()
}

fn assert_fits_one_screen(screen: &str, header: &str) {
    let ls = lines(screen);
    assert!(
        screen.contains("__EXIT 0__"),
        "toolwire render failed or hung:\n{screen}"
    );
    // Nothing scrolled away: the header is still the first line.
    assert!(
        ls.first().is_some_and(|l| l.starts_with(header)),
        "header not on the first line:\n{screen}"
    );
    let exit_line = ls.iter().position(|l| l.contains("__EXIT 0__")).unwrap();
    assert!(
        exit_line < HEIGHT,
        "output taller than the screen:\n{screen}"
    );
    for l in &ls {
        assert!(l.chars().count() <= WIDTH, "line wider than {WIDTH}: {l:?}");
    }
}

#[test]
fn a_2000_row_table_fits_an_80x24_terminal() {
    if !tmux_available() {
        return;
    }
    let dir = scratch("table");
    let rows: Vec<_> = (1..=2000)
        .map(|i| json!({"id": i, "path": format!("src/module_{i}.rs"), "bytes": i * 37 % 10_000, "ok": i % 3 != 0}))
        .collect();
    let value = json!({"kind": "table", "summary": "2,000 modules",
                       "data": {"columns": [{"key": "id"}, {"key": "path"}, {"key": "bytes", "type": "number"}, {"key": "ok"}],
                                "rows": rows}});
    let file = dir.join("table.json");
    std::fs::write(&file, serde_json::to_vec(&value).unwrap()).unwrap();

    let (screen, styled) = render("table", &file);
    assert_fits_one_screen(&screen, "▾ table 4 columns × 2,000 rows · 2,000 modules");
    let ls = lines(&screen);
    let first_row = ls
        .iter()
        .position(|l| l.contains("src/module_1.rs "))
        .expect("first row shown");
    let last_row = ls
        .iter()
        .position(|l| l.contains("src/module_2000.rs"))
        .expect("last row shown");
    let gap = ls
        .iter()
        .position(|l| l.contains('⋮'))
        .expect("gap row shown");
    assert!(first_row < gap && gap < last_row, "{screen}");
    let count = ls
        .iter()
        .find(|l| l.contains("more rows (showing"))
        .expect("count of hidden rows");
    let shown = ls.iter().filter(|l| l.contains("src/module_")).count();
    assert_eq!(
        *count,
        format!(
            "… {} more rows (showing {shown} of 2,000)",
            fmt_count(2000 - shown)
        ),
        "{screen}"
    );
    // Numbers right-aligned: the `bytes` of row 1 (37) ends where row 2000's (4000) does.
    let end_of = |l: &str, n: &str| l.find(&format!(" {n} ")).map(|i| i + n.len() + 1);
    assert_eq!(
        end_of(ls[first_row], "37"),
        end_of(ls[last_row], "4000"),
        "{screen}"
    );
    // A terminal gets colour.
    assert!(
        styled.contains("\x1b["),
        "no colour on a terminal:\n{styled}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_5000_line_diff_fits_an_80x24_terminal() {
    if !tmux_available() {
        return;
    }
    let dir = scratch("diff");
    let original: String = (1..=5000)
        .map(|i| format!("line {i} of the original file\n"))
        .collect();
    let modified: String = (1..=5000)
        .map(|i| {
            if i % 10 == 0 {
                format!("line {i} was changed\n")
            } else {
                format!("line {i} of the original file\n")
            }
        })
        .collect();
    let value = json!({"kind": "diff", "data": {"path": "big.txt", "original": original, "modified": modified, "isNew": false}});
    let file = dir.join("diff.json");
    std::fs::write(&file, serde_json::to_vec(&value).unwrap()).unwrap();

    let (screen, styled) = render("diff", &file);
    assert_fits_one_screen(&screen, "▾ diff big.txt +500 −500");
    let ls = lines(&screen);
    assert!(
        ls.get(1).is_some_and(|l| l.starts_with("@@ -7,")),
        "first hunk right after the header:\n{screen}"
    );
    assert!(
        screen.contains("-line 10 of the original file") && screen.contains("+line 10 was changed"),
        "{screen}"
    );
    let more = ls
        .iter()
        .find(|l| l.contains("more lines (toolwire show --expand)"))
        .expect("count of hidden lines");
    let hidden: u64 = more
        .trim_start_matches("… ")
        .split(' ')
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    assert!(hidden > 4000, "{more}");
    assert!(
        styled.contains("\x1b["),
        "no colour on a terminal:\n{styled}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_20000_line_log_shows_its_last_line_on_an_80x24_terminal() {
    if !tmux_available() {
        return;
    }
    let dir = scratch("log");
    let mut log: String = (1..20_000)
        .map(|i| format!("2024-05-01T12:00:00Z INFO step {i} done\n"))
        .collect();
    log.push_str("2024-05-01T12:00:01Z ERROR disk full: /var/lib/app\n");
    let value = json!({"kind": "text", "summary": "build log", "data": {"content": log}});
    let file = dir.join("log.json");
    std::fs::write(&file, serde_json::to_vec(&value).unwrap()).unwrap();

    let (screen, _) = render("log", &file);
    assert_fits_one_screen(&screen, "▾ text · build log");
    let ls = lines(&screen);
    let first = ls.iter().position(|l| l.contains("INFO step 1 done"));
    let gap = ls
        .iter()
        .position(|l| l.contains("lines left out (toolwire show --expand)"));
    let last = ls.iter().position(|l| l.contains("ERROR disk full"));
    assert!(
        matches!((first, gap, last), (Some(a), Some(b), Some(c)) if a < b && b < c),
        "head, the count of what was left out, then the last line:\n{screen}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn three_thousand_structured_records_are_a_table_on_an_80x24_terminal() {
    if !tmux_available() {
        return;
    }
    let dir = scratch("records");
    let issues: Vec<_> = (0..3000)
        .map(|i| json!({"code": if i % 2 == 0 { "F401" } else { "E501" }, "filename": format!("src/mod_{i}.py"),
                        "line": i + 1, "location": {"column": 1, "row": i + 1}, "message": "`os` imported but unused"}))
        .collect();
    let value = json!({"kind": "structured", "data": {"tool": "ruff", "issues": issues}});
    let file = dir.join("records.json");
    std::fs::write(&file, serde_json::to_vec(&value).unwrap()).unwrap();

    let (screen, _) = render("records", &file);
    assert_fits_one_screen(&screen, "▾ structured");
    assert!(screen.contains("issues [3000]"), "{screen}");
    assert!(
        screen.contains("src/mod_0.py") && screen.contains("src/mod_2999.py"),
        "first and last rows:\n{screen}"
    );
    assert!(
        screen.lines().any(|l| l.contains("more rows (showing")),
        "{screen}"
    );
    assert!(!screen.contains("├─ [0]"), "a table, not a tree:\n{screen}");
    let _ = std::fs::remove_dir_all(dir);
}

fn fmt_count(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
