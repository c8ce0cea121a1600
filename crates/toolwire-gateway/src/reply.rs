//! A stored result as the `CallToolResult` a host gets: what toolwire's model view would
//! send a model of the host's kind (budgeted by structure, with markers that say toolwire
//! cut it and how to read the rest), images as image blocks, media the host's model cannot
//! take as a line and a `toolwire://blob/<key>` resource link, and the result's `_meta`.

use rmcp::model::{CallToolResult, ContentBlock, MetaObject};
use serde_json::{Map, Value as Json, json};
use toolwire_core::view::{KnownView, SourceView};
use toolwire_core::{Message, Status, ToolCall, ToolResult, WellKnown};
use toolwire_model::BlobReader;
use toolwire_model::MediaClass;
use toolwire_model::{Block, MediaData, Turn, build_view};
use toolwire_model::{Conversation, EncodeOptions};

use crate::profile::HostProfile;

/// The URI scheme under which the gateway serves stored media (`resources/read`).
pub const BLOB_URI_PREFIX: &str = "toolwire://blob/";

/// A medium of a result kept in the blob store, as a resource the host may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BlobLink {
    pub key: String,
    pub mime: String,
    pub size: u64,
    pub name: Option<String>,
}

/// The host's `CallToolResult` for `result` (the stored result of `call`), and the blobs
/// it links to. `max_chars` is the budget for this tool (the host's, or the tool's own
/// `_meta` hint); a tool's `output_schema` puts the result's structured value in
/// `structuredContent` (a tool that declares one must send it).
pub(crate) async fn call_tool_result(
    result: ToolResult,
    call: ToolCall,
    profile: &HostProfile,
    max_chars: usize,
    output_schema: Option<&Json>,
    blobs: &dyn BlobReader,
) -> Result<(CallToolResult, Vec<BlobLink>), String> {
    // The call and its result are moved in, not copied: the view borrows them, and the
    // reply reads the result back from the conversation.
    let conversation = Conversation::new(vec![
        Message::assistant("", vec![call]),
        Message::tool(result),
    ]);
    let Some(Message::ToolResult(result)) = conversation.messages.last() else {
        // Not reached: the conversation was made just above with the result last.
        return Err("the result was not in its conversation".to_owned());
    };
    let mut options = EncodeOptions::default();
    options.budget.max_chars = max_chars;
    let mut notes = Vec::new();
    let view = build_view(profile.provider, &conversation, &options, blobs, &mut notes).await;
    let seen = view.turns.iter().find_map(|turn| match turn {
        Turn::Results { results, .. } => results.first(),
        _ => None,
    });
    let mut content = Vec::new();
    let mut texts: Vec<&str> = Vec::new();
    // The blob keys of the media the view stands in for with a line (typed placeholders,
    // never a search of the text: a text that merely names a key links nothing).
    let mut linked: Vec<&str> = Vec::new();
    for block in seen.map(|r| r.blocks.as_slice()).unwrap_or_default() {
        match block {
            Block::Text(text) => {
                texts.push(text);
                content.push(ContentBlock::text(text.to_string()));
            }
            Block::Placeholder(p) => {
                linked.extend(p.blob_key.as_deref());
                texts.push(p.text());
                content.push(ContentBlock::text(p.text()));
            }
            Block::Media(media) => match (&media.data, media.class) {
                (MediaData::Base64(data), MediaClass::Image) => content.push(typed_block(
                    json!({"type": "image", "data": data, "mimeType": media.mime}),
                )?),
                (MediaData::Base64(data), MediaClass::Audio) => content.push(typed_block(
                    json!({"type": "audio", "data": data, "mimeType": media.mime}),
                )?),
                // Documents and video go as links below; the model view's line says what
                // they are.
                _ => {
                    linked.extend(media.placeholder.blob_key.as_deref());
                    texts.push(media.placeholder.text());
                    content.push(ContentBlock::text(media.placeholder.text()));
                }
            },
        }
    }
    // Media the view could not send inline: the host gets a link it can read, named by
    // the result's own value for that blob.
    let links: Vec<BlobLink> = blob_media(result)
        .into_iter()
        .filter(|link| linked.contains(&link.key.as_str()))
        .collect();
    for link in &links {
        let link = json!({
            "type": "resource_link",
            "uri": format!("{BLOB_URI_PREFIX}{}", link.key),
            "name": link.name.clone().unwrap_or_else(|| link.key.clone()),
            "mimeType": link.mime,
            "size": link.size,
            "description": "Stored by toolwire; read it with resources/read.",
        });
        content.push(typed_block(link)?);
    }
    if content.is_empty() {
        content.push(ContentBlock::text(""));
    }
    // Made as rmcp's type directly (what reading the same JSON into it gives: a test
    // holds the two to each other), not written as JSON and read back on every call.
    // The default is `complete`, as 2026-07-28 requires of every result (rmcp takes the
    // mark off again for a peer of an older revision).
    let mut reply = CallToolResult::default();
    reply.content = content;
    if seen.is_some_and(|r| r.is_error) || result.status == Status::Error {
        reply.is_error = Some(true);
        if !profile.flags_errors {
            // The host drops `isError` on its way to the model: the text says it.
            let line = failure_line(&result.tool_name, result.error.as_ref());
            match reply.content.first_mut() {
                Some(ContentBlock::Text(first)) => first.text = format!("{line}\n{}", first.text),
                _ => reply.content.insert(0, ContentBlock::text(line)),
            }
        }
    }
    if let Some(schema) = output_schema
        && result.status == Status::Success
        && let Some(part) = result
            .output
            .iter()
            .position(|v| v.is_kind(WellKnown::Structured))
    {
        reply.structured_content =
            Some(structured_content(result, part, &texts, schema, profile, max_chars, blobs).await);
    }
    let mut meta = match result.metadata.extra.get("_meta") {
        Some(Json::Object(meta)) => meta.clone(),
        _ => Map::new(),
    };
    // The host's peer is the gateway: a sender stamp the server behind put on its result
    // names the gateway instead.
    if let Some(sender) = meta.get_mut(SERVER_INFO_META) {
        *sender = crate::gateway_info();
    }
    // Where the whole result is: the session and call `read_result` takes.
    meta.insert(
        "toolwire/callId".into(),
        Json::String(result.call_id.clone()),
    );
    reply.meta = Some(MetaObject(meta));
    Ok((reply, links))
}

