//! The rendering cases shared by the snapshot and colour tests: every well-known kind,
//! every generic view, every display hint, errors, suspensions and widgets.

#![allow(dead_code)]

use serde_json::json;
use toolwire_core::{
    Audience, CallRef, ColumnType, FileEntry, ResourceLinkData, Source, Suspension,
    SuspensionReason, ToolResult, Value, View, Widget, WidgetApp,
};
use toolwire_term::{ColorMode, Render, TermOptions, WidgetContext, WidgetError, WidgetRegistry};

/// A real 20×20 PNG (a colour gradient).
pub(crate) const PNG_20: &str = "iVBORw0KGgoAAAANSUhEUgAAABQAAAAUCAYAAACNiR0NAAAAtUlEQVR4Ae3AA6AkWZbG8f937o3IzKdyS2Oubdu2bdu2bdu2bWmMnpZKr54yMyLu+Xa3anqmhztr1a/CZ3sL2AK2gC1gC9gCtoAtYAvYAraALWAL2AK2gC1gC9gCtoDKFv+RqGzxH4nKFv+RqGzxH4nKFv+RqGzxH4nKFv+RqGzxH4nKFv+RqGzxH4nKFv+RqGzxH4nKFv+RqGzxH4nKFv+RqGzxH4nKFv+RqGzxH4nKFv+RqGzxH4nKFv+R+EfRRgOYk79DcQAAAABJRU5ErkJggg==";

pub(crate) enum Case {
    Result(Box<ToolResult>),
    Value(Box<Value>),
    Values(Vec<Value>),
}

impl Case {
    pub(crate) fn render(&self, opts: &TermOptions) -> String {
        match self {
            Case::Result(r) => toolwire_term::render(r.as_ref(), opts),
            Case::Value(v) => toolwire_term::render(v.as_ref(), opts),
            Case::Values(v) => toolwire_term::render(v.as_slice(), opts),
        }
    }

    pub(crate) fn render_lines(&self, opts: &TermOptions, lines: &mut Vec<String>) {
        match self {
            Case::Result(r) => r.render_lines(opts, lines),
            Case::Value(v) => v.render_lines(opts, lines),
            Case::Values(v) => v.render_lines(opts, lines),
        }
    }
}

fn value(v: Value) -> Case {
    Case::Value(Box::new(v))
}

fn result(r: ToolResult) -> Case {
    Case::Result(Box::new(r))
}

fn call(tool: &str) -> CallRef {
    CallRef::new("call_1", tool)
}

const RUST_BEFORE: &str = "use std::io;\n\nfn main() {\n    let name = \"world\";\n    println!(\"hello {}\", name);\n    helper();\n}\n\nfn helper() {\n    // does nothing yet\n}\n";
const RUST_AFTER: &str = "use std::io;\n\nfn main() {\n    let name = std::env::args().nth(1).unwrap_or_else(|| \"world\".into());\n    println!(\"hello {name}\");\n}\n\nfn helper() {\n    // does nothing yet\n    todo();\n}\n";

const MARKDOWN: &str = "# Release notes\n\nThis release **fixes** the parser and adds `--expand`. See [the docs](https://example.com/docs) for *details*; a long sentence follows so that the paragraph has to wrap at narrow widths.\n\n- first item\n- second item with `code`\n  1. nested one\n  2. nested two\n\n> A quoted remark.\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\n| name | size |\n|------|-----:|\n| a.rs | 12 |\n| b.rs | 3400 |\n\n---\n\nDone.\n";

fn weather_registry() -> WidgetRegistry {
    let mut reg = WidgetRegistry::new();
    reg.register(
        "weather-forecast",
        |data: &serde_json::Value, ctx: &WidgetContext| {
            let city = data
                .get("city")
                .and_then(|c| c.as_str())
                .ok_or(WidgetError::BadData("no city".into()))?;
            let temp = data
                .get("temperature")
                .and_then(|t| t.as_f64())
                .unwrap_or(f64::NAN);
            let mut out = format!(
                "{} {}  {temp}°C",
                ctx.paint("1;33", "☀"),
                ctx.paint("1", city)
            );
            for day in data
                .get("forecast")
                .and_then(|f| f.as_array())
                .into_iter()
                .flatten()
            {
                out.push_str(&format!(
                    "\n  {}: {}–{}°C",
                    day["day"].as_str().unwrap_or("?"),
                    day["low"],
                    day["high"]
                ));
            }
            Ok(out)
        },
    );
    reg
}

