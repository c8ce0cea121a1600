//! The `toolwire` npm package's native addon: each function converts its arguments (plain
//! JS values to JSON), calls toolwire-bindings (bindings/common, shared with the Python
//! package), which calls the crate the CLI calls for the same job, and turns failures into
//! a `ToolwireError` (an `Error` with a `code`) carrying the CLI's message. Values come back
//! as JSON.parse would make them of the CLI's output. Store calls run on Node's worker
//! threads and return promises.

mod js_value;

use std::cell::RefCell;
use std::future::Future;
use std::mem::ManuallyDrop;
use std::path::PathBuf;

use napi::bindgen_prelude::*;
use napi::{JsValue, ScopedTask, ValueType};
use napi_derive::napi;
use serde_json::Value as Json;
use toolwire_bindings::{MAX_INPUT_DEPTH, MAX_INPUT_VALUES, ModelArgs, ReadArgs};

/// The class of every error this package throws, defined in JavaScript so that it is a
/// real `Error` subclass (stack, `instanceof Error`), with `code` beside the message.
const ERROR_CLASS: &str = "(class ToolwireError extends Error {\
    constructor(message, code) { super(message); this.name = 'ToolwireError'; this.code = code; }\
})";

/// The JavaScript functions the addon's calls use, made or found when it loads: the error
/// class, JSON.parse and [`plain_json_script`]'s `plain`. Held as references, so that a
/// call reaches each in one Node-API step; a caller can neither reach nor change them.
struct Held {
    error_class: FunctionRef<FnArgs<(String, &'static str)>, Unknown<'static>>,
    parse: FunctionRef<String, Unknown<'static>>,
    plain: FunctionRef<napi::sys::napi_value, Option<String>>,
}

thread_local! {
    // Each JS thread (the main one, each worker) loads the addon into its own environment,
    // with its own functions. Never dropped (as a reference never released): at thread
    // exit the environment is gone, and its references with it.
    static HELD: RefCell<Option<ManuallyDrop<Held>>> = const { RefCell::new(None) };
}

#[napi(module_exports)]
pub fn init(mut exports: Object, env: Env) -> Result<()> {
    let class: Function<FnArgs<(String, &'static str)>, Unknown<'static>> =
        env.run_script(ERROR_CLASS)?;
    let error_class = class.create_ref()?;
    exports.set_named_property("ToolwireError", class)?;
    let json: Object = env.get_global()?.get_named_property("JSON")?;
    let parse: Function<String, Unknown<'static>> = json.get_named_property("parse")?;
    let plain: Function<napi::sys::napi_value, Option<String>> =
        env.run_script(plain_json_script())?;
    let held = Held {
        error_class,
        parse: parse.create_ref()?,
        plain: plain.create_ref()?,
    };
    HELD.with(|h| *h.borrow_mut() = Some(ManuallyDrop::new(held)));
    // `normalize` as exported: the #[napi] one behind a JavaScript front (see
    // [`NORMALIZE_FRONT`]), set after napi-rs has registered the exports.
    let values: Unknown = exports.get_named_property("normalize")?;
    let text = env.create_function_from_closure::<Unknown, Option<napi::sys::napi_value>, _>(
        "normalize",
        normalize_text,
    )?;
    let front: Function<FnArgs<(Unknown, Unknown, Unknown, Unknown)>, Unknown> =
        env.run_script(NORMALIZE_FRONT)?;
    let normalize = front.call(
        (
            values,
            text.to_unknown(),
            plain.to_unknown(),
            parse.to_unknown(),
        )
            .into(),
    )?;
    exports.set_named_property("normalize", normalize)?;

    Ok(())
}

/// The exported `normalize`: per small result, the crossings from Rust into JavaScript
/// cost more than the engine's work (10,000 small results took 36 ms with `plain` and
/// JSON.parse called from Rust, 22 ms this way), so the calls that read plain data as JSON
/// text and make the result of JSON text (`plain`, JSON.parse: see [`plain_json_script`])
/// are made here, from JavaScript, around one native call on text ([`normalize_text`]).
/// Whatever that call declines (data that is not plain or past the text way's size, text
/// serde_json refuses, options it cannot read) goes to the #[napi] `normalize`, which
/// reads it value by value and says what is wrong.
const NORMALIZE_FRONT: &str = "((values, text, plain, parse) => function normalize(raw, options) {
  const json = plain(raw);
  const out = json === undefined ? undefined : text(json, options);
  return typeof out === 'string' ? parse(out) : values(raw, options);
})";