/// The first line of an error result for a host that does not tell its model a result is
/// an error: that the call failed, and how (from the result's error code).
fn failure_line(tool: &str, error: Option<&toolwire_core::ErrorInfo>) -> String {
    use toolwire_core::ErrorCode;
    let code = error.and_then(|e| e.code.as_deref()).map(ErrorCode::parse);
    let how = match code {
        Some(ErrorCode::Denied) => "was refused, so it did not run",
        Some(ErrorCode::Cancelled) => "was cancelled",
        Some(ErrorCode::Timeout) => "timed out",
        Some(ErrorCode::Interrupted) => "was interrupted",
        Some(ErrorCode::UnknownTool) => "failed: there is no such tool",
        Some(ErrorCode::InvalidInput) => "failed: its input was not valid",
        Some(ErrorCode::InvalidOutput) => "failed: its output was not valid",
        Some(ErrorCode::Unavailable) => "failed: its server is not available",
        _ => "failed (the tool returned an error)",
    };
    format!("Error: the call to {tool} {how}.")
}

/// The `_meta` key of a result's sender (2026-07-28): the server that answered.
const SERVER_INFO_META: &str = "io.modelcontextprotocol/serverInfo";

/// A content block other than text (media, a link), read into rmcp's type from its JSON.
fn typed_block(json: Json) -> Result<ContentBlock, String> {
    serde_json::from_value(json).map_err(|e| e.to_string())
}

/// The key under which the structured value carries what it lacks: toolwire's marker when
/// the value was cut, and for a host that shows only `structuredContent`, what the text
/// blocks said besides it (a cut marker, media lines, other text).
pub(crate) const CONTENT_KEY: &str = "toolwire/content";

/// Characters kept for [`CONTENT_KEY`] itself and the escapes of the quotes in the
/// carried marker (its `read_result` calls), beyond the carried text's own.
const CARRY_ROOM: usize = 64;

