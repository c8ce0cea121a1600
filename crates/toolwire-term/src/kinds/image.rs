//! Images: inline through the kitty, iTerm or sixel protocol when the terminal has one,
//! and always a one-line card `[image image/png 20×20 5.3 KB blake3:…]`.

use std::io::Cursor;

use base64::Engine as _;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use image::{ImageFormat, ImageReader, Limits, RgbaImage};
use toolwire_core::view::SourceView;

use crate::fmt;
use crate::options::ImageProtocol;
use crate::out::{Out, truncate};
use crate::sanitize;
use crate::style::{Line, Style};

/// Tolerates missing padding, as tools often send it.
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Assumed cell size in pixels, to turn an image's size into rows and columns.
const CELL_W: u32 = 10;
const CELL_H: u32 = 20;
/// Rows an inline image may take when nothing else limits it.
const MAX_IMAGE_ROWS: usize = 24;

#[derive(Debug, Clone, Copy)]
pub(crate) struct ImageInput<'a> {
    pub source: SourceView<'a>,
    pub alt: Option<&'a str>,
    pub mime: Option<&'a str>,
}

pub(crate) fn decode_base64(b64: &str) -> Option<Vec<u8>> {
    LENIENT.decode(b64.as_bytes()).ok().or_else(|| {
        let compact: String = b64.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        LENIENT.decode(compact.as_bytes()).ok()
    })
}

fn limits() -> Limits {
    let mut l = Limits::default();
    l.max_image_width = Some(16_384);
    l.max_image_height = Some(16_384);
    l.max_alloc = Some(128 * 1024 * 1024);
    l
}

fn reader(bytes: &[u8]) -> Option<ImageReader<Cursor<&[u8]>>> {
    let mut r = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .ok()?;
    r.limits(limits());
    Some(r)
}

/// `blake3:1a2b3c4d5e6f…`: enough of the hash to tell images apart.
pub(crate) fn short_key(key: &str) -> String {
    let hex = key.strip_prefix("blake3:").unwrap_or(key);
    let short: String = hex.chars().take(12).collect();
    format!("blake3:{}…", sanitize::inline(&short))
}

/// Where the bytes are, for a card: a short blob key or the URL.
pub(crate) fn source_label(source: SourceView<'_>, bytes: Option<&[u8]>) -> Option<String> {
    match source {
        SourceView::Blob { key, .. } => Some(short_key(key)),
        SourceView::Url(url) => Some(sanitize::inline(url).into_owned()),
        SourceView::Base64(_) => bytes.map(|b| short_key(&blake3::hash(b).to_hex())),
    }
}

pub(crate) fn source_size(source: SourceView<'_>, bytes: Option<&[u8]>) -> Option<u64> {
    match source {
        SourceView::Blob { size, .. } => Some(size),
        SourceView::Base64(b64) => {
            Some(bytes.map_or(toolwire_core::base64_decoded_len(b64), |b| b.len() as u64))
        }
        SourceView::Url(_) => None,
    }
}

pub(crate) fn render(out: &mut Out, img: &ImageInput<'_>, protocol: ImageProtocol) {
    let bytes = match img.source {
        SourceView::Base64(b64) => decode_base64(b64),
        _ => None,
    };
    let bad_base64 = matches!(img.source, SourceView::Base64(_)) && bytes.is_none();
    let format = bytes.as_deref().and_then(|b| image::guess_format(b).ok());
    let dims = bytes
        .as_deref()
        .and_then(|b| reader(b)?.into_dimensions().ok());

    if let (Some(b), Some((w, h))) = (bytes.as_deref(), dims)
        && protocol != ImageProtocol::None
    {
        let room = out
            .remaining()
            .map_or(MAX_IMAGE_ROWS, |r| r.saturating_sub(1))
            .min(MAX_IMAGE_ROWS);
        if room > 0
            && let Some(seq) = inline(b, format, (w, h), protocol, out.width, room)
        {
            out.push(seq);
        }
    }

    let mime = img
        .mime
        .map(|m| sanitize::inline(m).into_owned())
        .or_else(|| format.map(|f| f.to_mime_type().to_owned()));
    let mut parts = vec!["image".to_owned()];
    parts.extend(mime);
    if let Some((w, h)) = dims {
        parts.push(format!("{w}×{h}"));
    }
    if let Some(size) = source_size(img.source, bytes.as_deref()) {
        parts.push(fmt::size(size));
    }
    parts.extend(source_label(img.source, bytes.as_deref()));
    if let Some(alt) = img.alt.filter(|a| !a.is_empty()) {
        parts.push(format!("\"{}\"", sanitize::inline(alt)));
    }
    let card = truncate(&format!("[{}]", parts.join(" ")), out.width);
    let mut line = Line::new(out.mode);
    line.push(&card, Style::fg(crate::style::MAGENTA));
    out.push(line.finish());
    if bad_base64 {
        out.note("(the image's base64 data does not decode)");
    } else if bytes.is_some() && dims.is_none() {
        out.note("(not an image format the terminal renderer can read)");
    }
}

