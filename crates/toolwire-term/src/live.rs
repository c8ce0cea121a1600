//! Live rendering for `chat`, `call` and `show`: a spinner per running call, a progress
//! bar once a call reports progress, and each result printed as it lands.
//!
//! The runtime drives it: `call_started` → `progress`* → `call_finished`.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use toolwire_core::ToolResult;

use crate::options::TermOptions;
use crate::out::truncate;
use crate::result::{HeaderFacts, body, header_line};
use crate::sanitize;

struct Running {
    bar: ProgressBar,
    tool: String,
    args: String,
    started: Instant,
}

/// Draws running calls and prints finished ones. Safe to share between tasks.
pub struct LiveRenderer {
    opts: TermOptions,
    multi: MultiProgress,
    calls: Mutex<HashMap<String, Running>>,
    out: Mutex<Box<dyn Write + Send>>,
    /// Whether spinners are drawn at all (stderr), so that a resume after a pause
    /// does not start drawing for a renderer that never did.
    draws: bool,
}

impl std::fmt::Debug for LiveRenderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveRenderer")
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner:.cyan} {prefix:.bold} {wide_msg} {elapsed:.dim}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template(
        "{spinner:.cyan} {prefix:.bold} [{bar:24.cyan/blue}] {pos}/{len} {wide_msg} {elapsed:.dim}",
    )
    .map(|s| s.progress_chars("━╸─"))
    .unwrap_or_else(|_| ProgressStyle::default_bar())
}

impl LiveRenderer {
    /// Spinners on stderr (drawn only when it is a terminal), results on stdout.
    pub fn stdout(opts: TermOptions) -> Self {
        LiveRenderer::with_results_to(opts, io::stdout())
    }

    /// Spinners on stderr (drawn only when it is a terminal), results to `out`: for a
    /// host that routes its stdout through its own writer.
    pub fn with_results_to(opts: TermOptions, out: impl Write + Send + 'static) -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        LiveRenderer::with_parts(opts, multi, Box::new(out), true)
    }

    /// Results written to `out` and no spinners drawn: for logs and tests.
    pub fn to_writer(opts: TermOptions, out: impl Write + Send + 'static) -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::hidden());
        LiveRenderer::with_parts(opts, multi, Box::new(out), false)
    }

    fn with_parts(
        opts: TermOptions,
        multi: MultiProgress,
        out: Box<dyn Write + Send>,
        draws: bool,
    ) -> Self {
        LiveRenderer {
            opts,
            multi,
            calls: Mutex::new(HashMap::new()),
            out: Mutex::new(out),
            draws,
        }
    }

    fn prefix(&self, tool: &str, args: &str) -> String {
        let mut s = sanitize::inline(tool).into_owned();
        if !args.is_empty() {
            s.push_str(&format!("({})", sanitize::inline(args)));
        }
        truncate(&s, self.opts.layout_width() / 2)
    }

    /// A call began: shows a spinner with the tool and a one-line summary of its arguments.
    pub fn call_started(&self, call_id: &str, tool: &str, args_summary: &str) {
        let bar = self.multi.add(ProgressBar::new_spinner());
        bar.set_style(spinner_style());
        bar.set_prefix(self.prefix(tool, args_summary));
        bar.enable_steady_tick(Duration::from_millis(100));
        let running = Running {
            bar,
            tool: tool.to_owned(),
            args: args_summary.to_owned(),
            started: Instant::now(),
        };
        if let Ok(mut calls) = self.calls.lock() {
            calls.insert(call_id.to_owned(), running);
        }
    }

    /// A progress event: `done` of `total` (a bar), or of an unknown total (a count).
    pub fn progress(&self, call_id: &str, done: u64, total: Option<u64>, message: Option<&str>) {
        let Ok(calls) = self.calls.lock() else {
            return;
        };
        let Some(run) = calls.get(call_id) else {
            return;
        };
        if let Some(total) = total
            && run.bar.length() != Some(total)
        {
            run.bar.set_length(total);
            run.bar.set_style(bar_style());
        }
        run.bar.set_position(done);
        if let Some(m) = message {
            run.bar.set_message(sanitize::inline(m).into_owned());
        }
    }

    /// A call ended: its spinner goes and its header line and result are printed.
    pub fn call_finished(&self, result: &ToolResult) -> io::Result<()> {
        let running = self
            .calls
            .lock()
            .ok()
            .and_then(|mut c| c.remove(&result.call_id));
        let (args, elapsed) = match &running {
            Some(r) => {
                r.bar.finish_and_clear();
                self.multi.remove(&r.bar);
                (Some(r.args.as_str()), Some(r.started.elapsed()))
            }
            None => (None, None),
        };
        let tool = running
            .as_ref()
            .map_or(result.tool_name.as_str(), |r| r.tool.as_str());
        let duration_ms = result
            .metadata
            .duration_ms
            .or_else(|| elapsed.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)));
        let facts = HeaderFacts {
            tool,
            args,
            status: result.status,
            code: result.error.as_ref().and_then(|e| e.code.as_deref()),
            reason: result.suspension.as_ref().map(|s| s.reason),
            duration_ms,
        };
        let mut lines = vec![header_line(&self.opts, &facts)];
        body(result, &self.opts, &mut lines);
        let mut text = lines.join("\n");
        text.push('\n');
        self.multi.suspend(|| {
            let mut out = self
                .out
                .lock()
                .map_err(|_| io::Error::other("live output lock poisoned"))?;
            out.write_all(text.as_bytes())?;
            out.flush()
        })
    }

    /// Stops drawing spinners (clearing them) until [`LiveRenderer::resume`]: while a
    /// person is asked something on the same terminal, a spinner would draw over it.
    pub fn pause(&self) {
        let _ = self.multi.clear();
        self.multi.set_draw_target(ProgressDrawTarget::hidden());
    }

    /// Draws the spinners again after [`LiveRenderer::pause`].
    pub fn resume(&self) {
        if self.draws {
            self.multi.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    /// Calls still running.
    pub fn running(&self) -> usize {
        self.calls.lock().map_or(0, |c| c.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use toolwire_core::{CallRef, Value};

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn results_print_as_they_land_with_their_arguments() {
        let buf = Shared::default();
        let live = LiveRenderer::to_writer(TermOptions::plain(60), buf.clone());
        live.call_started("c1", "read_file", "path: \"a.txt\"");
        live.call_started("c2", "grep", "\x1b[2Jx");
        live.progress("c1", 3, Some(10), Some("reading"));
        live.progress("nope", 1, None, None);
        assert_eq!(live.running(), 2);
        let mut r = ToolResult::success(CallRef::new("c1", "read_file"), Value::text("hello"));
        r.metadata.duration_ms = Some(12);
        live.call_finished(&r).unwrap();
        assert_eq!(live.running(), 1);
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "✓ read_file(path: \"a.txt\") · success · 12 ms\nhello\n"
        );
    }
}
