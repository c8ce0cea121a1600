//! The model view: a planned conversation with per-kind text, budgets applied and media
//! routed for one provider. Encoders only change its shape into the provider's JSON.

use std::borrow::Cow;

use base64::Engine;
use toolwire_core::view::SourceView;
use toolwire_core::{Status, ToolResult};

use crate::blob::BlobReader;
use crate::budget::fair_shares;
#[cfg(doc)]
use crate::conversation::Conversation;
use crate::conversation::{Message, ToolCall};
use crate::media::{MediaRoute, placeholder, refusal, size_of};
use crate::note::{EncodeNote, NoteCode};
use crate::options::{EncodeOptions, TruncationBudget};
use crate::pairing::{INTERRUPTED, PlannedResult, PlannedTurn, plan};
use crate::render::{
    MediaClass, MediaRef, PART_SEPARATOR, Shape, TextWeight, fit_all, for_model, shape,
};

/// What the model sees, provider-neutral but provider-ready. It borrows from the
/// conversation every text and call it sends unchanged (the most of a long session), so
/// building it copies only what budgets cut and what routing rewrites.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelView<'a> {
    /// The system prompt, all system messages joined.
    pub system: Option<String>,
    /// The turns, alternating as the providers require.
    pub turns: Vec<Turn<'a>>,
    /// [`turn_bytes`] of every turn, summed as each turn was built (while its results were
    /// still in cache: a pass over the finished view read every result's blocks again, a
    /// cache miss each in a long session).
    turn_bytes: usize,
}

/// Allowance per message, call or result for its keys and ids in a request body.
const PER_ITEM: usize = 96;

/// About the bytes of one turn in a request body (see [`ModelView::body_estimate`]).
fn turn_bytes(turn: &Turn<'_>) -> usize {
    PER_ITEM
        + match turn {
            Turn::User(text) => text.len(),
            Turn::Assistant { text, calls } => {
                text.len()
                    + calls
                        .iter()
                        .map(|c| c.id.len() + c.name.len() + 2 * PER_ITEM)
                        .sum::<usize>()
            }
            Turn::Results { results, then_user } => {
                then_user.iter().map(|t| t.len() + PER_ITEM).sum::<usize>()
                    + results.iter().map(ResultView::bytes).sum::<usize>()
            }
        }
}

impl<'a> ModelView<'a> {
    /// A view of these turns.
    pub fn new(system: Option<String>, turns: Vec<Turn<'a>>) -> Self {
        let turn_bytes = turns.iter().map(turn_bytes).sum();
        ModelView {
            system,
            turns,
            turn_bytes,
        }
    }

    /// About the bytes of a request body for this view, a little over for the usual
    /// session: its texts, an allowance per message for keys and ids, an eighth more for
    /// escapes. Sizing the output buffer by it saves growing (and copying) a long body.
    pub(crate) fn body_estimate(&self) -> usize {
        let bytes = self.system.as_ref().map_or(0, String::len) + 256 + self.turn_bytes;
        bytes + bytes / 8
    }
}

/// One turn of a [`ModelView`].
#[derive(Debug, Clone, PartialEq)]
pub enum Turn<'a> {
    /// What the person said.
    User(Cow<'a, str>),
    /// What the model said, and the calls it made.
    Assistant {
        /// The model's text.
        text: &'a str,
        /// Its calls, in order.
        calls: &'a [ToolCall],
    },
    /// Exactly one result per call of the assistant turn before, in call order.
    Results {
        /// The results, in call order.
        results: Vec<ResultView<'a>>,
        /// User text that arrived while the calls ran, sent after the results.
        then_user: Vec<&'a str>,
    },
}

/// One tool result as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultView<'a> {
    /// The call it answers.
    pub call_id: &'a str,
    /// The tool that was called.
    pub tool_name: &'a str,
    /// Whether the call failed (providers mark error results).
    pub is_error: bool,
    /// Never empty: a result with nothing for the model says so in text.
    pub blocks: Blocks<'a>,
}

