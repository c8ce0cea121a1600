//! The committed `schema/toolwire.schema.json` must equal what the types generate.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use toolwire_core::tool_result_schema_json;

#[test]
fn committed_schema_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schema/toolwire.schema.json");
    let generated = tool_result_schema_json();
    if std::env::var_os("TOOLWIRE_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "schema/toolwire.schema.json is stale: run `TOOLWIRE_UPDATE_SCHEMA=1 cargo test -p toolwire-core --test schema`"
    );
}

#[test]
fn schema_is_2020_12_and_ties_kinds_to_data_shapes() {
    let schema: serde_json::Value = serde_json::from_str(&tool_result_schema_json()).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    let value = &schema["$defs"]["Value"];
    let rules = value["allOf"].as_array().unwrap();
    assert_eq!(rules.len(), 8);
    assert_eq!(rules[4]["if"]["properties"]["kind"]["const"], "table");
    for def in [
        "TextData",
        "TableData",
        "Widget",
        "Resource",
        "Source",
        "DisplayHints",
    ] {
        assert!(schema["$defs"].get(def).is_some(), "missing $defs/{def}");
    }
}
