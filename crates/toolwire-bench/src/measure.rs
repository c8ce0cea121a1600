//! Timing on a shared, noisy machine: best of several rounds, floor and subject
//! interleaved so drift hits both alike; percentiles; whole-process time and peak memory.

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Best of `rounds` runs of `f`, in milliseconds.
pub(crate) fn best_of(rounds: usize, mut f: impl FnMut()) -> f64 {
    (0..rounds.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            ms(t.elapsed())
        })
        .fold(f64::INFINITY, f64::min)
}

/// Best of `rounds` for a floor and a subject run alternately: `(floor, subject)` ms.
pub(crate) fn interleaved(
    rounds: usize,
    mut floor: impl FnMut(),
    mut subject: impl FnMut(),
) -> (f64, f64) {
    let (mut f, mut s) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..rounds.max(1) {
        f = f.min(best_of(1, &mut floor));
        s = s.min(best_of(1, &mut subject));
    }
    (f, s)
}

/// The `p` quantile (0..=1) of `samples`, which it sorts.
pub(crate) fn percentile(samples: &mut [f64], p: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort_by(f64::total_cmp);
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

/// One process run to its end: wall time and peak resident memory.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProcessRun {
    pub ms: f64,
    pub peak_kb: u64,
}

/// Runs `cmd` through this binary's `rss` shim, whose only child it is, so the shim's
/// `RUSAGE_CHILDREN` peak is that process's own. Fails if the command fails.
pub(crate) fn process(cmd: &[&str]) -> anyhow::Result<ProcessRun> {
    let me = std::env::current_exe().context("locating toolwire-bench")?;
    let out = Command::new(me)
        .arg("rss")
        .arg("--")
        .args(cmd)
        .output()
        .with_context(|| format!("running {cmd:?}"))?;
    if !out.status.success() {
        bail!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let line: serde_json::Value = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("the rss shim's answer for {cmd:?}"))?;
    Ok(ProcessRun {
        ms: line["ms"].as_f64().unwrap_or(f64::NAN),
        peak_kb: line["peak_kb"].as_u64().unwrap_or(0),
    })
}

/// Best of `rounds` whole-process runs (least time, and the peak of that run).
pub(crate) fn best_process(rounds: usize, cmd: &[&str]) -> anyhow::Result<ProcessRun> {
    let mut best: Option<ProcessRun> = None;
    for _ in 0..rounds.max(1) {
        let run = process(cmd)?;
        if best.is_none_or(|b| run.ms < b.ms) {
            best = Some(run);
        }
    }
    best.context("no run")
}

/// The shim: runs the command with its output discarded and prints `{ms, peak_kb}`.
pub(crate) fn rss_shim(cmd: &[String]) -> anyhow::Result<()> {
    let (program, args) = cmd.split_first().context("rss: no command")?;
    let t = Instant::now();
    let out = Command::new(program)
        .args(args)
        .stdout(std::process::Stdio::null())
        .output()
        .with_context(|| format!("running {program}"))?;
    let elapsed = ms(t.elapsed());
    if !out.status.success() {
        bail!(
            "{program} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)?;
    // Linux reports ru_maxrss in kilobytes.
    let peak_kb = u64::try_from(usage.max_rss()).unwrap_or(0);
    println!("{}", serde_json::json!({"ms": elapsed, "peak_kb": peak_kb}));
    Ok(())
}

pub(crate) fn mib(kb: u64) -> String {
    format!("{:.0} MiB", kb as f64 / 1024.0)
}
