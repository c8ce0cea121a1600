//! The benchmark table: rows, how a row passes its target, growth across sizes, and the
//! README section generated from a run.

use serde::{Deserialize, Serialize};

/// What a figure measures: a duration (lower is better) or a rate (higher is better).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) enum Unit {
    Ms,
    PerSec,
}

impl Unit {
    /// A cost (lower is better), so that every ratio reads the same way.
    fn cost(self, value: f64) -> f64 {
        match self {
            Unit::Ms => value,
            Unit::PerSec => 1.0 / value,
        }
    }

    fn show(self, value: f64) -> String {
        match self {
            Unit::Ms if value >= 1000.0 => format!("{:.2} s", value / 1000.0),
            Unit::Ms if value >= 10.0 => format!("{value:.1} ms"),
            Unit::Ms if value >= 0.01 => format!("{value:.3} ms"),
            Unit::Ms => format!("{:.2} µs", value * 1000.0),
            Unit::PerSec => format!("{} /s", thousands(value)),
        }
    }
}

/// `1234567` as `1,234,567`.
pub(crate) fn thousands(v: f64) -> String {
    let n = v.round() as u64;
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What a row must meet. Ratios compare costs: toolwire's over the baseline's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) enum Target {
    /// toolwire's cost at most this many times the baseline's.
    RatioAtMost(f64),
    /// toolwire's figure (a duration) at most this many milliseconds.
    MsAtMost(f64),
    /// toolwire's cost at most this many times the baseline's: an issue's target that
    /// this machine's noise does not let CI hold every run. The table judges it ("met"
    /// or "not met") and the README says why it is not; `--check` does not (a row that
    /// has one comes with a judged row beside it, its guard against regressions).
    Goal(f64),
    /// Reported, not judged.
    Report,
}

/// The figure toolwire is compared with: a physical floor or a peer library.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Baseline {
    pub name: String,
    pub peer: bool,
    pub value: f64,
    #[serde(default)]
    pub note: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Row {
    /// The workload and path, the same at every size.
    pub path: String,
    /// Relative size: 1 is the size the issue names; 0.1, 10, ... scale it.
    pub size: f64,
    /// What the size means here, e.g. "20 MB" or "100,000 results".
    pub size_label: String,
    pub unit: Unit,
    pub value: f64,
    /// More of toolwire's figure: percentiles, peak memory.
    #[serde(default)]
    pub note: String,
    pub baseline: Option<Baseline>,
    pub target: Target,
    /// Why toolwire is behind the peer here, and the idea for closing the gap; shown in
    /// the README whenever the row is behind a peer.
    #[serde(default)]
    pub behind: String,
    /// The target holds at every size the workload measures, not only at ×1 (a peer's
    /// ratio that must not drift as the input grows).
    #[serde(default)]
    pub every_size: bool,
}

impl Row {
    pub(crate) fn new(
        path: &str,
        size: f64,
        size_label: impl Into<String>,
        unit: Unit,
        value: f64,
    ) -> Row {
        Row {
            path: path.to_owned(),
            size,
            size_label: size_label.into(),
            unit,
            value,
            note: String::new(),
            baseline: None,
            target: Target::Report,
            behind: String::new(),
            every_size: false,
        }
    }

    pub(crate) fn floor(self, name: &str, value: f64) -> Row {
        self.base(name, false, value)
    }

    pub(crate) fn peer(self, name: &str, value: f64) -> Row {
        self.base(name, true, value)
    }

    fn base(mut self, name: &str, peer: bool, value: f64) -> Row {
        self.baseline = Some(Baseline {
            name: name.to_owned(),
            peer,
            value,
            note: String::new(),
        });
        self
    }

    pub(crate) fn base_note(mut self, note: impl Into<String>) -> Row {
        if let Some(b) = &mut self.baseline {
            b.note = note.into();
        }
        self
    }

