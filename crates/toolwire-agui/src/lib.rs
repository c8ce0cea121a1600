//! AG-UI in: follows an external AG-UI agent (LangGraph, Pydantic AI, anything that answers
//! a `RunAgentInput` with an SSE stream of AG-UI events) and records what it does as a
//! toolwire session: its text, its tool calls, and each tool result normalized and landed
//! through the executor's one result sink (media to blobs, announced as stored), so the web
//! app shows it live and `toolwire show` after a restart. The agent is untrusted: lines,
//! events, arguments, text and open calls are bounded, a malformed event is a diagnostic
//! (never a panic or a half-written record), and a stream that ends before its run did
//! closes the run's open calls with error results. The mapping is in docs/contracts.md,
//! "AG-UI in".

#![warn(missing_docs)]

use std::collections::{HashMap, HashSet};

use serde_json::{Value as Json, json};
use toolwire_agent::Host;
use toolwire_core::{CallRef, ErrorCode, EventKind, Message, ToolCall, ToolResult, check_id};
use toolwire_store::NewSession;

/// How much of an untrusted agent's stream is held at once.
#[derive(Debug, Clone, Copy)]
pub struct FollowLimits {
    /// Longest SSE line, and longest event (its `data:` lines joined): a tool result with
    /// an inline image is one line, so this bounds the largest result followed.
    pub max_event: usize,
    /// Most calls started and not yet ended or answered at once.
    pub max_open_calls: usize,
    /// Longest arguments of one call (the `TOOL_CALL_ARGS` deltas joined).
    pub max_args: usize,
    /// Longest assistant text held before it is stored.
    pub max_text: usize,
    /// Most diagnostics kept for one run (the rest are counted).
    pub max_diagnostics: usize,
}

impl Default for FollowLimits {
    fn default() -> Self {
        FollowLimits {
            max_event: 16 * 1024 * 1024,
            max_open_calls: 64,
            max_args: 1024 * 1024,
            max_text: 4 * 1024 * 1024,
            max_diagnostics: 100,
        }
    }
}

/// What went wrong reading the stream itself (as opposed to one event in it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// A line or event was longer than the decoder's limit (given); it was skipped.
    #[error("an SSE line or event longer than {0} bytes (skipped)")]
    TooLong(usize),
    /// An event's data was not UTF-8; it was skipped.
    #[error("an SSE event that is not UTF-8 (skipped)")]
    NotUtf8,
}

/// Splits an SSE byte stream into the `data` of its events, holding at most one line or
/// event (`max`) at a time: an overlong one is skipped to its end and reported.
#[derive(Debug)]
pub struct SseDecoder {
    max: usize,
    line: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
    /// Dropping bytes to the end of an overlong line.
    skipping_line: bool,
    /// Dropping the rest of an event that grew too long.
    skipping_event: bool,
}

impl SseDecoder {
    /// A decoder holding at most `max` bytes of one line or event.
    pub fn new(max: usize) -> Self {
        SseDecoder {
            max,
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            skipping_line: false,
            skipping_event: false,
        }
    }

    /// Feeds bytes; each complete event's data (or why one was skipped) goes to `out`.
    pub fn push(&mut self, mut chunk: &[u8], out: &mut Vec<Result<String, SseError>>) {
        while !chunk.is_empty() {
            let newline = chunk.iter().position(|&b| b == b'\n');
            let (part, rest, ends) = match newline {
                Some(i) => (&chunk[..i], &chunk[i + 1..], true),
                None => (chunk, &[][..], false),
            };
            chunk = rest;
            if !self.skipping_line {
                if self.line.len() + part.len() > self.max {
                    self.skipping_line = true;
                    self.line.clear();
                    self.drop_event(out);
                } else {
                    self.line.extend_from_slice(part);
                }
            }
            if ends {
                if self.skipping_line {
                    self.skipping_line = false;
                } else {
                    let line = std::mem::take(&mut self.line);
                    self.line_done(&line, out);
                    self.line = line;
                    self.line.clear();
                }
            }
        }
    }

    /// Reports the event under way as skipped, once, and drops what it held.
    fn drop_event(&mut self, out: &mut Vec<Result<String, SseError>>) {
        if !self.skipping_event {
            out.push(Err(SseError::TooLong(self.max)));
        }
        self.skipping_event = true;
        self.data.clear();
        self.has_data = false;
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<Result<String, SseError>>) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            // The blank line ends an event.
            if self.skipping_event {
                self.skipping_event = false;
            } else if self.has_data {
                let data = std::mem::take(&mut self.data);
                out.push(String::from_utf8(data).map_err(|_| SseError::NotUtf8));
            }
            self.has_data = false;
            self.data.clear();
            return;
        }
        if self.skipping_event || line.starts_with(b":") {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => (&line[..i], &line[i + 1..]),
            None => (line, &[][..]),
        };
        if field != b"data" {
            // `event`, `id`, `retry`: AG-UI puts everything in `data`.
            return;
        }
        let value = value.strip_prefix(b" ").unwrap_or(value);
        if self.data.len() + value.len() + 1 > self.max {
            self.drop_event(out);
            return;
        }
        if self.has_data {
            self.data.push(b'\n');
        }
        self.data.extend_from_slice(value);
        self.has_data = true;
    }
}

/// How a followed run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// `RUN_FINISHED`; calls left without a result wait for the front end's answer.
    Finished,
    /// `RUN_ERROR`, with its message.
    Failed(String),
    /// The stream ended (or broke) before the run did.
    Dropped(String),
}

/// A call whose arguments are still streaming.
#[derive(Debug)]
struct OpenCall {
    id: String,
    name: String,
    args: String,
    /// Set when the arguments grew past the limit: the call is kept, its input is not.
    args_dropped: bool,
    /// The held (closed, not stored) assistant message it belongs to, when it came late.
    late_parent: Option<String>,
}

/// A write held until the run's authoritative `MESSAGES_SNAPSHOT` (or its end): the stream
/// may still be corrected (a result it showed as a success failed), and the calls of one
/// assistant message may come interleaved with their results.
#[derive(Debug)]
enum Pending {
    /// An assistant message: its AG-UI id, its text and the calls it made.
    Message {
        parent: Option<String>,
        text: String,
        calls: Vec<ToolCall>,
    },
    /// A call's result: its AG-UI content, or an error (code, message).
    Result {
        id: String,
        content: Json,
        error: Option<(String, String)>,
    },
}

/// Most bytes of results held for a snapshot's correction: past this, what is held is
/// stored at once (in order; a later correction then comes too late and is reported).
const MAX_HELD: usize = 64 * 1024 * 1024;

/// Most messages and results held at once (a call's arguments, up to 1 MiB, are held with
/// its message): past this, what is held is stored at once, as past `MAX_HELD`.
const MAX_HELD_WRITES: usize = 256;