/// `normalize` of a JSON text with its options, as JSON text; None when the text or the
/// options do not read (the caller then takes the #[napi] `normalize`, which says why).
/// Per small result the native call's own steps are most of the boundary's cost, so each
/// is the cheapest that holds: the text is written once into a buffer sized for it (a
/// growing one was reallocated and copied two or three times a call), and an all-ASCII
/// text (most results: serde_json escapes control characters) becomes a JS string as
/// Latin-1, a plain copy, where UTF-8 is decoded first.
fn normalize_text(ctx: FunctionCallContext) -> Result<Option<napi::sys::napi_value>> {
    let Text(text) = ctx.get(0)?;
    let Ok(options) = ctx.get::<Option<NormalizeOptions>>(1) else {
        return Ok(None);
    };
    let options = options.unwrap_or_default();
    let Some(result) = toolwire_bindings::normalize_text(&text, options.tool, options.call_id)
    else {
        return Ok(None);
    };
    // A result's JSON is about its payload's size plus its envelope's few fields.
    let mut out = Vec::with_capacity(text.len() + text.len() / 2 + 160);
    if serde_json::to_writer(&mut out, &result).is_err() {
        return Ok(None);
    }
    let made = if out.is_ascii() {
        ctx.env.create_string_latin1(&out)?
    } else {
        match String::from_utf8(out) {
            Ok(text) => ctx.env.create_string(text)?,
            Err(_) => return Ok(None),
        }
    };
    // Handed back raw: the value lives in this call's handle scope, and leaves it only as
    // the call's return value.
    Ok(Some(made.raw()))
}

/// A JS string read with one Node-API copy: napi-rs's `String` asks V8 for the UTF-8
/// length first (a pass over the text) and zeroes its buffer before the copy; here the
/// buffer is sized from the UTF-16 length V8 keeps (at most 3 UTF-8 bytes a unit), and
/// the copy is the one pass. Lone surrogates become U+FFFD, as napi-rs's read makes them.
struct Text(String);

impl FromNapiValue for Text {
    unsafe fn from_napi_value(
        env: napi::sys::napi_env,
        value: napi::sys::napi_value,
    ) -> Result<Self> {
        use napi::sys;
        let mut units = 0;
        // SAFETY: `env` and `value` are the call's own (napi-rs hands them to this trait);
        // a null buffer asks only for the length.
        let status = unsafe {
            sys::napi_get_value_string_utf16(env, value, std::ptr::null_mut(), 0, &mut units)
        };
        if status != sys::Status::napi_ok {
            return Err(Error::new(Status::StringExpected, "expected a string"));
        }
        let room = units * 3 + 1;
        let mut bytes: Vec<u8> = Vec::with_capacity(room);
        let mut written = 0;
        // SAFETY: the buffer has `room` bytes of capacity; Node-API writes at most
        // `room - 1` of them and the terminating NUL, and says how many in `written`.
        let status = unsafe {
            sys::napi_get_value_string_utf8(
                env,
                value,
                bytes.as_mut_ptr().cast(),
                room,
                &mut written,
            )
        };
        if status != sys::Status::napi_ok || written >= room {
            return Err(Error::new(Status::StringExpected, "expected a string"));
        }
        // SAFETY: Node-API initialised the first `written` bytes (within the capacity).
        unsafe { bytes.set_len(written) };
        String::from_utf8(bytes)
            .map(Text)
            .map_err(|_| Error::new(Status::StringExpected, "the string is not UTF-8"))
    }
}

/// `f` of the addon's held functions (see [`Held`]).
fn held<T>(f: impl FnOnce(&Held) -> Result<T>) -> Result<T> {
    HELD.with(|h| {
        let held = h.borrow();
        f(held
            .as_ref()
            .ok_or_else(|| Error::from_reason("toolwire: the addon was not initialised"))?)
    })
}