    pub(crate) fn note(mut self, note: impl Into<String>) -> Row {
        self.note = note.into();
        self
    }

    pub(crate) fn target(mut self, target: Target) -> Row {
        self.target = target;
        self
    }

    /// Judges the target at this size too, whatever it is.
    pub(crate) fn at_every_size(mut self) -> Row {
        self.every_size = true;
        self
    }

    /// Whether this row's target is judged (at ×1, or at every size when asked).
    pub(crate) fn judged(&self) -> bool {
        self.size == 1.0 || self.every_size
    }

    pub(crate) fn behind(mut self, why: &str) -> Row {
        self.behind = why.to_owned();
        self
    }

    /// toolwire's cost over the baseline's.
    pub(crate) fn ratio(&self) -> Option<f64> {
        let b = self.baseline.as_ref()?;
        Some(self.unit.cost(self.value) / self.unit.cost(b.value))
    }

    /// Targets are judged at the size the issue names (1), or at every size for a row
    /// that asks; other sizes show growth.
    pub(crate) fn passes(&self) -> bool {
        if !self.judged() {
            return true;
        }
        match self.target {
            Target::RatioAtMost(max) => self.ratio().is_none_or(|r| r <= max),
            Target::MsAtMost(max) => self.unit != Unit::Ms || self.value <= max,
            Target::Goal(_) | Target::Report => true,
        }
    }

    /// Whether a row with a [`Target::Goal`] misses it where it is judged.
    pub(crate) fn misses_goal(&self) -> bool {
        match self.target {
            Target::Goal(max) => self.judged() && self.ratio().is_some_and(|r| r > max),
            _ => false,
        }
    }

    pub(crate) fn behind_peer(&self) -> bool {
        self.baseline.as_ref().is_some_and(|b| b.peer) && self.ratio().is_some_and(|r| r > 1.0)
    }

    fn target_text(&self) -> String {
        match self.target {
            Target::RatioAtMost(max) => format!("≤ {max}×"),
            Target::MsAtMost(max) => format!("≤ {}", Unit::Ms.show(max)),
            Target::Goal(max) => format!("≤ {max}× (goal)"),
            Target::Report => "report".into(),
        }
    }
}

/// How cost grows from the previous size of the same path: `k` means the cost grew `k`
/// times as fast as the size (1 is linear). Returns toolwire's growth and, when the row
/// has one, its baseline's over the same step.
pub(crate) fn growth(rows: &[Row], row: &Row) -> Option<(f64, Option<f64>)> {
    let prev = rows
        .iter()
        .filter(|r| r.path == row.path && r.size < row.size)
        .max_by(|a, b| a.size.total_cmp(&b.size))?;
    let step = row.size / prev.size;
    // A rate is per item: the cost of the whole workload grows with the item count.
    let per_size = |now: f64, before: f64| {
        let cost = row.unit.cost(now) / row.unit.cost(before);
        match row.unit {
            Unit::Ms => cost / step,
            Unit::PerSec => cost,
        }
    };
    let base = match (&row.baseline, &prev.baseline) {
        (Some(b), Some(p)) => Some(per_size(b.value, p.value)),
        _ => None,
    };
    Some((per_size(row.value, prev.value), base))
}

/// Cost growing more than this many times faster than the size is flagged super-linear,
/// unless the baseline grew about as fast (then the machine, not toolwire, bends the
/// curve: caches, fresh pages). Below a millisecond, timer noise dominates.
pub(crate) const SUPER_LINEAR: f64 = 1.5;

fn super_linear(row: &Row, ours: f64, base: Option<f64>) -> bool {
    ours > SUPER_LINEAR
        && row.unit.cost(row.value) * 1e3 > 1.0
        && base.is_none_or(|b| ours > b * 1.25)
}