/// Follows one AG-UI thread into one toolwire session.
#[derive(Debug)]
pub struct Follower {
    host: Host,
    session: String,
    limits: FollowLimits,
    turn: u32,
    run_open: bool,
    /// Assistant text not stored yet.
    text: String,
    text_dropped: bool,
    /// Calls whose arguments are streaming (between `TOOL_CALL_START` and `END`).
    open: Vec<OpenCall>,
    /// Calls ended and announced, to be stored with the assistant message they belong to.
    made: Vec<ToolCall>,
    /// The AG-UI id of the assistant message under way (`parentMessageId` of its calls, or
    /// its text's `messageId`): calls naming it belong to it, however they interleave with
    /// results.
    parent: Option<String>,
    /// Results of the calls in `made`, stored after their message.
    held: Vec<Pending>,
    /// Closed messages and results not stored yet, in order.
    pending: Vec<Pending>,
    /// About how many bytes `held` and `pending` hold.
    held_bytes: usize,
    /// Digests of the AG-UI ids of the assistant messages whose text this run recorded, and
    /// of those texts: a snapshot's assistant text is recorded only when the stream did not
    /// carry it.
    texts_seen: HashSet<String>,
    /// AG-UI ids of the messages of this run's input: a snapshot's messages up to the last
    /// of them were recorded by earlier runs.
    input_ids: HashSet<String>,
    /// Calls this run started that have no result yet (toolwire ids → tool names).
    this_run: Vec<(String, String)>,
    /// Every call of the session without a result (toolwire id → tool name).
    waiting: HashMap<String, String>,
    /// Every call of the session that has a result.
    answered: HashSet<String>,
    diagnostics: Vec<String>,
    more_diagnostics: usize,
    end: Option<RunEnd>,
}

/// A toolwire id for an id the agent chose: itself when it is a valid toolwire id, else a
/// digest of it (ids go into paths and SQL; the agent's may hold anything).
pub fn toolwire_id(prefix: &str, given: &str) -> String {
    if check_id(given).is_none() {
        return given.to_owned();
    }
    let digest = blake3::hash(given.as_bytes()).to_hex();
    format!("{prefix}{}", &digest[..32])
}

impl Follower {
    /// The session that follows `thread_id` (made on first use, titled `title`).
    pub async fn open(
        host: Host,
        thread_id: &str,
        title: &str,
        limits: FollowLimits,
    ) -> Result<Follower, toolwire_store::StoreError> {
        let session = toolwire_id("agui-thread-", thread_id);
        let stores = host.stores();
        if stores.history().session(&session).await?.is_none() {
            stores
                .create_session(NewSession {
                    id: Some(session.clone()),
                    title: Some(title.to_owned()),
                    ..NewSession::default()
                })
                .await?;
        }
        let mut waiting = HashMap::new();
        let mut answered = HashSet::new();
        let mut turn = 0u32;
        for message in stores.history().load(&session).await? {
            match message.content {
                Message::Assistant { tool_calls, .. } => {
                    turn = turn.saturating_add(1);
                    for call in tool_calls {
                        waiting.insert(call.id, call.name);
                    }
                }
                Message::ToolResult(result) => {
                    waiting.remove(&result.call_id);
                    answered.insert(result.call_id);
                }
                _ => {}
            }
        }
        Ok(Follower {
            host,
            session,
            limits,
            turn,
            run_open: false,
            text: String::new(),
            text_dropped: false,
            open: Vec::new(),
            made: Vec::new(),
            parent: None,
            held: Vec::new(),
            pending: Vec::new(),
            held_bytes: 0,
            texts_seen: HashSet::new(),
            input_ids: HashSet::new(),
            this_run: Vec::new(),
            waiting,
            answered,
            diagnostics: Vec::new(),
            more_diagnostics: 0,
            end: None,
        })
    }

    /// The toolwire session this thread is recorded in.
    pub fn session_id(&self) -> &str {
        &self.session
    }

    /// What was noticed and not recorded as it came (malformed or unexpected events).
    pub fn diagnostics(&self) -> Vec<String> {
        let mut all = self.diagnostics.clone();
        if self.more_diagnostics > 0 {
            all.push(format!("… and {} more", self.more_diagnostics));
        }
        all
    }

    /// How the run ended, once it has.
    pub fn end(&self) -> Option<&RunEnd> {
        self.end.as_ref()
    }

    fn note(&mut self, message: impl Into<String>) {
        if self.diagnostics.len() < self.limits.max_diagnostics {
            self.diagnostics.push(message.into());
        } else {
            self.more_diagnostics += 1;
        }
    }

    /// The toolwire id of an agent's call id (the same digest every time).
    fn call_id(&mut self, given: &str) -> String {
        toolwire_id("agui-call-", given)
    }

    /// Records the user's new message (the last of a `RunAgentInput` when it is a user
    /// message) and the results the front end sends back for the calls it ran (`tool`
    /// messages answering calls still waiting).
    pub async fn input(&mut self, messages: &[Json]) {
        self.input_ids = messages
            .iter()
            .filter_map(|m| m["id"].as_str())
            .map(str::to_owned)
            .collect();
        if let Some(last) = messages.last().filter(|m| m["role"] == "user") {
            match user_text(last) {
                Some(text) => {
                    if let Err(e) = self
                        .host
                        .stores()
                        .append(&self.session, Message::User { text })
                        .await
                    {
                        self.note(format!("the user message could not be stored: {e}"));
                    }
                }
                None => self.note("the last user message has no text; not recorded"),
            }
        }
        for message in messages.iter().filter(|m| m["role"] == "tool") {
            let Some(given) = message["toolCallId"].as_str() else {
                self.note("a tool message without a toolCallId; not recorded");
                continue;
            };
            let id = self.call_id(given);
            if !self.waiting.contains_key(&id) {
                // Answered already, or a call this session never saw.
                continue;
            }
            let error = tool_error(message);
            self.result(&id, &message["content"], error).await;
        }
        self.commit().await;
    }

    /// Records one event's `data` (a JSON AG-UI event).
    pub async fn event(&mut self, data: &str) {
        let event: Json = match serde_json::from_str(data) {
            Ok(e) => e,
            Err(e) => {
                self.note(format!("an event that is not JSON ({e}); skipped"));
                return;
            }
        };
        let Some(kind) = event["type"].as_str() else {
            self.note("an event without a string `type`; skipped");
            return;
        };
        // The type goes into diagnostics: an agent's made-up one is cut short there.
        let kind = match kind.char_indices().nth(64) {
            Some((end, _)) => &kind[..end],
            None => kind,
        };
        if self.end.is_some() {
            if kind != "RUN_STARTED" {
                self.note(format!("{kind} after the run ended; skipped"));
                return;
            }
            // A stream may hold runs one after another.
            self.end = None;
        }
        if let Err(why) = self.apply(kind, &event).await {
            self.note(format!("{kind}: {why}; skipped"));
        }
    }

