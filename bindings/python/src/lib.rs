//! The `toolwire` Python package's native module: each function converts its arguments
//! (plain dict/list/str through pythonize), calls the toolwire crate the CLI calls for the
//! same job, and maps failures to `ToolwireError` with a code and the CLI's message. The
//! GIL is released while Rust works on Rust values, so other Python threads run meanwhile.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde::de::DeserializeOwned;
use serde_json::Value as Json;
use toolwire_agent::{HostError, ModelRequest, StoreLocation};
use toolwire_core::{CallRef, Message, ToolCall, ToolResult};
use toolwire_model::{
    Conversation, DEFAULT_READ_CHARS, EncodeNote, EncodeOptions, NoBlobs, Provider, ReadRequest,
    TruncationBudget,
};
use toolwire_store::{
    DEFAULT_REHYDRATE_LIMIT, NewSession, Page, StoredMessage, Stores, rehydrate_images,
};
use toolwire_term::{ColorMode, TermOptions};

create_exception!(
    _toolwire,
    ToolwireError,
    PyException,
    "A toolwire failure: `code` says what kind (e.g. invalid_input, not_found, store), the \
     message says what and where, as the toolwire CLI says it."
);

/// The codes a `ToolwireError` carries. `invalid_input` is core's own code for input that
/// does not fit (`ErrorCode::InvalidInput`); the others name the component that failed.
mod code {
    pub const INVALID_INPUT: &str = "invalid_input";
    pub const NOT_FOUND: &str = "not_found";
    pub const STORE: &str = "store";
    pub const ENCODE: &str = "encode";
    pub const RENDER: &str = "render";
}

/// A `ToolwireError` with `code` set on the instance, so `except ToolwireError as e:
/// e.code` works and `str(e)` is the message alone.
fn error(code: &str, message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| {
        let err = ToolwireError::new_err(message);
        match err.value(py).setattr("code", code) {
            Ok(()) => err,
            Err(setattr_failed) => setattr_failed,
        }
    })
}

/// An error as one line: its chain of causes joined by ": ", a cause the previous one
/// already quotes left out (as the CLI prints errors).
fn error_line(err: &(dyn std::error::Error + 'static)) -> String {
    let mut line = String::new();
    let mut cause = Some(err);
    while let Some(e) = cause {
        let text = e.to_string();
        if !line.contains(&text) {
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(&text);
        }
        cause = e.source();
    }
    line
}

fn store_error(err: &(dyn std::error::Error + 'static)) -> PyErr {
    error(code::STORE, error_line(err))
}

/// At most this many characters of input are quoted back in an error, as in the CLI.
const EXCERPT_CHARS: usize = 200;

fn excerpt(text: &str) -> String {
    toolwire_core::humanize::excerpt(text, EXCERPT_CHARS)
}

/// How deep a value given from Python may nest: serde_json's own limit, which the CLI's
/// JSON input has. Conversion recurses, so without a limit a value nested 100,000 deep
/// would overflow the stack and kill the interpreter.
const MAX_INPUT_DEPTH: usize = 128;

/// A Python value as JSON: dict (str keys), list, tuple, str, int, float, bool, None.
/// What has no JSON form (another type, a NaN, an int past 64 bits, nesting past
/// [`MAX_INPUT_DEPTH`]) is refused, naming the argument and where in it.
fn json_of(name: &str, obj: &Bound<'_, PyAny>) -> PyResult<Json> {
    let mut at = vec![name.to_owned()];
    to_json(obj, &mut at).map_err(|why| {
        error(
            code::INVALID_INPUT,
            format!("{}: not JSON: {why}", excerpt(&at.concat())),
        )
    })
}

fn to_json(obj: &Bound<'_, PyAny>, at: &mut Vec<String>) -> Result<Json, String> {
    if obj.is_none() {
        return Ok(Json::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Json::Bool(b.is_true()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return s
            .to_str()
            .map(|s| Json::String(s.to_owned()))
            .map_err(|e| e.to_string());
    }
    if let Ok(i) = obj.cast::<PyInt>() {
        if let Ok(n) = i.extract::<i64>() {
            return Ok(Json::from(n));
        }
        return i
            .extract::<u64>()
            .map(Json::from)
            .map_err(|_| "an integer larger than 64 bits".to_owned());
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return serde_json::Number::from_f64(f.value())
            .map(Json::Number)
            .ok_or_else(|| format!("{} has no JSON form", f.value()));
    }
    // `at` holds the argument's name and one step per container entered so far.
    if at.len() >= MAX_INPUT_DEPTH {
        return Err(format!("nested {MAX_INPUT_DEPTH} levels deep or more"));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut map = serde_json::Map::with_capacity(dict.len());
        for (key, value) in dict.iter() {
            let key = key
                .cast::<PyString>()
                .map_err(|_| format!("a key of type {} (keys must be str)", type_name(&key)))?
                .to_str()
                .map_err(|e| e.to_string())?
                .to_owned();
            at.push(format!(".{key}"));
            let value = to_json(&value, at)?;
            at.pop();
            map.insert(key, value);
        }
        return Ok(Json::Object(map));
    }
    if obj.cast::<PyList>().is_ok() || obj.cast::<PyTuple>().is_ok() {
        let mut items = Vec::with_capacity(obj.len().unwrap_or(0));
        for (i, item) in obj.try_iter().map_err(|e| e.to_string())?.enumerate() {
            at.push(format!("[{i}]"));
            let item = to_json(&item.map_err(|e| e.to_string())?, at)?;
            at.pop();
            items.push(item);
        }
        return Ok(Json::Array(items));
    }
    Err(format!("a value of type {}", type_name(obj)))
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "unknown".to_owned())
}

/// JSON parsed into `T`; the error names the argument and the field path that did not
/// fit, in the CLI's words (`result: output[0]: missing field `kind``).
fn parse<T: DeserializeOwned>(name: &str, json: Json) -> PyResult<T> {
    serde_path_to_error::deserialize(json).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." {
            String::new()
        } else {
            format!("{path}: ")
        };
        let why = excerpt(&e.into_inner().to_string());
        error(
            code::INVALID_INPUT,
            format!("{name}: {}{why}", excerpt(&path)),
        )
    })
}