/// The table, as Markdown.
pub(crate) fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| path | size | toolwire | floor or peer (same run) | ratio | growth | target | |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for row in rows {
        let ours = if row.note.is_empty() {
            row.unit.show(row.value)
        } else {
            format!("{} ({})", row.unit.show(row.value), row.note)
        };
        let base = match &row.baseline {
            Some(b) => {
                let who = if b.peer { "peer" } else { "floor" };
                let note = if b.note.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", b.note)
                };
                format!("{who}: {} {}{note}", b.name, row.unit.show(b.value))
            }
            None => String::new(),
        };
        let ratio = row.ratio().map(|r| format!("{r:.2}×")).unwrap_or_default();
        let growth = match growth(rows, row) {
            Some((g, base)) => {
                let flag = if super_linear(row, g, base) {
                    " super-linear"
                } else {
                    ""
                };
                match base {
                    Some(b) => format!("{g:.2}{flag} (baseline {b:.2})"),
                    None => format!("{g:.2}{flag}"),
                }
            }
            None => String::new(),
        };
        let verdict = if !row.judged() || row.target == Target::Report {
            ""
        } else if matches!(row.target, Target::Goal(_)) {
            if row.misses_goal() { "not met" } else { "met" }
        } else if row.passes() {
            "pass"
        } else {
            "FAIL"
        };
        out.push_str(&format!(
            "| {} | {} | {ours} | {base} | {ratio} | {growth} | {} | {verdict} |\n",
            row.path.replace('|', "\\|"),
            row.size_label,
            if row.judged() {
                row.target_text()
            } else {
                String::new()
            },
        ));
    }
    out
}

/// Rows behind a peer or short of their goal, at any size, under their explanation:
/// rows sharing one (the same cause at several sizes or providers) are listed together,
/// the reason written once.
pub(crate) fn behind_peers(rows: &[Row]) -> String {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for row in rows.iter().filter(|r| r.behind_peer() || r.misses_goal()) {
        let why = if row.behind.is_empty() {
            "no explanation written yet"
        } else {
            row.behind.as_str()
        };
        let against = if row.behind_peer() {
            "the peer".to_owned()
        } else {
            format!("the floor, against {}", row.target_text())
        };
        let item = format!(
            "**{}**, {} ({:.2}× {against})",
            row.path,
            row.size_label,
            row.ratio().unwrap_or(0.0)
        );
        match groups.iter_mut().find(|(w, _)| *w == why) {
            Some((_, items)) => items.push(item),
            None => groups.push((why, vec![item])),
        }
    }
    groups
        .into_iter()
        .map(|(why, items)| format!("- {}: {why}\n", items.join("; ")))
        .collect()
}

pub(crate) const BEGIN: &str =
    "<!-- bench:begin (generated by scripts/bench; edit crates/toolwire-bench) -->";
pub(crate) const END: &str = "<!-- bench:end -->";

