//! Untrusted input: escape sequences in any tool-supplied string never reach the
//! terminal raw, and data of any shape renders (with a fallback) without panicking.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use serde_json::{Value as Json, json};
use toolwire_core::{
    CallRef, FileEntry, Source, Suspension, SuspensionReason, ToolResult, Value, View, Widget,
};
use toolwire_term::{
    ColorMode, TermOptions, WidgetContext, WidgetError, WidgetRegistry, render, strip_sgr,
};
use unicode_width::UnicodeWidthStr;

/// Whether every ESC starts an SGR sequence and no other control (but `\n`), C1 control
/// or bidi override is present.
fn terminal_safe(s: &str) -> Result<(), String> {
    let mut rest = s;
    while let Some(i) = rest.find('\x1b') {
        let body = rest[i + 1..]
            .strip_prefix('[')
            .ok_or_else(|| format!("bare ESC in {s:?}"))?;
        let end = body
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .ok_or("unterminated")?;
        if !body[end..].starts_with('m') {
            return Err(format!("non-SGR CSI in {s:?}"));
        }
        rest = &body[end + 1..];
    }
    let plain = strip_sgr(s);
    for c in plain.chars() {
        let bad = (c.is_control() && c != '\n')
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c);
        if bad {
            return Err(format!("control {c:?} in {plain:?}"));
        }
    }
    Ok(())
}

fn echo_registry() -> WidgetRegistry {
    let mut reg = WidgetRegistry::new();
    // A careless renderer that pastes untrusted data into its output.
    reg.register("echo", |data: &Json, ctx: &WidgetContext| {
        Ok::<_, WidgetError>(ctx.paint("1", data.as_str().unwrap_or("")))
    });
    reg
}

/// One result that puts `s` in every place a tool controls.
fn everywhere(s: &str) -> ToolResult {
    let outputs = vec![
        Value::text(s).summary(s),
        Value::markdown(format!(
            "# {s}\n\n- {s}\n\n```\n{s}\n```\n\n| {s} |\n|---|\n| {s} |\n"
        )),
        Value::file_content(s, s),
        Value::diff(
            s,
            Some(format!("{s}\nsame\n")),
            format!("other {s}\nsame\n"),
        ),
        Value::table(
            [toolwire_core::Column::new("a").label(s)],
            [json!({"a": s})],
        ),
        Value::structured(json!({ s: [s, {s: s}] })),
        Value::file_list(
            s,
            vec![FileEntry::file(s, 1), FileEntry::file(format!("{s}/x"), 2)],
            false,
        ),
        Value::image(Source::url(s), s).summary(s),
        Value::new("image", json!({"source": {"base64": "AAAA"}, "alt": s})).mime("image/png"),
        Value::file(Source::url(s), "audio/wav", Some(s.to_owned())),
        Value::resource_link(toolwire_core::ResourceLinkData {
            uri: s.into(),
            name: Some(s.into()),
            description: Some(s.into()),
            size: None,
        })
        .mime(s),
        Value::new(s, json!(s)).view(View::Code).language(s),
        Value::new("acme.x", json!(s)).view(View::Diff),
        Value::new("acme.x", json!([{ s: s }])),
        Value::new("acme.x", json!({ "v": s })).view(View::Raw),
    ];
    let mut r = ToolResult::success(CallRef::new(s, s), outputs)
        .with_widget(Widget::new("echo", json!(s), s))
        .with_widget(Widget::new(s, json!(s), s));
    r.metadata.duration_ms = Some(1);
    r
}

fn check_everywhere(s: &str) {
    let mut reg_opts = TermOptions::plain(40).with_widgets(echo_registry());
    for color in [ColorMode::Off, ColorMode::Ansi256, ColorMode::TrueColor] {
        reg_opts = reg_opts.with_color(color);
        let mut results = vec![everywhere(s)];
        results.push(ToolResult::error(CallRef::new(s, s), s));
        results.push(ToolResult::suspended(
            CallRef::new(s, s),
            Suspension {
                id: s.into(),
                reason: SuspensionReason::Input,
                prompt: s.into(),
                input_schema: Some(json!({ s: s })),
            },
        ));
        for r in &results {
            let out = render(r, &reg_opts);
            if let Err(e) = terminal_safe(&out) {
                panic!("{color:?}: {e}");
            }
            if color == ColorMode::Off {
                assert!(!out.contains('\x1b'));
            }
            for line in strip_sgr(&out).lines() {
                assert!(line.width() <= 40, "{line:?} wider than 40");
            }
        }
    }
}

