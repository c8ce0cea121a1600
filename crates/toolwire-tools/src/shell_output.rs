//! `Captured`: a command's output kept within a memory bound, head and tail.

use std::collections::VecDeque;

/// Bytes kept from each end of the output. A runaway command (`yes`, a verbose build) must
/// not exhaust memory; the start shows what ran and the end shows how it finished, so the
/// middle is what goes.
pub(crate) const KEEP_EACH_END: usize = 512 * 1024;

#[derive(Debug, Default)]
pub(crate) struct Captured {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    omitted: u64,
}

impl Captured {
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        let room = KEEP_EACH_END.saturating_sub(self.head.len());
        let take = room.min(bytes.len());
        self.head.extend_from_slice(&bytes[..take]);
        bytes = &bytes[take..];
        if bytes.is_empty() {
            return;
        }
        if bytes.len() >= KEEP_EACH_END {
            self.omitted += (self.tail.len() + bytes.len() - KEEP_EACH_END) as u64;
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - KEEP_EACH_END..]);
            return;
        }
        self.tail.extend(bytes);
        let excess = self.tail.len().saturating_sub(KEEP_EACH_END);
        if excess > 0 {
            self.tail.drain(..excess);
            self.omitted += excess as u64;
        }
    }

    /// The output as text; invalid UTF-8 is replaced, and a cut middle is marked with the
    /// number of bytes left out.
    pub(crate) fn into_text(self) -> String {
        let (a, b) = self.tail.as_slices();
        if self.omitted == 0 {
            // Nothing was cut: head and tail are one stream, decoded whole, so a character
            // that straddles the seam stays one character.
            let mut all = self.head;
            all.extend_from_slice(a);
            all.extend_from_slice(b);
            return String::from_utf8_lossy(&all).into_owned();
        }
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        text.push_str(&format!(
            "\n[... {} bytes of output omitted ...]\n",
            self.omitted
        ));
        let mut tail = Vec::with_capacity(a.len() + b.len());
        tail.extend_from_slice(a);
        tail.extend_from_slice(b);
        text.push_str(&String::from_utf8_lossy(&tail));
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_across_the_head_tail_seam_survives_when_nothing_is_cut() {
        let mut c = Captured::default();
        // Fill the head to one byte short of full, then a 4-byte character across the seam.
        c.push(&vec![b'a'; KEEP_EACH_END - 1]);
        c.push("🦀 end".as_bytes());
        let text = c.into_text();
        assert!(text.ends_with("a🦀 end"), "{:?}", &text[text.len() - 12..]);
        assert!(!text.contains('\u{FFFD}'));
    }

    #[test]
    fn small_output_is_whole() {
        let mut c = Captured::default();
        c.push(b"hello ");
        c.push(b"world");
        assert_eq!(c.into_text(), "hello world");
    }

    #[test]
    fn large_output_keeps_both_ends() {
        let mut c = Captured::default();
        c.push(&vec![b'a'; KEEP_EACH_END]);
        for _ in 0..3 {
            c.push(&vec![b'b'; KEEP_EACH_END / 2]);
        }
        c.push(b"THE END");
        let text = c.into_text();
        assert!(text.starts_with(&"a".repeat(KEEP_EACH_END)));
        assert!(text.ends_with("bTHE END"));
        let omitted = 3 * (KEEP_EACH_END / 2) + 7 - KEEP_EACH_END;
        assert!(text.contains(&format!("[... {omitted} bytes of output omitted ...]")));
        // One huge chunk replaces the tail outright.
        let mut c = Captured::default();
        c.push(&vec![b'x'; 3 * KEEP_EACH_END]);
        let text = c.into_text();
        assert!(text.contains(&format!("[... {KEEP_EACH_END} bytes")));
        assert_eq!(
            text.bytes().filter(|&b| b == b'x').count(),
            2 * KEEP_EACH_END
        );
    }
}