/// The `structuredContent` of `result`, whose structured value is `output[part]`: the
/// value as the server sent it (media that normalizing moved out put back, see
/// [`as_sent`]), cut by structure to the host's budget (`toolwire_model::cut_value`: the
/// same keys and types, so it still matches the tool's schema), with what the host's
/// model would lack under [`CONTENT_KEY`]: the cut's marker and, for a host that drops
/// `content` beside the value, what the text blocks said beyond it.
///
/// The text goes in only as an extra member of an object whose schema allows extra
/// members: with `"additionalProperties": false` (or a value that is not an object) the
/// host gets the value alone and the text is lost to it, the price of a host that must be
/// sent `structuredContent` and then shows nothing else.
async fn structured_content(
    result: &ToolResult,
    part: usize,
    texts: &[&str],
    schema: &Json,
    profile: &HostProfile,
    max_chars: usize,
    blobs: &dyn BlobReader,
) -> Json {
    let stored = &result.output[part].data;
    let whole = as_sent(result, part, blobs).await;
    let open = stored.is_object() && !closed(schema);
    let mut lacking = if profile.drops_content_beside_structured && open {
        lacking(texts, stored, &whole)
    } else {
        Vec::new()
    };
    // The value gets what the carried text (its key, and the escapes of its quotes)
    // leaves of the budget, half of it at least.
    let carried: usize = lacking.iter().map(|t| t.chars().count() + 2).sum();
    let room = max_chars
        .saturating_sub(carried + CARRY_ROOM)
        .max(max_chars / 2);
    let ctx = toolwire_model::CutContext {
        call_id: &result.call_id,
        part,
    };
    let (mut value, marker) = toolwire_model::cut_value(&whole, room, ctx);
    lacking.extend(marker.as_deref());
    if open
        && !lacking.is_empty()
        && let Json::Object(map) = &mut value
    {
        map.insert(CONTENT_KEY.into(), Json::String(lacking.join("\n\n")));
    }
    value
}

/// What `texts` (the reply's text blocks) say beyond the structured value (`stored`, and
/// `whole` as the server sent it): a cut marker, a media line, a server's own note. The
/// value's JSON itself (a server usually sends it as text beside the value), whole or cut
/// by toolwire with its marker, is left out: the host shows the value, and the model
/// would read it twice. So is the string (or other value) a tool returned that its SDK
/// sent both as text and wrapped as the value's one member (FastMCP's `{"result": …}`).
fn lacking<'t>(texts: &[&'t str], stored: &Json, whole: &Json) -> Vec<&'t str> {
    // The view joins a result's text parts with a blank line; a JSON text has none.
    texts
        .iter()
        .flat_map(|text| text.split("\n\n"))
        .filter(|part| {
            !part.trim().is_empty()
                && !restates(part, stored)
                && !restates(part, whole)
                && !in_wrapped(part, stored)
                && !in_wrapped(part, whole)
        })
        .collect()
}

/// Whether `part` (a piece of the reply's text) is the one member of `value`, or a
/// piece of it as toolwire cut it (its head, or the marker and its tail): FastMCP sends a
/// tool's string (or list, or number) both as text and as `{"result": …}`.
fn in_wrapped(part: &str, value: &Json) -> bool {
    let Some(member) = value
        .as_object()
        .filter(|map| map.len() == 1)
        .and_then(|map| map.values().next())
    else {
        return false;
    };
    let Json::String(whole) = member else {
        return restates(part, member);
    };
    let part = part.trim_matches('\n');
    if whole.contains(part) {
        return true;
    }
    // The text cut's marker, `[… N chars (M lines) omitted by toolwire; … …]`, then the
    // kept tail.
    const MARKER_END: &str = " …]\n";
    part.starts_with("[… ")
        && part.find(MARKER_END).is_some_and(|end| {
            part[..end].contains(" omitted by toolwire; ")
                && whole.contains(&part[end + MARKER_END.len()..])
        })
}

/// Whether `schema` allows an object no members beyond those it names.
fn closed(schema: &Json) -> bool {
    schema
        .get("additionalProperties")
        .is_some_and(|extra| extra == &Json::Bool(false))
        || schema
            .get("unevaluatedProperties")
            .is_some_and(|extra| extra == &Json::Bool(false))
}