/// A result's blocks, read as a slice: the usual one (a plain text) held inline, or a
/// list. A vector for the one block was an allocation per result, then a cache miss each
/// to write it, read it and free it in a long session.
#[derive(Debug, Clone)]
pub enum Blocks<'a> {
    /// One block, in place.
    One(Block<'a>),
    /// Any number of blocks.
    Many(Vec<Block<'a>>),
}

impl<'a> Blocks<'a> {
    /// The blocks, in order.
    pub fn as_slice(&self) -> &[Block<'a>] {
        match self {
            Blocks::One(block) => std::slice::from_ref(block),
            Blocks::Many(blocks) => blocks,
        }
    }
}

impl<'a> std::ops::Deref for Blocks<'a> {
    type Target = [Block<'a>];

    fn deref(&self) -> &[Block<'a>] {
        self.as_slice()
    }
}

/// The same blocks are equal however they are held.
impl PartialEq for Blocks<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl ResultView<'_> {
    /// About the bytes it takes in a request body.
    fn bytes(&self) -> usize {
        self.call_id.len()
            + self.tool_name.len()
            + PER_ITEM
            + self.blocks.iter().map(Block::bytes).sum::<usize>()
    }

    /// All text blocks joined (a placeholder's text too), media left out.
    pub fn text(&self) -> String {
        self.blocks
            .iter()
            .filter_map(Block::as_text)
            .collect::<Vec<_>>()
            .join(PART_SEPARATOR)
    }
}

/// One piece of a result: text, or media the provider takes.
#[derive(Debug, Clone, PartialEq)]
pub enum Block<'a> {
    /// Text, already shaped and cut to its budget (borrowed when it fit as it was).
    Text(Cow<'a, str>),
    /// Media sent inline.
    Media(InlineMedia),
    /// Media not sent inline, kept typed: encoders write its text, readers (the gateway's
    /// links) take its blob key from it rather than searching text for one.
    Placeholder(MediaPlaceholder),
}

impl Block<'_> {
    /// What the model reads of it as text: a text, or a placeholder's line; `None` for
    /// inline media.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Block::Text(text) => Some(text),
            Block::Placeholder(p) => Some(p.text()),
            Block::Media(_) => None,
        }
    }

    /// About the bytes it takes in a request body.
    fn bytes(&self) -> usize {
        match self {
            Block::Text(text) => text.len(),
            Block::Placeholder(p) => p.text.len(),
            Block::Media(m) => {
                let data = match &m.data {
                    MediaData::Base64(b) | MediaData::Url(b) => b.len(),
                };
                data + m.mime.len() + m.placeholder.text.len() + 64
            }
        }
    }
}

/// Media the provider takes, with its bytes at hand.
#[derive(Debug, Clone, PartialEq)]
pub struct InlineMedia {
    /// Image, PDF, audio, video or other.
    pub class: MediaClass,
    /// The media's MIME type.
    pub mime: String,
    /// The bytes (base64) or where to fetch them.
    pub data: MediaData,
    /// A file name to give the provider, when known.
    pub name: Option<String>,
    /// What stands for it where it cannot go (formats that must point at media sent
    /// elsewhere), with its blob key when the blob store holds it.
    pub placeholder: MediaPlaceholder,
}

/// Media the model is told about in a line instead of being sent it: the provider does
/// not take it in a tool result, it is older than the inline window, or its blob could
/// not be read.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaPlaceholder {
    /// Image, PDF, audio, video or other.
    pub class: MediaClass,
    /// The media's MIME type.
    pub mime: String,
    /// Its size in bytes, when known.
    pub size: Option<u64>,
    /// The blob store key of its bytes, when the blob store holds them.
    pub blob_key: Option<String>,
    /// The line the model reads (`[image: chart.png, image/png, 70 B, blake3:…]`), made
    /// with the placeholder so that encoders borrow it.
    text: String,
}

impl MediaPlaceholder {
    /// The line the model reads in its place.
    pub fn text(&self) -> &str {
        &self.text
    }

    fn of(media: &MediaRef<'_>) -> Self {
        let blob_key = match media.source {
            SourceView::Blob { key, .. } => Some(key.to_owned()),
            SourceView::Base64(_) | SourceView::Url(_) => None,
        };
        MediaPlaceholder {
            class: media.class,
            mime: media.mime.clone(),
            size: size_of(&media.source),
            blob_key,
            text: placeholder(media),
        }
    }
}

/// Where inline media's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MediaData {
    /// The bytes, base64-encoded.
    Base64(String),
    /// A URL the provider fetches itself.
    Url(String),
}

impl MediaData {
    /// A `data:` URL for base64, the URL itself otherwise.
    pub fn as_url(&self, mime: &str) -> String {
        self.url(mime).into_owned()
    }

    /// [`MediaData::as_url`], borrowing a URL rather than copying it.
    pub fn url(&self, mime: &str) -> std::borrow::Cow<'_, str> {
        match self {
            MediaData::Base64(b) => std::borrow::Cow::Owned(format!("data:{mime};base64,{b}")),
            MediaData::Url(u) => std::borrow::Cow::Borrowed(u),
        }
    }
}

