//! Snapshot and behaviour tests of normalization over the recorded real payloads in
//! `tests/fixtures/` (MCP server-everything, ART and golem-forge).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use serde_json::{Value as Json, json};
use toolwire_core::{Audience, CallRef, Status, ToolResult, WellKnown};
use toolwire_normalize::{Normalized, normalize, normalize_bytes};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

fn load(rel: &str) -> Json {
    serde_json::from_slice(&std::fs::read(fixtures().join(rel)).unwrap()).unwrap()
}

fn run(rel: &str) -> Normalized {
    let stem = Path::new(rel).file_stem().unwrap().to_str().unwrap();
    normalize(&load(rel), &CallRef::new("call_1", stem))
}

fn kinds(r: &ToolResult) -> Vec<&str> {
    r.output.iter().map(|v| v.kind.as_str()).collect()
}

#[test]
fn every_fixture_normalizes_validly_and_matches_its_snapshot() {
    let mut seen = 0;
    for dir in ["mcp", "legacy"] {
        let mut paths: Vec<_> = std::fs::read_dir(fixtures().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.extension().is_some_and(|e| e == "json")
                    && !p.file_name().unwrap().to_str().unwrap().starts_with('_')
            })
            .collect();
        paths.sort();
        for path in paths {
            let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
            let rel = format!("{dir}/{name}.json");
            let n = run(&rel);
            n.result.validate().unwrap_or_else(|e| panic!("{rel}: {e}"));
            // Idempotent on every real payload, not only on generated ones.
            let again = normalize(&serde_json::to_value(&n.result).unwrap(), &n.result.call());
            assert_eq!(again.result, n.result, "{rel} is not idempotent");
            assert!(
                again.diagnostics.is_empty(),
                "{rel}: {:?}",
                again.diagnostics
            );
            insta::assert_json_snapshot!(
                format!("{dir}__{name}"),
                json!({
                    "result": n.result,
                    "diagnostics": n.diagnostics,
                })
            );
            seen += 1;
        }
    }
    assert!(seen >= 16, "only {seen} fixtures found");
}

#[test]
fn mcp_image_is_an_image_with_sniffed_mime() {
    let r = run("mcp/get-tiny-image.json").result;
    assert_eq!(kinds(&r), ["text", "image", "text"]);
    let image = r.output[1].as_image().unwrap();
    assert_eq!(image.mime_type, Some("image/png"));
}

#[test]
fn mcp_annotations_are_kept() {
    let r = run("mcp/get-annotated-message-error.json").result;
    let a = r.output[0].annotations.as_ref().unwrap();
    assert_eq!(a.priority, Some(1.0));
    assert_eq!(a.audience.as_ref().unwrap().len(), 2);
    assert!(r.output[1].annotations.is_some());
}

/// A 1×1 PNG.
const TINY_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn audience(v: &toolwire_core::Value) -> Option<Vec<Audience>> {
    v.annotations.as_ref().and_then(|a| a.audience.clone())
}

fn hidden(v: &toolwire_core::Value) -> bool {
    v.display.as_ref().and_then(|d| d.preferred_view) == Some(toolwire_core::View::Hidden)
}