/// A `ToolwireError` to throw (or reject with) for `err`.
fn js_err(env: &Env, err: toolwire_bindings::Error) -> Error {
    let made = held(|h| {
        h.error_class
            .borrow_back(env)?
            .new_instance((err.message.clone(), err.code).into())
    })
    .map(Error::from);
    // Should the class be out of reach, the message and code still arrive.
    made.unwrap_or_else(|_| Error::new(Status::GenericFailure, err.message))
}

fn not_json(env: &Env, at: &[String], why: &str) -> Error {
    js_err(env, toolwire_bindings::Error::not_json(&at.concat(), why))
}

/// A JS value as JSON: object, array, string, number, boolean, null. What has no JSON form
/// (undefined, a function, a symbol, a bigint, NaN or Infinity, nesting past
/// [`MAX_INPUT_DEPTH`], more than [`MAX_INPUT_VALUES`] values) is refused, naming the
/// argument and where in it. An object's property whose value is undefined is left out,
/// as `JSON.stringify` leaves it out, so that optional fields set to undefined are the
/// fields absent.
fn json_of(env: &Env, name: &str, value: Unknown) -> Result<Json> {
    read_arg(env, name, value).map(|arg| arg.json)
}

/// An argument as JSON, and how it was read.
struct Arg {
    json: Json,
    /// Read value by value: past [`PLAIN_MAX_CHARS`] of strings (or not plain data), so
    /// what is made of it goes back value by value too ([`Out::Values`]).
    by_value: bool,
}

impl Arg {
    fn out(&self) -> Out {
        if self.by_value {
            Out::Values
        } else {
            Out::Text
        }
    }
}

/// See [`json_of`].
fn read_arg(env: &Env, name: &str, value: Unknown) -> Result<Arg> {
    if let Some(json) = plain_json(env, value) {
        return Ok(Arg {
            json,
            by_value: false,
        });
    }
    let mut at = vec![name.to_owned()];
    let mut budget = MAX_INPUT_VALUES;
    let json = to_json(value, &mut at, &mut budget).map_err(|why| not_json(env, &at, &why))?;
    Ok(Arg {
        json,
        by_value: true,
    })
}

/// Above this many UTF-16 units of strings in one argument (a 20 MB base64 image), JSON
/// text costs more than it saves: JSON.stringify's scan and copy, then serde_json's, on
/// top of the one copy [`to_json`] makes of each string. Measured on a 20 MB image: 157 ms
/// through text, 85 ms value by value.
const PLAIN_MAX_CHARS: usize = 1 << 20;

/// The JavaScript function behind [`plain_json`]: `plain(value)` is `value`'s JSON text
/// when the value is plain data that JSON.stringify writes exactly as [`to_json`] reads
/// it, and undefined whenever it cannot tell (then `to_json` decides, with its message).
/// It refuses what JSON.stringify would change or drop: undefined in an array, functions,
/// symbols, bigints, NaN and Infinity, whole numbers past 2^53 (`to_json` makes them
/// floats), objects that are not plain (a Date, a Map, a class instance, anything with a
/// `toJSON`), and what is past the depth and count limits. Strings are not looked into: a
/// lone surrogate becomes an escape that serde_json refuses, and that too falls back.
/// Past [`PLAIN_MAX_CHARS`] of strings it leaves the value to `to_json` as well.
fn plain_json_script() -> String {
    format!(
        "(() => {{
  const object = Object.prototype, array = Array.prototype;
  return function plain(root) {{
    if ('toJSON' in object || 'toJSON' in array) return undefined;
    let count = 0, chars = 0;
    const ok = (v, depth) => {{
      if (++count > {values}) return false;
      switch (typeof v) {{
        case 'string': return (chars += v.length) <= {chars};
        case 'boolean': return true;
        case 'number': return Number.isFinite(v) && (Number.isSafeInteger(v) || !Number.isInteger(v));
        case 'object': {{
          if (v === null) return true;
          if (depth >= {depth}) return false;
          if (Array.isArray(v)) {{
            if (Object.getPrototypeOf(v) !== array) return false;
            for (let i = 0; i < v.length; i++) if (!ok(v[i], depth + 1)) return false;
            return true;
          }}
          const proto = Object.getPrototypeOf(v);
          if (proto !== object && proto !== null) return false;
          for (const k of Object.keys(v)) {{
            const x = v[k];
            if (x !== undefined && !ok(x, depth + 1)) return false;
          }}
          return true;
        }}
        default: return false;
      }}
    }};
    return ok(root, 1) ? JSON.stringify(root) : undefined;
  }};
}})()",
        values = MAX_INPUT_VALUES,
        depth = MAX_INPUT_DEPTH,
        chars = PLAIN_MAX_CHARS,
    )
}