pub(crate) fn options(width: usize, color: ColorMode) -> TermOptions {
    TermOptions::plain(width)
        .with_color(color)
        .with_widgets(weather_registry())
}

fn table_rows(n: usize) -> Vec<serde_json::Value> {
    (1..=n)
        .map(|i| json!({"id": i, "path": format!("src/module_{i}.rs"), "lines": i * 37 % 1000, "ok": i % 3 != 0}))
        .collect()
}

/// A log of `n` lines whose last line is the error.
pub(crate) fn long_log(n: usize) -> String {
    let mut log: String = (1..n)
        .map(|i| format!("2024-05-01T12:00:00Z INFO step {i} done\n"))
        .collect();
    log.push_str("2024-05-01T12:00:01Z ERROR disk full: /var/lib/app\n");
    log
}

/// Diagnostics as `ruff check --output-format json` writes them.
pub(crate) fn ruff_issues(n: usize) -> Vec<serde_json::Value> {
    (0..n)
        .map(|i| {
            json!({
                "cell": null,
                "code": if i % 2 == 0 { "F401" } else { "E501" },
                "end_location": {"column": 10, "row": i + 1},
                "filename": format!("src/pkg/mod_{i}.py"),
                "fix": if i % 2 == 0 { json!({"applicability": "safe", "message": "Remove unused import"}) } else { json!(null) },
                "location": {"column": 1, "row": i + 1},
                "message": if i % 2 == 0 { "`os` imported but unused".to_owned() } else { format!("Line too long ({} > 88)", 89 + i) },
                "noqa_row": i + 1,
                "url": "https://docs.astral.sh/ruff/rules/unused-import",
            })
        })
        .collect()
}

