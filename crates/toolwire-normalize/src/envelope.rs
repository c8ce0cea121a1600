//! ART-style and canonical envelopes: `{callId, toolName, status, output, error, metadata}`.

use serde::Deserialize;
use serde_json::{Map, Value as Json};
use toolwire_core::{
    CallRef, ErrorInfo, Metadata, Resource, Status, Suspension, SuspensionReason, Widget,
};

use crate::media::structured;
use crate::payload::values;
use crate::{Diagnostics, Envelope, Parts, Path, success_envelope};

/// An envelope has a string `status` beside the call identity, output or error.
pub(crate) fn is_envelope(map: &Map<String, Json>) -> bool {
    map.get("status").is_some_and(Json::is_string)
        && ["callId", "toolName", "output", "error"]
            .iter()
            .any(|k| map.contains_key(*k))
}

pub(crate) fn normalize(
    mut map: Map<String, Json>,
    call: &CallRef,
    diags: &mut Diagnostics,
) -> Envelope {
    for (key, expected) in [("callId", &call.call_id), ("toolName", &call.tool_name)] {
        match map.remove(key) {
            Some(Json::String(given)) if &given != expected => diags.push(
                &Path::Root.key(key),
                format!("{given:?} differs from the call's {expected:?}; the call's is used"),
            ),
            _ => {}
        }
    }
    let mut metadata = match map.remove("metadata") {
        None | Some(Json::Null) => Metadata::default(),
        Some(raw) => Metadata::deserialize(&raw).unwrap_or_else(|e| {
            diags.push(
                &Path::Root.key("metadata"),
                format!("{e}; kept under metadata.raw"),
            );
            let mut m = Metadata::default();
            m.extra.insert("raw".into(), raw);
            m
        }),
    };
    let error = map.remove("error").filter(|e| !e.is_null()).map(error_info);
    let status_text = map
        .remove("status")
        .and_then(|s| s.as_str().map(str::to_owned))
        .unwrap_or_default();
    let mut suspension = map
        .remove("suspension")
        .filter(|s| !s.is_null())
        .and_then(|raw| {
            Suspension::deserialize(&raw)
                .map_err(|e| {
                    diags.push(
                        &Path::Root.key("suspension"),
                        format!("{e}; rebuilt from the rest"),
                    )
                })
                .ok()
        });
    if let Some(s) = &mut suspension {
        if s.id.is_empty() {
            s.id = format!("{}-suspension", call.call_id);
            diags.push(
                &Path::Root.key("suspension").key("id"),
                "empty; derived from the call id",
            );
        }
        if s.prompt.trim().is_empty() {
            s.prompt = format!("{} is waiting for a person to continue", call.tool_name);
            diags.push(
                &Path::Root.key("suspension").key("prompt"),
                "empty; a generic prompt was written",
            );
        }
    }
    if let Some(raw) = metadata.raw_ref.take_if(|r| !toolwire_core::is_blob_key(r)) {
        diags.push(
            &Path::Root.key("metadata").key("rawRef"),
            "not a blob key; kept as metadata.rawRefInvalid",
        );
        metadata
            .extra
            .insert("rawRefInvalid".into(), Json::String(raw));
    }

    let mut parts = Parts::default();
    match map.remove("output") {
        None | Some(Json::Null) => {}
        // A canonical error or suspended result may have no output values.
        Some(Json::Array(items)) if items.is_empty() => {}
        Some(output) => values(output, &Path::Root.key("output"), diags, &mut parts),
    }
    widgets(map.remove("widgets"), diags, &mut parts);
    let resources = resources(map.remove("resources"), diags);

    let status = match status_text.as_str() {
        "success" => Status::Success,
        "error" => Status::Error,
        "suspended" => Status::Suspended,
        other => {
            let inferred = if error.is_some() {
                Status::Error
            } else {
                Status::Success
            };
            diags.push(
                &Path::Root.key("status"),
                format!("unknown status {other:?}; taken as {}", inferred.as_str()),
            );
            inferred
        }
    };
    let mut error = error;
    match status {
        Status::Error if error.is_none() => {
            error = Some(ErrorInfo {
                message: NO_MESSAGE.into(),
                code: None,
                details: None,
            })
        }
        Status::Success | Status::Suspended if error.is_some() => {
            diags.push(
                &Path::Root.key("error"),
                format!(
                    "error given with status {}; kept under metadata.error",
                    status.as_str()
                ),
            );
            if let Some(e) = error.take() {
                metadata.extra.insert(
                    "error".into(),
                    serde_json::to_value(e).unwrap_or(Json::Null),
                );
            }
        }
        _ => {}
    }
    if status == Status::Suspended && suspension.is_none() {
        suspension = Some(art_suspension(&mut metadata, &parts, call));
    }
    if status != Status::Suspended
        && let Some(s) = suspension.take()
    {
        diags.push(
            &Path::Root.key("suspension"),
            format!(
                "suspension given with status {}; kept under metadata.suspension",
                status.as_str()
            ),
        );
        metadata.extra.insert(
            "suspension".into(),
            serde_json::to_value(s).unwrap_or(Json::Null),
        );
    }
    if !map.is_empty() {
        let keys: Vec<&str> = map.keys().map(String::as_str).collect();
        diags.push(
            &Path::Root,
            format!("fields {keys:?} are not part of a tool result; kept as structured"),
        );
        structured(Json::Object(map), &Path::Root, diags, &mut parts);
    }
    let mut result = success_envelope(parts);
    result.status = status;
    result.error = error;
    result.suspension = suspension;
    result.resources = resources;
    result.metadata = metadata;
    result
}

