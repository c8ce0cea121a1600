//! What toolwire's Python and Node packages share, so that both say the same thing the
//! same way: each function's call into the engine crates (with the CLI's defaults), the
//! error codes, and the error lines as the CLI prints them. A binding converts its
//! language's values to and from JSON and turns [`Error`] into its own exception; nothing
//! else belongs there.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value as Json;
use toolwire_agent::{HostError, ModelRequest, StoreLocation};
use toolwire_core::{Message, ToolCall, ToolResult};
use toolwire_model::{
    Conversation, DEFAULT_READ_CHARS, EncodeNote, EncodeOptions, NoBlobs, Provider, ReadRequest,
    TruncationBudget,
};
use toolwire_store::{DEFAULT_REHYDRATE_LIMIT, NewSession, Page, Stores, rehydrate_images};
use toolwire_term::{ColorMode, TermOptions};

/// What `Store::sessions` and `Store::load` return, for the bindings to name.
pub use toolwire_store::{Session as SessionRow, StoredMessage};

/// The codes an [`Error`] carries. `invalid_input` is core's own code for input that does
/// not fit (`ErrorCode::InvalidInput`); the others name the component that failed.
pub mod code {
    pub const INVALID_INPUT: &str = "invalid_input";
    pub const NOT_FOUND: &str = "not_found";
    pub const STORE: &str = "store";
    pub const ENCODE: &str = "encode";
    pub const RENDER: &str = "render";
}

/// A failure as both packages raise it: `code` says what kind, `message` what and where,
/// in the CLI's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: &'static str,
    pub message: String,
}

