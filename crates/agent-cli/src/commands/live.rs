//! The live transcript of a running agent (`agent run`, `agent demo`) and the terminal's
//! permission prompt.
//!
//! The assistant's text streams to stdout; tool calls, decisions, results, hook notices and
//! questions go to stderr, so stdout holds only the answer. Colour only on a terminal.

use std::io::{BufRead, IsTerminal, Write};

use agent_core::events::{Event, EventPayload};
use agent_core::permissions::{GrantScope, PermissionRequest, PromptAnswer, Prompter};
use agent_sessions::agent::AgentEvent;
use serde_json::Value;

use crate::output;

/// Renders [`AgentEvent`]s for a person.
#[derive(Debug)]
pub struct Live {
    colour: bool,
    /// The assistant's text is mid-line on stdout.
    in_text: bool,
}

impl Live {
    /// A renderer; colour when stderr is a terminal.
    pub fn new() -> Self {
        Self {
            colour: std::io::stderr().is_terminal(),
            in_text: false,
        }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.colour {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn line(&mut self, text: &str) {
        if self.in_text {
            output::stdout_text("\n");
            self.in_text = false;
        }
        let _ = writeln!(std::io::stderr().lock(), "{text}");
    }

    /// Shows one event.
    pub fn show(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::TextDelta(d) => {
                output::stdout_text(&output::sanitize(d));
                let _ = std::io::stdout().lock().flush();
                self.in_text = !d.ends_with('\n');
            }
            AgentEvent::Notice(n) => {
                let t = self.paint("33", &format!("  ! {}", output::sanitize(n)));
                self.line(&t);
            }
            AgentEvent::Logged(e) => self.logged(e),
            AgentEvent::Finished(r) => {
                let t = self.paint(
                    "2",
                    &format!(
                        "── {} · {} turn(s) · {} in / {} out tokens · session {}",
                        r.stop_reason,
                        r.turns,
                        r.usage.context_tokens(),
                        r.usage.output_tokens,
                        r.session_id
                    ),
                );
                self.line(&t);
                if let Some(e) = &r.error {
                    let t = self.paint("31", &format!("  error: {}", output::sanitize(e)));
                    self.line(&t);
                }
            }
        }
    }

    fn logged(&mut self, e: &Event) {
        match &e.payload {
            EventPayload::ToolUse(u) => {
                let t = self.paint(
                    "1;36",
                    &format!("● {}({})", u.name, output::sanitize(&brief(&u.input))),
                );
                self.line(&t);
            }
            EventPayload::PermissionQuestion(q) => {
                let t = self.paint(
                    "35",
                    &format!("  ? {} asks: {}", q.tool_name, output::sanitize(&q.prompt)),
                );
                self.line(&t);
            }
            EventPayload::PermissionDecision(d) => {
                let how = match (&d.rule, &d.step) {
                    (Some(r), Some(s)) => format!("{s}: {r}"),
                    (None, Some(s)) => s.clone(),
                    _ => String::new(),
                };
                let text = if d.allowed {
                    self.paint("32", &format!("  ✓ allowed ({how})"))
                } else {
                    self.paint(
                        "31",
                        &format!(
                            "  ✗ denied ({how}): {}",
                            output::sanitize(d.reason.as_deref().unwrap_or(""))
                        ),
                    )
                };
                self.line(&text);
            }
            EventPayload::ToolResult(r) => {
                let text = match &r.output {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let text = text.replace('\t', "  ");
                let first = text.lines().next().unwrap_or("");
                let more = text.lines().count().saturating_sub(1);
                let summary = if more > 0 {
                    format!("{} (+{more} lines)", truncate(first, 100))
                } else {
                    truncate(first, 100)
                };
                let t = if r.is_error {
                    self.paint("31", &format!("  ⎿ error: {}", output::sanitize(&summary)))
                } else {
                    format!("  ⎿ {}", output::sanitize(&summary))
                };
                self.line(&t);
            }
            EventPayload::HookRun(h) => {
                let t = self.paint(
                    "2",
                    &format!(
                        "  ↳ hook {} ({}) → {} in {} ms",
                        h.event,
                        output::sanitize(h.command.as_deref().unwrap_or("in-process")),
                        h.outcome,
                        h.duration_ms
                    ),
                );
                self.line(&t);
            }
            EventPayload::Compaction(c) => {
                let t = self.paint(
                    "2",
                    &format!(
                        "  ⋯ compacted events {}..{} into a summary",
                        c.from_seq, c.to_seq
                    ),
                );
                self.line(&t);
            }
            EventPayload::SubagentStart(s) => {
                let t = self.paint("36", &format!("  ⤷ subagent {} started", s.agent_id));
                self.line(&t);
            }
            EventPayload::Error(err) => {
                let t = self.paint(
                    "31",
                    &format!("  error: {}", output::sanitize(&err.message)),
                );
                self.line(&t);
            }
            _ => {}
        }
    }

    /// Ends the transcript (a newline after streamed text).
    pub fn finish(&mut self) {
        if self.in_text {
            output::stdout_text("\n");
            self.in_text = false;
        }
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// A tool input in a few words: its path, pattern or command, else the JSON.
fn brief(input: &Value) -> String {
    for key in [
        "file_path",
        "command",
        "pattern",
        "url",
        "path",
        "description",
    ] {
        if let Some(v) = input.get(key).and_then(Value::as_str) {
            return truncate(v, 80);
        }
    }
    truncate(&input.to_string(), 80)
}

/// Asks on the terminal: allow once, always for this session, or deny.
#[derive(Debug, Default)]
pub struct TerminalPrompter;

#[async_trait::async_trait]
impl Prompter for TerminalPrompter {
    async fn prompt(&self, request: &PermissionRequest) -> PromptAnswer {
        let request = request.clone();
        let asked = tokio::task::spawn_blocking(move || ask(&request)).await;
        asked.unwrap_or(PromptAnswer::Deny {
            message: "the permission prompt failed".into(),
            interrupt: false,
        })
    }
}

fn ask(request: &PermissionRequest) -> PromptAnswer {
    let scope = request.suggestions.first().cloned();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "\n  Allow {}({})?\n  {}",
        request.tool_name,
        output::sanitize(&brief(&request.input)),
        output::sanitize(&request.reason)
    );
    let always = match &scope {
        Some(s) => format!(" · [a]lways this session ({})", output::sanitize(s)),
        None => String::new(),
    };
    let _ = write!(err, "  [y]es once{always} · [n]o: ");
    let _ = err.flush();
    drop(err);
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return PromptAnswer::Deny {
            message: "no answer could be read".into(),
            interrupt: false,
        };
    }
    match answer.trim() {
        "y" | "Y" | "yes" => PromptAnswer::AllowOnce {
            updated_input: None,
        },
        "a" | "A" | "always" if scope.is_some() => PromptAnswer::AllowForSession {
            scope: match scope.unwrap_or_default() {
                s if s.contains('(') => GrantScope::Rule(s),
                s => GrantScope::Tool(s),
            },
            updated_input: None,
        },
        _ => PromptAnswer::Deny {
            message: "the user said no".into(),
            interrupt: false,
        },
    }
}
