//! Media routing: which media each provider takes inside a tool result, and the text
//! placeholder for the rest (never base64 pasted as text).

use toolwire_core::view::SourceView;

use crate::render::{MediaClass, MediaRef, human_size};

/// Which media a provider takes inside a tool result; each format states its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaSupport {
    /// Image types the provider documents for image input.
    pub image_types: &'static [&'static str],
    /// Whether PDFs are taken as documents.
    pub pdf: bool,
    /// Audio and video, which only come as bytes: never by URL.
    pub audio_video: bool,
    /// Whether media may be given by URL; if not, URL media becomes a placeholder.
    pub urls: bool,
}

/// Where a provider's media goes: what it takes inline, and its name for the reason a
/// placeholder gives. Made from a `Provider` (provider.rs), so the view and the routing
/// need not know the providers' formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaRoute {
    /// The provider's name, as a placeholder's reason says it.
    pub provider: &'static str,
    /// What it takes inside a tool result.
    pub support: MediaSupport,
}

/// The image types Anthropic and OpenAI both document.
pub(crate) const COMMON_IMAGE_TYPES: &[&str] =
    &["image/jpeg", "image/png", "image/gif", "image/webp"];

/// Why media is sent as a placeholder, or `None` when the provider takes it inline.
pub(crate) fn refusal(route: MediaRoute, media: &MediaRef<'_>) -> Option<String> {
    let (provider, support) = (route.provider, route.support);
    let is_url = matches!(media.source, SourceView::Url(_));
    if is_url && !support.urls {
        return Some(format!(
            "{provider} takes no media by URL in a function response"
        ));
    }
    let ok = match media.class {
        MediaClass::Image => support.image_types.contains(&media.mime.as_str()),
        MediaClass::Pdf => support.pdf,
        MediaClass::Audio | MediaClass::Video => support.audio_video && !is_url,
        MediaClass::Other => false,
    };
    (!ok).then(|| {
        format!(
            "{provider} takes no {} ({}) in a tool result",
            media.class.label(),
            media.mime
        )
    })
}

/// Where the bytes are, for a placeholder: the blob key, the URL, or `inline`.
pub(crate) fn reference(source: &SourceView<'_>) -> String {
    match source {
        SourceView::Base64(_) => "inline".to_owned(),
        SourceView::Blob { key, .. } => (*key).to_owned(),
        SourceView::Url(url) => (*url).to_owned(),
    }
}

/// The media's size in bytes, when its source tells it (a URL does not).
pub(crate) fn size_of(source: &SourceView<'_>) -> Option<u64> {
    match source {
        SourceView::Base64(b) => Some(toolwire_core::base64_decoded_len(b)),
        SourceView::Blob { size, .. } => Some(*size),
        SourceView::Url(_) => None,
    }
}

/// `[image: chart.png, image/png, 34 KB, blake3:…]`.
pub(crate) fn placeholder(media: &MediaRef<'_>) -> String {
    let size = size_of(&media.source);
    let mut parts = vec![
        media.name.unwrap_or("unnamed").to_owned(),
        media.mime.clone(),
    ];
    if let Some(size) = size {
        parts.push(human_size(size));
    }
    parts.push(reference(&media.source));
    format!("[{}: {}]", media.class.label(), parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::Provider;

    fn media(class: MediaClass, mime: &str, source: SourceView<'static>) -> MediaRef<'static> {
        MediaRef {
            class,
            mime: mime.to_owned(),
            source,
            name: Some("chart.png"),
        }
    }

    #[test]
    fn placeholder_names_kind_type_size_and_ref() {
        let key = "blake3:00";
        let m = media(
            MediaClass::Image,
            "image/png",
            SourceView::Blob { key, size: 34_000 },
        );
        // Decimal units, the same as the terminal (core's `humanize::bytes`).
        assert_eq!(
            placeholder(&m),
            "[image: chart.png, image/png, 34 KB, blake3:00]"
        );
    }

    #[test]
    fn routing_table() {
        let b = SourceView::Base64("AAAA");
        let img = media(MediaClass::Image, "image/png", b);
        let tiff = media(MediaClass::Image, "image/tiff", b);
        let pdf = media(MediaClass::Pdf, "application/pdf", b);
        let wav = media(MediaClass::Audio, "audio/wav", b);
        for p in Provider::ALL {
            assert!(refusal(p.into(), &img).is_none(), "{p} takes png");
            assert!(refusal(p.into(), &tiff).is_some(), "{p} takes no tiff");
        }
        assert!(refusal(Provider::Anthropic.into(), &pdf).is_none());
        assert!(refusal(Provider::OpenaiResponses.into(), &pdf).is_none());
        assert!(refusal(Provider::OpenaiChat.into(), &pdf).is_some());
        assert!(refusal(Provider::Gemini.into(), &pdf).is_some());
        assert!(refusal(Provider::Gemini.into(), &wav).is_none());
        assert!(refusal(Provider::Anthropic.into(), &wav).is_some());
    }
}
