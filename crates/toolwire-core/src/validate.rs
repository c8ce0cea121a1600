//! `validate()`: the rules of docs/contracts.md ("Result kinds and display hints", "Tool
//! execution contract"), checked on a whole `ToolResult`.

use crate::kind::is_valid_kind;
use crate::result::{Status, ToolResult};
use crate::source::{is_base64, is_blob_key};
use crate::value::Value;
use crate::view::parse_known;
use crate::violation::{Collector, Problem, Violations};

impl ToolResult {
    /// Checks every rule and reports every violation (up to a cap), each with its path:
    /// identity present, status/output/error/suspension consistent, kinds well-formed,
    /// well-known data shaped right, widget fallbacks non-empty, blob keys well-formed.
    pub fn validate(&self) -> Result<(), Violations> {
        let mut errs = Collector::default();
        if self.call_id.is_empty() {
            errs.push(|| "callId".into(), Problem::Empty);
        }
        if self.tool_name.is_empty() {
            errs.push(|| "toolName".into(), Problem::Empty);
        }
        self.check_status(&mut errs);
        for (i, value) in self.output.iter().enumerate() {
            check_value(value, &OutputAt(i), &mut errs);
        }
        for (i, widget) in self.widgets.iter().enumerate() {
            if widget.widget.is_empty() {
                errs.push(|| format!("widgets[{i}].widget"), Problem::Empty);
            }
            if widget.fallback.trim().is_empty() {
                errs.push(|| format!("widgets[{i}].fallback"), Problem::Empty);
            }
            if let Some(app) = &widget.app
                && !app.uri.starts_with("ui://")
            {
                errs.push(
                    || format!("widgets[{i}].app.uri"),
                    Problem::NotUiUri(app.uri.clone()),
                );
            }
        }
        for (i, resource) in self.resources.iter().enumerate() {
            if !is_blob_key(&resource.uri) {
                errs.push(
                    || format!("resources[{i}].uri"),
                    Problem::InvalidBlobKey(resource.uri.clone()),
                );
            }
        }
        if let Some(raw) = &self.metadata.raw_ref
            && !is_blob_key(raw)
        {
            errs.push(
                || "metadata.rawRef".into(),
                Problem::InvalidBlobKey(raw.clone()),
            );
        }
        errs.finish()
    }

    fn check_status(&self, errs: &mut Collector) {
        let status = self.status.as_str();
        match (self.status, &self.error) {
            (Status::Error, None) => {
                errs.push(|| "error".into(), Problem::RequiredForStatus("error"))
            }
            (Status::Error, Some(e)) if e.message.trim().is_empty() => {
                errs.push(|| "error.message".into(), Problem::Empty)
            }
            (Status::Success | Status::Suspended, Some(_)) => errs.push(
                || "error".into(),
                Problem::NotAllowedForStatus {
                    allowed: "error",
                    status,
                },
            ),
            _ => {}
        }
        match (self.status, &self.suspension) {
            (Status::Suspended, None) => errs.push(
                || "suspension".into(),
                Problem::RequiredForStatus("suspended"),
            ),
            (Status::Suspended, Some(s)) => {
                if s.id.is_empty() {
                    errs.push(|| "suspension.id".into(), Problem::Empty);
                }
                if s.prompt.trim().is_empty() {
                    errs.push(|| "suspension.prompt".into(), Problem::Empty);
                }
            }
            (Status::Success | Status::Error, Some(_)) => errs.push(
                || "suspension".into(),
                Problem::NotAllowedForStatus {
                    allowed: "suspended",
                    status,
                },
            ),
            _ => {}
        }
        if self.status == Status::Success && self.output.is_empty() {
            errs.push(|| "output".into(), Problem::SuccessWithoutOutput);
        }
    }
}

impl Value {
    /// Checks one value on its own; paths are relative to it (`data.rows`).
    pub fn validate(&self) -> Result<(), Violations> {
        let mut errs = Collector::default();
        check_value(self, &"", &mut errs);
        errs.finish()
    }
}

/// The path of `output[i]`, written only when one of its values breaks a rule.
struct OutputAt(usize);

impl std::fmt::Display for OutputAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "output[{}].", self.0)
    }
}

