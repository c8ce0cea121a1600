//! Shared test scenarios: conversations that exercise every kind, media, errors, widgets,
//! completion order and interrupted turns, encoded for every provider.
#![allow(dead_code)]

use serde_json::json;
use toolwire_core::{
    Audience, CallRef, EntryType, FileEntry, ResourceLinkData, Source, ToolResult, Value, Widget,
};
use toolwire_core::{Message, ToolCall};
use toolwire_model::{Conversation, EncodeOptions, MemoryBlobs, ToolSpec};

/// A 1×1 PNG.
pub(crate) const PNG_B64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
/// A tiny (not valid) PDF and WAV payload; only the bytes' routing matters here.
pub(crate) const PDF_B64: &str =
    "JVBERi0xLjQKJcfsj6IKMSAwIG9iago8PD4+CmVuZG9iagp0cmFpbGVyCjw8Pj4KJSVFT0YK";
pub(crate) const WAV_B64: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

pub(crate) fn blob_key() -> String {
    format!("blake3:{}", "ab".repeat(32))
}

pub(crate) fn blobs() -> MemoryBlobs {
    use base64::Engine;
    let mut blobs = MemoryBlobs::new();
    let png = base64::engine::general_purpose::STANDARD
        .decode(PNG_B64)
        .unwrap();
    blobs.insert(blob_key(), png);
    blobs
}

pub(crate) fn options() -> EncodeOptions {
    let mut o = EncodeOptions::for_model("test-model");
    o.max_tokens = 1024;
    o.tools = vec![ToolSpec {
        name: "read_file".into(),
        description: "Reads a file.".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }];
    o
}

fn call(id: &str, name: &str) -> ToolCall {
    ToolCall::new(id, name, json!({"arg": id}))
}

fn ok(id: &str, name: &str, output: Vec<Value>) -> Message {
    Message::tool(ToolResult::success(CallRef::new(id, name), output))
}

/// One call per well-known kind, plus a custom kind.
pub(crate) fn kinds() -> Conversation {
    let names = [
        ("k_text", "echo"),
        ("k_diff", "edit_file"),
        ("k_file", "read_file"),
        ("k_list", "list_dir"),
        ("k_table", "query"),
        ("k_struct", "get_json"),
        ("k_custom", "acme_report"),
        ("k_link", "find_doc"),
        ("k_image", "screenshot"),
        ("k_pdf", "fetch_pdf"),
        ("k_audio", "record"),
    ];
    let calls = names.iter().map(|(id, n)| call(id, n)).collect();
    let mut diff = Value::diff(
        "src/lib.rs",
        Some("fn a() {}\nfn b() {}\n".into()),
        "fn a() {}\nfn c() {}\n",
    );
    diff.summary = Some("1 line changed".into());
    let mut messages = vec![
        Message::system("You are a test agent."),
        Message::user("Show me everything."),
        Message::assistant("Running every tool.", calls),
        ok("k_text", "echo", vec![Value::text("hello\nworld")]),
        ok("k_diff", "edit_file", vec![diff]),
        ok(
            "k_file",
            "read_file",
            vec![Value::file_content("README.md", "# Title\nBody\n")],
        ),
        ok(
            "k_list",
            "list_dir",
            vec![Value::file_list(
                "src",
                vec![
                    FileEntry::dir("bin"),
                    FileEntry::file("lib.rs", 2048),
                    FileEntry {
                        name: "latest".into(),
                        entry_type: EntryType::Symlink,
                        size: None,
                        modified: None,
                    },
                ],
                false,
            )],
        ),
        ok(
            "k_table",
            "query",
            vec![Value::table(
                ["name", "size"],
                [
                    json!({"name": "a|b.txt", "size": 12}),
                    json!({"name": "c.txt", "size": null}),
                ],
            )],
        ),
        ok(
            "k_struct",
            "get_json",
            vec![Value::structured(json!({"ok": true, "items": [1, 2]})).summary("2 items")],
        ),
        ok(
            "k_custom",
            "acme_report",
            vec![
                Value::new("acme.test_report", json!({"passed": 3, "failed": 1}))
                    .summary("3 passed, 1 failed"),
            ],
        ),
        ok(
            "k_link",
            "find_doc",
            vec![
                Value::resource_link(ResourceLinkData {
                    uri: "file:///docs/guide.md".into(),
                    name: Some("guide.md".into()),
                    description: Some("The user guide".into()),
                    size: Some(4096),
                })
                .mime("text/markdown"),
            ],
        ),
        ok(
            "k_image",
            "screenshot",
            vec![Value::image(Source::base64(PNG_B64), "image/png")],
        ),
        ok(
            "k_pdf",
            "fetch_pdf",
            vec![Value::file(
                Source::base64(PDF_B64),
                "application/pdf",
                Some("spec.pdf".into()),
            )],
        ),
        ok(
            "k_audio",
            "record",
            vec![Value::file(
                Source::base64(WAV_B64),
                "audio/wav",
                Some("note.wav".into()),
            )],
        ),
    ];
    messages.push(Message::user("Thanks; what do you see?"));
    Conversation::new(messages)
}

