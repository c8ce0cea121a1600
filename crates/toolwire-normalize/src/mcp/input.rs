//! The questions of an `input_required` result (Multi Round-Trip Requests), and the one
//! rule for asking one or several and reading the person's answer back.

use serde_json::{Map, Value as Json};
use toolwire_core::{Suspension, SuspensionReason};

/// The elicitation requests among an `input_required` result's `inputRequests`, in order.
///
/// The one rule for one question or several, used both where the person is asked (the
/// suspension) and where the answer goes back to the server (toolwire-mcp's retry): one
/// question is asked as it is and answered by the whole answer; several are asked together
/// as one form, an object keyed like `inputRequests`, and each is answered by the answer's
/// field of its key.
#[derive(Debug, Default)]
pub struct Questions<'a> {
    /// Key, prompt, requested schema.
    asked: Vec<(&'a str, String, Option<&'a Json>)>,
    /// Requests that are not questions for a person (`roots/list`, sampling).
    others: Vec<&'a str>,
}

impl<'a> Questions<'a> {
    /// The questions of `inputRequests`.
    pub fn of(requests: &'a Map<String, Json>) -> Self {
        let mut questions = Questions::default();
        for (key, request) in requests {
            let method = request.get("method").and_then(Json::as_str).unwrap_or("");
            if method != "elicitation/create" {
                questions.others.push(method);
                continue;
            }
            let params = request.get("params");
            let message = params
                .and_then(|p| p.get("message"))
                .and_then(Json::as_str)
                .unwrap_or("");
            let url = params
                .filter(|p| p.get("mode").and_then(Json::as_str) == Some("url"))
                .and_then(|p| p.get("url"))
                .and_then(Json::as_str);
            let prompt = match url {
                Some(url) => format!("{message}\nThe server asks you to open {url}"),
                None => message.to_owned(),
            };
            let schema = params.and_then(|p| p.get("requestedSchema"));
            questions.asked.push((key, prompt, schema));
        }
        questions
    }

    /// What the person is asked, as one prompt and one schema. The id is left empty for
    /// the call's identity to fill in; `requestState` stays in `metadata.mcp` for the
    /// retry.
    pub fn suspension(&self) -> Suspension {
        let (prompt, input_schema) = match self.asked.as_slice() {
            [(_, prompt, schema)] => (prompt.clone(), schema.cloned()),
            [] => {
                let methods = self.others.join(", ");
                (
                    format!("The MCP server needs more input to continue ({methods})."),
                    None,
                )
            }
            many => {
                let prompt: Vec<&str> = many.iter().map(|(_, p, _)| p.as_str()).collect();
                let properties: Map<String, Json> = many
                    .iter()
                    .map(|(k, _, s)| ((*k).to_owned(), s.cloned().unwrap_or(Json::Bool(true))))
                    .collect();
                let required: Vec<&str> = many.iter().map(|(k, _, _)| *k).collect();
                let schema = serde_json::json!({
                    "type": "object",
                    "properties": properties,
                    "required": required,
                });
                (prompt.join("\n"), Some(schema))
            }
        };
        let prompt = if prompt.trim().is_empty() {
            "The MCP server needs your input to continue.".to_owned()
        } else {
            prompt
        };
        Suspension {
            id: String::new(),
            reason: SuspensionReason::Input,
            prompt,
            input_schema,
        }
    }

    /// The part of the person's `answer` that answers the question under `key`.
    pub fn answer_for(&self, key: &str, answer: &Json) -> Json {
        if self.asked.len() > 1 {
            answer.get(key).cloned().unwrap_or(Json::Null)
        } else {
            answer.clone()
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_question_takes_the_whole_answer_and_several_their_own_field() {
        let ask = |message: &str| {
            json!({"method": "elicitation/create", "params": {"message": message,
                "requestedSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}})
        };
        let one = json!({"a": ask("How many?"), "r": {"method": "roots/list"}});
        let one = Questions::of(one.as_object().unwrap());
        let asked = one.suspension();
        assert_eq!(asked.prompt, "How many?");
        assert_eq!(
            asked.input_schema.unwrap()["properties"]["n"]["type"],
            "integer"
        );
        assert_eq!(one.answer_for("a", &json!({"n": 2})), json!({"n": 2}));

        let two = json!({"a": ask("First?"), "b": ask("Second?")});
        let two = Questions::of(two.as_object().unwrap());
        let asked = two.suspension();
        assert_eq!(asked.prompt, "First?\nSecond?");
        let schema = asked.input_schema.unwrap();
        assert_eq!(schema["required"], json!(["a", "b"]));
        assert_eq!(
            schema["properties"]["b"]["properties"]["n"]["type"],
            "integer"
        );
        let answer = json!({"a": {"n": 1}, "b": {"n": 2}});
        assert_eq!(two.answer_for("b", &answer), json!({"n": 2}));
        assert_eq!(two.answer_for("c", &answer), Json::Null);

        let none = json!({"r": {"method": "roots/list"}});
        let none = Questions::of(none.as_object().unwrap()).suspension();
        assert!(none.prompt.contains("roots/list"), "{}", none.prompt);
        assert!(none.input_schema.is_none());
    }
}
