//! Many parts of one result that do not fit its budget together and are too many to cut
//! each (every share would be smaller than the marker a cut writes): whole parts are kept
//! from the head and the tail, and the run between them is left out behind one marker.

use super::{CutContext, count};

/// How much a left-out run held: characters when they were cheap to count, else bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Amount {
    /// Characters, counted.
    Chars(usize),
    /// Bytes, when counting the characters would have cost a pass over a huge run.
    Bytes(usize),
}

/// A run of parts left out of a result's view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    /// Index in the result's `output` of its first part, where the marker's call reads.
    pub first: usize,
    /// Index in the result's `output` of its last part.
    pub last: usize,
    /// How many texts it held (media between them stays in the view).
    pub parts: usize,
    /// How much they held.
    pub amount: Amount,
}

/// `[… parts 12–480 (469 parts, 234,500 chars) omitted by toolwire; read them with
/// read_result {…}, one call a part through part 480 …]`: what was left out and the
/// complete call that reads its first part (`read_result` reads one part per call).
pub(crate) fn run_marker(call_id: &str, run: &Run) -> String {
    let amount = match run.amount {
        Amount::Chars(n) => format!("{} chars", count(n)),
        Amount::Bytes(n) => format!("{} bytes", count(n)),
    };
    let call = CutContext {
        call_id,
        part: run.first,
    }
    .read_call(0);
    if run.parts == 1 && run.first == run.last {
        return format!(
            "[… part {} ({amount}) omitted by toolwire; read it with {call} …]",
            run.first
        );
    }
    format!(
        "[… parts {}–{} ({} parts, {amount}) omitted by toolwire; read them with {call}, \
         one call a part through part {} …]",
        run.first,
        run.last,
        count(run.parts),
        run.last
    )
}

/// The characters [`run_marker`] takes at most for a run of at most `parts` parts whose
/// indices are at most `last` and that held at most `most` characters or bytes: a marker
/// written with every number at its largest, so the real one can only be shorter.
pub(crate) fn run_marker_bound(call_id: &str, parts: usize, last: usize, most: usize) -> usize {
    let worst = Run {
        first: last,
        last,
        parts: parts.max(2),
        amount: Amount::Bytes(most),
    };
    run_marker(call_id, &worst).chars().count()
}

/// Which of `n` parts to keep whole: the first `head` and those from `tail` on. `cost(i)`
/// is part `i`'s characters; each kept part also pays `sep` for the separator beside it;
/// all within `room`. As tables are cut (`cut_lines`): first parts until half the room
/// is used, then last parts, then more first parts, so neither end is given up for the
/// other. `cost` is asked only of the parts looked at, so a run of 50,000 costs nothing.
pub(crate) fn keep_ends(
    n: usize,
    room: usize,
    sep: usize,
    mut cost: impl FnMut(usize) -> usize,
) -> (usize, usize) {
    let (mut head, mut tail) = (0usize, n);
    let mut used = 0usize;
    let mut take = |i: usize, limit: usize, used: &mut usize| {
        let c = cost(i).saturating_add(sep);
        let fits = used.saturating_add(c) <= limit;
        if fits {
            *used += c;
        }
        fits
    };
    while head < tail && take(head, room / 2, &mut used) {
        head += 1;
    }
    while head < tail && take(tail - 1, room, &mut used) {
        tail -= 1;
    }
    while head < tail && take(head, room, &mut used) {
        head += 1;
    }
    (head, tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ends_are_kept_and_the_separators_paid() {
        // Ten parts of 8 chars, 10 each with a separator: 40 of room keeps four.
        assert_eq!(keep_ends(10, 40, 2, |_| 8), (2, 8));
        // The head stops at half the room; what the tail leaves goes to more head parts.
        let costs = [6, 6, 1, 30, 1];
        assert_eq!(keep_ends(5, 20, 0, |i| costs[i]), (3, 4));
        // A head part too large for the room leaves it all to the tail.
        let costs = [30, 1, 1, 1, 1];
        assert_eq!(keep_ends(5, 32, 0, |i| costs[i]), (0, 1));
        // Everything that fits is kept; nothing is asked of parts not looked at.
        let mut asked = 0;
        assert_eq!(
            keep_ends(50_000, 10, 2, |_| {
                asked += 1;
                1
            }),
            (1, 49_998)
        );
        assert!(asked < 10, "{asked}");
    }

    #[test]
    fn the_marker_is_within_its_bound_and_names_the_run() {
        let run = Run {
            first: 12,
            last: 480,
            parts: 469,
            amount: Amount::Chars(234_500),
        };
        let m = run_marker("c\"1", &run);
        assert_eq!(
            m,
            "[… parts 12–480 (469 parts, 234,500 chars) omitted by toolwire; read them with \
             read_result {\"callId\":\"c\\\"1\",\"part\":12,\"offset\":0}, one call a part \
             through part 480 …]"
        );
        assert!(m.chars().count() <= run_marker_bound("c\"1", 469, 480, 234_500));
        let one = Run {
            first: 7,
            last: 7,
            parts: 1,
            amount: Amount::Bytes(20_000_000),
        };
        let m = run_marker("c1", &one);
        assert!(m.starts_with("[… part 7 (20,000,000 bytes) omitted by toolwire; read it"));
        assert!(m.chars().count() <= run_marker_bound("c1", 1, 7, 20_000_000));
    }
}