    async fn apply(&mut self, kind: &str, event: &Json) -> Result<(), String> {
        let field = |name: &str| -> Result<String, String> {
            event[name]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("no string `{name}`"))
        };
        match kind {
            "RUN_STARTED" if !self.run_open => {
                self.run_open = true;
                self.texts_seen.clear();
                self.turn = self.turn.saturating_add(1);
                self.emit(EventKind::TurnStarted { turn: self.turn }).await;
            }
            "TEXT_MESSAGE_START" => self.text_of(event["messageId"].as_str()),
            "TEXT_MESSAGE_CONTENT" | "TEXT_MESSAGE_CHUNK" => {
                let delta = match event["delta"].as_str() {
                    Some(d) => d.to_owned(),
                    None if kind == "TEXT_MESSAGE_CHUNK" => return Ok(()),
                    None => return Err("no string `delta`".to_owned()),
                };
                self.text_of(event["messageId"].as_str());
                if self.text.len() + delta.len() > self.limits.max_text {
                    if !self.text_dropped {
                        self.text_dropped = true;
                        return Err(format!(
                            "assistant text past {} bytes is not recorded",
                            self.limits.max_text
                        ));
                    }
                    return Ok(());
                }
                self.text.push_str(&delta);
                self.emit(EventKind::AssistantDelta { text: delta }).await;
            }
            "TOOL_CALL_START" => {
                let given = field("toolCallId")?;
                let name = field("toolCallName")?;
                let id = self.call_id(&given);
                if self.open.iter().any(|c| c.id == id)
                    || self.made.iter().any(|c| c.id == id)
                    || self.waiting.contains_key(&id)
                    || self.answered.contains(&id)
                {
                    return Err(format!("call {given:?} was started already"));
                }
                if self.open.len() + self.this_run.len() >= self.limits.max_open_calls {
                    return Err(format!(
                        "more than {} calls open at once",
                        self.limits.max_open_calls
                    ));
                }
                // Calls of another assistant message close the one under way; calls of
                // the same one join it, even after some of its results.
                // A call of a message already closed and still held (a snapshot's call the
                // stream did not show) joins that message.
                let mut late_parent = None;
                if let Some(parent) = event["parentMessageId"].as_str() {
                    let other = self.parent.as_deref().is_some_and(|p| p != parent);
                    if self.held_message(parent).is_some() && self.parent.as_deref() != Some(parent)
                    {
                        late_parent = Some(parent.to_owned());
                    } else {
                        if (!self.made.is_empty() && self.parent.as_deref() != Some(parent))
                            || (!self.text.is_empty() && other)
                        {
                            self.close();
                        }
                        self.parent = Some(parent.to_owned());
                    }
                }
                self.open.push(OpenCall {
                    id,
                    name,
                    args: String::new(),
                    args_dropped: false,
                    late_parent,
                });
            }
            "TOOL_CALL_ARGS" => {
                let id = self.call_id(&field("toolCallId")?);
                let delta = field("delta")?;
                let max = self.limits.max_args;
                let Some(call) = self.open.iter_mut().find(|c| c.id == id) else {
                    return Err(format!("no open call {id:?}"));
                };
                if call.args_dropped {
                    return Ok(());
                }
                if call.args.len() + delta.len() > max {
                    call.args_dropped = true;
                    call.args.clear();
                    return Err(format!("arguments of call {id:?} past {max} bytes"));
                }
                call.args.push_str(&delta);
            }
            "TOOL_CALL_END" => {
                let id = self.call_id(&field("toolCallId")?);
                let Some(at) = self.open.iter().position(|c| c.id == id) else {
                    return Err(format!("no open call {id:?}"));
                };
                let call = self.open.remove(at);
                // Its arguments are held with its message until the message is stored.
                self.held_bytes = self.held_bytes.saturating_add(call.args.len());
                let input = if call.args_dropped {
                    json!({"_toolwire": "arguments too long to record"})
                } else if call.args.trim().is_empty() {
                    json!({})
                } else {
                    // Unparsable arguments are kept as their text, as toolwire keeps a
                    // provider's (docs/contracts.md).
                    serde_json::from_str(&call.args).unwrap_or(Json::String(call.args))
                };
                self.emit(EventKind::ToolCallStarted {
                    call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    input: input.clone(),
                    // A followed agent's calls are its model's.
                    by_person: None,
                })
                .await;
                self.this_run.push((call.id.clone(), call.name.clone()));
                let made = ToolCall::new(call.id, call.name, input);
                let held = call
                    .late_parent
                    .as_deref()
                    .and_then(|p| self.held_message(p));
                match held.and_then(|at| match &mut self.pending[at] {
                    Pending::Message { calls, .. } => Some(calls),
                    Pending::Result { .. } => None,
                }) {
                    Some(calls) => {
                        self.waiting.insert(made.id.clone(), made.name.clone());
                        calls.push(made);
                    }
                    None => self.made.push(made),
                }
            }
            "TOOL_CALL_RESULT" => {
                let id = self.call_id(&field("toolCallId")?);
                if !event["content"].is_string() && !event["content"].is_array() {
                    return Err("`content` is neither text nor a list of parts".to_owned());
                }
                if self.open.iter().any(|c| c.id == id) {
                    // A result before its call ended: the call ends here.
                    Box::pin(self.apply("TOOL_CALL_END", &json!({"toolCallId": id}))).await?;
                }
                if !self.waiting.contains_key(&id) && !self.made.iter().any(|c| c.id == id) {
                    return Err(if self.answered.contains(&id) {
                        format!("call {id:?} has a result already")
                    } else {
                        format!("no call {id:?} was started")
                    });
                }
                self.result(&id, &event["content"], None).await;
            }
            "MESSAGES_SNAPSHOT" => {
                let Some(messages) = event["messages"].as_array() else {
                    return Err("no `messages` list".to_owned());
                };
                self.snapshot(messages).await;
            }
            "RUN_FINISHED" => self.finish(RunEnd::Finished).await,
            "RUN_ERROR" => {
                let message = event["message"]
                    .as_str()
                    .unwrap_or("the agent reported an error")
                    .to_owned();
                self.finish(RunEnd::Failed(message)).await;
            }
            // Steps, state, reasoning, activities, custom and raw events carry nothing
            // toolwire records.
            _ => {}
        }
        Ok(())
    }

    /// Text of the assistant message `id` (when the event names one): text after calls
    /// of another message (or of none named) is a new assistant message.
    fn text_of(&mut self, id: Option<&str>) {
        if !self.made.is_empty() && (id.is_none() || id != self.parent.as_deref()) {
            self.close();
        }
        if let Some(id) = id {
            self.parent = Some(id.to_owned());
            self.seen(id);
        }
    }

    /// Remembers an assistant message id or text (as its digest) this run recorded, up to
    /// 4,096 of them: past that a snapshot's text may be recorded a second time, but an
    /// agent's endless messages cost no memory.
    fn seen(&mut self, id_or_text: &str) {
        if self.texts_seen.len() < 4096 {
            self.texts_seen.insert(seen_key(id_or_text));
        }
    }

    /// What a `MESSAGES_SNAPSHOT` holds that the stream did not show (assistant calls this
    /// session has not seen, results for calls still waiting, assistant text of this run
    /// no text event carried) and what it corrects (a result the stream showed as a
    /// success that the snapshot marks failed). Then what is held is stored.
    async fn snapshot(&mut self, messages: &[Json]) {
        // Messages up to the last one of this run's input were recorded by earlier runs.
        let new_from = messages
            .iter()
            .rposition(|m| {
                m["id"]
                    .as_str()
                    .is_some_and(|id| self.input_ids.contains(id))
            })
            .map_or(0, |at| at + 1);
        for (at, message) in messages.iter().enumerate() {
            match message["role"].as_str() {
                Some("assistant") => {
                    if at >= new_from {
                        self.snapshot_text(message).await;
                    }
                    let Some(calls) = message["toolCalls"].as_array() else {
                        continue;
                    };
                    for call in calls {
                        let (Some(given), Some(name)) =
                            (call["id"].as_str(), call["function"]["name"].as_str())
                        else {
                            self.note("MESSAGES_SNAPSHOT: a tool call without id or name");
                            continue;
                        };
                        let id = self.call_id(given);
                        let known = self.waiting.contains_key(&id)
                            || self.answered.contains(&id)
                            || self.made.iter().any(|c| c.id == id)
                            || self.open.iter().any(|c| c.id == id);
                        if known || self.this_run.len() >= self.limits.max_open_calls {
                            continue;
                        }
                        let args = call["function"]["arguments"].as_str().unwrap_or("");
                        let mut start = json!({"toolCallId": given, "toolCallName": name});
                        if let Some(parent) = message["id"].as_str() {
                            start["parentMessageId"] = json!(parent);
                        }
                        let _ = Box::pin(self.apply("TOOL_CALL_START", &start)).await;
                        let _ = Box::pin(self.apply(
                            "TOOL_CALL_ARGS",
                            &json!({"toolCallId": given, "delta": args}),
                        ))
                        .await;
                        let _ =
                            Box::pin(self.apply("TOOL_CALL_END", &json!({"toolCallId": given})))
                                .await;
                    }
                }
                Some("tool") => {
                    let Some(given) = message["toolCallId"].as_str() else {
                        continue;
                    };
                    let id = self.call_id(given);
                    let error = tool_error(message);
                    if self.answered.contains(&id) {
                        if let Some(error) = error {
                            self.correct(&id, error);
                        }
                        continue;
                    }
                    let waits =
                        self.waiting.contains_key(&id) || self.made.iter().any(|c| c.id == id);
                    if waits {
                        self.result(&id, &message["content"], error).await;
                    }
                }
                _ => {}
            }
        }
        // What only the snapshot showed (calls of a turn that did not stream, results)
        // goes where the agent made it: before the answer the stream carried.
        self.close();
        self.order_by(messages);
        self.commit().await;
    }

    /// Puts what is held in the order of a snapshot's messages: each message and result
    /// at its place there (a message by its AG-UI id, else by its first call); what the
    /// snapshot does not hold stays right after what it followed.
    fn order_by(&mut self, messages: &[Json]) {
        let mut place: HashMap<String, usize> = HashMap::new();
        for (at, message) in messages.iter().enumerate() {
            match message["role"].as_str() {
                Some("assistant") => {
                    if let Some(id) = message["id"].as_str() {
                        place.entry(format!("m:{id}")).or_insert(at);
                    }
                    for call in message["toolCalls"].as_array().into_iter().flatten() {
                        if let Some(given) = call["id"].as_str() {
                            place
                                .entry(format!("c:{}", self.call_id(given)))
                                .or_insert(at);
                        }
                    }
                }
                Some("tool") => {
                    if let Some(given) = message["toolCallId"].as_str() {
                        place
                            .entry(format!("r:{}", self.call_id(given)))
                            .or_insert(at);
                    }
                }
                _ => {}
            }
        }
        let mut last = 0;
        let mut keyed: Vec<(usize, Pending)> = std::mem::take(&mut self.pending)
            .into_iter()
            .map(|pending| {
                let found = match &pending {
                    Pending::Message { parent, calls, .. } => parent
                        .as_ref()
                        .and_then(|p| place.get(&format!("m:{p}")))
                        .or_else(|| {
                            calls
                                .first()
                                .and_then(|c| place.get(&format!("c:{}", c.id)))
                        }),
                    Pending::Result { id, .. } => place.get(&format!("r:{id}")),
                };
                if let Some(&at) = found {
                    last = at;
                }
                (last, pending)
            })
            .collect();
        // Stable: what shares a place keeps the order it came in.
        keyed.sort_by_key(|(at, _)| *at);
        self.pending = keyed.into_iter().map(|(_, p)| p).collect();
    }

    /// A snapshot's assistant text, recorded when no text event of this run carried it
    /// (a model that does not stream sends its answer only in the snapshot).
    async fn snapshot_text(&mut self, message: &Json) {
        let text = match &message["content"] {
            Json::String(text) => text.clone(),
            Json::Array(parts) => parts
                .iter()
                .filter(|p| p["type"] == "text")
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => return,
        };
        let id = message["id"].as_str();
        if text.trim().is_empty()
            || id.is_some_and(|id| self.texts_seen.contains(&seen_key(id)))
            || self.texts_seen.contains(&seen_key(&text))
            || self.text == text
        {
            return;
        }
        if self.text.len() + text.len() > self.limits.max_text {
            self.note(format!(
                "MESSAGES_SNAPSHOT: assistant text past {} bytes is not recorded",
                self.limits.max_text
            ));
            return;
        }
        // The text belongs to the message under way only when it is that message.
        if id.is_none() || id != self.parent.as_deref() {
            self.close();
        }
        if let Some(id) = id {
            self.parent = Some(id.to_owned());
            self.seen(id);
        }
        self.seen(&text);
        self.text.push_str(&text);
        self.emit(EventKind::AssistantDelta { text }).await;
    }

    /// Where the held assistant message with AG-UI id `parent` is in `pending`.
    fn held_message(&self, parent: &str) -> Option<usize> {
        self.pending
            .iter()
            .position(|p| matches!(p, Pending::Message { parent: Some(p), .. } if p == parent))
    }

    /// Marks a held result failed, as an authoritative snapshot says it was.
    fn correct(&mut self, id: &str, error: (String, String)) {
        let held = self
            .held
            .iter_mut()
            .chain(self.pending.iter_mut())
            .find_map(|p| match p {
                Pending::Result {
                    id: held, error, ..
                } if held == id => Some(error),
                _ => None,
            });
        match held {
            Some(slot @ None) => *slot = Some(error),
            Some(Some(_)) => {}
            None => self.note(format!(
                "MESSAGES_SNAPSHOT marks call {id:?} failed after its result was stored; \
                 kept as stored"
            )),
        }
    }

    /// Closes the assistant message under way: it and its results are held, in order.
    fn close(&mut self) {
        if self.text.is_empty() && self.made.is_empty() {
            self.parent = None;
            return;
        }
        let calls = std::mem::take(&mut self.made);
        let text = std::mem::take(&mut self.text);
        self.text_dropped = false;
        if !text.is_empty() {
            self.seen(&text);
        }
        self.waiting
            .extend(calls.iter().map(|c| (c.id.clone(), c.name.clone())));
        let parent = self.parent.take();
        self.pending.push(Pending::Message {
            parent,
            text,
            calls,
        });
        let held = std::mem::take(&mut self.held);
        self.pending.extend(held);
    }

    /// Stores what is held: the message under way, then every message and result closed,
    /// in order (each result after its call's message).
    async fn commit(&mut self) {
        self.close();
        self.held_bytes = 0;
        for pending in std::mem::take(&mut self.pending) {
            match pending {
                Pending::Message { text, calls, .. } => {
                    if let Err(e) = self
                        .host
                        .stores()
                        .append(
                            &self.session,
                            Message::Assistant {
                                text,
                                tool_calls: calls,
                            },
                        )
                        .await
                    {
                        self.note(format!("the assistant message could not be stored: {e}"));
                    }
                }
                Pending::Result { id, content, error } => {
                    self.land(&id, &content, error).await;
                }
            }
        }
    }

    /// Records a call's result: held with its message while that message is under way,
    /// after it otherwise; stored at the next commit.
    async fn result(&mut self, id: &str, content: &Json, error: Option<(String, String)>) {
        if self.answered.contains(id)
            || (!self.waiting.contains_key(id) && !self.made.iter().any(|c| c.id == id))
        {
            self.note(format!(
                "call {id:?} has no call to answer; its result is dropped"
            ));
            return;
        }
        self.answered.insert(id.to_owned());
        self.this_run.retain(|(c, _)| c != id);
        self.held_bytes = self
            .held_bytes
            .saturating_add(serde_json::to_string(content).map_or(0, |t| t.len()));
        let pending = Pending::Result {
            id: id.to_owned(),
            content: content.clone(),
            error,
        };
        let in_held = self.pending.iter().position(
            |p| matches!(p, Pending::Message { calls, .. } if calls.iter().any(|c| c.id == id)),
        );
        if self.made.iter().any(|c| c.id == id) {
            self.held.push(pending);
        } else if let Some(at) = in_held {
            // Right after its message and the results held with it.
            let next = self.pending[at + 1..]
                .iter()
                .position(|p| matches!(p, Pending::Message { .. }))
                .map_or(self.pending.len(), |n| at + 1 + n);
            self.pending.insert(next, pending);
        } else {
            self.pending.push(pending);
        }
        if self.held_bytes > MAX_HELD || self.held.len() + self.pending.len() > MAX_HELD_WRITES {
            self.commit().await;
        }
    }

    /// Normalizes a result's AG-UI content and lands it through the executor's sink.
    async fn land(&mut self, id: &str, content: &Json, error: Option<(String, String)>) {
        let name = self.waiting.remove(id).unwrap_or_default();
        let call = CallRef::new(id, name);
        let result = match error {
            Some((code, message)) => ToolResult::error_with_code(call, code, message),
            None => {
                let normalized = toolwire_normalize::normalize_value(agui_payload(content), &call);
                normalized.result
            }
        };
        if let Err(e) = self.host.land_elsewhere(&self.session, result, None).await {
            self.note(format!(
                "the result of call {id:?} could not be stored: {e}"
            ));
        }
    }

    async fn finish(&mut self, end: RunEnd) {
        if self.end.is_some() {
            return;
        }
        let why = match &end {
            RunEnd::Finished => None,
            RunEnd::Failed(message) => Some(format!("the agent's run failed: {message}")),
            RunEnd::Dropped(why) => Some(format!(
                "the agent's stream ended before its run did: {why}"
            )),
        };
        if let Some(why) = why {
            // Calls whose arguments never ended are made now, so each has its result.
            let unended: Vec<String> = self.open.iter().map(|c| c.id.clone()).collect();
            for id in unended {
                let _ = Box::pin(self.apply("TOOL_CALL_END", &json!({"toolCallId": id}))).await;
            }
            let open: Vec<(String, String)> = std::mem::take(&mut self.this_run);
            for (id, _) in open {
                let error = (ErrorCode::Interrupted.as_str().to_owned(), why.clone());
                self.result(&id, &Json::Null, Some(error)).await;
            }
        }
        self.commit().await;
        if self.run_open {
            self.run_open = false;
            self.emit(EventKind::TurnEnded { turn: self.turn }).await;
        }
        self.end = Some(end);
    }

    /// Ends a run whose stream ended without `RUN_FINISHED` or `RUN_ERROR` (or broke):
    /// its open calls get error results. Nothing happens to a run that ended.
    pub async fn stream_ended(&mut self, why: &str) {
        self.finish(RunEnd::Dropped(why.to_owned())).await;
    }

    async fn emit(&self, kind: EventKind) {
        // Events are the live view: the stored messages are the record.
        let _ = self.host.events().emit(&self.session, kind).await;
    }
}