/// Twins (docs/contracts.md): both channels are stored; the person is shown one and the
/// model sent one.
#[test]
fn structured_content_twins_are_stored_both_and_shown_once() {
    let raw = load("mcp/get-structured-content.json");
    let r = normalize(&raw, &CallRef::new("c", "get-structured-content")).result;
    assert_eq!(kinds(&r), ["text", "structured"]);
    assert_eq!(audience(&r.output[0]), Some(vec![Audience::Assistant]));
    assert_eq!(audience(&r.output[1]), Some(vec![Audience::User]));
    assert_eq!(r.output[1].data, raw["structuredContent"]);

    // server-filesystem: the text, and `{"content": <the same text>}`.
    let listing = "[FILE] a.txt\n[DIR] sub";
    let wrapped = json!({
        "content": [{"type": "text", "text": listing}],
        "structuredContent": {"content": listing},
    });
    let r = normalize(&wrapped, &CallRef::new("c", "t")).result;
    assert_eq!(kinds(&r), ["text", "structured"]);
    assert_eq!(audience(&r.output[0]), None);
    assert!(hidden(&r.output[1]) && audience(&r.output[1]) == Some(vec![Audience::User]));

    // FastMCP: a return value 42 is the text "42" and `{"result": 42}`.
    let fastmcp = json!({
        "content": [{"type": "text", "text": "42"}],
        "structuredContent": {"result": 42},
    });
    let r = normalize(&fastmcp, &CallRef::new("c", "t")).result;
    assert!(hidden(&r.output[1]), "{r:?}");
    // FastMCP around a list: the JSON text is the model's, the structure the person's.
    let list = json!({
        "content": [{"type": "text", "text": "[1, 2]"}],
        "structuredContent": {"result": [1, 2]},
    });
    let r = normalize(&list, &CallRef::new("c", "t")).result;
    assert_eq!(audience(&r.output[0]), Some(vec![Audience::Assistant]));
    assert_eq!(audience(&r.output[1]), Some(vec![Audience::User]));

    // read_media_file: the image, and `{"content": [<the same image block>]}`. One image
    // is shown; the wrapper and anything taken out of it are hidden.
    let image = json!({"type": "image", "data": TINY_PNG, "mimeType": "image/png"});
    let media = json!({"content": [image], "structuredContent": {"content": [image]}});
    let r = normalize(&media, &CallRef::new("c", "t")).result;
    let shown: Vec<&str> = r
        .output
        .iter()
        .filter(|v| !hidden(v))
        .map(|v| v.kind.as_str())
        .collect();
    assert_eq!(shown, ["image"], "{r:?}");

    // A JSON text that disagrees with structuredContent is no twin: both are kept, and
    // the mismatch is said.
    let differs = json!({
        "content": [{"type": "text", "text": "{\"temp\": 30}"}],
        "structuredContent": {"temp": 21},
    });
    let n = normalize(&differs, &CallRef::new("c", "t"));
    assert_eq!(kinds(&n.result), ["text", "structured"]);
    assert_eq!(n.diagnostics.len(), 1);
    assert!(
        n.diagnostics[0]
            .message
            .contains("differs from structuredContent")
    );
}

#[test]
fn mcp_is_error_becomes_an_error_with_the_text_as_message() {
    let r = run("mcp/get-sum-invalid-args.json").result;
    assert_eq!(r.status, Status::Error);
    assert!(r.error.unwrap().message.starts_with("MCP error -32602"));
}

#[test]
fn embedded_resources_map_by_content() {
    let text = run("mcp/get-resource-reference-text.json").result;
    assert_eq!(kinds(&text), ["text", "file_content", "text"]);
    assert_eq!(
        text.output[1].as_file_content().unwrap().path,
        "demo://resource/dynamic/text/1"
    );
    let blob = run("mcp/get-resource-reference-blob.json").result;
    assert_eq!(kinds(&blob), ["text", "file", "text"]);
    let file = blob.output[1].as_file().unwrap();
    assert_eq!(file.filename, Some("1"));
    // The gzip resource declares its type; the bytes agree, and it is binary.
    let gz = run("mcp/gzip-file-as-resource-resource.json").result;
    assert_eq!(
        gz.output[0].as_file().unwrap().media_kind,
        toolwire_core::MediaKind::Binary
    );
    let links = run("mcp/get-resource-links.json").result;
    assert_eq!(
        kinds(&links),
        ["text", "resource_link", "resource_link", "resource_link"]
    );
    assert_eq!(
        links.output[1].as_resource_link().unwrap().name,
        Some("Blob Resource 1")
    );
}

