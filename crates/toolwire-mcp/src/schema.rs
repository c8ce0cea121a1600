//! An MCP tool definition as a toolwire [`ToolSchema`]: annotations, `outputSchema`,
//! `title`, `icons` and `_meta` kept; the MCP App it declares and whether the model may
//! see it read from `_meta.ui`.

use std::time::Duration;

use serde_json::{Map, Value as Json};
use toolwire_tool::{ToolAnnotations, ToolSchema};

/// The schema of tool `name`, from its `tools/list` JSON, and its MCP App's `ui://` URI.
pub(crate) fn tool_schema(
    name: &str,
    def: &Json,
    timeout: Duration,
) -> (ToolSchema, Option<String>) {
    let description = def["description"].as_str().unwrap_or_default().to_owned();
    let input_schema = match &def["inputSchema"] {
        Json::Object(s) => Json::Object(s.clone()),
        _ => serde_json::json!({"type": "object"}),
    };
    let mut schema = ToolSchema::new(name, description, input_schema);
    schema.output_schema = def.get("outputSchema").filter(|s| s.is_object()).cloned();
    schema.annotations = def
        .get("annotations")
        .and_then(|a| serde_json::from_value::<ToolAnnotations>(a.clone()).ok());
    schema.timeout = Some(timeout);
    let mut extra = Map::new();
    for key in ["title", "icons", "_meta", "execution"] {
        if let Some(v) = def.get(key).filter(|v| !v.is_null()) {
            extra.insert(key.to_owned(), v.clone());
        }
    }
    schema.extra = extra;
    let meta = &def["_meta"];
    // The nested form of the stable extension, and the flat key older servers send.
    let app_uri = meta["ui"]["resourceUri"]
        .as_str()
        .or_else(|| meta["ui/resourceUri"].as_str())
        .filter(|u| u.starts_with("ui://"))
        .map(str::to_owned);
    // `visibility` lists who may call the tool: without "model", only the person (the
    // app, the CLI) can; without "app", no MCP App's view can.
    let visibility = meta["ui"]["visibility"].as_array();
    schema.hidden_from_model = visibility.is_some_and(|v| !v.iter().any(|who| who == "model"));
    schema.hidden_from_apps = visibility.is_some_and(|v| !v.iter().any(|who| who == "app"));
    (schema, app_uri)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn everything_is_kept() {
        let def = json!({
            "name": "chart", "title": "Chart", "description": "Draws",
            "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
            "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true},
            "icons": [{"src": "https://x/i.png"}],
            "_meta": {"ui": {"resourceUri": "ui://chart/app.html", "visibility": ["app"]}},
        });
        let (s, app) = tool_schema("srv__chart", &def, Duration::from_secs(9));
        assert_eq!(app.as_deref(), Some("ui://chart/app.html"));
        assert!(s.hidden_from_model);
        assert!(!s.hidden_from_apps);
        assert_eq!(s.annotations.unwrap().read_only_hint, Some(true));
        assert_eq!(s.extra["title"], "Chart");
        assert_eq!(s.extra["icons"][0]["src"], "https://x/i.png");
        assert_eq!(s.output_schema, Some(json!({"type": "object"})));
        assert_eq!(s.timeout, Some(Duration::from_secs(9)));

        let flat = json!({"name": "t", "inputSchema": {"type": "object"}, "_meta": {"ui/resourceUri": "ui://flat"}});
        let (s, app) = tool_schema("srv__t", &flat, Duration::from_secs(1));
        assert_eq!(app.as_deref(), Some("ui://flat"));
        assert!(!s.hidden_from_model);
        assert!(!s.hidden_from_apps);
        let model_only =
            json!({"name": "t", "inputSchema": {}, "_meta": {"ui": {"visibility": ["model"]}}});
        let (s, _) = tool_schema("srv__t", &model_only, Duration::from_secs(1));
        assert!(s.hidden_from_apps && !s.hidden_from_model);
        let not_ui = json!({"name": "t", "inputSchema": {}, "_meta": {"ui": {"resourceUri": "https://evil"}}});
        assert_eq!(
            tool_schema("srv__t", &not_ui, Duration::from_secs(1)).1,
            None
        );
    }
}