/// What `Follower::texts_seen` keeps of an id or a text: its digest.
fn seen_key(id_or_text: &str) -> String {
    blake3::hash(id_or_text.as_bytes()).to_hex().to_string()
}

/// A tool message's failure, as (code, message): none when `error` is absent, null or
/// false. The message is `error` when it says something; ag-ui-langgraph sets it to the
/// bare word "error" and keeps what went wrong in `content`, so then it is the content.
fn tool_error(message: &Json) -> Option<(String, String)> {
    let error = match &message["error"] {
        Json::Null | Json::Bool(false) => return None,
        Json::String(e) => e.trim(),
        _ => "",
    };
    let content = match &message["content"] {
        Json::String(text) => text.trim().to_owned(),
        Json::Array(parts) => parts
            .iter()
            .filter(|p| p["type"] == "text")
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
            .trim()
            .to_owned(),
        _ => String::new(),
    };
    let says_nothing =
        error.is_empty() || ["error", "true"].contains(&error.to_ascii_lowercase().as_str());
    let text = if !says_nothing {
        error.to_owned()
    } else if !content.is_empty() {
        content
    } else if !error.is_empty() {
        error.to_owned()
    } else {
        "the agent reported the tool failed".to_owned()
    };
    Some(("agent_error".to_owned(), text))
}