#[test]
fn art_envelopes() {
    let ok = run("legacy/art-success.json");
    assert_eq!(ok.result.status, Status::Success);
    // The payload's own callId differs from the call's, which wins, with a diagnostic.
    assert_eq!(ok.result.call_id, "call_1");
    assert!(ok.diagnostics.iter().any(|d| d.path == "$.callId"));
    assert_eq!(ok.result.metadata.sources.as_ref().unwrap().len(), 1);
    let err = run("legacy/art-error.json").result;
    assert_eq!(
        err.error.unwrap().message,
        "Search provider returned HTTP 503"
    );
    let s = run("legacy/art-suspended.json").result;
    let susp = s.suspension.unwrap();
    assert_eq!(
        (susp.id.as_str(), susp.prompt.as_str()),
        ("susp_42", "Delete branch feature/login on origin?")
    );
}

#[test]
fn golem_forge_flat_values_move_into_data() {
    let d = run("legacy/golem-diff.json").result;
    let diff = d.output[0].as_diff().unwrap();
    assert_eq!((diff.path, diff.is_new), ("src/config.ts", false));
    assert_eq!(d.output[0].data["bytesWritten"], json!(57));
    assert_eq!(d.output[0].summary.as_deref(), Some("+2 -1 lines"));
    assert_eq!(
        run("legacy/golem-json.json").result.output[0].kind.as_str(),
        "structured"
    );
    let g = run("legacy/golem-git-status.json").result;
    assert_eq!(g.output[0].kind.as_str(), "git.status");
    assert_eq!(
        run("legacy/golem-file-list.json").result.output[0]
            .as_file_list()
            .unwrap()
            .entries
            .len(),
        2
    );
}

#[test]
fn ui_resources_become_app_widgets_with_text_fallback() {
    // Shaped like an MCP Apps tool result; server-everything has no ui:// resources.
    let raw = json!({"content": [
        {"type": "text", "text": "Weather for Paris: 21°C"},
        {"type": "resource", "resource": {"uri": "ui://weather/forecast", "mimeType": "text/html;profile=mcp-app", "text": "<div>21°C</div>"}}
    ]});
    let r = normalize(&raw, &CallRef::new("c", "weather")).result;
    assert_eq!(kinds(&r), ["text"]);
    let w = &r.widgets[0];
    assert_eq!(w.fallback, "Weather for Paris: 21°C");
    let app = w.app.as_ref().unwrap();
    assert_eq!(
        (app.uri.as_str(), app.html.as_deref()),
        ("ui://weather/forecast", Some("<div>21°C</div>"))
    );
    r.validate().unwrap();
}

#[test]
fn audio_becomes_a_file_and_bad_base64_is_kept_with_a_diagnostic() {
    // A minimal RIFF/WAVE header: the bytes say audio.
    let wav = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";
    let raw = json!({"content": [
        {"type": "audio", "data": wav, "mimeType": "audio/wav"},
        {"type": "image", "data": "not base64!", "mimeType": "image/png"}
    ]});
    let n = normalize(&raw, &CallRef::new("c", "t"));
    assert_eq!(kinds(&n.result), ["file", "structured"]);
    assert_eq!(
        n.result.output[0].as_file().unwrap().media_kind,
        toolwire_core::MediaKind::Audio
    );
    assert_eq!(n.result.output[1].data["data"], json!("not base64!"));
    assert_eq!(n.diagnostics[0].path, "$.content[1].data");
    n.result.validate().unwrap();
}

#[test]
fn data_uris_and_bare_base64_inside_json_become_media_values() {
    let png = load("mcp/get-tiny-image.json")["content"][1]["data"]
        .as_str()
        .unwrap()
        .to_owned();
    let raw =
        json!({"screenshot": format!("data:image/jpeg;base64,{png}"), "thumb": png, "note": "hi"});
    let n = normalize(&raw, &CallRef::new("c", "t"));
    assert_eq!(kinds(&n.result), ["structured", "image", "image"]);
    // The declared jpeg is overruled by the PNG magic bytes.
    assert_eq!(n.result.output[1].mime_type.as_deref(), Some("image/png"));
    assert_eq!(n.result.output[0].data["note"], json!("hi"));
    assert_eq!(
        n.result.output[0].data["screenshot"],
        json!("[image/png → output[1]]")
    );
    assert_eq!(
        n.result.output[0].data["thumb"],
        json!("[image/png → output[2]]")
    );
}