/// Every case, by snapshot name.
pub(crate) fn cases() -> Vec<(&'static str, Case)> {
    let mut cases: Vec<(&'static str, Case)> = Vec::new();

    // Well-known kinds.
    cases.push((
        "text_plain",
        value(Value::text(
            "Build finished.\n\tindented with a tab\n    four spaces kept\n\nA long line that goes on and on so that it must be wrapped when the terminal is narrow.",
        )),
    ));
    cases.push(("text_markdown", value(Value::markdown(MARKDOWN))));
    cases.push((
        "diff_computed",
        value(
            Value::diff("src/main.rs", Some(RUST_BEFORE.into()), RUST_AFTER)
                .summary("Take the name from argv"),
        ),
    ));
    cases.push((
        "diff_hunks",
        value(Value::new(
            "diff",
            json!({"path": "README.md", "original": "a\nb\n", "modified": "a\nc\n", "isNew": false,
                   "hunks": [{"oldStart": 10, "oldLines": 3, "newStart": 10, "newLines": 3,
                              "lines": [" keep", "-old line", "+new line", " keep too"]}]}),
        )),
    ));
    cases.push((
        "diff_new_file",
        value(Value::diff(
            "notes/todo.md",
            None,
            "- write tests\n- ship\n",
        )),
    ));
    cases.push((
        "file_content_rust",
        value(Value::file_content("src/main.rs", RUST_AFTER)),
    ));
    cases.push((
        "file_content_language_hint",
        value(Value::file_content("bin/run", "import sys\n\nprint(sys.argv)\n").language("python")),
    ));
    cases.push((
        "file_list_flat",
        value(Value::file_list(
            "/work/project",
            vec![
                FileEntry::dir("src"),
                FileEntry {
                    modified: Some("2024-05-01T12:34:56Z".into()),
                    ..FileEntry::file("Cargo.toml", 1234)
                },
                FileEntry {
                    modified: Some("2024-04-30T08:00:00Z".into()),
                    ..FileEntry::file("README.md", 5_300)
                },
                FileEntry {
                    name: "latest".into(),
                    entry_type: toolwire_core::EntryType::Symlink,
                    size: None,
                    modified: None,
                },
            ],
            false,
        )),
    ));
    cases.push((
        "file_list_nested",
        value(Value::file_list(
            "/work/project",
            vec![
                FileEntry::file("src/lib.rs", 20_480),
                FileEntry::file("src/kinds/table.rs", 7_000),
                FileEntry::file("src/kinds/tree.rs", 4_100),
                FileEntry::file("Cargo.toml", 612),
            ],
            true,
        )),
    ));
    cases.push((
        "table",
        value(
            Value::table(
                [
                    toolwire_core::Column::new("id").label("#"),
                    toolwire_core::Column::new("path").label("Path"),
                    toolwire_core::Column::new("lines").typed(ColumnType::Number),
                    toolwire_core::Column::new("ok"),
                ],
                table_rows(4),
            )
            .summary("4 modules"),
        ),
    ));
    cases.push((
        "image_base64",
        value(Value::image(Source::base64(PNG_20), "image/png").summary("gradient")),
    ));
    cases.push((
        "image_blob",
        value(Value::image(
            Source::blob(format!("blake3:{}", "ab12".repeat(16)), 48_213),
            "image/jpeg",
        )),
    ));
    cases.push((
        "image_url",
        value(Value::image(
            Source::url("https://example.com/cat.png"),
            "image/png",
        )),
    ));
    cases.push((
        "file_audio",
        value(Value::file(
            Source::blob(format!("blake3:{}", "cd34".repeat(16)), 1_200_000),
            "audio/wav",
            Some("take1.wav".into()),
        )),
    ));
    cases.push((
        "file_document",
        value(Value::file(
            Source::url("https://example.com/report.pdf"),
            "application/pdf",
            Some("report.pdf".into()),
        )),
    ));
    cases.push((
        "file_binary",
        value(Value::file(
            Source::base64("AAECAwQF"),
            "application/octet-stream",
            None,
        )),
    ));
    cases.push((
        "resource_link",
        value(
            Value::resource_link(ResourceLinkData {
                uri: "file:///work/project/README.md".into(),
                name: Some("README.md".into()),
                description: Some("The project readme".into()),
                size: Some(5_300),
            })
            .mime("text/markdown"),
        ),
    ));
    cases.push((
        "structured",
        value(Value::structured(
            json!({"branch": "main", "ahead": 2, "clean": false, "staged": ["a.rs", "b.rs"], "remote": {"name": "origin", "url": null}}),
        )),
    ));

    // Results: error, suspended, priority, audience, widgets.
    let mut err = ToolResult::error_with_code(
        call("read_file"),
        "not_found",
        "No such file: /etc/missing.conf",
    );
    if let Some(e) = err.error.as_mut() {
        e.details = Some(json!({"path": "/etc/missing.conf", "errno": 2}));
    }
    err.metadata.duration_ms = Some(3);
    cases.push(("result_error", result(err)));
    cases.push((
        "result_suspended_approval",
        result(ToolResult::suspended(
            call("delete_files"),
            Suspension {
                id: "susp_7".into(),
                reason: SuspensionReason::Approval,
                prompt: "Delete 3 files under /tmp/build?".into(),
                input_schema: None,
            },
        )),
    ));
    cases.push((
        "result_suspended_input",
        result(ToolResult::suspended(
            call("ask_user"),
            Suspension {
                id: "susp_8".into(),
                reason: SuspensionReason::Input,
                prompt: "Which branch should I deploy?".into(),
                input_schema: Some(json!({"type": "object", "properties": {"branch": {"type": "string"}}, "required": ["branch"]})),
            },
        )),
    ));
    let mut ok = ToolResult::success(
        call("summarize"),
        vec![
            Value::text("low priority, shown last").priority(-1),
            Value::text("for the model only").audience([Audience::Assistant]),
            Value::text("high priority, shown first").priority(10),
            Value::text("default priority"),
        ],
    );
    ok.metadata.duration_ms = Some(2345);
    cases.push(("result_priority_and_audience", result(ok)));
    let weather = json!({"city": "Lisbon", "temperature": 21.5,
                         "forecast": [{"day": "Mon", "low": 15, "high": 22}, {"day": "Tue", "low": 16, "high": 24}]});
    cases.push((
        "widget_with_renderer",
        result(
            ToolResult::success(call("weather.get"), Value::text("Lisbon: 21.5°C")).with_widget(
                Widget::new("weather-forecast", weather.clone(), "Lisbon: 21.5°C, sunny"),
            ),
        ),
    ));
    cases.push((
        "widget_without_renderer",
        result(
            ToolResult::success(call("calendar.today"), Value::text("2 events")).with_widget(
                Widget::new(
                    "calendar-day",
                    json!({"events": 2}),
                    "09:00 Standup\n14:00 Review",
                ),
            ),
        ),
    ));
    cases.push((
        "widget_renderer_rejects_data",
        result(
            ToolResult::success(call("weather.get"), Value::text("?")).with_widget(Widget::new(
                "weather-forecast",
                json!({"temperature": 3}),
                "no city given",
            )),
        ),
    ));
    let mut app = Widget::new("mcp_app", json!({}), "An interactive chart of CPU use");
    app.app = Some(WidgetApp {
        uri: "ui://charts/cpu".into(),
        mime_type: Some("text/html".into()),
        html: None,
        html_blob: None,
        csp: None,
        permissions: None,
    });
    cases.push((
        "widget_mcp_app",
        result(
            ToolResult::success(call("charts.cpu"), Value::text("chart ready")).with_widget(app),
        ),
    ));
    // An MCP App whose fallback is its call's text (as every app's is): drawn once.
    let mut app = Widget::new("mcp_app", json!({}), "0,1,4");
    app.app = Some(WidgetApp {
        uri: "ui://fixture/chart.html".into(),
        mime_type: Some("text/html;profile=mcp-app".into()),
        html: None,
        html_blob: None,
        csp: None,
        permissions: None,
    });
    cases.push((
        "widget_mcp_app_text_above",
        result(ToolResult::success(call("chart"), Value::text("0,1,4")).with_widget(app)),
    ));

    // Unknown kinds, one per preferredView.
    let weather_data = json!({"city": "Lisbon", "temperature": 21.5, "conditions": "sunny"});
    cases.push((
        "view_text",
        value(Value::new("acme.log", json!("line one\nline two")).view(View::Text)),
    ));
    cases.push((
        "view_markdown",
        value(
            Value::new(
                "acme.note",
                json!({"content": "## Heading\n\n*emphasis* and `code`"}),
            )
            .view(View::Markdown),
        ),
    ));
    cases.push((
        "view_code",
        value(
            Value::new(
                "acme.snippet",
                json!("SELECT id, name\n  FROM users\n WHERE id = 1;"),
            )
            .view(View::Code)
            .language("sql"),
        ),
    ));
    cases.push((
        "view_diff",
        value(
            Value::new(
                "git.patch",
                json!("--- a/x.txt\n+++ b/x.txt\n@@ -1,2 +1,2 @@\n-old\n+new\n same"),
            )
            .view(View::Diff),
        ),
    ));
    cases.push((
        "view_table",
        value(
            Value::new("acme.people", json!([{"name": "Ada", "age": 36}, {"name": "Linus", "age": 54, "city": "Portland"}]))
                .view(View::Table),
        ),
    ));
    cases.push((
        "view_tree",
        value(
            Value::new("weather.current", weather_data.clone())
                .view(View::Tree)
                .summary("21.5°C in Lisbon"),
        ),
    ));
    cases.push((
        "view_image",
        value(
            Value::new(
                "acme.chart",
                json!({"source": {"base64": PNG_20}, "alt": "CPU chart"}),
            )
            .view(View::Image)
            .mime("image/png"),
        ),
    ));
    cases.push((
        "view_raw",
        value(Value::new("acme.debug", weather_data.clone()).view(View::Raw)),
    ));
    cases.push((
        "view_hidden",
        value(Value::new("acme.internal", json!({"secret": 1})).view(View::Hidden)),
    ));
    cases.push((
        "hidden_well_known",
        value(Value::text("never shown").view(View::Hidden)),
    ));
    cases.push((
        "view_table_not_tabular",
        value(Value::new("acme.count", json!(42)).view(View::Table)),
    ));

    // No hint: mimeType, then data shape.
    cases.push((
        "mime_markdown",
        value(Value::new("acme.readme", json!("# Title\n\nBody text.")).mime("text/markdown")),
    ));
    cases.push((
        "mime_text",
        value(Value::new("acme.log", json!({"text": "plain\ttabbed"})).mime("text/plain")),
    ));
    cases.push((
        "mime_image",
        value(Value::new("acme.shot", json!({"source": {"base64": PNG_20}})).mime("image/png")),
    ));
    cases.push((
        "mime_json",
        value(
            Value::new("acme.config", json!({"retries": 3, "hosts": ["a", "b"]}))
                .mime("application/json"),
        ),
    ));
    cases.push((
        "shape_table",
        value(Value::new(
            "acme.rows",
            json!([{"k": "a", "v": 1}, {"k": "b", "v": 2}]),
        )),
    ));
    cases.push((
        "shape_string",
        value(Value::new("acme.msg", json!("just a string"))),
    ));
    cases.push((
        "shape_other",
        value(Value::new("acme.num", json!({"answer": 42}))),
    ));

    // Display hints.
    cases.push((
        "collapsed",
        value(
            Value::table(["id", "path"], table_rows(50))
                .summary("50 modules")
                .collapsed(true),
        ),
    ));
    cases.push((
        "max_height_text",
        value(Value::file_content("src/main.rs", RUST_AFTER).max_height(4)),
    ));
    cases.push((
        "max_height_table",
        value(Value::table(["id", "path", "lines", "ok"], table_rows(200)).max_height(12)),
    ));
    cases.push((
        "max_height_structured",
        value(
            Value::structured(json!({"a": [1, 2, 3, 4, 5], "b": {"c": 1, "d": 2}})).max_height(3),
        ),
    ));
    cases.push((
        "max_height_long_log",
        value(Value::text(long_log(20_000)).max_height(10)),
    ));
    // Like records: a table, not a tree (ruff's `{"issues": [..]}`, a bare array).
    cases.push((
        "structured_records",
        value(Value::structured(
            json!({"tool": "ruff", "issues": ruff_issues(7), "fixable": 5}),
        )),
    ));
    cases.push((
        "max_height_structured_records",
        value(Value::structured(serde_json::Value::Array(ruff_issues(3000))).max_height(12)),
    ));
    // Multi-line strings inside structured data, and an invisible character.
    cases.push((
        "structured_multiline",
        value(Value::structured(json!({
            "command": "cargo build",
            "status": 101,
            "stderr": "error[E0425]: cannot find value `x` in this scope\n --> src/main.rs:3:5\n  |\n3 |     x\n  |     ^ not found in this scope\n",
            "zeroWidth": "a\u{200b}b",
        }))),
    ));

    // Bad input.
    cases.push((
        "bad_table_shape",
        value(Value::new(
            "table",
            json!({"columns": [{"key": "a"}], "rows": {"a": 1}}),
        )),
    ));
    cases.push((
        "bad_diff_shape",
        value(Value::new("diff", json!({"path": "x", "isNew": "yes"}))),
    ));
    cases.push((
        "hostile_escapes",
        value(
            Value::text("before\x1b]52;c;ZXZpbA==\x07after\n\x1b[2Jcleared?\x1b[31mred?\r\nbidi\u{202e}txet\u{9b}1m")
                .summary("\x1b[1mbold summary\x1b[0m"),
        ),
    ));
    cases.push((
        "several_values",
        Case::Values(vec![
            Value::text("first"),
            Value::structured(json!({"second": true})),
        ]),
    ));
    cases
}
