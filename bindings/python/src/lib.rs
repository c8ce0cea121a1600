//! The `toolwire` Python package's native module: each function converts its arguments
//! (plain dict/list/str to JSON, results back through pythonize), calls toolwire-bindings
//! (bindings/common, shared with the Node package), which calls the crate the CLI calls
//! for the same job, and maps failures to `ToolwireError` with a code and the CLI's message. The
//! GIL is released while Rust works on Rust values, so other Python threads run meanwhile.

use std::path::PathBuf;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value as Json;
use toolwire_bindings::{Encoded, MAX_INPUT_DEPTH, MAX_INPUT_VALUES, ModelArgs, ReadArgs};

create_exception!(
    _toolwire,
    ToolwireError,
    PyException,
    "A toolwire failure: `code` says what kind (e.g. invalid_input, not_found, store), the \
     message says what and where, as the toolwire CLI says it."
);

/// A `ToolwireError` with `code` set on the instance, so `except ToolwireError as e:
/// e.code` works and `str(e)` is the message alone.
fn py_err(err: toolwire_bindings::Error) -> PyErr {
    Python::attach(|py| {
        let exc = ToolwireError::new_err(err.message);
        match exc.value(py).setattr("code", err.code) {
            Ok(()) => exc,
            Err(setattr_failed) => setattr_failed,
        }
    })
}

/// A Python value as JSON: dict (str keys), list, tuple, str, int, float, bool, None.
/// What has no JSON form (another type, a NaN, an int past 64 bits, nesting past
/// [`MAX_INPUT_DEPTH`], more than [`MAX_INPUT_VALUES`] values) is refused, naming the
/// argument and where in it.
fn json_of(name: &str, obj: &Bound<'_, PyAny>) -> PyResult<Json> {
    let mut at = vec![name.to_owned()];
    let mut budget = MAX_INPUT_VALUES;
    to_json(obj, &mut at, &mut budget)
        .map_err(|why| py_err(toolwire_bindings::Error::not_json(&at.concat(), &why)))
}