/// A medium moved out of a structured value remembers where it was and what preceded its
/// base64, so that the value can be given back as the server sent it (the gateway's
/// `structuredContent`, issue 43 §9).
#[test]
fn inline_media_remembers_where_it_was_in_the_value() {
    let png = load("mcp/get-tiny-image.json")["content"][1]["data"]
        .as_str()
        .unwrap()
        .to_owned();
    let raw = json!({"doc": {"a/b": [format!("data:image/jpeg;base64,{png}")]}, "thumb": png});
    let n = normalize(&raw, &CallRef::new("c", "t"));
    let from =
        |i: usize| n.result.output[i].meta.as_ref().unwrap()[toolwire_core::INLINE_META].clone();
    assert_eq!(
        from(1),
        json!({"in": 0, "at": "/doc/a~1b/0", "before": "data:image/jpeg;base64,"})
    );
    assert_eq!(from(2), json!({"in": 0, "at": "/thumb", "before": ""}));
    n.result.validate().unwrap();
}

#[test]
fn bytes_that_are_not_json() {
    let n = normalize_bytes(b"plain output\n  indented", &CallRef::new("c", "t"));
    assert_eq!(
        n.result.output[0].as_text().unwrap().content,
        "plain output\n  indented"
    );
    assert!(n.diagnostics.is_empty());
    let n = normalize_bytes(b"{\"a\": ", &CallRef::new("c", "t"));
    assert_eq!(n.diagnostics.len(), 1);
    // PNG bytes: sniffed, kept as an image.
    let png = [
        0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0xff, 0xfe,
    ];
    let n = normalize_bytes(&png, &CallRef::new("c", "t"));
    assert_eq!(n.result.output[0].mime_type.as_deref(), Some("image/png"));
}

