//! One module per subcommand.

pub(crate) mod agui;
pub(crate) mod blob;
pub(crate) mod call;
pub(crate) mod chat;
pub(crate) mod export;
pub(crate) mod gateway;
pub(crate) mod gc;
pub(crate) mod install;
pub(crate) mod mcp;
pub(crate) mod migrate;
pub(crate) mod normalize;
pub(crate) mod render;
pub(crate) mod schema;
pub(crate) mod serve;
pub(crate) mod sessions;
pub(crate) mod show;
pub(crate) mod tools;
pub(crate) mod validate;

use toolwire_core::EventKind;
use toolwire_term::LiveRenderer;

use crate::approve::summarize;

/// How to get each stored medium of `result` out of the store, on stderr: a terminal
/// shows media as a card, and the person may want the file.
fn media_hints(result: &toolwire_core::ToolResult) {
    let mut said = std::collections::HashSet::new();
    for value in &result.output {
        // Only what the person was shown (a twin's hidden copy names the same blob).
        let hidden = value.display.as_ref().and_then(|d| d.preferred_view)
            == Some(toolwire_core::View::Hidden)
            || value
                .annotations
                .as_ref()
                .is_some_and(|a| a.excludes(toolwire_core::Audience::User));
        let source = &value.data["source"];
        if hidden
            || !source["blob"]
                .as_str()
                .is_some_and(|k| said.insert(k.to_owned()))
        {
            continue;
        }
        let (Some(key), Some(size)) = (source["blob"].as_str(), source["size"].as_u64()) else {
            continue;
        };
        let mime = value
            .mime_type
            .as_deref()
            .unwrap_or("application/octet-stream");
        let ext = match mime.split(';').next().unwrap_or_default().trim() {
            "image/jpeg" => "jpg",
            "audio/mpeg" => "mp3",
            "audio/wav" | "audio/x-wav" => "wav",
            "application/pdf" => "pdf",
            m => m
                .split_once('/')
                .map(|(_, sub)| sub)
                .filter(|sub| sub.chars().all(|c| c.is_ascii_alphanumeric()))
                .unwrap_or("bin"),
        };
        // The filename came from the tool: only its last path part, and only if plain.
        let name = value.data["filename"]
            .as_str()
            .and_then(|f| f.rsplit(['/', '\\']).next())
            .filter(|f| {
                !f.is_empty() && f.chars().all(|c| c.is_alphanumeric() || "._-".contains(c))
            })
            .map_or_else(|| format!("out.{ext}"), str::to_owned);
        crate::out::eprintln(&format!(
            "save the {mime} ({size} bytes): toolwire blob {key} -o {name}"
        ));
    }
}

/// Draws a running call's progress (`call` and `chat` alike): its start line and progress
/// bar. Returns false for events the caller draws itself.
fn draw_call_progress(live: &LiveRenderer, kind: &EventKind) -> bool {
    match kind {
        EventKind::ToolCallStarted {
            call_id,
            tool_name,
            input,
            ..
        } => live.call_started(call_id, tool_name, &summarize(input)),
        EventKind::Progress {
            call_id,
            done,
            total,
            message,
        } => live.progress(call_id, *done, *total, message.as_deref()),
        _ => return false,
    }
    true
}