/// A JS value as JSON through the engine's own JSON.stringify, checked first by the held
/// `plain` function ([`plain_json_script`]): one crossing of one string, where
/// [`to_json`] makes several Node-API calls per value (a small result cost 6 µs that way).
/// None when the value is not plain or its text does not parse: `to_json` then reads it
/// value by value and says what is wrong, so both ways give the same value or the same
/// error.
fn plain_json(env: &Env, value: Unknown) -> Option<Json> {
    let text = held(|h| h.plain.borrow_back(env)?.call(value.raw())).ok()??;
    serde_json::from_str(&text).ok()
}

/// `budget`: how many more values the argument may hold ([`MAX_INPUT_VALUES`]).
fn to_json(
    value: Unknown,
    at: &mut Vec<String>,
    budget: &mut usize,
) -> std::result::Result<Json, String> {
    let js = |e: Error| e.reason.clone();
    *budget = budget
        .checked_sub(1)
        .ok_or_else(toolwire_bindings::too_many)?;
    match value.get_type().map_err(js)? {
        ValueType::Null => Ok(Json::Null),
        ValueType::Boolean => Ok(Json::Bool(value.coerce_to_bool().map_err(js)?)),
        // Read once, straight into the String's buffer (a 20 MB image's one copy in).
        ValueType::String => Ok(Json::String(String::from_unknown(value).map_err(js)?)),
        ValueType::Number => {
            let n = value
                .coerce_to_number()
                .and_then(|n| n.get_double())
                .map_err(js)?;
            number(n)
        }
        ValueType::Object => {
            // `at` holds the argument's name and one step per container entered so far.
            if at.len() >= MAX_INPUT_DEPTH {
                return Err(toolwire_bindings::too_deep());
            }
            let object = value.coerce_to_object().map_err(js)?;
            if value.is_array().map_err(js)? {
                let len: u32 = object.get_named_property("length").map_err(js)?;
                let mut items = Vec::with_capacity(len as usize);
                for i in 0..len {
                    at.push(format!("[{i}]"));
                    let item: Unknown = object.get_element(i).map_err(js)?;
                    items.push(to_json(item, at, budget)?);
                    at.pop();
                }
                return Ok(Json::Array(items));
            }
            let keys = Object::keys(&object).map_err(js)?;
            let mut map = serde_json::Map::with_capacity(keys.len());
            for key in keys {
                let item: Unknown = object.get_named_property(&key).map_err(js)?;
                if item.get_type().map_err(js)? == ValueType::Undefined {
                    continue;
                }
                at.push(format!(".{key}"));
                let item = to_json(item, at, budget)?;
                at.pop();
                map.insert(key, item);
            }
            Ok(Json::Object(map))
        }
        other => Err(format!("a value of type {}", type_name(other))),
    }
}

/// A JS number as JSON: a whole number within 2^53 as an integer (as JSON.parse read it
/// from the CLI's `3`), any other finite number as a float.
fn number(n: f64) -> std::result::Result<Json, String> {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    if n.fract() == 0.0 && (-SAFE..=SAFE).contains(&n) {
        // In range and whole, so the cast is exact.
        return Ok(Json::from(n as i64));
    }
    serde_json::Number::from_f64(n)
        .map(Json::Number)
        .ok_or_else(|| format!("{n} has no JSON form"))
}

fn type_name(t: ValueType) -> &'static str {
    match t {
        ValueType::Undefined => "undefined",
        ValueType::Function => "function",
        ValueType::Symbol => "symbol",
        ValueType::BigInt => "bigint",
        ValueType::External => "external",
        _ => "unknown",
    }
}

/// How a value goes back to JavaScript; both ways give what JSON.parse of the CLI's
/// output gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Out {
    /// As JSON text read by the engine's own JSON.parse: one crossing, for values of
    /// small strings.
    Text,
    /// Value by value ([`js_value`]): each string copied once, where the text way copies
    /// it three times (a 20 MB image: 17 ms against 48 ms).
    Values,
}