/// The structured value `output[part]` of `result` as the server sent it: each medium
/// that normalizing moved out of it (a data URI or bare base64, left as
/// `"[image/png → output[N]]"`, see `toolwire_core::INLINE_META`) put back where it was,
/// its bytes base64 again behind what preceded them. A host may read any of it (an MCP
/// App's viewer reads its PDF's bytes), so nothing is left replaced; a medium whose
/// bytes cannot be read stays the pointer it was.
async fn as_sent(result: &ToolResult, part: usize, blobs: &dyn BlobReader) -> Json {
    use base64::Engine;
    let mut value = result.output[part].data.clone();
    for (index, medium) in result.output.iter().enumerate() {
        let Some(from) = medium
            .meta
            .as_ref()
            .and_then(|meta| meta.get(toolwire_core::INLINE_META))
        else {
            continue;
        };
        if from.get("in").and_then(Json::as_u64) != Some(part as u64) {
            continue;
        }
        let (Some(at), Some(before)) = (
            from.get("at").and_then(Json::as_str),
            from.get("before").and_then(Json::as_str),
        ) else {
            continue;
        };
        let placeholder = format!(
            "[{} → output[{index}]]",
            medium.mime_type.as_deref().unwrap_or_default()
        );
        // Only where the pointer still finds the placeholder this medium left.
        if value.pointer(at).and_then(Json::as_str) != Some(placeholder.as_str()) {
            continue;
        }
        let source = match medium.known() {
            Some(Ok(KnownView::Image(image))) => image.source,
            Some(Ok(KnownView::File(file))) => file.source,
            _ => continue,
        };
        let base64 = match source {
            SourceView::Base64(data) => data.to_owned(),
            SourceView::Blob { key, .. } => match blobs.read(key).await {
                Ok(bytes) => base64::engine::general_purpose::STANDARD.encode(bytes),
                Err(_) => continue,
            },
            SourceView::Url(_) => continue,
        };
        if let Some(slot) = value.pointer_mut(at) {
            *slot = Json::String(format!("{before}{base64}"));
        }
    }
    value
}

/// How toolwire's marker after a cut JSON value begins (`toolwire_model::cut_json`).
const JSON_CUT_MARKER: &str = "[… JSON shortened by toolwire";

/// Whether `text` is the JSON of `value`: the value itself, or a copy toolwire cut (fewer
/// items, keys and characters, then its marker).
fn restates(text: &str, value: &Json) -> bool {
    let mut docs = serde_json::Deserializer::from_str(text).into_iter::<Json>();
    let Some(Ok(doc)) = docs.next() else {
        return false;
    };
    let rest = text.get(docs.byte_offset()..).unwrap_or("").trim();
    if rest.is_empty() {
        return &doc == value;
    }
    rest.starts_with(JSON_CUT_MARKER)
        && match (&doc, value) {
            (Json::Object(cut), Json::Object(whole)) => cut.keys().all(|k| whole.contains_key(k)),
            (Json::Array(_), Json::Array(_)) => true,
            _ => false,
        }
}

/// The media type `result` gives blob `key`, if it holds it.
pub(crate) fn blob_mime(result: &ToolResult, key: &str) -> Option<String> {
    blob_media(result)
        .into_iter()
        .find(|link| link.key == key)
        .map(|link| link.mime)
}

