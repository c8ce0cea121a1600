//! An MCP server's form (elicitation), answered in a real terminal (tmux): server-everything's
//! `trigger-elicitation-request` drawn field by field in the schema's order, attributed to
//! its server, checked as typed, and sent as accept; and `:cancel`, and no terminal at all,
//! end it as cancel. Needs tmux and tests/mcp (server-everything): under CI a missing one
//! fails; elsewhere the test skips, saying why.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;
mod tmux_pane;

use std::process::Command;

use tmux_pane::{Pane, tmux_available};

fn call_script(data: &std::path::Path, everything: &std::path::Path) -> String {
    format!(
        "TERM=xterm-256color '{}' --data-dir '{}' call --mcp 'ev=node {} stdio' \
         ev__trigger-elicitation-request '{{}}'; echo \"__EXIT $?__\"; sleep 60",
        env!("CARGO_BIN_EXE_toolwire"),
        data.display(),
        everything.display()
    )
}

#[test]
fn an_mcp_form_is_drawn_checked_and_sent_in_the_terminal() {
    let Some(everything) = support::peers::everything() else {
        return;
    };
    if !tmux_available() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let pane = Pane::start("form", 100, 40, &call_script(data.path(), &everything));
    // The tool is not marked read-only: it asks first, with no spinner drawn over it.
    let screen = pane.expect("[y/n/d]", 30);
    let asking = screen.lines().find(|l| l.contains("[y/n/d]")).unwrap();
    assert!(
        asking.starts_with("Allow ev__trigger-elicitation-request"),
        "{screen}"
    );
    pane.type_line("y");
    let screen = pane.expect("legal name\n  >", 30);
    // Attributed and quoted: it cannot pass for toolwire's own prompt.
    assert!(
        screen.contains("MCP server \"ev\" asks, through ev__trigger-elicitation-request"),
        "{screen}"
    );
    assert!(
        screen.contains("  │ Please provide inputs for the following fields:"),
        "{screen}"
    );
    // The first field, required, with its description.
    assert!(screen.contains("String* (text)"), "{screen}");
    assert!(screen.contains("Your full, legal name"), "{screen}");
    pane.type_line("");
    assert!(
        pane.expect("this field is required", 10)
            .contains("this field is required")
    );
    pane.type_line("Ada Lovelace");
    pane.expect("Boolean (yes or no)", 10);
    pane.type_line("y");
    pane.expect("String with default", 10);
    pane.type_line("");
    pane.expect("String with email format", 10);
    pane.type_line("not an email");
    assert!(
        pane.expect("is not a valid email", 10)
            .contains("is not a valid email")
    );
    pane.type_line("ada@example.com");
    pane.expect("String with uri format", 10);
    pane.type_line("");
    pane.expect("String with date format", 10);
    pane.type_line("1815-12-10");
    pane.expect("Integer (whole number 1 to 100", 10);
    pane.type_line("500");
    assert!(pane.expect("out of range", 10).contains("out of range"));
    pane.type_line("7");
    pane.expect("Number in range", 10);
    pane.type_line("");
    let screen = pane.expect("6) Phoebe", 10);
    // Options are numbered in the schema's order; a number picks one.
    assert!(screen.contains("2) Rachel"), "{screen}");
    pane.type_line("2");
    pane.expect("Choose your favorite instruments", 10);
    pane.type_line("1, Piano");
    pane.expect("Choose your favorite hero", 10);
    pane.type_line("Wonder Woman");
    pane.expect("Choose your favorite types of fish", 10);
    pane.type_line("");
    pane.expect("Choose your favorite type of pet", 10);
    pane.type_line("");
    pane.expect("Send this answer?", 10);
    pane.type_line("y");
    let screen = pane.expect("__EXIT", 20);
    assert!(screen.contains("__EXIT 0__"), "{screen}");
    // The server echoes what it was sent.
    for sent in [
        "\"action\": \"accept\"",
        "\"name\": \"Ada Lovelace\"",
        "\"email\": \"ada@example.com\"",
        "\"integer\": 7",
        "\"untitledSingleSelectEnum\": \"Rachel\"",
        "\"Piano\"",
        "\"titledSingleSelectEnum\": \"hero-3\"",
    ] {
        assert!(screen.contains(sent), "{sent} not in {screen}");
    }
}

#[test]
fn cancel_in_the_terminal_and_no_terminal_answer_cancel() {
    let Some(everything) = support::peers::everything() else {
        return;
    };
    if !tmux_available() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let pane = Pane::start("cancel", 100, 40, &call_script(data.path(), &everything));
    pane.expect("[y/n/d]", 30);
    pane.type_line("y");
    pane.expect("legal name\n  >", 30);
    pane.type_line(":cancel");
    let screen = pane.expect("__EXIT", 20);
    assert!(screen.contains("\"action\": \"cancel\""), "{screen}");

    // No terminal: the question is cancelled, not declined, and stderr says so.
    let out = Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .arg("--data-dir")
        .arg(data.path())
        .args(["call", "--yes", "--mcp"])
        .arg(format!("ev=node {} stdio", everything.display()))
        .args(["ev__trigger-elicitation-request", "{}"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("\"action\": \"cancel\""),
        "{stdout}{stderr}"
    );
    assert!(
        stderr.contains("no terminal to answer MCP server \"ev\"'s question; it was cancelled"),
        "{stderr}"
    );
}