/// A Rust value as JS, made as `out` says.
fn to_js_as<'env, T: serde::Serialize + ?Sized>(
    env: &'env Env,
    value: &T,
    out: Out,
) -> Result<Unknown<'env>> {
    match out {
        Out::Text => to_js(env, value),
        Out::Values => js_value::to_js(env, value),
    }
}

/// A Rust value as JS: its JSON text read by the engine's own JSON.parse, so numbers,
/// strings and nesting are what JSON.parse of the CLI's output gives.
fn to_js<'env, T: serde::Serialize + ?Sized>(env: &'env Env, value: &T) -> Result<Unknown<'env>> {
    let text = serde_json::to_string(value).map_err(|e| {
        js_err(
            env,
            toolwire_bindings::Error::new(
                toolwire_bindings::code::INVALID_INPUT,
                format!("cannot convert to JavaScript: {e}"),
            ),
        )
    })?;
    held(|h| h.parse.borrow_back(env)?.call(text))
}

fn check<T>(env: &Env, result: toolwire_bindings::Result<T>) -> Result<T> {
    result.map_err(|e| js_err(env, e))
}

#[napi(object)]
#[derive(Debug, Default)]
pub struct NormalizeOptions {
    /// The tool's name (default: the payload's own `toolName`, else `tool`).
    pub tool: Option<String>,
    /// The call's id (default: the payload's own `callId`, else `call_1`).
    pub call_id: Option<String>,
}

/// The raw payload of one tool call → the canonical ToolResult, as `toolwire normalize`
/// prints it.
#[napi(ts_return_type = "ToolResult")]
pub fn normalize<'env>(
    env: &'env Env,
    #[napi(ts_arg_type = "unknown")] raw: Unknown,
    options: Option<NormalizeOptions>,
) -> Result<Unknown<'env>> {
    let raw = read_arg(env, "raw", raw)?;
    let out = raw.out();
    let options = options.unwrap_or_default();
    to_js_as(
        env,
        &toolwire_bindings::normalize(raw.json, options.tool, options.call_id),
        out,
    )
}

/// The contract's violations of a ToolResult, one line each as `toolwire validate`
/// prints them; empty when it is valid. Something that is not a ToolResult at all throws.
#[napi]
pub fn validate(
    env: &Env,
    #[napi(ts_arg_type = "ToolResult")] result: Unknown,
) -> Result<Vec<String>> {
    let result = json_of(env, "result", result)?;
    check(env, toolwire_bindings::validate(result))
}

/// The JSON Schema (2020-12) of the ToolResult wire format, as `toolwire schema` prints.
#[napi(ts_return_type = "Record<string, unknown>")]
pub fn schema(env: &Env) -> Result<Unknown<'_>> {
    to_js(env, &toolwire_bindings::schema())
}

#[napi(object)]
#[derive(Debug, Default)]
pub struct RenderOptions {
    /// Columns (default 80).
    pub width: Option<u32>,
    /// ANSI colours (default false).
    pub color: Option<bool>,
    /// Every folded part drawn open (default false).
    pub expand: Option<bool>,
}

/// A ToolResult, a Value or a list of them, rendered for a terminal `width` columns wide
/// as `toolwire render` draws it; ANSI colours when `color`, no images.
#[napi]
pub fn render_terminal(
    env: &Env,
    #[napi(ts_arg_type = "ToolResult | Value | Array<ToolResult | Value>")] result: Unknown,
    options: Option<RenderOptions>,
) -> Result<String> {
    let json = json_of(env, "result", result)?;
    let options = options.unwrap_or_default();
    check(
        env,
        toolwire_bindings::render_terminal(
            &json,
            options.width.unwrap_or(80) as usize,
            options.color.unwrap_or(false),
            options.expand.unwrap_or(false),
        ),
    )
}

#[napi(object)]
#[derive(Debug, Default)]
pub struct ReadOptions {
    /// The output value to read (default 0).
    pub part: Option<u32>,
    /// The character offset to read from (default 0).
    pub offset: Option<u32>,
    /// At most this many characters (default: the engine's page).
    pub limit: Option<u32>,
    /// The lines matching this regular expression, instead of a page.
    pub pattern: Option<String>,
    /// The value at this JSON pointer, instead of a page.
    pub pointer: Option<String>,
}