/// A user message's text: a string, or its text parts joined.
fn user_text(message: &Json) -> Option<String> {
    match &message["content"] {
        Json::String(text) => Some(text.clone()),
        Json::Array(parts) => Some(
            parts
                .iter()
                .filter(|p| p["type"] == "text")
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
    .filter(|t| !t.trim().is_empty())
}

/// An AG-UI result's content as a payload toolwire-normalize reads:
/// - text that is JSON is that JSON (frameworks serialize structured returns into text);
///   other text stays text;
/// - a file as Pydantic AI serializes one (`{"data": base64, "media_type": …}`), or a
///   LangChain standard content block (image, audio, video, file; base64 or URL), alone or
///   in a list, is a media block (or a link);
/// - text that joins LangChain blocks (ag-ui-langgraph writes a tool's text blocks as their
///   text and any other block as its JSON, all run together) is that text and those blocks;
/// - AG-UI 1.0 parts become MCP content blocks: text as text, inline image and audio as
///   image and audio blocks, inline video and documents as embedded resources, URL sources
///   as resource links (toolwire does not fetch them); a provider file handle is kept as
///   text naming it.
pub fn agui_payload(content: &Json) -> Json {
    match content {
        Json::String(text) => match serde_json::from_str::<Json>(text) {
            Ok(parsed @ (Json::Object(_) | Json::Array(_))) => match known_block(&parsed) {
                Some(block) => json!({"content": [block]}),
                None => match &parsed {
                    Json::Array(items)
                        if !items.is_empty() && items.iter().any(|i| known_block(i).is_some()) =>
                    {
                        let blocks: Vec<Json> = items
                            .iter()
                            .map(|i| match (known_block(i), i) {
                                (Some(b), _) => b,
                                (None, Json::String(s)) => json!({"type": "text", "text": s}),
                                (None, other) => json!({"type": "text", "text": other.to_string()}),
                            })
                            .collect();
                        json!({"content": blocks})
                    }
                    _ => parsed,
                },
            },
            // A string JSON-encoded once more (ag-ui-strands, like the TypeScript adapters'
            // `JSON.stringify`, encodes every result, text too): the text it encodes.
            Ok(Json::String(inner)) => text_payload(&inner),
            _ => text_payload(text),
        },
        Json::Array(parts) => {
            let blocks: Vec<Json> = parts.iter().map(part_block).collect();
            json!({"content": blocks})
        }
        other => other.clone(),
    }
}

/// A result's text: the text and any LangChain blocks run into it, or the text itself.
fn text_payload(text: &str) -> Json {
    match joined_blocks(text) {
        Some(blocks) => json!({"content": blocks}),
        None => Json::String(text.to_owned()),
    }
}

/// A file block toolwire knows in a result's JSON: Pydantic AI's, LangChain's or a Bedrock
/// Converse media block (Strands').
fn known_block(value: &Json) -> Option<Json> {
    file_block(value)
        .or_else(|| langchain_block(value))
        .or_else(|| converse_block(value))
}

/// A Bedrock Converse media block, the shape a Strands tool returns media in (`{"image":
/// {"format": "png", "source": {"bytes": base64}}}`; `document` and `video` alike): inline
/// bytes of a format Converse names, as media. Anything else (an S3 location, a format it
/// does not list) is not one, and stays the structured data it is.
fn converse_block(value: &Json) -> Option<Json> {
    let map = value.as_object().filter(|m| m.len() == 1)?;
    let (kind, block) = map.iter().next()?;
    let format = block.get("format")?.as_str()?;
    let data = block.get("source")?.get("bytes")?.as_str()?;
    Some(media_block(
        &standard_base64(data),
        converse_mime(kind, format)?,
    ))
}

/// The media type of a Converse block's `format` (the lists of Bedrock's `ImageFormat`,
/// `DocumentFormat` and `VideoFormat`).
fn converse_mime(kind: &str, format: &str) -> Option<&'static str> {
    Some(match (kind, format) {
        ("image", "png") => "image/png",
        ("image", "jpeg" | "jpg") => "image/jpeg",
        ("image", "gif") => "image/gif",
        ("image", "webp") => "image/webp",
        ("document", "pdf") => "application/pdf",
        ("document", "csv") => "text/csv",
        ("document", "txt") => "text/plain",
        ("document", "md") => "text/markdown",
        ("document", "html") => "text/html",
        ("document", "doc") => "application/msword",
        ("document", "docx") => {
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        }
        ("document", "xls") => "application/vnd.ms-excel",
        ("document", "xlsx") => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        ("video", "mp4") => "video/mp4",
        ("video", "webm") => "video/webm",
        ("video", "mov") => "video/quicktime",
        ("video", "mkv") => "video/x-matroska",
        ("video", "flv") => "video/x-flv",
        ("video", "mpeg" | "mpg") => "video/mpeg",
        ("video", "wmv") => "video/x-ms-wmv",
        ("video", "three_gp") => "video/3gpp",
        _ => return None,
    })
}

/// A LangChain standard content block (langchain_core 1.x: `base64`, `url` or `file_id`
/// beside `mime_type`; 0.3: `source_type` naming `data`, `url` or `id`) as an MCP content
/// block: inline data as media, a URL as a resource link (not fetched), a provider file
/// handle as text naming it.
fn langchain_block(value: &Json) -> Option<Json> {
    let kind = value.get("type")?.as_str()?;
    if !matches!(kind, "image" | "audio" | "video" | "file") {
        return None;
    }
    let text = |key: &str| value.get(key).and_then(Json::as_str);
    let source = text("source_type");
    let mime = text("mime_type");
    let data = text("base64").or(if source == Some("base64") {
        text("data")
    } else {
        None
    });
    if let Some(data) = data {
        return Some(media_block(
            &standard_base64(data),
            mime.unwrap_or("application/octet-stream"),
        ));
    }
    if let Some(url) = text("url").filter(|_| source.is_none() || source == Some("url")) {
        let mut link =
            json!({"type": "resource_link", "uri": url, "name": format!("{kind} from the agent")});
        if let Some(mime) = mime {
            link["mimeType"] = json!(mime);
        }
        return Some(link);
    }
    let handle = text("file_id").or(if source == Some("id") {
        text("id")
    } else {
        None
    })?;
    Some(json!({"type": "text", "text": format!("[{kind} held by the provider: {handle}]")}))
}

/// The text and LangChain blocks of a string that runs them together, as ag-ui-langgraph
/// writes a tool's list content; `None` when it holds no block. The JSON is looked for
/// where Python's `json.dumps` would start a block, at most 64 times (a hostile result
/// full of near-blocks costs no more).
fn joined_blocks(text: &str) -> Option<Vec<Json>> {
    const MARK: &str = "{\"type\": \"";
    let mut out = Vec::new();
    let mut text_from = 0;
    let mut scan = 0;
    let mut tries = 0;
    while let Some(found) = text[scan..].find(MARK) {
        let at = scan + found;
        let kind = &text[at + MARK.len()..];
        if ["image\"", "audio\"", "video\"", "file\""]
            .iter()
            .any(|k| kind.starts_with(k))
        {
            tries += 1;
            let mut values = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Json>();
            if let Some(block) = values
                .next()
                .and_then(Result::ok)
                .and_then(|v| langchain_block(&v))
            {
                if at > text_from {
                    out.push(json!({"type": "text", "text": &text[text_from..at]}));
                }
                out.push(block);
                text_from = at + values.byte_offset();
                scan = text_from;
                continue;
            }
            if tries >= 64 {
                break;
            }
        }
        scan = at + MARK.len();
    }
    if out.is_empty() {
        return None;
    }
    if text_from < text.len() {
        out.push(json!({"type": "text", "text": &text[text_from..]}));
    }
    Some(out)
}

/// Pydantic AI's serialized `BinaryContent`: base64 `data` (the URL-safe alphabet, as
/// pydantic writes bytes) and a `media_type`.
fn file_block(value: &Json) -> Option<Json> {
    let data = value.get("data")?.as_str()?;
    let mime = value.get("media_type")?.as_str()?;
    Some(media_block(&standard_base64(data), mime))
}

/// Base64 in the standard alphabet, padded, whichever alphabet it came in: the store
/// checks media in the standard one.
fn standard_base64(data: &str) -> String {
    let mut out: String = data
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    while !out.len().is_multiple_of(4) {
        out.push('=');
    }
    out
}

fn media_block(data: &str, mime: &str) -> Json {
    if mime.starts_with("image/") {
        json!({"type": "image", "data": data, "mimeType": mime})
    } else if mime.starts_with("audio/") {
        json!({"type": "audio", "data": data, "mimeType": mime})
    } else {
        json!({"type": "resource", "resource": {"uri": "agui:inline", "blob": data, "mimeType": mime}})
    }
}

/// One AG-UI 1.0 content part as an MCP content block.
fn part_block(part: &Json) -> Json {
    let kind = part["type"].as_str().unwrap_or("");
    if kind == "text" {
        return json!({"type": "text", "text": part["text"].as_str().unwrap_or("")});
    }
    let source = &part["source"];
    let mime = source["mimeType"].as_str();
    match (source["type"].as_str(), source["value"].as_str()) {
        (Some("data"), Some(data)) => media_block(
            &standard_base64(data),
            mime.unwrap_or("application/octet-stream"),
        ),
        (Some("url"), Some(url)) => {
            let mut link = json!({"type": "resource_link", "uri": url, "name": format!("{kind} from the agent")});
            if let Some(mime) = mime {
                link["mimeType"] = json!(mime);
            }
            link
        }
        (Some("file"), Some(handle)) => {
            json!({"type": "text", "text": format!("[{kind} held by the provider: {handle}]")})
        }
        // Anything else is kept as it came, for normalize to keep as structured data.
        _ => part.clone(),
    }
}

/// Why a followed run could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FollowError {
    /// The URL or the run input is not usable; the message says why.
    #[error("{0}")]
    BadInput(String),
    /// The session could not be opened or written.
    #[error(transparent)]
    Store(#[from] toolwire_store::StoreError),
    /// The agent could not be reached.
    #[error("the AG-UI agent at {url} cannot be reached: {why}")]
    Unreachable {
        /// The agent's endpoint.
        url: String,
        /// What the HTTP client said.
        why: String,
    },
    /// The agent answered the run with a non-2xx status.
    #[error("the AG-UI agent at {url} answered {status}: {body}")]
    Refused {
        /// The agent's endpoint.
        url: String,
        /// The HTTP status it answered.
        status: u16,
        /// The start of its answer's body.
        body: String,
    },
}

/// The agent followed: its endpoint (a `RunAgentInput` is POSTed there) and the client.
#[derive(Debug, Clone)]
pub struct FollowTarget {
    /// The endpoint a run's `RunAgentInput` is POSTed to.
    pub url: String,
    /// How much of the agent's stream is held at once.
    pub limits: FollowLimits,
    client: reqwest::Client,
    /// Where `serve` tells its operator what a followed run did wrong.
    report: Option<Report>,
}

/// Takes the lines of a followed run's diagnostics (see [`FollowTarget::report_to`]).
#[derive(Clone)]
struct Report(std::sync::Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Report")
    }
}