/// Replaces the generated part of `readme` (between [`BEGIN`] and [`END`]).
pub(crate) fn splice(readme: &str, generated: &str) -> anyhow::Result<String> {
    let start = readme
        .find(BEGIN)
        .ok_or_else(|| anyhow::anyhow!("the README has no `{BEGIN}` line"))?;
    let end = readme[start..]
        .find(END)
        .map(|i| start + i)
        .ok_or_else(|| anyhow::anyhow!("the README has no `{END}` line after the begin marker"))?;
    Ok(format!(
        "{}{BEGIN}\n{generated}{}",
        &readme[..start],
        &readme[end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_compare_costs_for_durations_and_rates() {
        let slow = Row::new("p", 1.0, "x", Unit::Ms, 30.0).floor("f", 10.0);
        assert_eq!(slow.ratio(), Some(3.0));
        // 500/s against 1,000/s is twice the cost per item.
        let rate = Row::new("p", 1.0, "x", Unit::PerSec, 500.0).peer("q", 1000.0);
        assert_eq!(rate.ratio(), Some(2.0));
        assert!(rate.behind_peer());
    }

    #[test]
    fn targets_are_judged_at_size_one_only() {
        let row = |size| {
            Row::new("p", size, "x", Unit::Ms, 30.0)
                .floor("f", 10.0)
                .target(Target::RatioAtMost(1.5))
        };
        assert!(!row(1.0).passes());
        assert!(row(10.0).passes());
        // A row judged at every size fails wherever it misses.
        assert!(!row(10.0).at_every_size().passes());
        assert!(table(&[row(0.1).at_every_size()]).contains("FAIL"));
        let fast = Row::new("p", 1.0, "x", Unit::Ms, 5.0).target(Target::MsAtMost(20.0));
        assert!(fast.passes());
    }

    /// A goal is judged in the table and listed with its reason when missed, but never
    /// fails `--check`.
    #[test]
    fn a_missed_goal_is_said_not_failed() {
        let row = |value| {
            Row::new("p", 0.1, "x", Unit::Ms, value)
                .floor("f", 10.0)
                .target(Target::Goal(1.3))
                .at_every_size()
                .behind("the reason")
        };
        let missed = row(14.0);
        assert!(missed.passes() && missed.misses_goal());
        assert!(table(std::slice::from_ref(&missed)).contains("| ≤ 1.3× (goal) | not met |"));
        assert!(behind_peers(std::slice::from_ref(&missed)).contains("1.40× the floor"));
        assert!(behind_peers(std::slice::from_ref(&missed)).contains("the reason"));
        let met = row(12.0);
        assert!(!met.misses_goal());
        assert!(table(std::slice::from_ref(&met)).contains("| met |"));
        assert!(behind_peers(&[met]).is_empty());
    }

    #[test]
    fn growth_flags_quadratic_cost() {
        let rows = vec![
            Row::new("p", 1.0, "1", Unit::Ms, 10.0),
            Row::new("p", 10.0, "10", Unit::Ms, 1000.0),
            Row::new("q", 1.0, "1", Unit::PerSec, 1000.0),
            Row::new("q", 10.0, "10", Unit::PerSec, 1000.0),
        ];
        assert_eq!(growth(&rows, &rows[1]), Some((10.0, None)));
        assert_eq!(growth(&rows, &rows[3]), Some((1.0, None)));
        assert!(table(&rows).contains("super-linear"));
        // A floor that bends as much is the machine's doing, not toolwire's.
        let both = vec![
            Row::new("p", 1.0, "1", Unit::Ms, 10.0).floor("f", 10.0),
            Row::new("p", 10.0, "10", Unit::Ms, 250.0).floor("f", 240.0),
        ];
        assert_eq!(growth(&both, &both[1]), Some((2.5, Some(2.4))));
        assert!(!table(&both).contains("super-linear"));
    }

    #[test]
    fn splice_replaces_only_the_generated_part() {
        let readme = format!("intro\n{BEGIN}\nold\n{END}\nafter\n");
        let out = splice(&readme, "new\n").unwrap_or_default();
        assert_eq!(out, format!("intro\n{BEGIN}\nnew\n{END}\nafter\n"));
        assert!(splice("no markers", "x").is_err());
    }

    #[test]
    fn rows_behind_for_one_reason_share_one_explanation() {
        let behind = |path, size, why| {
            Row::new(path, size, format!("×{size}"), Unit::Ms, 2.0)
                .peer("q", 1.0)
                .behind(why)
        };
        let rows = vec![
            behind("a", 1.0, "same cause"),
            behind("a", 10.0, "same cause"),
            behind("b", 1.0, "another"),
            Row::new("c", 1.0, "x", Unit::Ms, 1.0).peer("q", 2.0),
        ];
        let text = behind_peers(&rows);
        assert_eq!(text.lines().count(), 2, "{text}");
        assert_eq!(text.matches("same cause").count(), 1);
        assert!(text.contains("**a**, ×10 (2.00× the peer)"));
        assert!(!text.contains("**c**"));
    }
}