/// Text sent when nothing of a result is meant for the model.
pub(crate) const NOTHING_FOR_MODEL: &str = "[The tool's output is shown to the user only.]";

/// Builds the view of `conversation` for `provider`: a [`Conversation`], or any messages
/// borrowed where they are held (a stored session's, with no copy of it made first).
pub async fn build_view<'a>(
    provider: impl Into<MediaRoute>,
    conversation: impl IntoIterator<Item = &'a Message>,
    options: &EncodeOptions,
    blobs: &dyn BlobReader,
    diags: &mut Vec<EncodeNote>,
) -> ModelView<'a> {
    let route = provider.into();
    let plan = plan(conversation, !options.fragment, diags);
    let inline_from = plan
        .turns
        .len()
        .saturating_sub(options.inline_media_messages);
    let mut turns = Vec::with_capacity(plan.turns.len());
    let mut bytes = 0;
    for (index, turn) in plan.turns.iter().enumerate() {
        let turn = match turn {
            PlannedTurn::User(text) => Turn::User(text.clone()),
            PlannedTurn::Assistant { text, calls } => Turn::Assistant { text, calls },
            PlannedTurn::Results { results, then_user } => {
                let ctx = Ctx {
                    route,
                    options,
                    blobs,
                    inline: index >= inline_from,
                };
                Turn::Results {
                    results: results_view(&ctx, results, diags).await,
                    then_user: then_user.clone(),
                }
            }
        };
        bytes += turn_bytes(&turn);
        turns.push(turn);
    }
    let system = (!plan.system.is_empty()).then(|| plan.system.join("\n\n"));
    ModelView {
        system,
        turns,
        turn_bytes: bytes,
    }
}

struct Ctx<'a> {
    route: MediaRoute,
    options: &'a EncodeOptions,
    blobs: &'a dyn BlobReader,
    inline: bool,
}

/// One result's parts before cutting: texts with their part index, media in order.
enum Part<'a> {
    Text(usize, Shape<'a>),
    Media(MediaRef<'a>),
}

fn error_text(result: &ToolResult) -> Option<String> {
    let error = result.error.as_ref();
    let denied = error
        .and_then(|e| e.code.as_deref())
        .is_some_and(|c| c == "denied");
    match (result.status, error) {
        // A denial's message already says so (`denied_result`, the executor's deny);
        // it is sent as is, so the model reads one sentence, not a nested one.
        (Status::Error, _) if denied => Some(
            error
                .map(|e| e.message.trim())
                .filter(|m| !m.is_empty())
                .unwrap_or("The user denied this tool call.")
                .to_owned(),
        ),
        (Status::Error, Some(e)) => Some(e.message.clone()),
        (Status::Error, None) => Some("The tool failed without a message.".to_owned()),
        (Status::Suspended, _) => Some(match &result.suspension {
            Some(s) => format!("The call is waiting for the user: {}", s.prompt),
            None => "The call is waiting for the user.".to_owned(),
        }),
        (Status::Success, _) => None,
    }
}

fn parts_of<'a>(
    result: &'a ToolResult,
    message: Option<String>,
    diags: &mut Vec<EncodeNote>,
) -> Vec<Part<'a>> {
    let mut parts = Vec::with_capacity(result.output.len() + usize::from(message.is_some()));
    if let Some(message) = message {
        parts.push(Part::Text(
            0,
            Shape::Text {
                prefix: String::new(),
                body: Cow::Owned(message),
                weight: TextWeight::Fixed(crate::truncate::Weight::Balanced),
            },
        ));
    }
    for (i, value) in result.output.iter().enumerate() {
        if !for_model(value) {
            continue;
        }
        match shape(value, &result.tool_name) {
            Ok(Shape::Media(m)) => parts.push(Part::Media(m)),
            Ok(s) => parts.push(Part::Text(i, s)),
            Err(s) => {
                diags.push(EncodeNote::new(
                    NoteCode::InvalidValue,
                    Some(&result.call_id),
                    format!(
                        "output[{i}] of kind {} has invalid data; sent as JSON",
                        value.kind
                    ),
                ));
                parts.push(Part::Text(i, s));
            }
        }
    }
    parts
}

