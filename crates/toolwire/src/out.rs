//! The one way the binary prints. Text that came from outside (model replies, stored
//! messages, tool names, errors quoting input) is sanitized here, once, so no escape
//! sequence, bidi override or invisible character reaches the terminal; output the
//! renderer made is already sanitized and passes as is. A closed pipe (`toolwire sessions
//! | head -1`) ends printing quietly, as `cat` does, and the command still finishes its
//! own work, so nothing is left half-stored.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use toolwire_term::{sanitize_json, sanitize_text};

/// Set once stdout's reader has gone; later writes are dropped.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes to stdout, dropping everything once the reader is gone.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if STDOUT_CLOSED.load(Ordering::Relaxed) {
            return Ok(buf.len());
        }
        match io::stdout().write(buf) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                STDOUT_CLOSED.store(true, Ordering::Relaxed);
                Ok(buf.len())
            }
            other => other,
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if STDOUT_CLOSED.load(Ordering::Relaxed) {
            return Ok(());
        }
        match io::stdout().flush() {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                STDOUT_CLOSED.store(true, Ordering::Relaxed);
                Ok(())
            }
            other => other,
        }
    }
}

/// Untrusted text on stdout, sanitized, as it is (no newline added).
pub(crate) fn text(s: &str) {
    let _ = Stdout.write_all(sanitize_text(s).as_bytes());
    let _ = Stdout.flush();
}

/// Untrusted text on stdout, sanitized, and a newline.
pub(crate) fn line(s: &str) {
    let mut clean = sanitize_text(s).into_owned();
    clean.push('\n');
    let _ = Stdout.write_all(clean.as_bytes());
}

/// What the renderer produced (already sanitized; it may hold our colours and images).
pub(crate) fn rendered(s: &str) {
    let _ = Stdout.write_all(s.as_bytes());
}

/// A line on stderr, sanitized. A closed stderr is ignored: nobody is left to tell.
pub(crate) fn eprintln(s: &str) {
    let mut clean = sanitize_text(s).into_owned();
    clean.push('\n');
    let _ = io::stderr().write_all(clean.as_bytes());
}

/// A question on stderr, sanitized, without a newline, flushed so it shows before the
/// answer is read.
pub(crate) fn prompt(s: &str) {
    let mut err = io::stderr();
    let _ = err.write_all(sanitize_text(s).as_bytes());
    let _ = err.flush();
}

/// JSON on stdout, pretty. What serde leaves raw (C1 controls, bidi overrides, invisible
/// characters) is escaped, so the data stays exact and the terminal safe. The document is
/// streamed through the escaping, never held whole: a 200 MB result is printed without a
/// second and third copy of itself.
pub(crate) fn json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    stream_json(value, true)
}

/// Compact JSON on stdout, escaped and streamed as [`json`] does.
pub(crate) fn json_compact(value: &impl serde::Serialize) -> anyhow::Result<()> {
    stream_json(value, false)
}

/// JSON already written (a request body, byte for byte as sent) on stdout, escaped as
/// [`json`] does: the same bytes unless they hold what a terminal would act on.
pub(crate) fn json_bytes(bytes: &[u8]) -> anyhow::Result<()> {
    let mut out = JsonEscaper::new(io::BufWriter::new(Stdout));
    out.write_all(bytes)?;
    out.finish()?;
    Ok(())
}

fn stream_json(value: &impl serde::Serialize, pretty: bool) -> anyhow::Result<()> {
    let mut out = JsonEscaper::new(io::BufWriter::new(Stdout));
    if pretty {
        serde_json::to_writer_pretty(&mut out, value)?;
    } else {
        serde_json::to_writer(&mut out, value)?;
    }
    out.finish()?;
    Ok(())
}

/// A rendered item on stdout, written line by line as the renderer made it.
pub(crate) fn render<R: toolwire_term::Render + ?Sized>(
    item: &R,
    opts: &toolwire_term::TermOptions,
) {
    let mut out = io::BufWriter::new(Stdout);
    let _ = toolwire_term::render_to(item, opts, &mut out).and_then(|()| out.flush());
}

/// Escapes JSON text as it passes (see [`sanitize_json`]). A character split between two
/// writes is held back until its last byte arrives, so the escaping never sees half of it.
struct JsonEscaper<W: Write> {
    inner: W,
    /// The start of a UTF-8 sequence whose end has not been written yet (at most 3 bytes).
    held: Vec<u8>,
}

impl<W: Write> JsonEscaper<W> {
    fn new(inner: W) -> Self {
        Self {
            inner,
            held: Vec::new(),
        }
    }

    fn write_text(&mut self, text: &str) -> io::Result<()> {
        self.inner.write_all(sanitize_json(text).as_bytes())
    }

    /// Ends the document with a newline and flushes it.
    fn finish(mut self) -> io::Result<()> {
        let held = std::mem::take(&mut self.held);
        self.write_text(&String::from_utf8_lossy(&held))?;
        self.inner.write_all(b"\n")?;
        self.inner.flush()
    }
}

impl<W: Write> Write for JsonEscaper<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let joined;
        let bytes = if self.held.is_empty() {
            buf
        } else {
            joined = [std::mem::take(&mut self.held).as_slice(), buf].concat();
            joined.as_slice()
        };
        let mut rest = bytes;
        while !rest.is_empty() {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.write_text(text)?;
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // Checked by from_utf8 just above.
                    self.write_text(std::str::from_utf8(valid).unwrap_or_default())?;
                    match e.error_len() {
                        // Cut short by the end of this write: wait for the rest.
                        None => {
                            self.held = after.to_vec();
                            break;
                        }
                        Some(n) => {
                            self.write_text("\u{fffd}")?;
                            rest = &after[n..];
                        }
                    }
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(writes: &[&[u8]]) -> String {
        let mut out = Vec::new();
        let mut escaper = JsonEscaper::new(&mut out);
        for w in writes {
            escaper.write_all(w).unwrap();
        }
        escaper.finish().unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_character_split_between_writes_is_escaped_whole() {
        let doc = "\"a\u{202e}b\u{85}é\"".as_bytes();
        let whole = escaped(&[doc]);
        assert_eq!(whole, "\"a\\u202eb\\u0085é\"\n");
        for cut in 1..doc.len() {
            assert_eq!(escaped(&[&doc[..cut], &doc[cut..]]), whole, "cut at {cut}");
        }
        // Byte by byte too.
        let bytes: Vec<&[u8]> = doc.chunks(1).collect();
        assert_eq!(escaped(&bytes), whole);
    }

    #[test]
    fn streamed_json_equals_the_whole_document_escaped() {
        let value = serde_json::json!({"t": "x\u{9b}[31m\u{200b}y", "n": [1, 2.5, null]});
        let mut out = Vec::new();
        let mut escaper = JsonEscaper::new(&mut out);
        serde_json::to_writer_pretty(&mut escaper, &value).unwrap();
        escaper.finish().unwrap();
        let expected = format!(
            "{}\n",
            sanitize_json(&serde_json::to_string_pretty(&value).unwrap())
        );
        assert_eq!(String::from_utf8(out).unwrap(), expected);
        let back: serde_json::Value =
            serde_json::from_slice(&expected.as_bytes()[..expected.len() - 1]).unwrap();
        assert_eq!(back, value);
    }
}
