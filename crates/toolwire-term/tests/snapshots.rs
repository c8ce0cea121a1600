//! Snapshots of every rendering case at widths 80 and 40 without colour, and the check
//! that colour output is exactly the plain output plus SGR codes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use support::{cases, options};
use toolwire_term::{ColorMode, strip_sgr};
use unicode_width::UnicodeWidthStr;

fn snapshot_all(width: usize) {
    let opts = options(width, ColorMode::Off);
    for (name, case) in cases() {
        let text = case.render(&opts);
        insta::assert_snapshot!(format!("{name}__w{width}"), text);
    }
}

#[test]
fn snapshots_at_width_80() {
    snapshot_all(80);
}

#[test]
fn snapshots_at_width_40() {
    snapshot_all(40);
}

#[test]
fn wide_terminals_get_side_by_side_diffs() {
    let opts = options(140, ColorMode::Off);
    let (_, case) = cases()
        .into_iter()
        .find(|(n, _)| *n == "diff_computed")
        .unwrap();
    let text = case.render(&opts);
    assert!(
        text.lines().any(|l| l.contains(" │ ")
            && l.contains("-    println!")
            && l.contains("+    println!")),
        "{text}"
    );
    insta::assert_snapshot!("diff_computed__w140", text);
}

/// Every ESC in `s` starts an SGR sequence `ESC [ digits ; … m`.
fn only_sgr(s: &str) -> bool {
    let mut rest = s;
    while let Some(i) = rest.find('\x1b') {
        let after = &rest[i + 1..];
        let Some(body) = after.strip_prefix('[') else {
            return false;
        };
        let Some(end) = body.find(|c: char| !(c.is_ascii_digit() || c == ';')) else {
            return false;
        };
        if !body[end..].starts_with('m') {
            return false;
        }
        rest = &body[end + 1..];
    }
    true
}

#[test]
fn colour_adds_only_sgr_codes_to_the_plain_text() {
    let mut coloured = 0;
    let all = cases();
    for width in [80, 40] {
        for mode in [ColorMode::Ansi256, ColorMode::TrueColor] {
            let plain_opts = options(width, ColorMode::Off);
            let colour_opts = options(width, mode);
            for (name, case) in &all {
                let plain = case.render(&plain_opts);
                let colour = case.render(&colour_opts);
                assert!(!plain.contains('\x1b'), "{name}: escape with colour off");
                assert!(only_sgr(&colour), "{name}: non-SGR escape in {colour:?}");
                assert_eq!(strip_sgr(&colour), plain, "{name} at {width} in {mode:?}");
                if colour != plain {
                    coloured += 1;
                }
            }
        }
    }
    // The comparison means something only if colour was actually used.
    assert!(
        coloured > all.len() * 3,
        "colour used in only {coloured} renderings"
    );
}

#[test]
fn every_line_fits_the_width() {
    for width in [80, 40, 20] {
        let opts = options(width, ColorMode::Off);
        for (name, case) in cases() {
            for line in case.render(&opts).lines() {
                assert!(
                    line.width() <= width,
                    "{name} at {width}: {line:?} is {} wide",
                    line.width()
                );
            }
        }
    }
}

fn case_text(name: &str, width: usize) -> String {
    let (_, case) = cases().into_iter().find(|(n, _)| *n == name).unwrap();
    case.render(&options(width, ColorMode::Off))
}

/// A long log cut to its height shows its end too: the error on its last line.
#[test]
fn a_cut_long_log_shows_its_last_line() {
    for width in [80, 40] {
        let text = case_text("max_height_long_log", width);
        assert!(text.contains("ERROR disk full"), "{text}");
        assert!(text.contains("step 1 done"), "{text}");
        assert!(text.contains("lines left out"), "{text}");
        assert!(text.lines().count() <= 12, "{text}");
    }
}

/// An MCP App's fallback text, which is its call's text, is printed once: the app's line
/// says it is above.
#[test]
fn an_apps_fallback_that_is_its_text_is_printed_once() {
    for width in [80, 40] {
        let text = case_text("widget_mcp_app_text_above", width);
        assert_eq!(text.matches("0,1,4").count(), 1, "{text}");
        assert!(text.contains("ui://fixture/chart.html"), "{text}");
    }
}

/// Like records are a table of one screen, not a tree of a node per field.
#[test]
fn like_records_draw_as_a_table() {
    let text = case_text("structured_records", 80);
    assert!(text.lines().any(|l| l.starts_with('┌')), "{text}");
    assert!(!text.contains("├─ [0]"), "{text}");
    assert!(text.lines().count() < 20, "{text}");
    let text = case_text("max_height_structured_records", 80);
    assert!(text.contains("more rows (showing"), "{text}");
    assert!(text.lines().count() <= 16, "{text}");
}

/// A multi-line string in structured data reads as its lines, not as escaped JSON, and
/// a zero-width space shows as the zero-width stand-in, not as `�`.
#[test]
fn multi_line_strings_in_structured_data_read_as_lines() {
    for width in [80, 40] {
        let text = case_text("structured_multiline", width);
        assert!(text.contains("│    error[E0425]"), "{text}");
        assert!(text.contains("│     --> src/main.rs:3:5"), "{text}");
        assert!(!text.contains("\\n"), "{text}");
        assert!(text.contains("a◌b") && !text.contains('\u{fffd}'), "{text}");
    }
}