async fn results_view<'a>(
    ctx: &Ctx<'_>,
    planned: &[PlannedResult<'a>],
    diags: &mut Vec<EncodeNote>,
) -> Vec<ResultView<'a>> {
    let budget = &ctx.options.budget;
    // A turn of plain texts that fit (the usual turn): its views at once, with no list of
    // steps between. Any other result sends the turn through the steps below (the views
    // made so far are dropped; the notes come out in the order the steps give them).
    if budget.turn_max_chars.is_none()
        && let Some(views) = planned.iter().map(|p| plain_text(p, budget)).collect()
    {
        return views;
    }
    // Texts of every result first, so the turn's total can be shared before cutting; each
    // with its limit and whether the turn's share set it (which budget, for the note).
    let mut all: Vec<Step<'a>> = planned
        .iter()
        .map(|p| {
            if let Some(view) = plain_text(p, budget) {
                return Step::Done(view);
            }
            let call = p.call();
            let (parts, is_error) = match p {
                PlannedResult::Stored { result, .. } => (
                    parts_of(result, error_text(result), diags),
                    result.status == Status::Error,
                ),
                PlannedResult::Interrupted { .. } => {
                    (parts_of_message(Some(INTERRUPTED.to_owned())), true)
                }
            };
            Step::Cut(Pending {
                call,
                is_error,
                parts,
                limit: budget.limit_for(&call.id, &call.name),
                shared: false,
            })
        })
        .collect();
    if let Some(total) = budget.turn_max_chars {
        // Every result is a `Step::Cut` here: `plain_text` takes none under a turn's total.
        let mut cut: Vec<&mut Pending<'a>> = all
            .iter_mut()
            .filter_map(|step| match step {
                Step::Cut(r) => Some(r),
                Step::Done(_) => None,
            })
            .collect();
        let costs: Vec<usize> = cut
            .iter()
            .map(|r| text_cost(&r.parts, r.limit).min(r.limit))
            .collect();
        for (r, share) in cut.iter_mut().zip(fair_shares(&costs, total)) {
            if share < r.limit {
                r.limit = share;
                r.shared = true;
            }
        }
    }
    let mut out = Vec::with_capacity(all.len());
    for step in all {
        let r = match step {
            Step::Done(view) => {
                out.push(view);
                continue;
            }
            Step::Cut(r) => r,
        };
        let Pending {
            call,
            is_error,
            parts,
            limit,
            shared,
        } = r;
        // Counting characters is a pass over every text; plain texts whose bytes are
        // within the limit need none (a character is at least a byte).
        let full_cost = match text_bytes(&parts) {
            Some(bytes) if bytes <= limit => bytes,
            _ => text_cost(&parts, limit),
        };
        if full_cost > limit {
            // Which budget set the limit, for the person who reads the note.
            let whose = if shared {
                "its share of the turn's budget"
            } else if budget.per_call.contains_key(&call.id) {
                "its call's own budget"
            } else if budget.per_tool.contains_key(&call.name) {
                "its tool's budget"
            } else {
                "the per-result budget"
            };
            // `full_cost` is exact only up to the limit (beyond, a bound: a quarter of the
            // bytes); the person is told the real size, counted once for a result cut.
            let size = text_cost(&parts, usize::MAX);
            diags.push(EncodeNote::new(
                NoteCode::Truncated,
                Some(&call.id),
                format!(
                    "result of {} cut to {} of {} chars by {whose}",
                    call.name,
                    crate::truncate::count(limit),
                    crate::truncate::count(size)
                ),
            ));
        }
        let texts = parts.iter().filter_map(|p| match p {
            Part::Text(i, s) => Some((*i, s)),
            Part::Media(_) => None,
        });
        let mut fitted = fit_all(texts, limit, &call.id).into_iter();
        let mut blocks: Vec<Block> = Vec::with_capacity(parts.len().max(1));
        for part in &parts {
            match part {
                Part::Text(..) => {
                    // A text left out is stood for by the marker before it: no separator.
                    let Some(text) = fitted.next().flatten() else {
                        continue;
                    };
                    // Adjacent texts become one block, joined as the budget assumed.
                    if let Some(Block::Text(prev)) = blocks.last_mut() {
                        let prev = prev.to_mut();
                        prev.push_str(PART_SEPARATOR);
                        prev.push_str(&text);
                    } else {
                        blocks.push(Block::Text(text));
                    }
                }
                Part::Media(m) => blocks.push(route(ctx, m, &call.id, diags).await),
            }
        }
        if blocks.is_empty() {
            blocks.push(Block::Text(Cow::Borrowed(NOTHING_FOR_MODEL)));
        }
        out.push(ResultView {
            call_id: &call.id,
            tool_name: &call.name,
            is_error,
            blocks: Blocks::Many(blocks),
        });
    }
    out
}

