//! JSON Schema (2020-12) of the wire format, generated from the Rust types.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Value as Json, json};

use crate::data::{
    DiffData, FileContentData, FileData, FileListData, ImageData, ResourceLinkData, TableData,
    TextData,
};
use crate::event::Event;
use crate::result::ToolResult;

/// The schema of a `ToolResult`, with each well-known kind's `data` shape tied to its
/// `kind` through `if`/`then`, so a generic JSON Schema validator checks what
/// `validate()` checks.
pub fn tool_result_schema() -> Schema {
    let mut generator = SchemaGenerator::new(SchemaSettings::draft2020_12());
    let mut root = generator.root_schema_for::<ToolResult>();
    let shapes: Vec<Json> = [
        ("text", data_ref::<TextData>(&mut generator)),
        ("diff", data_ref::<DiffData>(&mut generator)),
        ("file_content", data_ref::<FileContentData>(&mut generator)),
        ("file_list", data_ref::<FileListData>(&mut generator)),
        ("table", data_ref::<TableData>(&mut generator)),
        ("image", data_ref::<ImageData>(&mut generator)),
        ("file", data_ref::<FileData>(&mut generator)),
        (
            "resource_link",
            data_ref::<ResourceLinkData>(&mut generator),
        ),
    ]
    .into_iter()
    .map(|(kind, shape)| {
        json!({
            "if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]},
            "then": {"properties": {"data": shape}}
        })
    })
    .collect();
    // The event feed's types travel with the result's, so the page and TypeScript
    // clients read one generated file (web/toolwire.d.ts).
    generator.subschema_for::<Event>();
    // The one id rule, for clients that check ids before using them in a URL.
    generator.subschema_for::<crate::ids::SessionId>();
    let definitions = generator.take_definitions(true);
    if let Some(obj) = root.as_object_mut() {
        let defs = obj.entry("$defs").or_insert_with(|| json!({}));
        if let Some(defs) = defs.as_object_mut() {
            defs.extend(definitions);
            // The events refer to the result, which is the root itself: one definition.
            defs.remove("ToolResult");
            for def in defs.values_mut() {
                point_at_root(def, "#/$defs/ToolResult");
            }
            if let Some(value) = defs.get_mut("Value").and_then(Json::as_object_mut) {
                value.insert("allOf".into(), Json::Array(shapes));
            }
        }
    }
    root
}

/// Rewrites every `$ref` to `target` inside `node` as a reference to the root (`#`).
fn point_at_root(node: &mut Json, target: &str) {
    match node {
        Json::Object(map) => {
            if map.get("$ref").and_then(Json::as_str) == Some(target) {
                map.insert("$ref".into(), Json::String("#".into()));
            }
            map.values_mut().for_each(|v| point_at_root(v, target));
        }
        Json::Array(items) => items.iter_mut().for_each(|v| point_at_root(v, target)),
        _ => {}
    }
}

fn data_ref<T: JsonSchema>(generator: &mut SchemaGenerator) -> Json {
    generator.subschema_for::<T>().to_value()
}

/// The schema as pretty JSON with a trailing newline, as committed in `schema/`.
pub fn tool_result_schema_json() -> String {
    let mut text = serde_json::to_string_pretty(&tool_result_schema()).unwrap_or_default();
    text.push('\n');
    text
}