/// Columns and rows that show a `w`×`h` pixel image within `width` and `rows`.
fn cells(w: u32, h: u32, width: usize, rows: usize) -> (u32, u32) {
    let max_cols = u32::try_from(width).unwrap_or(u32::MAX).max(1);
    let max_rows = u32::try_from(rows).unwrap_or(u32::MAX).max(1);
    let mut cols = w.div_ceil(CELL_W).clamp(1, max_cols);
    let mut r = ((u64::from(h) * u64::from(cols) * u64::from(CELL_W))
        / (u64::from(w.max(1)) * u64::from(CELL_H)))
    .max(1);
    if r > u64::from(max_rows) {
        cols = ((u64::from(cols) * u64::from(max_rows)) / r).max(1) as u32;
        r = u64::from(max_rows);
    }
    (cols, r as u32)
}

fn decode_rgba(bytes: &[u8], max_w: u32, max_h: u32) -> Option<RgbaImage> {
    let img = reader(bytes)?.decode().ok()?;
    let img = if img.width() > max_w || img.height() > max_h {
        img.thumbnail(max_w, max_h)
    } else {
        img
    };
    Some(img.to_rgba8())
}

/// The escape sequence that draws the image; our own base64 of decoded bytes, so no
/// tool-supplied text is ever echoed inside it.
fn inline(
    bytes: &[u8],
    format: Option<ImageFormat>,
    (w, h): (u32, u32),
    protocol: ImageProtocol,
    width: usize,
    rows: usize,
) -> Option<String> {
    let (cols, r) = cells(w, h, width, rows);
    match protocol {
        ImageProtocol::Kitty => {
            let (header, payload) = if format == Some(ImageFormat::Png) {
                (format!("a=T,f=100,c={cols},r={r}"), STANDARD.encode(bytes))
            } else {
                let rgba = decode_rgba(bytes, cols * CELL_W, r * CELL_H)?;
                (
                    format!(
                        "a=T,f=32,s={},v={},c={cols},r={r}",
                        rgba.width(),
                        rgba.height()
                    ),
                    STANDARD.encode(rgba.as_raw()),
                )
            };
            Some(kitty_chunks(&header, &payload))
        }
        ImageProtocol::ITerm => Some(format!(
            "\x1b]1337;File=inline=1;size={};width={cols};height={r};preserveAspectRatio=1:{}\x07",
            bytes.len(),
            STANDARD.encode(bytes)
        )),
        ImageProtocol::Sixel => {
            let rgba = decode_rgba(bytes, cols * CELL_W, r * CELL_H)?;
            Some(sixel(&rgba))
        }
        ImageProtocol::None => None,
    }
}

/// Kitty takes at most 4096 bytes of payload per escape.
fn kitty_chunks(header: &str, payload: &str) -> String {
    let chunks: Vec<&[u8]> = payload.as_bytes().chunks(4096).collect();
    let mut out = String::with_capacity(payload.len() + chunks.len() * 16 + header.len());
    for (i, chunk) in chunks.iter().enumerate() {
        let more = u8::from(i + 1 < chunks.len());
        let text = std::str::from_utf8(chunk).unwrap_or("");
        if i == 0 {
            out.push_str(&format!("\x1b_G{header},m={more};{text}\x1b\\"));
        } else {
            out.push_str(&format!("\x1b_Gm={more};{text}\x1b\\"));
        }
    }
    out
}