/// One result of a turn after its first reading: its view already, or its parts to cut.
enum Step<'a> {
    Done(ResultView<'a>),
    Cut(Pending<'a>),
}

/// The view of a result that is one plain text within its limit, a successful call's
/// output (nearly every result of a long session), read in one go: what the general path
/// gives it (the text whole and borrowed, no note), without its vectors of parts and fitted
/// texts, an allocation each, nor a second reading of its parts. `None` for anything else,
/// and under a turn's total (the shares need every result's cost first).
fn plain_text<'a>(
    planned: &PlannedResult<'a>,
    budget: &TruncationBudget,
) -> Option<ResultView<'a>> {
    let PlannedResult::Stored { call, result } = planned else {
        return None;
    };
    if result.status != Status::Success || budget.turn_max_chars.is_some() {
        return None;
    }
    let [value] = result.output.as_slice() else {
        return None;
    };
    if !for_model(value) {
        return None;
    }
    let Ok(Shape::Text { prefix, body, .. }) = shape(value, &result.tool_name) else {
        return None;
    };
    // Bytes bound characters from above, so a body within the limit in bytes fits whole.
    if !prefix.is_empty() || body.len() > budget.limit_for(&call.id, &call.name) {
        return None;
    }
    Some(ResultView {
        call_id: &call.id,
        tool_name: &call.name,
        is_error: false,
        blocks: Blocks::One(Block::Text(body)),
    })
}

/// One result of a turn between reading its parts and cutting them.
struct Pending<'a> {
    call: &'a ToolCall,
    is_error: bool,
    parts: Vec<Part<'a>>,
    /// Its limit in characters.
    limit: usize,
    /// Whether its share of the turn's budget set the limit.
    shared: bool,
}

fn parts_of_message<'a>(message: Option<String>) -> Vec<Part<'a>> {
    message
        .map(|body| {
            Part::Text(
                0,
                Shape::Text {
                    prefix: String::new(),
                    body: Cow::Owned(body),
                    weight: TextWeight::Fixed(crate::truncate::Weight::Balanced),
                },
            )
        })
        .into_iter()
        .collect()
}

/// An upper bound of [`text_cost`] when every text is plain: its bytes.
fn text_bytes(parts: &[Part<'_>]) -> Option<usize> {
    let mut texts = 0usize;
    let mut bytes = 0;
    for part in parts {
        if let Part::Text(_, s) = part {
            texts += 1;
            bytes += s.text_bytes()?;
        }
    }
    Some(bytes + texts.saturating_sub(1) * PART_SEPARATOR.len())
}

fn text_cost(parts: &[Part<'_>], limit: usize) -> usize {
    let texts: Vec<&Shape<'_>> = parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(_, s) => Some(s),
            Part::Media(_) => None,
        })
        .collect();
    let seps = texts.len().saturating_sub(1) * PART_SEPARATOR.len();
    texts.iter().map(|s| s.cost(limit)).sum::<usize>() + seps
}

/// Media inline when the provider takes it and it is recent; a placeholder otherwise.
async fn route(
    ctx: &Ctx<'_>,
    media: &MediaRef<'_>,
    call_id: &str,
    diags: &mut Vec<EncodeNote>,
) -> Block<'static> {
    let stand_in = MediaPlaceholder::of(media);
    let text = stand_in.text();
    if let Some(why) = refusal(ctx.route, media) {
        diags.push(EncodeNote::new(
            NoteCode::MediaPlaceholder,
            Some(call_id),
            format!("{text} sent as a placeholder: {why}"),
        ));
        return Block::Placeholder(stand_in);
    }
    if !ctx.inline {
        diags.push(EncodeNote::new(
            NoteCode::MediaPlaceholder,
            Some(call_id),
            format!(
                "{text} sent as a placeholder: older than the last {} messages",
                ctx.options.inline_media_messages
            ),
        ));
        return Block::Placeholder(stand_in);
    }
    let data = match media.source {
        SourceView::Base64(b) => MediaData::Base64(b.to_owned()),
        SourceView::Url(u) => MediaData::Url(u.to_owned()),
        SourceView::Blob { key, .. } => match ctx.blobs.read(key).await {
            Ok(bytes) => MediaData::Base64(base64::engine::general_purpose::STANDARD.encode(bytes)),
            Err(e) => {
                diags.push(EncodeNote::new(
                    NoteCode::BlobUnavailable,
                    Some(call_id),
                    format!("{text} sent as a placeholder: {e}"),
                ));
                return Block::Placeholder(stand_in);
            }
        },
    };
    Block::Media(InlineMedia {
        class: media.class,
        mime: media.mime.clone(),
        data,
        name: media.name.map(str::to_owned),
        placeholder: stand_in,
    })
}