impl Error {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
        }
    }

    /// A value given for argument path `at` (`raw.a[0]`) that has no JSON form.
    pub fn not_json(at: &str, why: &str) -> Self {
        Error::new(
            code::INVALID_INPUT,
            format!("{}: not JSON: {why}", excerpt(at)),
        )
    }

    fn store(err: &(dyn std::error::Error + 'static)) -> Self {
        Error::new(code::STORE, error_line(err))
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// An error as one line: its chain of causes joined by ": ", a cause the previous one
/// already quotes left out (as the CLI prints errors).
pub fn error_line(err: &(dyn std::error::Error + 'static)) -> String {
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

/// At most this many characters of input are quoted back in an error, as in the CLI.
const EXCERPT_CHARS: usize = 200;

fn excerpt(text: &str) -> String {
    toolwire_core::humanize::excerpt(text, EXCERPT_CHARS)
}

/// How deep a value given from Python or JavaScript may nest: serde_json's own limit,
/// which the CLI's JSON input has. The bindings' conversions recurse, so without a limit
/// a value nested 100,000 deep would overflow the stack and kill the process.
pub const MAX_INPUT_DEPTH: usize = 128;

/// The message for a value nested [`MAX_INPUT_DEPTH`] deep or more.
pub fn too_deep() -> String {
    format!("nested {MAX_INPUT_DEPTH} levels deep or more")
}

/// How many values (each object, array, string, number, …) one argument may hold. A
/// Python or JS value can share an object under many keys: 60 levels of `{a: o, b: o}`
/// are 2^60 values once walked into JSON, which would run for ever and take all memory.
/// Four million is far beyond any real tool result (a 20 MB result is a few values, a
/// 100,000-row table about a million) and keeps the JSON made under a few hundred MB.
pub const MAX_INPUT_VALUES: usize = 4_000_000;

/// The message for a value holding more than [`MAX_INPUT_VALUES`] values.
pub fn too_many() -> String {
    format!("more than {MAX_INPUT_VALUES} values")
}

/// JSON parsed into `T`; the error names the argument and the field path that did not
/// fit, in the CLI's words (`result: output[0]: missing field `kind``).
pub fn parse<T: DeserializeOwned>(name: &str, json: Json) -> Result<T> {
    serde_path_to_error::deserialize(json).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." {
            String::new()
        } else {
            format!("{path}: ")
        };
        let why = excerpt(&e.into_inner().to_string());
        Error::new(
            code::INVALID_INPUT,
            format!("{name}: {}{why}", excerpt(&path)),
        )
    })
}

/// The raw payload of one tool call → the canonical ToolResult, as `toolwire normalize`
/// prints it. The tool name and call id default as there: the payload's own `toolName`
/// and `callId`, else `tool` and `call_1`.
pub fn normalize(raw: Json, tool: Option<String>, call_id: Option<String>) -> ToolResult {
    let call = toolwire_normalize::payload_call(&raw, tool, call_id);
    toolwire_normalize::normalize_value(raw, &call).result
}

/// [`normalize`] of a payload given as JSON text (what the Node package reads plain data
/// as); `None` when the text is not JSON.
pub fn normalize_text(
    raw: &str,
    tool: Option<String>,
    call_id: Option<String>,
) -> Option<ToolResult> {
    toolwire_normalize::normalize_payload_text(raw, tool, call_id).map(|n| n.result)
}

/// The contract's violations of a ToolResult, one line each as `toolwire validate`
/// prints them; empty when it is valid. Something that is not a ToolResult at all fails.
pub fn validate(result: Json) -> Result<Vec<String>> {
    let result: ToolResult = parse("result", result)?;
    Ok(match result.validate() {
        Ok(()) => Vec::new(),
        Err(violations) => violations.iter().map(ToString::to_string).collect(),
    })
}

/// The JSON Schema (2020-12) of the ToolResult wire format, as `toolwire schema` prints.
/// Made through the schema's own serialization, which puts `$schema` first as the CLI's
/// print has it (the schema's map has it last).
pub fn schema() -> Json {
    serde_json::to_value(toolwire_core::tool_result_schema()).unwrap_or_default()
}

/// A ToolResult, a Value or a list of them, rendered for a terminal `width` columns wide
/// as `toolwire render` draws it; ANSI colours when `color`, no images.
pub fn render_terminal(result: &Json, width: usize, color: bool, expand: bool) -> Result<String> {
    let mut opts = TermOptions::plain(width).with_color(if color {
        ColorMode::Ansi256
    } else {
        ColorMode::Off
    });
    opts.expand_all = expand;
    toolwire_term::render_json(result, &opts)
        .map_err(|e| Error::new(code::RENDER, format!("result: {e}")))
}

/// What one `read_result` call asks for.
#[derive(Debug, Clone, Default)]
pub struct ReadArgs {
    pub part: usize,
    pub offset: usize,
    pub limit: Option<usize>,
    pub pattern: Option<String>,
    pub pointer: Option<String>,
}

impl ReadArgs {
    fn read(&self, result: &ToolResult) -> Result<String> {
        let request = ReadRequest {
            part: self.part,
            offset: self.offset,
            limit: self.limit.unwrap_or(DEFAULT_READ_CHARS),
            pattern: self.pattern.as_deref(),
            pointer: self.pointer.as_deref(),
        };
        toolwire_model::read(result, &request)
            .map_err(|e| Error::new(code::INVALID_INPUT, e.to_string()))
    }
}

/// More of a result a model saw cut: the page a marker's `read_result {"callId", "part",
/// "offset"}` names, the value at a JSON `pointer`, or the lines matching `pattern`. The
/// `result` is the whole one (as normalized or stored), not the cut view.
pub fn read_result(result: Json, args: &ReadArgs) -> Result<String> {
    let result: ToolResult = parse("result", result)?;
    args.read(&result)
}

/// The settings of a `to_model` call: the provider by name, the model (default: the
/// provider's usual one), the budget (characters per result, or a TruncationBudget) and a
/// system prompt (none when empty).
#[derive(Debug, Clone, Default)]
pub struct ModelArgs {
    pub provider: String,
    pub model: Option<String>,
    pub budget: Option<Json>,
    pub system: String,
}

impl ModelArgs {
    fn options(self) -> Result<(Provider, EncodeOptions, String)> {
        let provider: Provider =
            self.provider
                .parse()
                .map_err(|e: toolwire_model::UnknownProvider| {
                    Error::new(code::INVALID_INPUT, e.to_string())
                })?;
        let mut options = EncodeOptions::for_model(
            self.model
                .unwrap_or_else(|| provider.default_model().to_owned()),
        );
        if let Some(budget) = self.budget {
            options.budget = match budget.as_u64().and_then(|n| usize::try_from(n).ok()) {
                Some(max_chars) => TruncationBudget {
                    max_chars,
                    ..TruncationBudget::default()
                },
                None => parse("budget", budget)?,
            };
        }
        Ok((provider, options, self.system))
    }
}

/// A request body as toolwire would send it, and what encoding repaired or cut.
#[derive(Debug, Clone)]
pub struct Encoded {
    pub body: Json,
    pub notes: Vec<EncodeNote>,
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
fn conversation_of(items: Json) -> Result<Conversation> {
    let items = match items {
        Json::Array(items) => items,
        one @ Json::Object(_) => vec![one],
        other => {
            return Err(Error::new(
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

/// The request body toolwire would send a provider for a conversation or a list of
/// results: calls and results paired, media routed for the model, each result cut by
/// structure to the budget with a marker that `read_result` follows.
pub fn to_model(messages: Json, args: ModelArgs) -> Result<Encoded> {
    let (provider, mut options, system) = args.options()?;
    // The caller's messages or results go into its own request, after its own user turn.
    options.fragment = true;
    let mut conversation = conversation_of(messages)?;
    if !system.is_empty() {
        conversation.messages.insert(0, Message::system(system));
    }
    // Media not inline is read from blobs; these results have none stored, so the reader
    // has none, and the encoder never waits on I/O.
    let (body, notes) = futures::executor::block_on(toolwire_model::encode_request(
        provider,
        &conversation,
        &options,
        &NoBlobs,
    ))
    .map_err(|e| Error::new(code::ENCODE, error_line(&e)))?;
    Ok(Encoded { body, notes })
}

/// A result as `Store::persist` stored it: the result with blob references, or whatever
/// other message the history made of it.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Persisted {
    Result(ToolResult),
    Other(Message),
}

/// The history and blob stores, where the `toolwire` binary keeps them: a data directory
/// (SQLite + blob files; default `$TOOLWIRE_DATA_DIR`, else the platform data dir) or
/// `database_url` (sqlite:// or postgres://) and `blob_url` (file:// or s3://). Its
/// futures run on the binding's Tokio runtime, where its connections live.
#[derive(Clone)]
pub struct Store {
    stores: Arc<Stores>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

fn no_session(id: &str) -> Error {
    Error::new(code::NOT_FOUND, format!("no session {id:?}"))
}

impl Store {
    pub async fn open(
        data_dir: Option<PathBuf>,
        database_url: Option<String>,
        blob_url: Option<String>,
    ) -> Result<Self> {
        let place = StoreLocation {
            data_dir,
            database_url,
            blob_url,
        };
        let stores = place.open().await.map_err(|e| Error::store(&e))?;
        Ok(Store {
            stores: Arc::new(stores),
        })
    }

    async fn must_exist(&self, session: &str) -> Result<()> {
        match self.stores.history().session(session).await {
            Ok(Some(_)) => Ok(()),
            Ok(None) => Err(no_session(session)),
            Err(e) => Err(Error::store(&e)),
        }
    }

    /// A new session; returns its id.
    pub async fn create_session(
        &self,
        title: Option<String>,
        id: Option<String>,
    ) -> Result<String> {
        self.stores
            .create_session(NewSession {
                id,
                parent_id: None,
                title,
            })
            .await
            .map(|s| s.id)
            .map_err(|e| Error::store(&e))
    }

    /// The stored sessions, newest first, as `toolwire sessions --json` lists them.
    pub async fn sessions(&self, limit: u32, offset: u32) -> Result<Vec<SessionRow>> {
        self.stores
            .history()
            .list_sessions(Page { offset, limit })
            .await
            .map_err(|e| Error::store(&e))
    }

    /// Stores a tool result in `session`: its media to the blob store, the result (with
    /// blob references) to the history, as `toolwire normalize --store` does.
    pub async fn persist(&self, session: &str, result: Json) -> Result<Persisted> {
        let result: ToolResult = parse("result", result)?;
        self.must_exist(session).await?;
        let message = self
            .stores
            .record_result(session, result, None)
            .await
            .map_err(|e| Error::store(&e))?;
        Ok(match message.content {
            Message::ToolResult(result) => Persisted::Result(result),
            other => Persisted::Other(other),
        })
    }

    /// Appends a message (`{"role": "user", "content": {"text": …}}`, an assistant turn
    /// with its tool calls, …) to `session`; returns the stored message.
    pub async fn append(&self, session: &str, message: Json) -> Result<StoredMessage> {
        let message: Message = parse("message", message)?;
        self.must_exist(session).await?;
        self.stores
            .append(session, message)
            .await
            .map_err(|e| Error::store(&e))
    }

    /// The session's messages in order, as `toolwire show --json` prints them. With
    /// `inline_media`, images stored as blobs (up to 8 MiB each) come back inline, so a
    /// persisted result loads back as it was given.
    pub async fn load(&self, session: &str, inline_media: bool) -> Result<Vec<StoredMessage>> {
        self.must_exist(session).await?;
        let mut messages = self
            .stores
            .history()
            .load(session)
            .await
            .map_err(|e| Error::store(&e))?;
        if inline_media {
            for message in &mut messages {
                if let Message::ToolResult(result) = &mut message.content {
                    *result = rehydrate_images(
                        result,
                        self.stores.blobs().as_ref(),
                        DEFAULT_REHYDRATE_LIMIT,
                    )
                    .await
                    .map_err(|e| Error::store(&e))?;
                }
            }
        }
        Ok(messages)
    }

    /// The request body toolwire would send a provider for a stored session, as `toolwire
    /// export` prints it (stored media read from the blob store).
    pub async fn to_model(&self, session: &str, args: ModelArgs) -> Result<Encoded> {
        let (provider, options, system) = args.options()?;
        let request = ModelRequest::with_options(provider, &system, options);
        let (bytes, notes) = match request.export(&self.stores, session).await {
            Err(HostError::NoSession(id)) => return Err(no_session(&id)),
            Err(HostError::Encode(e)) => return Err(Error::new(code::ENCODE, error_line(&e))),
            Err(e) => return Err(Error::store(&e)),
            Ok(encoded) => encoded,
        };
        // The bytes the client would send, as the value they are.
        let body: Json = serde_json::from_slice(&bytes)
            .map_err(|e| Error::new(code::ENCODE, format!("the request body is not JSON: {e}")))?;
        Ok(Encoded { body, notes })
    }

    /// `read_result` over the result of `call_id` stored in `session`, as a model's
    /// `read_result` tool call reads it.
    pub async fn read_result(
        &self,
        session: &str,
        call_id: &str,
        args: &ReadArgs,
    ) -> Result<String> {
        let stored = self
            .stores
            .history()
            .find_result(session, call_id)
            .await
            .map_err(|e| Error::store(&e))?
            .ok_or_else(|| {
                Error::new(
                    code::NOT_FOUND,
                    format!("no stored result with callId {call_id:?} in session {session:?}"),
                )
            })?;
        args.read(&stored.result)
    }

    /// The bytes of a stored blob (`blake3:…`, as a stored result's image `source` names).
    pub async fn blob(&self, key: &str) -> Result<Vec<u8>> {
        self.stores
            .blob(key)
            .await
            .map(Vec::from)
            .map_err(|e| Error::store(&e))
    }
}