/// Text, an image from the blob store, an error and a widget-bearing result with a
/// user-only value; the image is sent inline.
pub(crate) fn mix() -> Conversation {
    let weather = ToolResult::success(
        CallRef::new("m_weather", "weather"),
        vec![
            Value::structured(json!({"city": "Oslo", "tempC": 4})).summary("Oslo: 4°C"),
            Value::text("internal note for the user only").audience([Audience::User]),
        ],
    )
    .with_widget(Widget::new(
        "weather-forecast",
        json!({"city": "Oslo"}),
        "Oslo: 4°C, cloudy",
    ));
    let chart = ToolResult::success(
        CallRef::new("m_chart", "plot"),
        vec![
            Value::text("Chart of sales"),
            Value::image(Source::blob(blob_key(), 70), "image/png").summary("sales.png"),
        ],
    );
    let failed = ToolResult::error_with_code(
        CallRef::new("m_fail", "deploy"),
        "exit_1",
        "deploy failed: permission denied",
    );
    let denied =
        toolwire_model::denied_result(CallRef::new("m_denied", "rm_rf"), Some("too dangerous"));
    Conversation::new(vec![
        Message::user("Weather, chart, deploy, clean up."),
        Message::assistant(
            "",
            vec![
                call("m_weather", "weather"),
                call("m_chart", "plot"),
                call("m_fail", "deploy"),
                call("m_denied", "rm_rf"),
            ],
        ),
        Message::tool(weather),
        Message::tool(chart),
        Message::tool(failed),
        Message::tool(denied),
    ])
}

/// Three parallel calls whose results were stored in reverse completion order, an orphan
/// result, and user text typed while they ran.
pub(crate) fn parallel_reverse() -> Conversation {
    Conversation::new(vec![
        Message::user("Read three files."),
        Message::assistant(
            "Reading.",
            vec![
                call("p1", "read_file"),
                call("p2", "read_file"),
                call("p3", "read_file"),
            ],
        ),
        ok("p3", "read_file", vec![Value::text("third")]),
        ok("stray", "read_file", vec![Value::text("orphan")]),
        ok("p2", "read_file", vec![Value::text("second")]),
        Message::user("Hurry up."),
        ok("p1", "read_file", vec![Value::text("first")]),
    ])
}

/// A finished turn, then a turn interrupted with one of two results stored.
pub(crate) fn interrupted() -> Conversation {
    Conversation::new(vec![
        Message::user("List, then build."),
        Message::assistant("", vec![call("i1", "list_dir")]),
        ok("i1", "list_dir", vec![Value::text("a.txt")]),
        Message::assistant(
            "Building now.",
            vec![call("i2", "bash"), call("i3", "bash")],
        ),
        ok("i3", "bash", vec![Value::text("ok")]),
    ])
}

/// A session the gateway recorded: another agent's calls and their results, with no user
/// message (what that agent was asked is not toolwire's to know).
pub(crate) fn gateway() -> Conversation {
    Conversation::new(vec![
        Message::assistant("", vec![call("g1", "list_dir")]),
        ok("g1", "list_dir", vec![Value::text("a.txt")]),
        Message::assistant("", vec![call("g2", "read_file")]),
        ok("g2", "read_file", vec![Value::text("hello")]),
    ])
}

pub(crate) fn scenarios() -> Vec<(&'static str, Conversation)> {
    vec![
        ("kinds", kinds()),
        ("mix", mix()),
        ("parallel_reverse", parallel_reverse()),
        ("interrupted", interrupted()),
        ("gateway", gateway()),
    ]
}
