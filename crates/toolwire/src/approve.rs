//! The terminal's one approval UI, for `call` and `chat` alike: asks on stderr, reads the
//! answer from stdin (a line each), and says why when nobody can answer.

use std::io::IsTerminal;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value as Json;
use tokio::sync::{Mutex, mpsc};
use toolwire_agent::{ApprovalRequest, Approver};
use toolwire_core::Resolution;
use toolwire_term::LiveRenderer;

use crate::out;

/// Stdin as lines, read on a thread of its own so a turn never blocks on it. Messages
/// and approval answers share it.
pub(crate) type Lines = Arc<Mutex<mpsc::UnboundedReceiver<String>>>;

pub(crate) fn stdin_lines() -> Lines {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Arc::new(Mutex::new(rx))
}

/// Asks on the terminal: y(es), n(o) \[reason\], or d(etails) to see the whole input.
pub(crate) struct TermApprover {
    pub lines: Lines,
    /// Approve every call without asking (`--yes`).
    pub yes: bool,
    /// Ask only when stdin is a terminal (`call`, where stdin carries nothing else);
    /// `chat` reads its answers from stdin whatever it is.
    pub terminal_only: bool,
    /// Its spinners stop drawing while a question is asked, or they would draw over it.
    pub live: Option<Arc<LiveRenderer>>,
}

/// Who asks a question: an MCP server (through one of its tools) or a built-in tool.
pub(crate) struct Asker<'a> {
    tool: &'a str,
    server: Option<&'a str>,
}

impl<'a> Asker<'a> {
    fn of(tool: &'a str) -> Self {
        Asker {
            tool,
            server: tool
                .split_once(toolwire_mcp::SEPARATOR)
                .map(|(server, _)| server),
        }
    }

    fn is_mcp(&self) -> bool {
        self.server.is_some()
    }

    fn name(&self) -> String {
        match self.server {
            Some(server) => format!("MCP server {server:?}"),
            None => format!("tool {}", self.tool),
        }
    }

    fn heading(&self) -> String {
        match self.server {
            Some(_) => format!(
                "? {} asks, through {} (its words, not toolwire's):",
                self.name(),
                self.tool
            ),
            None => format!("? {} asks:", self.tool),
        }
    }
}

/// `:decline` and `:cancel`, typed at any prompt of a question.
fn command(line: &str) -> Option<Resolution> {
    match line.trim() {
        ":decline" => Some(declined()),
        ":cancel" => Some(cancelled()),
        _ => None,
    }
}

fn declined() -> Resolution {
    Resolution::Deny {
        reason: Some("declined in the terminal".to_owned()),
    }
}

fn cancelled() -> Resolution {
    Resolution::Cancel {
        reason: Some("cancelled in the terminal".to_owned()),
    }
}

fn nobody_answered(asker: &Asker<'_>) -> Resolution {
    out::eprintln("");
    Resolution::Cancel {
        reason: Some(format!(
            "nobody answered {}'s question (stdin is closed)",
            asker.name()
        )),
    }
}

impl TermApprover {
    async fn ask(&self, prompt: &str) -> Option<String> {
        out::prompt(prompt);
        self.lines.lock().await.recv().await
    }

    fn can_ask(&self) -> bool {
        !self.terminal_only || std::io::stdin().is_terminal()
    }

    async fn answer_question(&self, request: &ApprovalRequest) -> Resolution {
        let asker = Asker::of(&request.call.name);
        if !self.can_ask() {
            // Nobody can answer: the question is dismissed (cancel), not refused
            // (decline), and the person reading the output is told.
            let why = format!("no terminal to answer {}'s question", asker.name());
            out::eprintln(&format!("{why}; it was cancelled"));
            let question = request.suspension.prompt.trim();
            return Resolution::Cancel {
                reason: Some(format!("{why}: {question}")),
            };
        }
        self.question(request, &asker).await
    }

