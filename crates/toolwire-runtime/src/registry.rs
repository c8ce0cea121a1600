//! The tool registry: tools by name, with their JSON Schema validators compiled once.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value as Json;

use toolwire_tool::{Tool, ToolSchema, is_valid_tool_name};

/// Why a tool could not be registered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The name is not one every provider accepts as a function name.
    #[error(
        "tool name {0:?} is not one every provider accepts (^[a-zA-Z_][a-zA-Z0-9_-]*$, at most 64 characters)"
    )]
    InvalidName(String),
    /// A tool of that name is registered already.
    #[error("tool {0:?} is already registered")]
    Duplicate(String),
    /// The tool's input or output schema does not compile.
    #[error("tool {name:?}: {which} is not a valid JSON Schema: {message}")]
    InvalidSchema {
        /// The tool's name.
        name: String,
        /// `inputSchema` or `outputSchema`.
        which: &'static str,
        /// What the schema compiler said.
        message: String,
    },
}

/// A registered tool and its compiled validators.
#[derive(Clone)]
pub struct Registered {
    /// The tool itself.
    pub tool: Arc<dyn Tool>,
    input: Arc<jsonschema::Validator>,
    output: Option<Arc<jsonschema::Validator>>,
}

impl std::fmt::Debug for Registered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registered")
            .field("name", &self.tool.schema().name)
            .finish()
    }
}

impl Registered {
    /// The tool's schema.
    pub fn schema(&self) -> &ToolSchema {
        self.tool.schema()
    }

    /// Checks input against `inputSchema`; the error names each offending field.
    pub fn check_input(&self, input: &Json) -> Result<(), String> {
        check(&self.input, input, "input")
    }

    /// [`Registered::check_input`], reading `null` for an optional argument as "not
    /// given" when the schema does not take `null` there: models in strict structured
    /// modes and some clients send `"verbose": null` for an argument they leave out. Such
    /// arguments are removed from `input`, and only when the input is then valid; any
    /// other error is reported as it was.
    pub fn accept_input(&self, input: &mut Json) -> Result<(), String> {
        let first = match self.check_input(input) {
            Ok(()) => return Ok(()),
            Err(why) => why,
        };
        let required: Vec<&str> = self.schema().input_schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Json::as_str).collect())
            .unwrap_or_default();
        let Json::Object(fields) = input else {
            return Err(first);
        };
        let left_out: Vec<String> = fields
            .iter()
            .filter(|(k, v)| v.is_null() && !required.contains(&k.as_str()))
            .map(|(k, _)| k.clone())
            .collect();
        if left_out.is_empty() {
            return Err(first);
        }
        let mut lenient = fields.clone();
        for key in &left_out {
            lenient.remove(key);
        }
        let lenient = Json::Object(lenient);
        match self.check_input(&lenient) {
            Ok(()) => {
                *input = lenient;
                Ok(())
            }
            Err(_) => Err(first),
        }
    }

    /// Checks structured output against `outputSchema`, when the tool has one.
    pub fn check_output(&self, output: &Json) -> Result<(), String> {
        match &self.output {
            Some(v) => check(v, output, "output"),
            None => Ok(()),
        }
    }

    /// Whether successful outputs are checked against an `outputSchema`.
    pub fn has_output_schema(&self) -> bool {
        self.output.is_some()
    }
}

fn check(validator: &jsonschema::Validator, value: &Json, root: &str) -> Result<(), String> {
    let errors: Vec<String> = validator
        .iter_errors(value)
        .take(5)
        .map(|e| format!("{}: {e}", field_path(root, &e.instance_path().to_string())))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// `/items/0/name` → `input.items[0].name`.
fn field_path(root: &str, pointer: &str) -> String {
    let mut out = root.to_owned();
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{seg}]"));
        } else {
            out.push('.');
            out.push_str(&seg);
        }
    }
    out
}

/// Tools by name, in registration order.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    tools: HashMap<String, Registered>,
    order: Vec<String>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Registers `tool`, checking its name and compiling its schemas once, up front.
    pub fn register(&mut self, tool: impl Tool) -> Result<(), RegistryError> {
        self.register_arc(Arc::new(tool))
    }

    /// Registers an already shared tool; see [`Registry::register`].
    pub fn register_arc(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let schema = tool.schema();
        let name = schema.name.clone();
        if !is_valid_tool_name(&name) {
            return Err(RegistryError::InvalidName(name));
        }
        if self.tools.contains_key(&name) {
            return Err(RegistryError::Duplicate(name));
        }
        let compile = |which: &'static str, s: &Json| {
            jsonschema::validator_for(s)
                .map(Arc::new)
                .map_err(|e| RegistryError::InvalidSchema {
                    name: name.clone(),
                    which,
                    message: e.to_string(),
                })
        };
        let input = compile("inputSchema", &schema.input_schema)?;
        let output = schema
            .output_schema
            .as_ref()
            .map(|s| compile("outputSchema", s))
            .transpose()?;
        self.order.push(name.clone());
        self.tools.insert(
            name,
            Registered {
                tool,
                input,
                output,
            },
        );
        Ok(())
    }

    /// The registered tool of that name.
    pub fn get(&self, name: &str) -> Option<&Registered> {
        self.tools.get(name)
    }

    /// The tool names, in registration order.
    pub fn names(&self) -> &[String] {
        &self.order
    }

    /// The tools' schemas, in registration order: what a model is offered.
    pub fn schemas(&self) -> impl Iterator<Item = &ToolSchema> {
        self.order
            .iter()
            .filter_map(|n| self.tools.get(n))
            .map(Registered::schema)
    }

    /// The same tools minus `excluded`, e.g. a subagent's set without `task`.
    pub fn without(&self, excluded: &[&str]) -> Registry {
        let mut out = self.clone();
        out.retain(|n| !excluded.contains(&n));
        out
    }

    /// Keeps the tools whose names `keep` accepts, in their order.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.order.retain(|n| keep(n));
        self.tools.retain(|n, _| keep(n));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_to_field_path() {
        assert_eq!(field_path("input", ""), "input");
        assert_eq!(field_path("input", "/items/0/name"), "input.items[0].name");
        assert_eq!(field_path("input", "/a~1b"), "input.a/b");
    }
}
