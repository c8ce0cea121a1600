//! A form in the terminal from an elicitation's `requestedSchema`: the fields in the
//! schema's order, what each line a person types means for a field, and the checks an
//! answer must pass. Pure: the prompting itself is in `approve.rs`.

use serde_json::{Map, Value as Json};

/// One field of a form.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub kind: Kind,
    pub required: bool,
    pub default: Option<Json>,
}

/// What a field holds, and its limits.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    Text {
        min: Option<u64>,
        max: Option<u64>,
        format: Option<String>,
    },
    Integer {
        min: Option<f64>,
        max: Option<f64>,
    },
    Number {
        min: Option<f64>,
        max: Option<f64>,
    },
    Boolean,
    /// One of `options` (value, label).
    Choice(Vec<(String, String)>),
    /// Any of `options`, between `min` and `max` of them.
    Choices {
        options: Vec<(String, String)>,
        min: Option<u64>,
        max: Option<u64>,
    },
}

/// The fields of `schema` in the order its author wrote them. A schema that is not an
/// object of properties gives none.
pub(crate) fn fields(schema: &Json) -> Vec<Field> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Json::as_array)
        .map(|r| r.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Json::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, prop)| Field {
            name: name.clone(),
            title: text(prop, "title"),
            description: text(prop, "description"),
            kind: kind(prop),
            required: required.contains(&name.as_str()),
            default: prop.get("default").cloned(),
        })
        .collect()
}

fn text(prop: &Json, key: &str) -> Option<String> {
    prop.get(key)
        .and_then(Json::as_str)
        .filter(|s| !s.trim().is_empty())
        .map(str::to_owned)
}

fn number(prop: &Json, key: &str) -> Option<f64> {
    prop.get(key).and_then(Json::as_f64)
}

fn count(prop: &Json, key: &str) -> Option<u64> {
    prop.get(key).and_then(Json::as_u64)
}

/// Options from `enum` (with the older `enumNames` as labels) or from `oneOf`/`anyOf`
/// of `{const, title}`.
fn options(prop: &Json) -> Option<Vec<(String, String)>> {
    if let Some(values) = prop.get("enum").and_then(Json::as_array) {
        let names = prop.get("enumNames").and_then(Json::as_array);
        return Some(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let value = scalar(v);
                    let label = names
                        .and_then(|n| n.get(i))
                        .and_then(Json::as_str)
                        .map_or_else(|| value.clone(), str::to_owned);
                    (value, label)
                })
                .collect(),
        );
    }
    let titled = prop
        .get("oneOf")
        .or_else(|| prop.get("anyOf"))
        .and_then(Json::as_array)?;
    Some(
        titled
            .iter()
            .filter_map(|o| {
                let value = scalar(o.get("const")?);
                let label = text(o, "title").unwrap_or_else(|| value.clone());
                Some((value, label))
            })
            .collect(),
    )
}