fn to_py<'py, T: serde::Serialize + ?Sized>(py: Python<'py>, value: &T) -> PyResult<Py<PyAny>> {
    pythonize::pythonize(py, value)
        .map(Bound::unbind)
        .map_err(|e| {
            error(
                code::INVALID_INPUT,
                format!("cannot convert to Python: {e}"),
            )
        })
}

/// The raw payload of one tool call → the canonical ToolResult, as `toolwire normalize`
/// prints it. The tool name and call id default as there: the payload's own `toolName`
/// and `callId`, else `tool` and `call_1`.
#[pyfunction]
#[pyo3(signature = (raw, *, tool = None, call_id = None))]
fn normalize(
    py: Python<'_>,
    raw: &Bound<'_, PyAny>,
    tool: Option<String>,
    call_id: Option<String>,
) -> PyResult<Py<PyAny>> {
    let raw = json_of("raw", raw)?;
    let normalized = py.detach(|| {
        let own = |key: &str| {
            raw.get(key)
                .and_then(Json::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let call = CallRef::new(
            call_id
                .or_else(|| own("callId"))
                .unwrap_or_else(|| "call_1".into()),
            tool.or_else(|| own("toolName"))
                .unwrap_or_else(|| "tool".into()),
        );
        toolwire_normalize::normalize_value(raw, &call)
    });
    to_py(py, &normalized.result)
}

/// The contract's violations of a ToolResult, one line each as `toolwire validate`
/// prints them; empty when it is valid. Something that is not a ToolResult at all raises.
#[pyfunction]
fn validate(py: Python<'_>, result: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let result: ToolResult = parse("result", json_of("result", result)?)?;
    Ok(py.detach(|| match result.validate() {
        Ok(()) => Vec::new(),
        Err(violations) => violations.iter().map(ToString::to_string).collect(),
    }))
}

/// The JSON Schema (2020-12) of the ToolResult wire format, as `toolwire schema` prints.
#[pyfunction]
fn schema(py: Python<'_>) -> PyResult<Py<PyAny>> {
    to_py(py, &toolwire_core::tool_result_schema())
}

/// A ToolResult, a Value or a list of them, rendered for a terminal `width` columns wide
/// as `toolwire render` draws it; ANSI colours when `color`, no images.
#[pyfunction]
#[pyo3(signature = (result, *, width = 80, color = false, expand = false))]
fn render_terminal(
    py: Python<'_>,
    result: &Bound<'_, PyAny>,
    width: usize,
    color: bool,
    expand: bool,
) -> PyResult<String> {
    let json = json_of("result", result)?;
    py.detach(|| {
        let mut opts = TermOptions::plain(width).with_color(if color {
            ColorMode::Ansi256
        } else {
            ColorMode::Off
        });
        opts.expand_all = expand;
        toolwire_term::render_json(&json, &opts)
    })
    .map_err(|e| error(code::RENDER, format!("result: {e}")))
}

/// What one `read_result` call asks for, converted from keyword arguments.
struct ReadArgs {
    part: usize,
    offset: usize,
    limit: Option<usize>,
    pattern: Option<String>,
    pointer: Option<String>,
}

impl ReadArgs {
    fn read(&self, result: &ToolResult) -> PyResult<String> {
        let request = ReadRequest {
            part: self.part,
            offset: self.offset,
            limit: self.limit.unwrap_or(DEFAULT_READ_CHARS),
            pattern: self.pattern.as_deref(),
            pointer: self.pointer.as_deref(),
        };
        toolwire_model::read(result, &request)
            .map_err(|e| error(code::INVALID_INPUT, e.to_string()))
    }
}

/// More of a result a model saw cut: the page a marker's `read_result {"callId", "part",
/// "offset"}` names, the value at a JSON `pointer`, or the lines matching `pattern`. The
/// `result` is the whole one (as normalized or stored), not the cut view.
#[pyfunction]
#[pyo3(signature = (result, *, part = 0, offset = 0, limit = None, pattern = None, pointer = None))]
fn read_result(
    py: Python<'_>,
    result: &Bound<'_, PyAny>,
    part: usize,
    offset: usize,
    limit: Option<usize>,
    pattern: Option<String>,
    pointer: Option<String>,
) -> PyResult<String> {
    let result: ToolResult = parse("result", json_of("result", result)?)?;
    let args = ReadArgs {
        part,
        offset,
        limit,
        pattern,
        pointer,
    };
    py.detach(|| args.read(&result))
}

/// The encoding settings of `to_model`: the provider by name, the model (default: the
/// provider's usual one) and the budget (characters per result, or a TruncationBudget).
fn encode_options(
    provider: &str,
    model: Option<String>,
    budget: Option<&Bound<'_, PyAny>>,
) -> PyResult<(Provider, EncodeOptions)> {
    let provider: Provider = provider
        .parse()
        .map_err(|e: toolwire_model::UnknownProvider| error(code::INVALID_INPUT, e.to_string()))?;
    let mut options =
        EncodeOptions::for_model(model.unwrap_or_else(|| provider.default_model().to_owned()));
    if let Some(budget) = budget {
        options.budget = match budget.extract::<usize>() {
            Ok(max_chars) => TruncationBudget {
                max_chars,
                ..TruncationBudget::default()
            },
            Err(_) => parse("budget", json_of("budget", budget)?)?,
        };
    }
    Ok((provider, options))
}

fn json_type(json: &Json) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// The conversation `to_model` encodes: messages as stored (`{"role", "content"}`), or
/// bare results, which are answered to one assistant turn that made their calls (with
/// empty inputs), so that each result is paired as a model requires.
fn conversation_of(items: Json) -> PyResult<Conversation> {
    let items = match items {
        Json::Array(items) => items,
        one @ Json::Object(_) => vec![one],
        other => {
            return Err(error(
                code::INVALID_INPUT,
                format!(
                    "messages: expected a list of messages or results, found {}",
                    json_type(&other)
                ),
            ));
        }
    };
    if items.iter().all(|item| item.get("role").is_some()) {
        return Ok(Conversation::new(parse("messages", Json::Array(items))?));
    }
    let results: Vec<ToolResult> = parse("results", Json::Array(items))?;
    let calls = results
        .iter()
        .map(|r| {
            ToolCall::new(
                r.call_id.clone(),
                r.tool_name.clone(),
                Json::Object(Default::default()),
            )
        })
        .collect();
    let mut messages = vec![Message::Assistant {
        text: String::new(),
        tool_calls: calls,
    }];
    messages.extend(results.into_iter().map(Message::ToolResult));
    Ok(Conversation::new(messages))
}

/// The request body (or, with `notes`, the body and what encoding repaired or cut) that
/// toolwire would send `provider` for a conversation or a list of results: calls and
/// results paired, media routed for `model`, each result cut by structure to the budget
/// with a marker that `read_result` follows.
#[pyfunction]
#[pyo3(signature = (messages, provider, *, model = None, budget = None, system = String::new(), notes = false))]
fn to_model(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    provider: &str,
    model: Option<String>,
    budget: Option<&Bound<'_, PyAny>>,
    system: String,
    notes: bool,
) -> PyResult<Py<PyAny>> {
    let (provider, options) = encode_options(provider, model, budget)?;
    let mut conversation = conversation_of(json_of("messages", messages)?)?;
    if !system.is_empty() {
        conversation.messages.insert(0, Message::system(system));
    }
    // Media not inline is read from blobs; these results have none stored, so the reader
    // has none, and the encoder never waits on I/O.
    let encoded = py.detach(|| {
        futures::executor::block_on(toolwire_model::encode_request(
            provider,
            &conversation,
            &options,
            &NoBlobs,
        ))
    });
    body_and_notes(py, encoded, notes)
}

fn body_and_notes(
    py: Python<'_>,
    encoded: Result<(Json, Vec<EncodeNote>), toolwire_model::EncodeError>,
    notes: bool,
) -> PyResult<Py<PyAny>> {
    let (body, diagnostics) = encoded.map_err(|e| error(code::ENCODE, error_line(&e)))?;
    if notes {
        to_py(py, &(body, diagnostics))
    } else {
        to_py(py, &body)
    }
}

/// The history and blob stores, where the `toolwire` binary keeps them: a data directory
/// (SQLite + blob files; default `$TOOLWIRE_DATA_DIR`, else the platform data dir) or
/// `database_url` (sqlite:// or postgres://) and `blob_url` (file:// or s3://).
#[pyclass(module = "toolwire", frozen)]
struct Store {
    stores: Arc<Stores>,
    // The stores' connections and tasks live on this runtime; every call blocks on it with
    // the GIL released.
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

impl Store {
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        work: impl Future<Output = PyResult<T>> + Send,
    ) -> PyResult<T> {
        py.detach(|| self.runtime.block_on(work))
    }

    async fn must_exist(stores: &Stores, session: &str) -> PyResult<()> {
        match stores.history().session(session).await {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(no_session(session)),
            Err(e) => Err(store_error(&e)),
        }
    }
}

fn no_session(id: &str) -> PyErr {
    error(code::NOT_FOUND, format!("no session {id:?}"))
}

#[pymethods]
impl Store {
    #[new]
    #[pyo3(signature = (data_dir = None, *, database_url = None, blob_url = None))]
    fn new(
        py: Python<'_>,
        data_dir: Option<PathBuf>,
        database_url: Option<String>,
        blob_url: Option<String>,
    ) -> PyResult<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| store_error(&e))?;
        let place = StoreLocation {
            data_dir,
            database_url,
            blob_url,
        };
        let stores = py
            .detach(|| runtime.block_on(place.open()))
            .map_err(|e| store_error(&e))?;
        Ok(Store {
            stores: Arc::new(stores),
            runtime,
        })
    }

    /// A new session; returns its id.
    #[pyo3(signature = (*, title = None, id = None))]
    fn create_session(
        &self,
        py: Python<'_>,
        title: Option<String>,
        id: Option<String>,
    ) -> PyResult<String> {
        let stores = &self.stores;
        self.run(py, async move {
            stores
                .create_session(NewSession {
                    id,
                    parent_id: None,
                    title,
                })
                .await
                .map(|s| s.id)
                .map_err(|e| store_error(&e))
        })
    }

    /// The stored sessions, newest first, as `toolwire sessions --json` lists them.
    #[pyo3(signature = (*, limit = 50, offset = 0))]
    fn sessions(&self, py: Python<'_>, limit: u32, offset: u32) -> PyResult<Py<PyAny>> {
        let stores = &self.stores;
        let sessions = self.run(py, async move {
            stores
                .history()
                .list_sessions(Page { offset, limit })
                .await
                .map_err(|e| store_error(&e))
        })?;
        to_py(py, &sessions)
    }

    /// Stores a tool result in `session`: its media to the blob store, the result (with
    /// blob references) to the history, as `toolwire normalize --store` does. Returns
    /// the stored result.
    fn persist(
        &self,
        py: Python<'_>,
        session: String,
        result: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let result: ToolResult = parse("result", json_of("result", result)?)?;
        let stores = &self.stores;
        let stored = self.run(py, async move {
            Self::must_exist(stores, &session).await?;
            let message = stores
                .record_result(&session, result, None)
                .await
                .map_err(|e| store_error(&e))?;
            Ok(message.content)
        })?;
        match stored {
            Message::ToolResult(result) => to_py(py, &result),
            other => to_py(py, &other),
        }
    }

    /// Appends a message (`{"role": "user", "content": {"text": …}}`, an assistant turn
    /// with its tool calls, …) to `session`; returns the stored message.
    fn append(
        &self,
        py: Python<'_>,
        session: String,
        message: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let message: Message = parse("message", json_of("message", message)?)?;
        let stores = &self.stores;
        let stored = self.run(py, async move {
            Self::must_exist(stores, &session).await?;
            stores
                .append(&session, message)
                .await
                .map_err(|e| store_error(&e))
        })?;
        to_py(py, &stored)
    }

    /// The session's messages in order, as `toolwire show --json` prints them. With
    /// `inline_media`, images stored as blobs (up to 8 MiB each) come back inline, so a
    /// persisted result loads back as it was given.
    #[pyo3(signature = (session, *, inline_media = true))]
    fn load(&self, py: Python<'_>, session: String, inline_media: bool) -> PyResult<Py<PyAny>> {
        let stores = &self.stores;
        let messages: Vec<StoredMessage> = self.run(py, async move {
            Self::must_exist(stores, &session).await?;
            let mut messages = stores
                .history()
                .load(&session)
                .await
                .map_err(|e| store_error(&e))?;
            if inline_media {
                for message in &mut messages {
                    if let Message::ToolResult(result) = &mut message.content {
                        *result = rehydrate_images(
                            result,
                            stores.blobs().as_ref(),
                            DEFAULT_REHYDRATE_LIMIT,
                        )
                        .await
                        .map_err(|e| store_error(&e))?;
                    }
                }
            }
            Ok(messages)
        })?;
        to_py(py, &messages)
    }

    /// The request body toolwire would send `provider` for a stored session, as
    /// `toolwire export` prints it (stored media read from the blob store).
    #[pyo3(signature = (session, provider, *, model = None, budget = None, system = String::new(), notes = false))]
    #[allow(clippy::too_many_arguments)]
    fn to_model(
        &self,
        py: Python<'_>,
        session: String,
        provider: &str,
        model: Option<String>,
        budget: Option<&Bound<'_, PyAny>>,
        system: String,
        notes: bool,
    ) -> PyResult<Py<PyAny>> {
        let (provider, options) = encode_options(provider, model, budget)?;
        let stores = &self.stores;
        let request = ModelRequest::with_options(provider, &system, options);
        let (bytes, diagnostics) = self.run(py, async move {
            match request.export(stores, &session).await {
                Err(HostError::NoSession(id)) => Err(no_session(&id)),
                Err(HostError::Encode(e)) => Err(error(code::ENCODE, error_line(&e))),
                Err(e) => Err(store_error(&e)),
                Ok(encoded) => Ok(encoded),
            }
        })?;
        // The bytes the client would send, as the value they are.
        let body: Json = serde_json::from_slice(&bytes)
            .map_err(|e| error(code::ENCODE, format!("the request body is not JSON: {e}")))?;
        body_and_notes(py, Ok((body, diagnostics)), notes)
    }

    /// `read_result` over the result of `call_id` stored in `session`, as a model's
    /// `read_result` tool call reads it.
    #[pyo3(signature = (session, call_id, *, part = 0, offset = 0, limit = None, pattern = None, pointer = None))]
    #[allow(clippy::too_many_arguments)]
    fn read_result(
        &self,
        py: Python<'_>,
        session: String,
        call_id: String,
        part: usize,
        offset: usize,
        limit: Option<usize>,
        pattern: Option<String>,
        pointer: Option<String>,
    ) -> PyResult<String> {
        let args = ReadArgs {
            part,
            offset,
            limit,
            pattern,
            pointer,
        };
        let stores = &self.stores;
        self.run(py, async move {
            let stored = stores
                .history()
                .find_result(&session, &call_id)
                .await
                .map_err(|e| store_error(&e))?
                .ok_or_else(|| {
                    error(
                        code::NOT_FOUND,
                        format!("no stored result with callId {call_id:?} in session {session:?}"),
                    )
                })?;
            args.read(&stored.result)
        })
    }

    /// The bytes of a stored blob (`blake3:…`, as a stored result's image `source` names).
    fn blob<'py>(&self, py: Python<'py>, key: String) -> PyResult<Bound<'py, PyBytes>> {
        let stores = &self.stores;
        let bytes = self.run(py, async move {
            stores.blob(&key).await.map_err(|e| store_error(&e))
        })?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn __repr__(&self) -> String {
        "toolwire.Store(...)".to_owned()
    }
}

#[pymodule]
fn _toolwire(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ToolwireError", m.py().get_type::<ToolwireError>())?;
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(render_terminal, m)?)?;
    m.add_function(wrap_pyfunction!(read_result, m)?)?;
    m.add_function(wrap_pyfunction!(to_model, m)?)?;
    m.add_class::<Store>()?;
    Ok(())
}