/// `budget`: how many more values the argument may hold ([`MAX_INPUT_VALUES`]).
fn to_json(
    obj: &Bound<'_, PyAny>,
    at: &mut Vec<String>,
    budget: &mut usize,
) -> Result<Json, String> {
    *budget = budget
        .checked_sub(1)
        .ok_or_else(toolwire_bindings::too_many)?;
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
        return Err(toolwire_bindings::too_deep());
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
            let value = to_json(&value, at, budget)?;
            at.pop();
            map.insert(key, value);
        }
        return Ok(Json::Object(map));
    }
    if obj.cast::<PyList>().is_ok() || obj.cast::<PyTuple>().is_ok() {
        let mut items = Vec::with_capacity(obj.len().unwrap_or(0));
        for (i, item) in obj.try_iter().map_err(|e| e.to_string())?.enumerate() {
            at.push(format!("[{i}]"));
            let item = to_json(&item.map_err(|e| e.to_string())?, at, budget)?;
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

fn to_py<'py, T: serde::Serialize + ?Sized>(py: Python<'py>, value: &T) -> PyResult<Py<PyAny>> {
    pythonize::pythonize(py, value)
        .map(Bound::unbind)
        .map_err(|e| {
            py_err(toolwire_bindings::Error::new(
                toolwire_bindings::code::INVALID_INPUT,
                format!("cannot convert to Python: {e}"),
            ))
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
    let result = py.detach(|| toolwire_bindings::normalize(raw, tool, call_id));
    to_py(py, &result)
}

/// The contract's violations of a ToolResult, one line each as `toolwire validate`
/// prints them; empty when it is valid. Something that is not a ToolResult at all raises.
#[pyfunction]
fn validate(py: Python<'_>, result: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let result = json_of("result", result)?;
    py.detach(|| toolwire_bindings::validate(result))
        .map_err(py_err)
}

/// The JSON Schema (2020-12) of the ToolResult wire format, as `toolwire schema` prints.
#[pyfunction]
fn schema(py: Python<'_>) -> PyResult<Py<PyAny>> {
    to_py(py, &toolwire_bindings::schema())
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
    py.detach(|| toolwire_bindings::render_terminal(&json, width, color, expand))
        .map_err(py_err)
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
    let result = json_of("result", result)?;
    let args = ReadArgs {
        part,
        offset,
        limit,
        pattern,
        pointer,
    };
    py.detach(|| toolwire_bindings::read_result(result, &args))
        .map_err(py_err)
}

/// The settings of `to_model`, converted from keyword arguments.
fn model_args(
    provider: &str,
    model: Option<String>,
    budget: Option<&Bound<'_, PyAny>>,
    system: String,
) -> PyResult<ModelArgs> {
    Ok(ModelArgs {
        provider: provider.to_owned(),
        model,
        budget: budget.map(|b| json_of("budget", b)).transpose()?,
        system,
    })
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
    let args = model_args(provider, model, budget, system)?;
    let messages = json_of("messages", messages)?;
    let encoded = py.detach(|| toolwire_bindings::to_model(messages, args));
    body_and_notes(py, encoded, notes)
}

fn body_and_notes(
    py: Python<'_>,
    encoded: toolwire_bindings::Result<Encoded>,
    notes: bool,
) -> PyResult<Py<PyAny>> {
    let encoded = encoded.map_err(py_err)?;
    if notes {
        to_py(py, &(encoded.body, encoded.notes))
    } else {
        to_py(py, &encoded.body)
    }
}

/// The history and blob stores, where the `toolwire` binary keeps them: a data directory
/// (SQLite + blob files; default `$TOOLWIRE_DATA_DIR`, else the platform data dir) or
/// `database_url` (sqlite:// or postgres://) and `blob_url` (file:// or s3://).
#[pyclass(module = "toolwire", frozen)]
struct Store {
    store: toolwire_bindings::Store,
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
        work: impl Future<Output = toolwire_bindings::Result<T>> + Send,
    ) -> PyResult<T> {
        py.detach(|| self.runtime.block_on(work)).map_err(py_err)
    }
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
            .map_err(|e| {
                py_err(toolwire_bindings::Error::new(
                    toolwire_bindings::code::STORE,
                    toolwire_bindings::error_line(&e),
                ))
            })?;
        let store = py
            .detach(|| {
                runtime.block_on(toolwire_bindings::Store::open(
                    data_dir,
                    database_url,
                    blob_url,
                ))
            })
            .map_err(py_err)?;
        Ok(Store { store, runtime })
    }

    /// A new session; returns its id.
    #[pyo3(signature = (*, title = None, id = None))]
    fn create_session(
        &self,
        py: Python<'_>,
        title: Option<String>,
        id: Option<String>,
    ) -> PyResult<String> {
        self.run(py, self.store.create_session(title, id))
    }

    /// The stored sessions, newest first, as `toolwire sessions --json` lists them.
    #[pyo3(signature = (*, limit = 50, offset = 0))]
    fn sessions(&self, py: Python<'_>, limit: u32, offset: u32) -> PyResult<Py<PyAny>> {
        let sessions = self.run(py, self.store.sessions(limit, offset))?;
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
        let result = json_of("result", result)?;
        let stored = self.run(py, self.store.persist(&session, result))?;
        to_py(py, &stored)
    }

    /// Appends a message (`{"role": "user", "content": {"text": …}}`, an assistant turn
    /// with its tool calls, …) to `session`; returns the stored message.
    fn append(
        &self,
        py: Python<'_>,
        session: String,
        message: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let message = json_of("message", message)?;
        let stored = self.run(py, self.store.append(&session, message))?;
        to_py(py, &stored)
    }

    /// The session's messages in order, as `toolwire show --json` prints them. With
    /// `inline_media`, images stored as blobs (up to 8 MiB each) come back inline, so a
    /// persisted result loads back as it was given.
    #[pyo3(signature = (session, *, inline_media = true))]
    fn load(&self, py: Python<'_>, session: String, inline_media: bool) -> PyResult<Py<PyAny>> {
        let messages = self.run(py, self.store.load(&session, inline_media))?;
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
        let args = model_args(provider, model, budget, system)?;
        let encoded = py.detach(|| self.runtime.block_on(self.store.to_model(&session, args)));
        body_and_notes(py, encoded, notes)
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
        self.run(py, self.store.read_result(&session, &call_id, &args))
    }

    /// The bytes of a stored blob (`blake3:…`, as a stored result's image `source` names).
    fn blob<'py>(&self, py: Python<'py>, key: String) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.run(py, self.store.blob(&key))?;
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
