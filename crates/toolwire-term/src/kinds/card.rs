//! One-line cards for values the terminal cannot show: audio, video, documents, binary
//! files and links to resources.

use toolwire_core::MediaKind;
use toolwire_core::view::{FileView, ResourceLinkView};

use crate::fmt;
use crate::kinds::image::{decode_base64, source_label, source_size};
use crate::out::{Out, truncate};
use crate::sanitize;
use crate::style::{BLUE, Line, MAGENTA, Style};

fn media_name(kind: MediaKind) -> &'static str {
    match kind {
        MediaKind::Audio => "audio",
        MediaKind::Video => "video",
        MediaKind::Document => "document",
        MediaKind::Binary => "binary",
    }
}

fn push_card(out: &mut Out, text: &str, style: Style) {
    let mut line = Line::new(out.mode);
    line.push(&truncate(text, out.width), style);
    out.push(line.finish());
}

/// `[audio audio/wav "take1.wav" 1.2 MB blake3:1a2b…]`.
pub(crate) fn file(out: &mut Out, f: &FileView<'_>) {
    // Decoding is only to hash inline bytes, so the card names the same content a
    // stored blob would.
    let bytes = match f.source {
        toolwire_core::view::SourceView::Base64(b64) => decode_base64(b64),
        _ => None,
    };
    let mut parts = vec![media_name(f.media_kind).to_owned()];
    parts.extend(f.mime_type.map(|m| sanitize::inline(m).into_owned()));
    parts.extend(f.filename.map(|n| format!("\"{}\"", sanitize::inline(n))));
    parts.extend(source_size(f.source, bytes.as_deref()).map(fmt::size));
    parts.extend(source_label(f.source, bytes.as_deref()));
    push_card(out, &format!("[{}]", parts.join(" ")), Style::fg(MAGENTA));
}

/// `[link README.md file:///repo/README.md text/markdown 1.2 KB] The readme`.
pub(crate) fn resource_link(out: &mut Out, r: &ResourceLinkView<'_>) {
    let mut parts = vec!["link".to_owned()];
    parts.extend(r.name.map(|n| sanitize::inline(n).into_owned()));
    parts.push(sanitize::inline(r.uri).into_owned());
    parts.extend(r.mime_type.map(|m| sanitize::inline(m).into_owned()));
    parts.extend(r.size.map(fmt::size));
    let mut text = format!("[{}]", parts.join(" "));
    if let Some(d) = r.description.filter(|d| !d.is_empty()) {
        text.push(' ');
        text.push_str(&sanitize::inline(d));
    }
    push_card(out, &text, Style::fg(BLUE));
}