impl From<ReadOptions> for ReadArgs {
    fn from(o: ReadOptions) -> Self {
        ReadArgs {
            part: o.part.unwrap_or(0) as usize,
            offset: o.offset.unwrap_or(0) as usize,
            limit: o.limit.map(|n| n as usize),
            pattern: o.pattern,
            pointer: o.pointer,
        }
    }
}

/// More of a result a model saw cut: the page a marker's `read_result {"callId", "part",
/// "offset"}` names, the value at a JSON `pointer`, or the lines matching `pattern`. The
/// `result` is the whole one (as normalized or stored), not the cut view.
#[napi]
pub fn read_result(
    env: &Env,
    #[napi(ts_arg_type = "ToolResult")] result: Unknown,
    options: Option<ReadOptions>,
) -> Result<String> {
    let result = json_of(env, "result", result)?;
    let args = ReadArgs::from(options.unwrap_or_default());
    check(env, toolwire_bindings::read_result(result, &args))
}

#[napi(object)]
#[derive(Debug, Default)]
pub struct ModelOptions {
    /// The model (default: the provider's usual one); media is routed for it.
    pub model: Option<String>,
    /// Characters per result, or a TruncationBudget object.
    #[napi(ts_type = "number | Record<string, unknown>")]
    pub budget: Option<Json>,
    /// A system prompt put first.
    pub system: Option<String>,
    /// Return `[body, notes]`: the body and what encoding repaired or cut.
    pub notes: Option<bool>,
}

fn model_args(provider: String, options: &mut ModelOptions) -> ModelArgs {
    ModelArgs {
        provider,
        model: options.model.take(),
        budget: options.budget.take(),
        system: options.system.take().unwrap_or_default(),
    }
}

fn body_and_notes<'env>(
    env: &'env Env,
    encoded: toolwire_bindings::Encoded,
    notes: bool,
    out: Out,
) -> Result<Unknown<'env>> {
    if notes {
        to_js_as(env, &(encoded.body, encoded.notes), out)
    } else {
        to_js_as(env, &encoded.body, out)
    }
}

/// The request body (or, with `notes`, `[body, notes]`) toolwire would send `provider` for
/// a conversation or a list of results: calls and results paired, media routed for the
/// model, each result cut by structure to the budget with a marker that `readResult`
/// follows.
#[napi(
    ts_return_type = "Record<string, unknown> | [Record<string, unknown>, Array<Record<string, unknown>>]"
)]
pub fn to_model<'env>(
    env: &'env Env,
    #[napi(ts_arg_type = "Array<ToolResult> | Array<Record<string, unknown>> | ToolResult")]
    messages: Unknown,
    #[napi(
        ts_arg_type = "'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini' | (string & {})"
    )]
    provider: String,
    options: Option<ModelOptions>,
) -> Result<Unknown<'env>> {
    let mut options = options.unwrap_or_default();
    let args = model_args(provider, &mut options);
    let messages = read_arg(env, "messages", messages)?;
    let out = messages.out();
    let encoded = check(env, toolwire_bindings::to_model(messages.json, args))?;
    body_and_notes(env, encoded, options.notes.unwrap_or(false), out)
}

/// A Store call's work: it blocks a Node worker thread on napi's Tokio runtime, so the
/// future is made and polled there and never crosses threads.
type Work<T> = Box<dyn FnOnce() -> toolwire_bindings::Result<T> + Send>;

/// A Store call: its work runs on a Node worker thread, its value (or ToolwireError) is
/// made on the JS thread.
pub struct StoreTask<T: Send + 'static> {
    work: Option<Work<T>>,
    done: for<'env> fn(&'env Env, T) -> Result<Unknown<'env>>,
}

impl<T: Send + 'static> std::fmt::Debug for StoreTask<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreTask").finish_non_exhaustive()
    }
}