#[test]
fn unmapped_fields_are_kept_and_reported() {
    // `toolResult` (the 2024-11-05 compatibility form) is content; an unknown field is
    // not, and is kept in metadata.mcp, never shown.
    let raw = json!({"content": [{"type": "text", "text": "x"}], "toolResult": {"legacy": 1}, "serverNote": 7});
    let n = normalize(&raw, &CallRef::new("c", "t"));
    assert_eq!(kinds(&n.result), ["text", "structured"]);
    assert_eq!(n.result.output[1].data, json!({"legacy": 1}));
    assert_eq!(n.result.metadata.extra["mcp"], json!({"serverNote": 7}));
    assert_eq!(
        n.result.metadata.extra["diagnostics"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let bad_kind = json!({"kind": "Bad Kind", "data": {}});
    let n = normalize(&bad_kind, &CallRef::new("c", "t"));
    assert_eq!(n.result.output[0].data, bad_kind);
    assert!(n.diagnostics[0].message.contains("not a valid kind"));
    let wrong_shape = json!({"kind": "table", "data": {"columns": [], "rows": 7}});
    let n = normalize(&wrong_shape, &CallRef::new("c", "t"));
    assert_eq!(n.result.output[0].data, wrong_shape);
    assert!(
        n.diagnostics[0]
            .message
            .contains("data.rows: expected array"),
        "{:?}",
        n.diagnostics
    );
}

#[test]
fn every_well_known_kind_survives() {
    for kind in toolwire_core::WellKnown::ALL {
        assert!(toolwire_core::is_valid_kind(kind.name()));
    }
    let n = normalize(
        &json!([{"kind": "text", "data": {"content": "a"}}, {"kind": "structured", "data": [1]}]),
        &CallRef::new("c", "t"),
    );
    assert!(n.result.output[0].is_kind(WellKnown::Text));
    assert!(n.result.output[1].is_kind(WellKnown::Structured));
}

#[test]
fn normalized_fixtures_validate_against_the_committed_schema() {
    let schema_path = fixtures().join("../../schema/toolwire.schema.json");
    let schema: Json = serde_json::from_slice(&std::fs::read(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for rel in [
        "mcp/get-tiny-image.json",
        "mcp/get-resource-links.json",
        "mcp/get-structured-content.json",
        "mcp/get-sum-invalid-args.json",
        "legacy/art-suspended.json",
        "legacy/golem-diff.json",
        "legacy/golem-file-list.json",
    ] {
        let result = serde_json::to_value(run(rel).result).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&result)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{rel}: {errors:?}");
    }
    // And the schema really constrains data by kind: a table whose rows are not an array fails.
    let bad = json!({"callId": "c", "toolName": "t", "status": "success",
                     "output": [{"kind": "table", "data": {"columns": [], "rows": 3}}]});
    assert!(!validator.is_valid(&bad));
}

/// 2026-07-28: `resultType` is a protocol field, kept in metadata and never shown.
#[test]
fn result_type_complete_is_not_content() {
    let raw = json!({"resultType": "complete", "content": [{"type": "text", "text": "hi"}]});
    for n in [
        normalize(&raw, &CallRef::new("c", "t")),
        normalize_bytes(raw.to_string().as_bytes(), &CallRef::new("c", "t")),
    ] {
        assert_eq!(kinds(&n.result), ["text"]);
        assert_eq!(
            n.result.metadata.extra["mcp"],
            json!({"resultType": "complete"})
        );
        assert!(n.diagnostics.is_empty(), "{:?}", n.diagnostics);
    }
    assert!(toolwire_normalize::takes_fast_path(
        raw.to_string().as_bytes()
    ));
}

/// Multi Round-Trip Requests: `input_required` is a suspension asking for input, with the
/// elicitation's message and schema, and `requestState` kept for the retry.
#[test]
fn input_required_is_a_suspension() {
    let schema =
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    let raw = json!({
        "resultType": "input_required",
        "inputRequests": {"who": {"method": "elicitation/create", "params": {"message": "Your name?", "requestedSchema": schema}}},
        "requestState": "opaque-1",
    });
    let n = normalize(&raw, &CallRef::new("c9", "t"));
    let r = &n.result;
    assert_eq!(r.status, Status::Suspended);
    assert!(r.output.is_empty());
    let s = r.suspension.as_ref().unwrap();
    assert_eq!(s.id, "c9-input");
    assert_eq!(s.reason, toolwire_core::SuspensionReason::Input);
    assert_eq!(s.prompt, "Your name?");
    assert_eq!(s.input_schema.as_ref(), Some(&schema));
    assert_eq!(r.metadata.extra["mcp"]["requestState"], "opaque-1");
    assert_eq!(
        r.metadata.extra["mcp"]["inputRequests"],
        raw["inputRequests"]
    );
    assert!(r.validate().is_ok());
    // The same bytes take the generic path and give the same result.
    let b = normalize_bytes(raw.to_string().as_bytes(), &CallRef::new("c9", "t"));
    assert_eq!(&b.result, r);

    // Two questions at once: one prompt, one object schema keyed like inputRequests.
    let two = json!({
        "resultType": "input_required",
        "inputRequests": {
            "a": {"method": "elicitation/create", "params": {"message": "First?", "requestedSchema": {"type": "object"}}},
            "b": {"method": "elicitation/create", "params": {"message": "Second?", "requestedSchema": {"type": "object"}}},
        },
        "requestState": "s2",
    });
    let n = normalize(&two, &CallRef::new("c", "t"));
    let s = n.result.suspension.unwrap();
    assert_eq!(s.prompt, "First?\nSecond?");
    let schema = s.input_schema.unwrap();
    assert_eq!(schema["required"], json!(["a", "b"]));
    assert_eq!(schema["properties"]["b"], json!({"type": "object"}));

    // No inputRequests at all: still a valid suspension, and said so.
    let bare = json!({"resultType": "input_required"});
    let n = normalize(&bare, &CallRef::new("c", "t"));
    assert_eq!(n.result.status, Status::Suspended);
    assert!(n.result.validate().is_ok());
    assert_eq!(n.diagnostics.len(), 1);
}