#[test]
fn known_attacks_are_neutralized() {
    for attack in [
        "\x1b]52;c;ZXZpbA==\x07",                       // clipboard write
        "\x1b]52;c;ZXZpbA==\x1b\\",                     // clipboard write, ST-terminated
        "\x1b[2J\x1b[H",                                // clear screen, home
        "\x1b[31mred\x1b[0m",   // tool colour (not ours): shown, not applied
        "\x1bP+q544e\x1b\\",    // DCS
        "\x1b_Ga=d\x1b\\",      // kitty graphics delete
        "\u{9b}2J",             // 8-bit CSI
        "\u{202e}evil\u{202c}", // bidi override
        "a\rb\x08c\x00d\x7f",   // CR, backspace, NUL, DEL
        "\x1b]8;;https://evil\x1b\\link\x1b]8;;\x1b\\", // hyperlink
    ] {
        check_everywhere(attack);
    }
}

#[test]
fn the_issue_examples_never_reach_the_terminal_raw() {
    let r = ToolResult::success(
        CallRef::new("c", "t"),
        Value::text("x\x1b]52;c;ZXZpbA==\x07y\x1b[2Jz"),
    );
    let out = render(&r, &TermOptions::plain(80).with_color(ColorMode::Ansi256));
    assert!(
        !out.contains("\x1b]52;") && !out.contains("\x1b[2J"),
        "{out:?}"
    );
    assert!(out.contains("x␛]52;c;ZXZpbA==␇y␛[2Jz"), "{out:?}");
}

fn json_strategy() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        ".{0,20}".prop_map(Json::String),
        "[\\x00-\\x1f\\x7f\u{80}-\u{9f}a ]{0,10}".prop_map(Json::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("content".to_owned()),
                    Just("path".to_owned()),
                    Just("rows".to_owned()),
                    Just("columns".to_owned()),
                    Just("entries".to_owned()),
                    Just("source".to_owned()),
                    Just("modified".to_owned()),
                    Just("hunks".to_owned()),
                    Just("key".to_owned()),
                    ".{0,6}",
                ],
                inner,
                0..6
            )
            .prop_map(|m| Json::Object(m.into_iter().collect())),
        ]
    })
}

fn kind_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "text",
            "diff",
            "file_content",
            "file_list",
            "table",
            "image",
            "file",
            "resource_link",
            "structured",
            "acme.x",
        ])
        .prop_map(str::to_owned),
        ".{0,12}",
    ]
}

fn view_strategy() -> impl Strategy<Value = Option<View>> {
    prop::option::of(prop::sample::select(vec![
        View::Text,
        View::Markdown,
        View::Code,
        View::Diff,
        View::Table,
        View::Tree,
        View::Image,
        View::Raw,
        View::Hidden,
    ]))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings_never_emit_foreign_escapes(s in "\\PC{0,40}|[\\x00-\\x1f\\x7f\u{80}-\u{9f}\u{202a}-\u{202e}\u{2066}-\u{2069}a-z\\[\\];0-9 ]{0,40}") {
        check_everywhere(&s);
    }

    #[test]
    fn arbitrary_data_of_any_kind_renders_safely(
        kind in kind_strategy(),
        data in json_strategy(),
        mime in prop::option::of(prop::sample::select(vec!["text/plain", "text/markdown", "image/png", "application/json", "x/\x1b[2J"])),
        view in view_strategy(),
        max_height in prop::option::of(0u32..5),
        collapsed in any::<bool>(),
        width in 1usize..100,
    ) {
        let mut v = Value::new(kind, data);
        v.mime_type = mime.map(str::to_owned);
        if let Some(view) = view {
            v = v.view(view);
        }
        if let Some(h) = max_height {
            v = v.max_height(h);
        }
        v = v.collapsed(collapsed);
        let opts = TermOptions::plain(width).with_color(ColorMode::Ansi256);
        let out = render(&v, &opts);
        prop_assert!(terminal_safe(&out).is_ok(), "{:?}", terminal_safe(&out));
        for line in strip_sgr(&out).lines() {
            prop_assert!(line.width() <= width.max(16), "{:?} wider than {}", line, width);
        }
        let doc = serde_json::to_value(&v).unwrap();
        let via_json = toolwire_term::render_json(&doc, &opts).unwrap();
        prop_assert_eq!(via_json, out);
    }
}