impl<'task, T: Send + 'static> ScopedTask<'task> for StoreTask<T> {
    type Output = toolwire_bindings::Result<T>;
    type JsValue = Unknown<'task>;

    fn compute(&mut self) -> Result<Self::Output> {
        match self.work.take() {
            Some(work) => Ok(work()),
            None => Err(Error::from_reason("toolwire: a Store call ran twice")),
        }
    }

    fn resolve(&mut self, env: &'task Env, output: Self::Output) -> Result<Self::JsValue> {
        let value = check(env, output)?;
        (self.done)(env, value)
    }
}

fn task<T: Send + 'static, F: Future<Output = toolwire_bindings::Result<T>>>(
    work: impl FnOnce() -> F + Send + 'static,
    done: for<'env> fn(&'env Env, T) -> Result<Unknown<'env>>,
) -> AsyncTask<StoreTask<T>> {
    AsyncTask::new(StoreTask {
        work: Some(Box::new(move || block_on(work()))),
        done,
    })
}

fn json_done<T: serde::Serialize>(env: &Env, value: T) -> Result<Unknown<'_>> {
    to_js(env, &value)
}

fn string_done(env: &Env, value: String) -> Result<Unknown<'_>> {
    Ok(env.create_string(&value)?.to_unknown())
}

#[napi(object)]
#[derive(Debug, Default)]
pub struct StoreOptions {
    /// SQLite + blob files here (default `$TOOLWIRE_DATA_DIR`, else the platform data dir).
    pub data_dir: Option<String>,
    /// sqlite:// or postgres:// (instead of the data directory's SQLite).
    pub database_url: Option<String>,
    /// file:// or s3:// (instead of the data directory's blob files).
    pub blob_url: Option<String>,
}

#[napi(object)]
#[derive(Debug, Default)]
pub struct SessionOptions {
    pub title: Option<String>,
    pub id: Option<String>,
}

#[napi(object)]
#[derive(Debug, Default)]
pub struct PageOptions {
    /// At most this many (default 50).
    pub limit: Option<u32>,
    pub offset: Option<u32>,
}

#[napi(object)]
#[derive(Debug, Default)]
pub struct LoadOptions {
    /// Images stored as blobs (up to 8 MiB each) come back inline (default true).
    pub inline_media: Option<bool>,
}

/// The history and blob stores, where the `toolwire` binary keeps them: a data directory
/// (SQLite + blob files) or `databaseUrl` (sqlite:// or postgres://) and `blobUrl`
/// (file:// or s3://). Open one with `await Store.open({...})`; every method returns a
/// promise.
#[napi]
#[derive(Debug)]
pub struct Store {
    store: toolwire_bindings::Store,
}

#[napi]
impl Store {
    /// Opens (creating what is missing) the stores at `options`' place.
    #[napi(ts_return_type = "Promise<Store>")]
    pub fn open(options: Option<StoreOptions>) -> AsyncTask<OpenTask> {
        let o = options.unwrap_or_default();
        AsyncTask::new(OpenTask {
            work: Some(Box::new(move || {
                block_on(toolwire_bindings::Store::open(
                    o.data_dir.map(PathBuf::from),
                    o.database_url,
                    o.blob_url,
                ))
            })),
        })
    }