fn check_value(value: &Value, prefix: &dyn std::fmt::Display, errs: &mut Collector) {
    if !is_valid_kind(value.kind.as_str()) {
        errs.push(
            || format!("{prefix}kind"),
            Problem::InvalidKind(value.kind.to_string()),
        );
        return;
    }
    if let Some(kind) = value.kind.well_known() {
        // The view is dropped: parsing is the check.
        let _ = parse_known(value, kind, prefix, errs);
    }
    // Inline bytes must decode: normalize refuses bad base64, so validate does too. Done
    // here, not in the views, so a renderer does not rescan megabytes on every draw.
    // Structured data is any JSON: a `source.base64` there is the tool's own field (or
    // normalize's placeholder for media it moved out), not bytes to decode.
    if value.kind.well_known() != Some(crate::WellKnown::Structured)
        && let Some(b64) = value
            .data
            .get("source")
            .and_then(|s| s.get("base64"))
            .and_then(serde_json::Value::as_str)
        && !is_base64(b64)
    {
        errs.push(
            || format!("{prefix}data.source.base64"),
            Problem::InvalidBase64,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{CallRef, Suspension, SuspensionReason};
    use crate::widget::Widget;
    use serde_json::json;

    fn call() -> CallRef {
        CallRef::new("call_1", "demo")
    }

    fn lines(r: &ToolResult) -> Vec<String> {
        r.validate()
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_built_result_is_valid() {
        let r = ToolResult::success(call(), Value::text("ok")).with_widget(Widget::new(
            "weather",
            json!({}),
            "Sunny",
        ));
        assert_eq!(r.validate(), Ok(()));
    }

    #[test]
    fn status_rules() {
        let mut r = ToolResult::success(call(), Vec::new());
        assert_eq!(
            lines(&r),
            ["output: a success result needs at least one output value"]
        );
        r.status = Status::Error;
        assert_eq!(lines(&r), ["error: required when status is error"]);
        r.status = Status::Suspended;
        assert_eq!(lines(&r), ["suspension: required when status is suspended"]);
        let mut s = ToolResult::suspended(
            call(),
            Suspension {
                id: "s1".into(),
                reason: SuspensionReason::Approval,
                prompt: "Run rm?".into(),
                input_schema: None,
            },
        );
        assert_eq!(s.validate(), Ok(()));
        s.error = ToolResult::error(call(), "x").error;
        assert_eq!(
            lines(&s),
            ["error: only allowed when status is error, but status is suspended"]
        );
    }

    #[test]
    fn every_violation_is_reported_with_its_path() {
        let mut r = ToolResult::success(
            CallRef::new("", "demo"),
            vec![
                Value::text("fine"),
                Value::new("Bad Kind", json!({})),
                Value::new("table", json!({"columns": [], "rows": 3})),
            ],
        )
        .with_widget(Widget::new("w", json!(null), "  "));
        r.resources.push(crate::widget::Resource {
            uri: "../etc/passwd".into(),
            kind: crate::widget::ResourceKind::Image,
            mime_type: "image/png".into(),
            size: 1,
            filename: None,
        });
        assert_eq!(
            lines(&r),
            [
                "callId: must not be empty",
                "output[1].kind: invalid kind \"Bad Kind\": must match ^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)*$",
                "output[2].data.rows: expected array",
                "widgets[0].fallback: must not be empty",
                "resources[0].uri: invalid blob key \"../etc/passwd\": expected blake3: followed by 64 lowercase hex characters",
            ]
        );
    }

    /// Paths are written only for a violation (valid data formats none), and read as they
    /// always did: a value's index, its data, an array item's index and its field.
    #[test]
    fn paths_into_arrays_name_the_item_and_its_field() {
        let r = ToolResult::success(
            call(),
            vec![
                Value::text("fine"),
                Value::new(
                    "diff",
                    json!({"path": "a", "modified": "b", "isNew": false, "hunks": [
                        {"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": []},
                        {"oldLines": 1, "newStart": 1, "newLines": 1, "lines": []},
                        7
                    ]}),
                ),
            ],
        );
        assert_eq!(
            lines(&r),
            [
                "output[1].data.hunks[1].oldStart: missing required field",
                "output[1].data.hunks[2]: expected object",
            ]
        );
    }

    #[test]
    fn media_rules() {
        let r = ToolResult::success(
            call(),
            vec![
                Value::new("image", json!({"source": {"base64": "AA=="}})),
                Value::new("image", json!({"source": {"base64": "AA==", "url": "x"}}))
                    .mime("image/png"),
                Value::image(crate::source::Source::blob("blake3:zz", 1), "text/plain"),
                Value::new(
                    "file",
                    json!({"source": {"url": "u"}, "mediaKind": "hologram"}),
                ),
            ],
        );
        assert_eq!(
            lines(&r),
            [
                "output[0].mimeType: missing required field",
                "output[1].data.source: expected a source: exactly one of {base64}, {blob, size} or {url}",
                "output[2].data.source.blob: invalid blob key \"blake3:zz\": expected blake3: followed by 64 lowercase hex characters",
                "output[2].mimeType: mime type \"text/plain\" does not fit kind image: expected image/*",
                "output[3].data.mediaKind: unknown value \"hologram\", expected one of audio|video|document|binary",
            ]
        );
    }

    #[test]
    fn violations_are_capped() {
        let rows: Vec<_> = (0..500).map(|_| json!(1)).collect();
        let r = ToolResult::success(call(), Value::table(["a"], rows));
        let l = lines(&r);
        assert_eq!(l.len(), 101);
        assert_eq!(l[100], "...: 400 more violations not shown");
    }
}