fn scalar(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn kind(prop: &Json) -> Kind {
    let ty = prop.get("type").and_then(Json::as_str).unwrap_or("string");
    if ty == "array"
        && let Some(options) = prop.get("items").and_then(options)
    {
        return Kind::Choices {
            options,
            min: count(prop, "minItems"),
            max: count(prop, "maxItems"),
        };
    }
    if let Some(options) = options(prop) {
        return Kind::Choice(options);
    }
    match ty {
        "integer" => Kind::Integer {
            min: number(prop, "minimum"),
            max: number(prop, "maximum"),
        },
        "number" => Kind::Number {
            min: number(prop, "minimum"),
            max: number(prop, "maximum"),
        },
        "boolean" => Kind::Boolean,
        _ => Kind::Text {
            min: count(prop, "minLength"),
            max: count(prop, "maxLength"),
            format: text(prop, "format"),
        },
    }
}

impl Field {
    /// The field's lines before its prompt: its label with a `*` when required, its type
    /// and limits, its default, its description and, for a choice, the numbered options.
    pub(crate) fn describe(&self) -> Vec<String> {
        let label = self.title.as_deref().unwrap_or(&self.name);
        let star = if self.required { "*" } else { "" };
        let mut facts = vec![self.kind.describe()];
        if let Some(d) = &self.default {
            facts.push(format!("default {}", shown(d)));
        }
        let mut lines = vec![format!("{label}{star} ({})", facts.join(", "))];
        if let Some(d) = &self.description {
            lines.push(format!("  {d}"));
        }
        if let Kind::Choice(options) | Kind::Choices { options, .. } = &self.kind {
            for (i, (value, label)) in options.iter().enumerate() {
                let extra = if label == value {
                    String::new()
                } else {
                    format!(" ({value})")
                };
                lines.push(format!("  {}) {label}{extra}", i + 1));
            }
        }
        lines
    }

    /// The value of a line the person typed: `Ok(None)` leaves the field out (an empty
    /// line for an optional field without a default), `Err` says what is wrong.
    pub(crate) fn read(&self, line: &str) -> Result<Option<Json>, String> {
        let line = line.trim();
        if line.is_empty() {
            return match (&self.default, self.required) {
                (Some(d), _) => Ok(Some(d.clone())),
                (None, true) => Err("this field is required".to_owned()),
                (None, false) => Ok(None),
            };
        }
        self.kind.read(line).map(Some)
    }
}

fn shown(v: &Json) -> String {
    match v {
        Json::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

fn limits(what: &str, min: Option<String>, max: Option<String>) -> String {
    match (min, max) {
        (Some(a), Some(b)) => format!("{what} {a} to {b}"),
        (Some(a), None) => format!("{what} at least {a}"),
        (None, Some(b)) => format!("{what} at most {b}"),
        (None, None) => what.to_owned(),
    }
}

impl Kind {
    fn describe(&self) -> String {
        let n = |v: &Option<f64>| v.map(|v| v.to_string());
        let c = |v: &Option<u64>| v.map(|v| v.to_string());
        match self {
            Kind::Text { min, max, format } => {
                let what = format
                    .as_deref()
                    .map_or("text".to_owned(), |f| format!("text, {f}"));
                if min.is_some() || max.is_some() {
                    format!("{what}, {} characters", limits("", c(min), c(max)).trim())
                } else {
                    what
                }
            }
            Kind::Integer { min, max } => limits("whole number", n(min), n(max)),
            Kind::Number { min, max } => limits("number", n(min), n(max)),
            Kind::Boolean => "yes or no".to_owned(),
            Kind::Choice(_) => "one of the options: its number or value".to_owned(),
            Kind::Choices { min, max, .. } => format!(
                "{}, numbers or values separated by commas",
                limits("choose", c(min), c(max))
            ),
        }
    }

    fn read(&self, line: &str) -> Result<Json, String> {
        let in_range = |v: f64, min: &Option<f64>, max: &Option<f64>| {
            if min.is_some_and(|m| v < m) || max.is_some_and(|m| v > m) {
                Err(format!("out of range: {}", self.describe()))
            } else {
                Ok(())
            }
        };
        match self {
            Kind::Text { min, max, format } => {
                let chars = line.chars().count() as u64;
                if min.is_some_and(|m| chars < m) || max.is_some_and(|m| chars > m) {
                    return Err(format!("{chars} characters: {}", self.describe()));
                }
                check_format(line, format.as_deref())?;
                Ok(Json::String(line.to_owned()))
            }
            Kind::Integer { min, max } => {
                let v: i64 = line
                    .parse()
                    .map_err(|_| format!("{line:?} is not a whole number"))?;
                in_range(v as f64, min, max)?;
                Ok(Json::from(v))
            }
            Kind::Number { min, max } => {
                let v: f64 = line
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite())
                    .ok_or_else(|| format!("{line:?} is not a number"))?;
                in_range(v, min, max)?;
                serde_json::Number::from_f64(v)
                    .map(Json::Number)
                    .ok_or_else(|| format!("{line:?} is not a number"))
            }
            Kind::Boolean => match line.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" => Ok(Json::Bool(true)),
                "n" | "no" | "false" => Ok(Json::Bool(false)),
                _ => Err("answer yes or no".to_owned()),
            },
            Kind::Choice(options) => pick(options, line).map(Json::String),
            Kind::Choices { options, min, max } => {
                let chosen: Vec<String> = line
                    .split(',')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(|p| pick(options, p))
                    .collect::<Result<_, _>>()?;
                let n = chosen.len() as u64;
                if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
                    return Err(format!("{n} chosen: {}", self.describe()));
                }
                Ok(Json::Array(chosen.into_iter().map(Json::String).collect()))
            }
        }
    }
}