/// How long the agent's stream may stay silent before the run counts as dropped.
pub const IDLE_LIMIT: std::time::Duration = std::time::Duration::from_secs(300);

impl FollowTarget {
    /// An `http(s)://` endpoint.
    pub fn new(url: &str) -> Result<FollowTarget, FollowError> {
        let parsed = url::Url::parse(url)
            .map_err(|e| FollowError::BadInput(format!("AG-UI agent URL {url:?}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(FollowError::BadInput(format!(
                "AG-UI agent URL {url:?}: expected http:// or https://"
            )));
        }
        let client = reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(10))
            .build()
            .map_err(|e| FollowError::BadInput(format!("HTTP client: {e}")))?;
        Ok(FollowTarget {
            url: url.to_owned(),
            limits: FollowLimits::default(),
            client,
            report: None,
        })
    }

    /// Hands each run's diagnostics, when the run ends, to `report`, one line each
    /// (`AG-UI session S: …`); without it they are not printed. The lines quote the
    /// agent (its event types, its errors), so `report` prints them the way its program
    /// prints untrusted text: the server writes nothing to a terminal itself.
    pub fn report_to(mut self, report: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.report = Some(Report(std::sync::Arc::new(report)));
        self
    }

    /// Hands a finished run's diagnostics to the [`report_to`](Self::report_to)
    /// function, one line each (`AG-UI session S: …`); without one, nothing.
    pub fn report(&self, follower: &Follower) {
        if let Some(Report(report)) = &self.report {
            for note in follower.diagnostics() {
                report(&format!("AG-UI session {}: {note}", follower.session_id()));
            }
        }
    }

    /// POSTs the input to the agent and, once it answers 2xx, opens the thread's session
    /// and records the input's new messages: the stream to [`pump`].
    pub async fn start(
        &self,
        host: Host,
        input: &Json,
    ) -> Result<(Follower, reqwest::Response), FollowError> {
        let thread = input["threadId"]
            .as_str()
            .filter(|t| !t.is_empty())
            .ok_or_else(|| FollowError::BadInput("RunAgentInput: no threadId".to_owned()))?;
        let messages = match &input["messages"] {
            Json::Array(m) => m.as_slice(),
            Json::Null => &[],
            _ => {
                return Err(FollowError::BadInput(
                    "RunAgentInput: messages is not a list".to_owned(),
                ));
            }
        };
        let response = self
            .client
            .post(&self.url)
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(input.to_string())
            .send()
            .await
            .map_err(|e| FollowError::Unreachable {
                url: self.url.clone(),
                why: e.to_string(),
            })?;
        if !response.status().is_success() {
            let status = response.status().as_u16();
            // A little of the body says why; the rest is not read.
            let mut body = String::new();
            let mut stream = response.bytes_stream();
            while let Some(Ok(chunk)) = futures::StreamExt::next(&mut stream).await {
                body.push_str(&String::from_utf8_lossy(&chunk));
                if body.len() > 1024 {
                    let mut end = 1024;
                    while !body.is_char_boundary(end) {
                        end -= 1;
                    }
                    body.truncate(end);
                    break;
                }
            }
            return Err(FollowError::Refused {
                url: self.url.clone(),
                status,
                body,
            });
        }
        // Recorded once the agent has taken the run, before any of its events is read: a
        // run the agent never took leaves no session and no message behind (a retried
        // prompt was stored twice).
        let title = format!("AG-UI agent {}", self.url);
        let mut follower = Follower::open(host, thread, &title, self.limits).await?;
        follower.input(messages).await;
        Ok((follower, response))
    }
}