/// Encodes `img` as sixel with the 6×6×6 colour cube; transparent pixels are left out.
fn sixel(img: &RgbaImage) -> String {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let level = |c: u8| (u16::from(c) * 5 + 127) / 255;
    let index: Vec<Option<u8>> = img
        .pixels()
        .map(|p| {
            let [r, g, b, a] = p.0;
            (a >= 128).then(|| (36 * level(r) + 6 * level(g) + level(b)) as u8)
        })
        .collect();
    let mut used = [false; 216];
    for i in index.iter().flatten() {
        used[usize::from(*i)] = true;
    }
    let mut out = format!("\x1bP0;1;0q\"1;1;{w};{h}");
    for (c, _) in used.iter().enumerate().filter(|(_, u)| **u) {
        let (r, g, b) = (c / 36, (c / 6) % 6, c % 6);
        out.push_str(&format!("#{c};2;{};{};{}", r * 20, g * 20, b * 20));
    }
    for band in (0..h).step_by(6) {
        let mut in_band = [false; 216];
        for y in band..(band + 6).min(h) {
            for i in index[y * w..(y + 1) * w].iter().flatten() {
                in_band[usize::from(*i)] = true;
            }
        }
        for (c, _) in in_band.iter().enumerate().filter(|(_, u)| **u) {
            out.push_str(&format!("#{c}"));
            let mut run: Option<(u8, usize)> = None;
            for x in 0..w {
                let mut bits = 0u8;
                for dy in 0..6 {
                    let y = band + dy;
                    if y < h && index[y * w + x] == Some(c as u8) {
                        bits |= 1 << dy;
                    }
                }
                let ch = 63 + bits;
                run = match run {
                    Some((prev, n)) if prev == ch => Some((prev, n + 1)),
                    Some((prev, n)) => {
                        push_run(&mut out, prev, n);
                        Some((ch, 1))
                    }
                    None => Some((ch, 1)),
                };
            }
            if let Some((prev, n)) = run {
                push_run(&mut out, prev, n);
            }
            out.push('$');
        }
        out.push('-');
    }
    out.push_str("\x1b\\");
    out
}

fn push_run(out: &mut String, ch: u8, n: usize) {
    if n > 3 {
        out.push_str(&format!("!{n}{}", ch as char));
    } else {
        out.extend(std::iter::repeat_n(ch as char, n));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real 2×2 PNG, made here so the test needs no fixture file.
    pub(crate) fn png_2x2() -> Vec<u8> {
        let img = RgbaImage::from_pixel(2, 2, image::Rgba([255, 0, 0, 255]));
        let mut buf = Cursor::new(Vec::new());
        img.write_to(&mut buf, ImageFormat::Png).unwrap();
        buf.into_inner()
    }

    #[test]
    fn cells_keep_the_aspect_ratio_within_bounds() {
        assert_eq!(cells(200, 200, 80, 24), (20, 10));
        assert_eq!(cells(2000, 200, 80, 24), (80, 4));
        assert_eq!(cells(100, 4000, 80, 10), (1, 10));
    }

    #[test]
    fn protocols_wrap_our_own_base64() {
        let png = png_2x2();
        let kitty = inline(
            &png,
            Some(ImageFormat::Png),
            (2, 2),
            ImageProtocol::Kitty,
            80,
            10,
        )
        .unwrap();
        assert!(kitty.starts_with("\x1b_Ga=T,f=100,c=1,r=1,m=0;") && kitty.ends_with("\x1b\\"));
        let iterm = inline(
            &png,
            Some(ImageFormat::Png),
            (2, 2),
            ImageProtocol::ITerm,
            80,
            10,
        )
        .unwrap();
        assert!(iterm.starts_with("\x1b]1337;File=inline=1;") && iterm.ends_with('\x07'));
        let sixel = inline(
            &png,
            Some(ImageFormat::Png),
            (2, 2),
            ImageProtocol::Sixel,
            80,
            10,
        )
        .unwrap();
        assert!(
            sixel.starts_with("\x1bP0;1;0q\"1;1;2;2#180;2;100;0;0#180"),
            "{sixel:?}"
        );
        assert!(sixel.ends_with("-\x1b\\"));
    }
}
