//! The terminal's one approval UI, for `call` and `chat` alike: asks on stderr, reads the
//! answer from stdin (a line each), and says why when nobody can answer.

use std::io::IsTerminal;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value as Json;
use tokio::sync::{Mutex, mpsc};
use toolwire_agent::{ApprovalRequest, Approver};
use toolwire_core::Resolution;

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

/// Asks on the terminal: y(es), n(o) [reason], or d(etails) to see the whole input.
pub(crate) struct TermApprover {
    pub lines: Lines,
    /// Approve every call without asking (`--yes`).
    pub yes: bool,
    /// Ask only when stdin is a terminal (`call`, where stdin carries nothing else);
    /// `chat` reads its answers from stdin whatever it is.
    pub terminal_only: bool,
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
        let question = &request.suspension.prompt;
        if !self.can_ask() {
            return Resolution::Deny {
                reason: Some(format!(
                    "there is no terminal to answer the question: {question}"
                )),
            };
        }
        match self.ask(&format!("{question}\n? ")).await {
            Some(answer) => Resolution::Answer {
                value: Json::String(answer.trim_end().to_owned()),
            },
            None => Resolution::Deny {
                reason: Some(format!("nobody answered the question: {question}")),
            },
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
            if request.is_question() {
                self.answer_question(request).await
            } else {
                self.approve(request).await
            }
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