    /// A new session; resolves to its id.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn create_session(&self, options: Option<SessionOptions>) -> AsyncTask<StoreTask<String>> {
        let store = self.store.clone();
        let o = options.unwrap_or_default();
        task(
            move || async move { store.create_session(o.title, o.id).await },
            string_done,
        )
    }

    /// The stored sessions, newest first, as `toolwire sessions --json` lists them.
    #[napi(ts_return_type = "Promise<Array<Record<string, unknown>>>")]
    pub fn sessions(
        &self,
        options: Option<PageOptions>,
    ) -> AsyncTask<StoreTask<Vec<toolwire_bindings::SessionRow>>> {
        let store = self.store.clone();
        let o = options.unwrap_or_default();
        task(
            move || async move {
                store
                    .sessions(o.limit.unwrap_or(50), o.offset.unwrap_or(0))
                    .await
            },
            json_done,
        )
    }

    /// Stores a tool result in `session`: its media to the blob store, the result (with
    /// blob references) to the history, as `toolwire normalize --store` does. Resolves to
    /// the stored result.
    #[napi(ts_return_type = "Promise<ToolResult>")]
    pub fn persist(
        &self,
        env: &Env,
        session: String,
        #[napi(ts_arg_type = "ToolResult")] result: Unknown,
    ) -> Result<AsyncTask<StoreTask<toolwire_bindings::Persisted>>> {
        let result = json_of(env, "result", result)?;
        let store = self.store.clone();
        Ok(task(
            move || async move { store.persist(&session, result).await },
            json_done,
        ))
    }

    /// Appends a message (`{role: "user", content: {text}}`, an assistant turn with its
    /// tool calls, …) to `session`; resolves to the stored message.
    #[napi(ts_return_type = "Promise<Record<string, unknown>>")]
    pub fn append(
        &self,
        env: &Env,
        session: String,
        #[napi(ts_arg_type = "Record<string, unknown>")] message: Unknown,
    ) -> Result<AsyncTask<StoreTask<toolwire_bindings::StoredMessage>>> {
        let message = json_of(env, "message", message)?;
        let store = self.store.clone();
        Ok(task(
            move || async move { store.append(&session, message).await },
            json_done,
        ))
    }

    /// The session's messages in order, as `toolwire show --json` prints them; stored
    /// images inline unless `inlineMedia: false`.
    #[napi(ts_return_type = "Promise<Array<Record<string, unknown>>>")]
    pub fn load(
        &self,
        session: String,
        options: Option<LoadOptions>,
    ) -> AsyncTask<StoreTask<Vec<toolwire_bindings::StoredMessage>>> {
        let store = self.store.clone();
        let inline = options.unwrap_or_default().inline_media.unwrap_or(true);
        task(
            move || async move { store.load(&session, inline).await },
            json_done,
        )
    }

    /// The request body toolwire would send `provider` for a stored session, as
    /// `toolwire export` prints it (stored media read from the blob store).
    #[napi(
        ts_return_type = "Promise<Record<string, unknown> | [Record<string, unknown>, Array<Record<string, unknown>>]>"
    )]
    pub fn to_model(
        &self,
        session: String,
        provider: String,
        options: Option<ModelOptions>,
    ) -> AsyncTask<StoreTask<(toolwire_bindings::Encoded, bool)>> {
        let mut options = options.unwrap_or_default();
        let args = model_args(provider, &mut options);
        let notes = options.notes.unwrap_or(false);
        let store = self.store.clone();
        task(
            move || async move { store.to_model(&session, args).await.map(|e| (e, notes)) },
            |env, (encoded, notes)| body_and_notes(env, encoded, notes, Out::Text),
        )
    }

    /// `readResult` over the result of `callId` stored in `session`, as a model's
    /// `read_result` tool call reads it.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn read_result(
        &self,
        session: String,
        call_id: String,
        options: Option<ReadOptions>,
    ) -> AsyncTask<StoreTask<String>> {
        let store = self.store.clone();
        let args = ReadArgs::from(options.unwrap_or_default());
        task(
            move || async move { store.read_result(&session, &call_id, &args).await },
            string_done,
        )
    }

    /// The bytes of a stored blob (`blake3:…`, as a stored result's image `source` names), as
    /// a Buffer (a Uint8Array, so the types need no @types/node).
    #[napi(ts_return_type = "Promise<Uint8Array>")]
    pub fn blob(&self, key: String) -> AsyncTask<StoreTask<Vec<u8>>> {
        let store = self.store.clone();
        task(
            move || async move { store.blob(&key).await },
            |env, bytes| Ok(BufferSlice::from_data(env, bytes)?.to_unknown()),
        )
    }
}

/// `Store.open`: the stores are opened on napi's Tokio runtime, where their connections
/// then live.
pub struct OpenTask {
    work: Option<Work<toolwire_bindings::Store>>,
}

impl std::fmt::Debug for OpenTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenTask").finish_non_exhaustive()
    }
}

impl<'task> ScopedTask<'task> for OpenTask {
    type Output = toolwire_bindings::Result<toolwire_bindings::Store>;
    type JsValue = Store;

    fn compute(&mut self) -> Result<Self::Output> {
        match self.work.take() {
            Some(work) => Ok(work()),
            None => Err(Error::from_reason("toolwire: Store.open ran twice")),
        }
    }

    fn resolve(&mut self, env: &'task Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(Store {
            store: check(env, output)?,
        })
    }
}