/// ART's error is a string; ours is `{message, code?, details?}`; anything else is kept
/// as details under a message made of its JSON.
const NO_MESSAGE: &str = "the tool reported an error without a message";

fn error_info(raw: Json) -> ErrorInfo {
    match raw {
        Json::String(message) if message.trim().is_empty() => ErrorInfo {
            message: NO_MESSAGE.into(),
            code: None,
            details: Some(Json::String(message)),
        },
        Json::String(message) => ErrorInfo {
            message,
            code: None,
            details: None,
        },
        raw => ErrorInfo::deserialize(&raw)
            .ok()
            .filter(|e| !e.message.trim().is_empty())
            .unwrap_or_else(|| ErrorInfo {
                message: raw
                    .get("message")
                    .and_then(Json::as_str)
                    .filter(|m| !m.trim().is_empty())
                    .map(str::to_owned)
                    .unwrap_or_else(|| raw.to_string()),
                code: None,
                details: Some(raw),
            }),
    }
}

/// ART marks suspension with `metadata.suspensionId`; the prompt is the output's text.
fn art_suspension(metadata: &mut Metadata, parts: &Parts, call: &CallRef) -> Suspension {
    let id = match metadata.extra.get("suspensionId") {
        Some(Json::String(id)) if !id.is_empty() => id.clone(),
        _ => format!("{}-suspension", call.call_id),
    };
    let prompt = parts
        .output
        .iter()
        .find_map(|v| v.as_text().ok().map(|t| t.content.to_owned()))
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| format!("{} is waiting for a person to continue", call.tool_name));
    let reason = match metadata
        .extra
        .get("suspensionReason")
        .and_then(Json::as_str)
    {
        Some("input") => SuspensionReason::Input,
        _ => SuspensionReason::Approval,
    };
    Suspension {
        id,
        reason,
        prompt,
        input_schema: None,
    }
}

fn widgets(raw: Option<Json>, diags: &mut Diagnostics, parts: &mut Parts) {
    let Some(Json::Array(items)) = raw else {
        return;
    };
    let root = Path::Root;
    let list = root.key("widgets");
    for (i, item) in items.into_iter().enumerate() {
        let path = list.index(i);
        match Widget::deserialize(&item) {
            Ok(mut w) => {
                if w.fallback.trim().is_empty() {
                    diags.push(&path, "empty fallback; a generic one was written");
                    w.fallback = format!(
                        "[{} widget]",
                        if w.widget.is_empty() {
                            "unnamed"
                        } else {
                            &w.widget
                        }
                    );
                }
                if w.widget.is_empty() {
                    diags.push(&path, "empty widget id; named \"unnamed\"");
                    w.widget = "unnamed".into();
                }
                if let Some(app) = &w.app
                    && !app.uri.starts_with("ui://")
                {
                    diags.push(
                        &path,
                        "app.uri is not ui://; the widget is shown by its fallback only",
                    );
                    w.app = None;
                    if let Json::Object(data) = &mut w.data {
                        data.insert(
                            "nonUiApp".into(),
                            item.get("app").cloned().unwrap_or(Json::Null),
                        );
                    }
                }
                parts.widgets.push(w);
            }
            Err(e) => {
                diags.push(&path, format!("not a widget ({e}); kept as structured"));
                structured(item, &path, diags, parts);
            }
        }
    }
}

fn resources(raw: Option<Json>, diags: &mut Diagnostics) -> Vec<Resource> {
    let Some(Json::Array(items)) = raw else {
        return Vec::new();
    };
    let root = Path::Root;
    let list = root.key("resources");
    items
        .into_iter()
        .enumerate()
        .filter_map(|(i, item)| match Resource::deserialize(&item) {
            Ok(r) if toolwire_core::is_blob_key(&r.uri) => Some(r),
            Ok(r) => {
                diags.push(
                    &list.index(i),
                    format!("{:?} is not a blob key; left out of the index", r.uri),
                );
                None
            }
            Err(e) => {
                diags.push(
                    &list.index(i),
                    format!("not a resource ({e}); left out of the index"),
                );
                None
            }
        })
        .collect()
}
