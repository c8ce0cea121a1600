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
/// characters) is escaped, so the data stays exact and the terminal safe.
pub(crate) fn json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    json_doc(&serde_json::to_string_pretty(value)?);
    Ok(())
}

/// A serialized JSON document on stdout, escaped as [`json`] does, and a newline.
pub(crate) fn json_doc(doc: &str) {
    let mut clean = sanitize_json(doc).into_owned();
    clean.push('\n');
    let _ = Stdout.write_all(clean.as_bytes());
}