    /// Asks a question: a form field by field when it has a schema, else one line.
    async fn question(&self, request: &ApprovalRequest, asker: &Asker<'_>) -> Resolution {
        let question = &request.suspension.prompt;
        // Attributed and quoted, so a server's text cannot pass for toolwire's own prompt.
        let mut head = vec![asker.heading()];
        head.extend(question.lines().map(|l| format!("  │ {l}")));
        let fields = request
            .suspension
            .input_schema
            .as_ref()
            .map(crate::form::fields)
            .unwrap_or_default();
        let url_mode = asker.is_mcp() && fields.is_empty() && question.contains("asks you to open");
        if fields.is_empty() {
            let hint = if url_mode {
                "  Open the URL, then press Enter when done (:decline or :cancel to refuse)."
            } else if asker.is_mcp() {
                "  Type your answer (:decline or :cancel to refuse)."
            } else {
                "  Type your answer."
            };
            head.push(hint.to_owned());
            out::eprintln(&head.join("\n"));
            return match self.ask("? ").await {
                None => nobody_answered(asker),
                Some(line) => match command(&line) {
                    Some(end) => end,
                    None if url_mode => Resolution::Answer { value: Json::Null },
                    None => Resolution::Answer {
                        value: Json::String(line.trim_end().to_owned()),
                    },
                },
            };
        }
        head.push(
            "  Fill in the form (* required; Enter keeps the default or skips; \
             :decline or :cancel to refuse)."
                .to_owned(),
        );
        out::eprintln(&head.join("\n"));
        let mut answers = Vec::new();
        for field in &fields {
            out::eprintln(&field.describe().join("\n"));
            loop {
                let Some(line) = self.ask("  > ").await else {
                    return nobody_answered(asker);
                };
                if let Some(end) = command(&line) {
                    return end;
                }
                match field.read(&line) {
                    Ok(Some(value)) => {
                        answers.push((field.name.clone(), value));
                        break;
                    }
                    Ok(None) => break,
                    Err(why) => out::eprintln(&format!("  ✗ {why}")),
                }
            }
        }
        let summary: Vec<String> = answers
            .iter()
            .map(|(name, value)| format!("  {name} = {value}"))
            .collect();
        out::eprintln(&summary.join("\n"));
        let value = crate::form::content(answers);
        loop {
            let Some(line) = self
                .ask("Send this answer? [y]es / [d]ecline / [c]ancel ")
                .await
            else {
                return nobody_answered(asker);
            };
            match line.trim() {
                "" | "y" | "Y" | "yes" => return Resolution::Answer { value },
                "d" | "decline" | ":decline" => return declined(),
                "c" | "cancel" | ":cancel" => return cancelled(),
                _ => out::eprintln("y sends it, d declines, c cancels"),
            }
        }
    }

    fn pause_drawing(&self, paused: bool) {
        if let Some(live) = &self.live {
            if paused {
                live.pause();
            } else {
                live.resume();
            }
        }
    }

    async fn approve(&self, request: &ApprovalRequest) -> Resolution {
        if self.yes {
            return Resolution::Approve;
        }
        if !self.can_ask() {
            return Resolution::Deny {
                reason: Some("no terminal to ask for approval; pass --yes to approve".into()),
            };
        }
        let question = format!(
            "Allow {}({})? [y/n/d] ",
            request.call.name,
            summarize(&request.call.input)
        );
        loop {
            let Some(answer) = self.ask(&question).await else {
                out::eprintln("");
                return Resolution::Deny {
                    reason: Some("nobody answered (stdin is closed); pass --yes to approve".into()),
                };
            };
            let answer = answer.trim();
            let (word, rest) = answer.split_once(' ').unwrap_or((answer, ""));
            match word {
                "y" | "Y" | "yes" => return Resolution::Approve,
                "n" | "N" | "no" => {
                    let reason = rest.trim();
                    return Resolution::Deny {
                        reason: (!reason.is_empty()).then(|| reason.to_owned()),
                    };
                }
                "d" | "details" => {
                    let pretty = serde_json::to_string_pretty(&request.call.input)
                        .unwrap_or_else(|_| request.call.input.to_string());
                    out::eprintln(&format!(
                        "{} {}\n{pretty}",
                        request.call.name, request.call.id
                    ));
                }
                _ => out::eprintln("y to run it, n [reason] to refuse, d for details"),
            }
        }
    }
}

impl Approver for TermApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Resolution> {
        Box::pin(async move {
            // Spinners stop while the person reads and types, or they draw over it.
            self.pause_drawing(true);
            let resolution = if request.is_question() {
                self.answer_question(request).await
            } else {
                self.approve(request).await
            };
            self.pause_drawing(false);
            resolution
        })
    }
}

/// The input in one short line, for headers and prompts.
pub(crate) fn summarize(input: &Json) -> String {
    let text = input.to_string();
    match text.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}