/// An option by its number (1-based), its value or its label.
fn pick(options: &[(String, String)], typed: &str) -> Result<String, String> {
    if let Ok(n) = typed.parse::<usize>()
        && let Some((value, _)) = n.checked_sub(1).and_then(|i| options.get(i))
    {
        return Ok(value.clone());
    }
    options
        .iter()
        .find(|(value, label)| value == typed || label.eq_ignore_ascii_case(typed))
        .map(|(value, _)| value.clone())
        .ok_or_else(|| format!("{typed:?} is not one of the options"))
}

/// The formats MCP elicitation names: a light check, enough to catch a slip.
fn check_format(line: &str, format: Option<&str>) -> Result<(), String> {
    let ok = match format {
        Some("email") => line
            .split_once('@')
            .is_some_and(|(a, b)| !a.is_empty() && b.contains('.') && !line.contains(' ')),
        Some("uri") => line.split_once("://").is_some_and(|(s, r)| {
            !s.is_empty() && !r.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric())
        }),
        Some("date") => is_date(line),
        Some("date-time") => line
            .split_once(['T', 't', ' '])
            .is_some_and(|(d, t)| is_date(d) && t.len() >= 5),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{line:?} is not a valid {}",
            format.unwrap_or("value")
        ))
    }
}

fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    matches!(parts.as_slice(), [y, m, d] if y.len() == 4 && m.len() == 2 && d.len() == 2
        && [y, m, d].iter().all(|p| p.bytes().all(|b| b.is_ascii_digit())))
}

/// The answers as the form's content object.
pub(crate) fn content(answers: Vec<(String, Json)>) -> Json {
    Json::Object(answers.into_iter().collect::<Map<String, Json>>())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> Json {
        json!({"type": "object", "properties": {
            "name": {"type": "string", "title": "Full name", "description": "As on your ID", "minLength": 2},
            "email": {"type": "string", "format": "email"},
            "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
            "color": {"type": "string", "enum": ["red", "green"], "enumNames": ["Red", "Green"]},
            "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "maxItems": 2},
            "ok": {"type": "boolean"},
        }, "required": ["name", "color"]})
    }

    #[test]
    fn fields_come_in_the_schemas_order_with_their_facts() {
        let f = fields(&form());
        let names: Vec<&str> = f.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["name", "email", "age", "color", "size", "tags", "ok"]
        );
        let name = f[0].describe();
        assert_eq!(name[0], "Full name* (text, at least 2 characters)");
        assert_eq!(name[1], "  As on your ID");
        assert!(f[2].describe()[0].contains("default 30"));
        let color = f[3].describe();
        assert_eq!(color[1], "  1) Red (red)");
        assert!(matches!(f[5].kind, Kind::Choices { .. }));
    }

    #[test]
    fn answers_are_typed_and_checked() {
        let f = fields(&form());
        assert!(f[0].read("").unwrap_err().contains("required"));
        assert!(f[0].read("A").is_err());
        assert_eq!(f[0].read(" Ada ").unwrap(), Some(json!("Ada")));
        assert!(f[1].read("not-an-email").is_err());
        assert_eq!(f[1].read("").unwrap(), None);
        assert_eq!(f[2].read("").unwrap(), Some(json!(30)));
        assert!(f[2].read("200").unwrap_err().contains("out of range"));
        assert!(f[2].read("4.5").is_err());
        assert_eq!(f[3].read("2").unwrap(), Some(json!("green")));
        assert_eq!(f[3].read("red").unwrap(), Some(json!("red")));
        assert_eq!(f[3].read("GREEN").unwrap(), Some(json!("green")));
        assert!(f[3].read("blue").is_err());
        assert_eq!(f[4].read("Large").unwrap(), Some(json!("l")));
        assert_eq!(f[5].read("1, c").unwrap(), Some(json!(["a", "c"])));
        assert!(f[5].read("a,b,c").is_err());
        assert_eq!(f[6].read("y").unwrap(), Some(json!(true)));
        assert!(f[6].read("maybe").is_err());
        assert!(fields(&json!({"type": "string"})).is_empty());
    }
}