/// Reads the agent's stream to its end, recording each event, and hands each chunk
/// unchanged to `forward` (while someone listens there) once its events are recorded. A stream that breaks, falls
/// silent for [`IDLE_LIMIT`], or is cut by `closing` ends the run as dropped.
pub async fn pump(
    follower: &mut Follower,
    response: reqwest::Response,
    forward: Option<tokio::sync::mpsc::Sender<bytes::Bytes>>,
    closing: impl std::future::Future<Output = ()>,
) {
    use futures::StreamExt;
    let mut decoder = SseDecoder::new(follower.limits.max_event);
    let mut stream = response.bytes_stream();
    let mut forward = forward;
    let mut decoded = Vec::new();
    tokio::pin!(closing);
    loop {
        let next = tokio::select! {
            next = tokio::time::timeout(IDLE_LIMIT, stream.next()) => next,
            () = &mut closing => {
                follower.stream_ended("toolwire is shutting down").await;
                return;
            }
        };
        let chunk = match next {
            Ok(Some(Ok(chunk))) => chunk,
            Ok(Some(Err(e))) => {
                follower
                    .stream_ended(&format!("reading it failed: {e}"))
                    .await;
                return;
            }
            Ok(None) => {
                follower.stream_ended("the agent closed it").await;
                return;
            }
            Err(_) => {
                follower
                    .stream_ended(&format!("nothing came for {} s", IDLE_LIMIT.as_secs()))
                    .await;
                return;
            }
        };
        // Recorded first, then forwarded: a front end that has seen an event finds it
        // stored (its next run, answering a front-end call, finds the call), as the
        // result sink stores before it announces.
        decoder.push(&chunk, &mut decoded);
        for item in decoded.drain(..) {
            match item {
                Ok(data) => follower.event(&data).await,
                Err(e) => follower.note(e.to_string()),
            }
        }
        if let Some(tx) = &forward {
            // The front end gone, the run is still followed to its end.
            if tx.send(chunk).await.is_err() {
                forward = None;
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use toolwire_core::CallRef;

    fn decode(max: usize, chunks: &[&[u8]]) -> Vec<Result<String, SseError>> {
        let mut decoder = SseDecoder::new(max);
        let mut out = Vec::new();
        for chunk in chunks {
            decoder.push(chunk, &mut out);
        }
        out
    }

    #[test]
    fn events_split_anywhere_and_crlf_and_multiline_data_decode_whole() {
        let stream = b": comment\r\nevent: x\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\ndata:two\n\n";
        let whole = decode(1024, &[stream]);
        assert_eq!(
            whole,
            vec![Ok("{\"a\":\n1}".to_owned()), Ok("two".to_owned())]
        );
        // Byte by byte, the same events.
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(decode(1024, &bytes), whole);
    }

    #[test]
    fn an_overlong_line_or_event_is_skipped_once_and_what_follows_is_read() {
        let long = [b'x'; 100];
        let mut stream = b"data: ".to_vec();
        stream.extend_from_slice(&long);
        stream.extend_from_slice(b"\n\ndata: ok\n\n");
        assert_eq!(
            decode(50, &[&stream[..30], &stream[30..]]),
            vec![Err(SseError::TooLong(50)), Ok("ok".to_owned())]
        );
        // Many short data lines that together pass the bound.
        let many = b"data: 0123456789\n".repeat(10);
        let mut stream = many.clone();
        stream.extend_from_slice(b"\ndata: ok\n\n");
        assert_eq!(
            decode(50, &[&stream]),
            vec![Err(SseError::TooLong(50)), Ok("ok".to_owned())]
        );
        assert_eq!(
            decode(50, &[b"data: \xff\n\n"]),
            vec![Err(SseError::NotUtf8)]
        );
    }

    #[test]
    fn ids_that_are_not_toolwire_ids_get_a_stable_digest() {
        assert_eq!(toolwire_id("p-", "call_1"), "call_1");
        let odd = toolwire_id("p-", "call/1 ../x");
        assert!(odd.starts_with("p-") && check_id(&odd).is_none(), "{odd}");
        assert_eq!(odd, toolwire_id("p-", "call/1 ../x"));
    }

    fn kinds_of(content: Json) -> Vec<String> {
        let call = CallRef::new("c", "t");
        let normalized = toolwire_normalize::normalize_value(agui_payload(&content), &call);
        normalized
            .result
            .output
            .iter()
            .map(|v| v.kind.as_str().to_owned())
            .collect()
    }

    #[test]
    fn agui_content_maps_to_toolwire_kinds() {
        // 1×1 PNG, standard and URL-safe base64.
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVQI12P4z8AAAAMBAQAY3Y2wAAAAAElFTkSuQmCC";
        assert_eq!(kinds_of(json!("plain words")), ["text"]);
        assert_eq!(kinds_of(json!("{\"a\": 1}")), ["structured"]);
        assert_eq!(
            kinds_of(json!(
                json!({"data": png.replace('+', "-").replace('/', "_"), "media_type": "image/png", "kind": "binary"})
                    .to_string()
            )),
            ["image"]
        );
        assert_eq!(
            kinds_of(json!([
                {"type": "text", "text": "see"},
                {"type": "image", "source": {"type": "data", "value": png, "mimeType": "image/png"}},
                {"type": "document", "source": {"type": "url", "value": "https://example.com/a.pdf", "mimeType": "application/pdf"}},
            ])),
            ["text", "image", "resource_link"]
        );
    }

    #[test]
    fn strands_results_read_as_what_the_tool_returned() {
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVQI12P4z8AAAAMBAQAY3Y2wAAAAAElFTkSuQmCC";
        // ag-ui-strands JSON-encodes text: the text, unquoted.
        assert_eq!(
            agui_payload(&json!("\"sunny in Paris\"")),
            json!("sunny in Paris")
        );
        assert_eq!(kinds_of(json!("\"sunny\"")), ["text"]);
        // A Converse image block, alone or in a list: an image, no stub beside it.
        let image = json!({"image": {"format": "png", "source": {"bytes": png}}});
        assert_eq!(kinds_of(json!(image.to_string())), ["image"]);
        let list = json!([image, {"document": {"format": "pdf", "name": "a", "source": {"bytes": "JVBERi0xLjQK"}}}]);
        assert_eq!(kinds_of(json!(list.to_string())), ["image", "file"]);
        // Not a Converse block (a format Converse does not name, another key beside it, no
        // inline bytes): data, read by normalize's general rule (structured, and the media
        // its bytes hold beside it).
        for odd in [
            json!({"image": {"format": "svg+xml\u{1b}[2J", "source": {"bytes": png}}}),
            json!({"image": {"format": "png", "source": {"bytes": png}}, "other": 1}),
        ] {
            assert_eq!(
                kinds_of(json!(odd.to_string())),
                ["structured", "image"],
                "{odd}"
            );
        }
        let s3 = json!({"image": {"format": "png", "source": {"s3Location": {"uri": "s3://b/k"}}}});
        assert_eq!(kinds_of(json!(s3.to_string())), ["structured"]);
    }

    #[test]
    fn langchain_content_blocks_are_media_not_stubs() {
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVQI12P4z8AAAAMBAQAY3Y2wAAAAAElFTkSuQmCC";
        // A tool returning one image block: ag-ui-langgraph sends its JSON as the text.
        let image = json!({"type": "image", "base64": png, "mime_type": "image/png"});
        assert_eq!(kinds_of(json!(image.to_string())), ["image"]);
        // langchain_core 0.3's form, audio, a URL and a provider file handle.
        let old = json!({"type": "image", "source_type": "base64", "data": png, "mime_type": "image/png"});
        assert_eq!(kinds_of(json!(old.to_string())), ["image"]);
        let list = json!([
            {"type": "audio", "base64": "UklGRiQAAABXQVZFZm10IA==", "mime_type": "audio/wav"},
            {"type": "file", "url": "https://example.com/a.pdf", "mime_type": "application/pdf"},
            {"type": "file", "file_id": "file-1"},
        ]);
        assert_eq!(
            kinds_of(json!(list.to_string())),
            ["file", "resource_link", "text"]
        );
        // Text and an image block run together, exactly as ag-ui-langgraph 0.0.47 writes
        // a tool's `[text block, image block]` (Python's json.dumps spacing).
        let joined = format!(
            "the radar{{\"type\": \"image\", \"base64\": \"{png}\", \"mime_type\": \"image/png\"}}"
        );
        let payload = agui_payload(&json!(joined));
        assert_eq!(
            payload["content"][0],
            json!({"type": "text", "text": "the radar"})
        );
        assert_eq!(kinds_of(json!(joined)), ["text", "image"]);
        // Nothing of the block is left in the text.
        let call = CallRef::new("c", "t");
        let out = toolwire_normalize::normalize_value(payload, &call).result;
        assert_eq!(out.output[0].data, json!({"content": "the radar"}));
        // Text that only looks like a block start stays text.
        assert_eq!(kinds_of(json!("say {\"type\": \"image\" please")), ["text"]);
    }
}
