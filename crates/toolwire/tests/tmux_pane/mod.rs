//! A real terminal for the binary's tests: a tmux server of the test's own (`-L`, so a
//! person's sessions are never touched), one pane of a fixed size, its screen read back
//! and keys typed into it. Needs tmux: with CI set a missing tmux fails the test; without
//! CI it skips, saying why.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;
use std::time::{Duration, Instant};

pub(crate) fn tmux_available() -> bool {
    let found = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var_os("CI").is_some() {
            panic!("tmux is not installed, and CI is set: install tmux (apt-get install tmux)");
        }
        eprintln!("skipping: tmux is not installed (set CI to make this a failure)");
    }
    found
}

/// One pane running a shell script, killed with its server when dropped.
pub(crate) struct Pane {
    socket: String,
}

impl Pane {
    fn tmux(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"]);
        c
    }

    /// Starts `script` (run by `sh -c`) in a `width`×`height` pane.
    pub(crate) fn start(name: &str, width: usize, height: usize, script: &str) -> Pane {
        let pane = Pane {
            socket: format!("toolwire-test-{}-{name}", std::process::id()),
        };
        let status = pane
            .tmux()
            .args(["new-session", "-d", "-s", "t", "-x"])
            .arg(width.to_string())
            .arg("-y")
            .arg(height.to_string())
            .args(["sh", "-c", script])
            .status()
            .unwrap();
        assert!(status.success(), "tmux new-session failed");
        pane
    }

    /// The visible screen as plain text, or with the escape sequences tmux kept.
    pub(crate) fn screen(&self, styled: bool) -> String {
        self.capture(styled, false)
    }

    /// The screen and what scrolled off it.
    pub(crate) fn history(&self) -> String {
        self.capture(false, true)
    }

    fn capture(&self, styled: bool, history: bool) -> String {
        let mut cmd = self.tmux();
        cmd.args(["capture-pane", "-p", "-t", "t"]);
        if history {
            cmd.args(["-S", "-500"]);
        }
        if styled {
            cmd.arg("-e");
        }
        String::from_utf8_lossy(&cmd.output().unwrap().stdout).into_owned()
    }

    /// Waits (up to `secs`) until the screen or its history shows `text`, and returns
    /// the whole of it.
    pub(crate) fn wait_for(&self, text: &str, secs: u64) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let screen = self.history();
            if screen.contains(text) || Instant::now() > deadline {
                return screen;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Like [`Pane::wait_for`], but a screen that never shows `text` fails the test.
    pub(crate) fn expect(&self, text: &str, secs: u64) -> String {
        let screen = self.wait_for(text, secs);
        assert!(screen.contains(text), "{text:?} never appeared:\n{screen}");
        screen
    }

    /// Types `line` and Enter.
    pub(crate) fn type_line(&self, line: &str) {
        let status = self
            .tmux()
            .args(["send-keys", "-t", "t", "-l", line])
            .status()
            .unwrap();
        assert!(status.success());
        let status = self
            .tmux()
            .args(["send-keys", "-t", "t", "Enter"])
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = self.tmux().arg("kill-server").status();
    }
}