/// The media values of `result` kept in the blob store.
fn blob_media(result: &ToolResult) -> Vec<BlobLink> {
    result
        .output
        .iter()
        .filter_map(|value| {
            let (source, name, mime) = match value.known()?.ok()? {
                KnownView::Image(image) => (image.source, None, image.mime_type),
                KnownView::File(file) => (file.source, file.filename, file.mime_type),
                _ => return None,
            };
            let SourceView::Blob { key, size } = source else {
                return None;
            };
            Some(BlobLink {
                key: key.to_owned(),
                mime: mime.unwrap_or("application/octet-stream").to_owned(),
                size,
                name: name.map(str::to_owned),
            })
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use toolwire_core::{CallRef, ErrorCode, Source, Value};
    use toolwire_model::MemoryBlobs;

    /// The reply as the host is sent it (rmcp's JSON of it), checked to be exactly what
    /// reading that JSON into rmcp's type gives: the reply is made as the type, and must
    /// be what the gateway's former route (its JSON, read into the type) made.
    fn sent(made: Result<(CallToolResult, Vec<BlobLink>), String>) -> (Json, Vec<BlobLink>) {
        let (reply, links) = made.unwrap();
        let json = serde_json::to_value(&reply).unwrap();
        let read: CallToolResult = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(read, reply, "{json}");
        (json, links)
    }

    /// A plain text result goes out byte for byte as before: its text block, the call's
    /// id in `_meta`, marked complete, nothing else.
    #[tokio::test]
    async fn a_text_result_is_sent_as_before() {
        let call = ToolCall::new("call_1", "ev__echo", json!({"message": "hi there"}));
        let result = ToolResult::success(
            CallRef::new("call_1", "ev__echo"),
            vec![Value::text("Echo: hi there")],
        );
        let profile = HostProfile::named("claude-code").unwrap();
        let blobs = MemoryBlobs::default();
        let made = call_tool_result(result, call, &profile, 20_000, None, &blobs).await;
        let (reply, _) = sent(made.clone());
        assert_eq!(
            serde_json::to_string(&made.unwrap().0).unwrap(),
            r#"{"resultType":"complete","content":[{"type":"text","text":"Echo: hi there"}],"_meta":{"toolwire/callId":"call_1"}}"#
        );
        assert_eq!(reply["content"][0]["text"], "Echo: hi there");

        // A result the server behind stamped as its own is sent as the gateway's.
        let call = ToolCall::new("call_3", "ev__echo", json!({}));
        let mut result =
            ToolResult::success(CallRef::new("call_3", "ev__echo"), vec![Value::text("hi")]);
        result.metadata.extra.insert(
            "_meta".into(),
            json!({SERVER_INFO_META: {"name": "fastmcp-trial", "version": "1.0"}, "k": 1}),
        );
        let (reply, _) = sent(call_tool_result(result, call, &profile, 20_000, None, &blobs).await);
        assert_eq!(reply["_meta"][SERVER_INFO_META]["name"], "toolwire-gateway");
        assert_eq!(reply["_meta"]["k"], 1, "{reply}");

        // An error result says so.
        let call = ToolCall::new("call_2", "ev__echo", json!({}));
        let result = ToolResult::error(CallRef::new("call_2", "ev__echo"), "no such thing");
        let (reply, _) = sent(call_tool_result(result, call, &profile, 20_000, None, &blobs).await);
        assert_eq!(reply["isError"], true);
        assert!(
            reply["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("no such thing")
        );
        // A host that drops `isError` (Codex) is told in the text, first, how it failed;
        // one that keeps it gets the error's own text alone.
        let codex = HostProfile::named("codex").unwrap();
        for (host, code, first) in [
            (
                &codex,
                ErrorCode::Timeout,
                Some("Error: the call to ev__echo timed out."),
            ),
            (
                &codex,
                ErrorCode::Other("x".into()),
                Some("Error: the call to ev__echo failed"),
            ),
            (&profile, ErrorCode::Timeout, None),
        ] {
            let call = ToolCall::new("call_4", "ev__echo", json!({}));
            let result =
                ToolResult::error_with_code(CallRef::new("call_4", "ev__echo"), code, "slow");
            let (reply, _) = sent(call_tool_result(result, call, host, 20_000, None, &blobs).await);
            assert_eq!(reply["isError"], true);
            let text = reply["content"][0]["text"].as_str().unwrap();
            match first {
                Some(first) => {
                    let (line, rest) = text.split_once('\n').unwrap();
                    assert!(line.starts_with(first), "{text}");
                    assert!(rest.contains("slow"), "{text}");
                }
                None => assert!(!text.contains("Error: the call"), "{text}"),
            }
        }
    }

    /// Audio a Claude host's model cannot take is a line and a link it can read; an image
    /// stays an image block; the text is budgeted with toolwire's marker.
    #[tokio::test]
    async fn media_the_host_cannot_take_becomes_a_link_and_text_is_budgeted() {
        let wav = format!("blake3:{}", "a".repeat(64));
        let png = format!("blake3:{}", "b".repeat(64));
        let audio = Value::file(Source::blob(&wav, 4), "audio/wav", Some("hello.wav".into()));
        let image = Value::image(Source::blob(&png, 4), "image/png");
        let long = Value::text("word ".repeat(10_000));
        let call = ToolCall::new("c1", "ev__media", json!({}));
        let result = ToolResult::success(CallRef::new("c1", "ev__media"), vec![long, audio, image]);
        let mut blobs = MemoryBlobs::default();
        blobs.insert(wav.clone(), b"RIFF".to_vec());
        blobs.insert(png.clone(), b"\x89PNG".to_vec());
        let profile = HostProfile::named("claude-code").unwrap();
        let (reply, links) =
            sent(call_tool_result(result, call, &profile, 5_000, None, &blobs).await);
        let content = reply["content"].as_array().unwrap();
        let text = content[0]["text"].as_str().unwrap();
        assert!(text.chars().count() <= 5_200, "{}", text.len());
        assert!(text.contains("omitted by toolwire"), "{text}");
        assert!(
            content
                .iter()
                .any(|b| b["type"] == "image" && b["mimeType"] == "image/png")
        );
        let link = content
            .iter()
            .find(|b| b["type"] == "resource_link")
            .unwrap();
        assert_eq!(link["uri"], format!("{BLOB_URI_PREFIX}{wav}"));
        assert_eq!(link["mimeType"], "audio/wav");
        assert_eq!(links.len(), 1);
        assert_eq!(reply["_meta"]["toolwire/callId"], "c1");
        assert!(reply.get("isError").is_none());
    }

    /// The links come from the view's typed placeholders, not from its text: a text that
    /// merely names the key of a blob the result holds (an image sent as an image) links
    /// nothing, and a medium the host's model cannot take is still linked.
    #[tokio::test]
    async fn a_text_naming_a_blob_key_links_nothing() {
        let png = format!("blake3:{}", "c".repeat(64));
        let wav = format!("blake3:{}", "d".repeat(64));
        let named = Value::text(format!("the chart is stored as {png}"));
        let image = Value::image(Source::blob(&png, 4), "image/png");
        let mut blobs = MemoryBlobs::default();
        blobs.insert(png.clone(), b"\x89PNG".to_vec());
        blobs.insert(wav.clone(), b"RIFF".to_vec());
        let profile = HostProfile::named("claude-code").unwrap();
        let call = ToolCall::new("c1", "ev__chart", json!({}));
        let result = ToolResult::success(CallRef::new("c1", "ev__chart"), vec![named, image]);
        let (reply, links) =
            sent(call_tool_result(result, call, &profile, 5_000, None, &blobs).await);
        let content = reply["content"].as_array().unwrap();
        assert!(content.iter().any(|b| b["type"] == "image"), "{reply}");
        assert!(links.is_empty(), "{links:?}");
        assert!(
            !content.iter().any(|b| b["type"] == "resource_link"),
            "{reply}"
        );

        // Audio the host's model cannot take: its placeholder carries the key.
        let audio = Value::file(Source::blob(&wav, 4), "audio/wav", None);
        let call = ToolCall::new("c2", "ev__sound", json!({}));
        let result = ToolResult::success(CallRef::new("c2", "ev__sound"), vec![audio]);
        let (_, links) = sent(call_tool_result(result, call, &profile, 5_000, None, &blobs).await);
        assert_eq!(links.len(), 1);
        assert_eq!(links[0].key, wav);
    }

    /// Many small blocks reach Claude Code within its budget, separators counted: whole
    /// blocks at the head and the tail, one whole marker for the run between them, whose
    /// `read_result` call reads the left-out blocks back (`read`, what the tool runs).
    #[tokio::test]
    async fn many_small_blocks_stay_within_the_hosts_budget() {
        let profile = HostProfile::named("claude-code").unwrap();
        let blobs = MemoryBlobs::default();
        for (n, size) in [(500, 500), (50_000, 1)] {
            let blocks: Vec<String> = (0..n)
                .map(|i: usize| {
                    let head = format!("hit {i}:");
                    if head.len() > size {
                        char::from(b'a' + (i % 26) as u8).to_string()
                    } else {
                        format!("{head}{}", "y".repeat(size - head.len()))
                    }
                })
                .collect();
            let values: Vec<Value> = blocks.iter().map(|b| Value::text(b.clone())).collect();
            let result = ToolResult::success(CallRef::new("c_many", "ev__search"), values);
            let call = ToolCall::new("c_many", "ev__search", json!({}));
            let started = std::time::Instant::now();
            let made = call_tool_result(
                result.clone(),
                call,
                &profile,
                profile.max_chars,
                None,
                &blobs,
            )
            .await;
            let took = started.elapsed();
            let (reply, _) = sent(made);
            let content = reply["content"].as_array().unwrap();
            assert_eq!(content.len(), 1, "one text block");
            let text = content[0]["text"].as_str().unwrap();
            let chars = text.chars().count();
            assert!(chars <= profile.max_chars, "{n} blocks: {chars} chars");
            assert_eq!(text.matches("[…").count(), 1, "{n} blocks: {text:.300}");
            assert_eq!(text.matches("…]").count(), 1, "{n} blocks: {text:.300}");
            let start = text.find("[…").unwrap();
            let end = text.find("…]").unwrap() + "…]".len();
            let marker = &text[start..end];
            assert!(marker.contains("omitted by toolwire; read them with read_result {"));
            let at = marker.find('{').unwrap();
            let close = at + marker[at..].find('}').unwrap() + 1;
            let read_call: Json = serde_json::from_str(&marker[at..close]).unwrap();
            assert_eq!(read_call["callId"], "c_many", "{marker}");
            assert_eq!(read_call["offset"], 0, "{marker}");
            let first = read_call["part"].as_u64().unwrap() as usize;
            let through = marker.rsplit("through part ").next().unwrap();
            let last: usize = through[..through.find(' ').unwrap()].parse().unwrap();
            let head: Vec<&str> = text[..start].split_terminator("\n\n").collect();
            let tail: Vec<&str> = text[end..]
                .strip_prefix("\n\n")
                .unwrap()
                .split("\n\n")
                .collect();
            assert_eq!(head, blocks[..first], "{n} blocks: the head is whole");
            assert_eq!(tail, blocks[last + 1..], "{n} blocks: the tail is whole");
            for (part, want) in blocks.iter().enumerate().take(last + 1).skip(first) {
                let read = toolwire_model::read_part(&result, part, 0, 60_000).unwrap();
                assert_eq!(&read, want, "part {part} read back");
            }
            eprintln!(
                "{n} blocks of {size}: {chars} chars, blocks {first}-{last} left out, reply in {took:?}"
            );
        }
    }

    /// The JSON a server sends as text beside its structured value, cut to the host's
    /// budget, stays valid JSON (then a marker), never a string cut in its middle.
    #[tokio::test]
    async fn a_json_text_beside_the_value_is_cut_as_json() {
        let value = json!({"notes": (0..300).map(|i| format!("note {i}: {}", "w".repeat(40))).collect::<Vec<_>>()});
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        let call = ToolCall::new("c5", "db__notes", json!({}));
        let result = ToolResult::success(
            CallRef::new("c5", "db__notes"),
            vec![Value::text(pretty), Value::structured(value.clone())],
        );
        let profile = HostProfile::named("claude-desktop").unwrap();
        let schema = json!({"type": "object"});
        let blobs = MemoryBlobs::default();
        let (reply, _) =
            sent(call_tool_result(result, call, &profile, 3_000, Some(&schema), &blobs).await);
        let text = reply["content"][0]["text"].as_str().unwrap();
        assert!(text.chars().count() <= 3_000, "{}", text.len());
        let (json, marker) = text.split_once("\n[… JSON shortened by toolwire").unwrap();
        let kept: Json = serde_json::from_str(json).unwrap();
        assert_eq!(kept["notes"][0], value["notes"][0]);
        assert!(
            marker.contains("read_result {\"callId\":\"c5\""),
            "{marker}"
        );
        // The value beside it is cut to the budget too, by structure (issue 43 §8).
        let structured = &reply["structuredContent"];
        assert!(structured.to_string().chars().count() <= 3_000);
        assert_eq!(structured["notes"][0], value["notes"][0]);
        assert!(
            structured[CONTENT_KEY]
                .as_str()
                .unwrap()
                .contains(r#""part":1,"pointer":"/notes"}"#),
            "{structured}"
        );
    }

    /// A FastMCP tool that returns a string sends it as text and as `{"result": …}`: for a
    /// host that shows only the value (Codex), the text, whole or as toolwire cut it, is
    /// the value again and is not carried beside it; the reply stays within the budget,
    /// which the host's own cut would otherwise take out of the middle (marker included).
    #[tokio::test]
    async fn a_wrapped_string_beside_its_value_is_not_carried_again() {
        let log: String = (1..=8_000)
            .map(|i| format!("step {i:05} compiling crate_{} ... ok\n", i % 97))
            .collect::<String>()
            + "BUILD FAILED: 1 test failed\n";
        let codex = HostProfile::named("codex").unwrap();
        let schema = json!({"type": "object", "properties": {"result": {"type": "string"}}});
        let blobs = MemoryBlobs::default();
        for (text, budget) in [(log.clone(), 9_000), ("short".to_owned(), 9_000)] {
            let call = ToolCall::new("c6", "py__build_log", json!({}));
            let result = ToolResult::success(
                CallRef::new("c6", "py__build_log"),
                vec![
                    Value::text(text.clone()),
                    Value::structured(json!({"result": text})),
                ],
            );
            let (reply, _) =
                sent(call_tool_result(result, call, &codex, budget, Some(&schema), &blobs).await);
            let structured = &reply["structuredContent"];
            assert!(
                structured.to_string().chars().count() <= budget,
                "{} chars: {structured:.300}",
                structured.to_string().chars().count()
            );
            let carried = structured.get(CONTENT_KEY).and_then(Json::as_str);
            assert!(
                carried.is_none_or(|c| !c.contains("step 00001")),
                "{carried:.300?}"
            );
            if text.len() > budget {
                assert!(
                    structured["result"]
                        .as_str()
                        .unwrap()
                        .contains("step 00001")
                );
                assert!(
                    structured.to_string().contains("BUILD FAILED"),
                    "{structured:.300}"
                );
                assert!(carried.unwrap().contains("read_result"), "{carried:?}");
            } else {
                assert_eq!(structured, &json!({"result": "short"}));
            }
        }
    }

    /// The structured value within the budget, cut by structure (its rows' ends kept),
    /// and what it carries.
    fn cut_rows(reply: &Json, budget: usize) -> Option<&str> {
        let structured = &reply["structuredContent"];
        assert!(
            structured.to_string().chars().count() <= budget,
            "{reply:.300}"
        );
        let rows = structured["rows"].as_array().unwrap();
        assert!(rows.len() < 2_000, "{reply:.300}");
        assert_eq!((&rows[0], rows.last().unwrap()), (&json!(0), &json!(1_999)));
        structured.get(CONTENT_KEY).map(|c| c.as_str().unwrap())
    }

    /// A host that shows only `structuredContent` (Claude Code) gets what the text said
    /// in it, when the text says more than the value and the schema allows it; a host
    /// that shows both gets only the value's own cut marker, and a closed schema is never
    /// broken.
    #[tokio::test]
    async fn a_host_that_drops_content_gets_the_text_in_structured_content() {
        let value = json!({"rows": (0..2_000).collect::<Vec<_>>()});
        let structured = Value::structured(value.clone());
        let call = ToolCall::new("c2", "db__query", json!({}));
        let result = ToolResult::success(CallRef::new("c2", "db__query"), vec![structured]);
        let open = json!({"type": "object"});
        let closed = json!({"type": "object", "additionalProperties": false});
        let blobs = MemoryBlobs::default();
        let drops = HostProfile::named("claude-code").unwrap();
        let shows = HostProfile::named("claude-desktop").unwrap();
        assert!(drops.drops_content_beside_structured && !shows.drops_content_beside_structured);

        // Cut to fit, the text is only the value's JSON and its marker: neither is
        // carried (the model would read the value twice), only the marker of the value's
        // own cut (issue 43 §8).
        let (reply, _) = sent(
            call_tool_result(
                result.clone(),
                call.clone(),
                &drops,
                2_000,
                Some(&open),
                &blobs,
            )
            .await,
        );
        let carried = cut_rows(&reply, 2_000).unwrap();
        assert!(
            carried.starts_with("[… JSON shortened by toolwire") && carried.contains("/rows"),
            "{carried}"
        );
        assert!(!carried.contains("nested values"), "{carried}");

        // What the text says beyond the value (a server's note) is carried, and only that:
        // not the value's JSON text beside it, whole or cut.
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        for budget in [2_000, 200_000] {
            let beside = ToolResult::success(
                CallRef::new("c2", "db__query"),
                vec![
                    Value::text(pretty.clone()),
                    Value::text("2,000 rows from the replica, 3 s old"),
                    Value::structured(value.clone()),
                ],
            );
            let (reply, _) = sent(
                call_tool_result(beside, call.clone(), &drops, budget, Some(&open), &blobs).await,
            );
            let carried = reply["structuredContent"][CONTENT_KEY].as_str().unwrap();
            assert!(carried.contains("3 s old"), "{budget}: {carried:.300}");
            assert!(!carried.contains("\"rows\""), "{budget}: {carried:.300}");
            // Not the text's own cut marker (the value's, at 2,000, is carried).
            assert!(
                !carried.contains("nested values"),
                "{budget}: {carried:.300}"
            );
        }

        let (reply, _) = sent(
            call_tool_result(
                result.clone(),
                call.clone(),
                &shows,
                2_000,
                Some(&open),
                &blobs,
            )
            .await,
        );
        let carried = cut_rows(&reply, 2_000).unwrap();
        assert!(carried.starts_with("[… JSON shortened by toolwire"));

        let (reply, _) = sent(
            call_tool_result(
                result.clone(),
                call.clone(),
                &drops,
                2_000,
                Some(&closed),
                &blobs,
            )
            .await,
        );
        assert_eq!(
            cut_rows(&reply, 2_000),
            None,
            "a closed schema takes no extra key"
        );

        // Whole, the text restates the value: nothing to carry.
        let small = json!({"city": "Lisbon", "temperature": 21.5});
        let structured = Value::structured(small.clone());
        let result = ToolResult::success(CallRef::new("c2", "db__query"), vec![structured]);
        let (reply, _) = sent(
            call_tool_result(
                result.clone(),
                call.clone(),
                &drops,
                20_000,
                Some(&open),
                &blobs,
            )
            .await,
        );
        assert_eq!(reply["structuredContent"], small, "{reply}");
    }
}
