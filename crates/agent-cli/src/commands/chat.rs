//! `agent chat` (and `agent` alone on a terminal): the interactive session.
//!
//! The session is opened as `agent run` opens one ([`super::open::open`]: the folder's
//! repository in its shadow workspace, refreshed when reused; the provider, mode and session
//! options; MCP servers), then a line editor (rustyline: history in `$AGENT_HOME/history`)
//! reads prompts and slash commands ([`super::slash`]) until `/exit`, Ctrl-D, or Ctrl-C twice
//! at an empty prompt. Each prompt streams through the same live transcript as `agent run`;
//! Ctrl-C while it runs cancels the model and the running tool and returns to the prompt.
//! `/commit` is the one review-then-commit operation of the workspace library. Off a terminal
//! the editor reads plain lines from standard input, so the session can be scripted.

use std::io::IsTerminal as _;
use std::path::PathBuf;

use agent_core::events::{Event, EventPayload};
use agent_core::permissions::PermissionMode;
use agent_loop::RunStopReason;
use agent_providers::Usage;
use agent_workspace::{CommitOptions, CommitReport, WorkspaceError};
use anyhow::{Context as _, Result};
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;

use super::drive::{drive, join_background};
use super::open::{Opened, open};
use super::slash::{self, Slash};
use crate::cli::run::{ChatArgs, SessionOptions};
use crate::colour::Palette;
use crate::exit::Exit;
use crate::output;

/// Whether `agent` alone should open a session: both standard input and output are terminals.
pub fn on_a_terminal() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// What the editor gave.
enum Line {
    Text(String),
    /// Ctrl-C at the prompt.
    Interrupted,
    /// Ctrl-D, or the end of standard input.
    End,
}

/// The session's state beside the agent.
struct Chat {
    /// The options it was opened with, to open another (`/clear`, `/resume`).
    options: SessionOptions,
    /// The open session (`None` only while `/add-dir` closes and reopens it).
    opened: Option<Opened>,
    editor: DefaultEditor,
    history: Option<PathBuf>,
    /// Tokens of every prompt of this session (this process).
    usage: Usage,
}

pub fn run(args: ChatArgs) -> Result<Exit> {
    let options = args.session;
    let opened = open(&mut options.clone(), false)?;
    let mut editor = DefaultEditor::new().context("cannot start the line editor")?;
    let history = super::agent_home().ok().map(|h| h.history());
    if let Some(h) = &history {
        // A missing history file is a first session, not an error.
        let _ = editor.load_history(h);
    }
    let mut chat = Chat {
        options,
        opened: Some(opened),
        editor,
        history,
        usage: Usage::default(),
    };
    chat.banner();
    let result = chat.repl();
    let closed = chat.close();
    result.and(closed).map(|()| Exit::Success)
}

impl Chat {
    fn banner(&self) {
        let Ok(o) = self.session() else { return };
        output::stdout_line(&format!(
            "agent · {} (shadow workspace; nothing reaches it before /commit) · model {} · mode {}",
            o.root.display(),
            o.agent.model(),
            o.agent.mode().as_str()
        ));
        output::stdout_line("/help for the commands; Ctrl-D to leave.");
    }

    /// Reads a line; a line ending with `\` goes on on the next.
    fn read(&mut self) -> Result<Line> {
        let mut text = String::new();
        let mut prompt = "› ";
        loop {
            match self.editor.readline(prompt) {
                Ok(line) => match line.strip_suffix('\\') {
                    Some(head) => {
                        text.push_str(head);
                        text.push('\n');
                        prompt = "… ";
                    }
                    None => {
                        text.push_str(&line);
                        return Ok(Line::Text(text));
                    }
                },
                Err(ReadlineError::Interrupted) => return Ok(Line::Interrupted),
                Err(ReadlineError::Eof) => return Ok(Line::End),
                Err(e) => return Err(e).context("cannot read from the terminal"),
            }
        }
    }

    fn repl(&mut self) -> Result<()> {
        let mut interrupted_once = false;
        loop {
            let text = match self.read()? {
                Line::End => return Ok(()),
                Line::Interrupted if interrupted_once => return Ok(()),
                Line::Interrupted => {
                    interrupted_once = true;
                    output::stdout_line("(Ctrl-C again, or Ctrl-D, to leave)");
                    continue;
                }
                Line::Text(t) => t,
            };
            interrupted_once = false;
            let trimmed = text.trim();
            if trimmed.is_empty() {
                continue;
            }
            let _ = self.editor.add_history_entry(trimmed);
            if trimmed.starts_with('/') {
                match slash::parse(trimmed) {
                    Ok(Slash::Exit) => return Ok(()),
                    Ok(command) => {
                        if let Err(e) = self.command(command) {
                            output::error(&output::chain(&e));
                        }
                    }
                    Err(why) => output::error(&why),
                }
            } else if let Err(e) = self.prompt(&text) {
                output::error(&output::chain(&e));
            }
        }
    }

    /// Runs one prompt through the live transcript; Ctrl-C stops it and returns here.
    fn prompt(&mut self, text: &str) -> Result<()> {
        let o = self.session_mut()?;
        let (result, _) = o
            .runtime
            .block_on(drive(&mut o.agent, text, Some(&mut o.live)))?;
        self.usage.add(&result.usage);
        if result.stop_reason == RunStopReason::Interrupted {
            output::stdout_line("(interrupted; the prompt is yours)");
        }
        Ok(())
    }

    fn command(&mut self, command: Slash) -> Result<()> {
        match command {
            Slash::Help(c) => output::stdout_line(&slash::help(c.as_deref())),
            Slash::Status => {
                let set = self.session_mut()?.ws.status()?;
                super::workspace::print_set(&set);
            }
            Slash::Diff(path) => {
                let diffs = self.session_mut()?.ws.diff(path.as_deref())?;
                if diffs.is_empty() {
                    output::stdout_line("no changes");
                }
                for (_, text) in diffs {
                    output::stdout_text(&Palette::for_stdout().diff(&text));
                }
            }
            Slash::Commit => self.commit()?,
            Slash::Discard => {
                let n = self.session_mut()?.ws.status()?.changes.len();
                if n == 0 {
                    output::stdout_line("nothing to discard");
                } else if self.ask(&format!("Drop all {n} change(s) in the shadow workspace?"))? {
                    self.session_mut()?.ws.discard()?;
                    output::stdout_line(&format!("discarded {n} change(s)"));
                } else {
                    output::stdout_line("nothing was discarded");
                }
            }
            Slash::Mode(m) => {
                let mode: PermissionMode = m.parse().map_err(anyhow::Error::msg)?;
                let o = self.session_mut()?;
                o.runtime.block_on(o.agent.set_mode(mode))?;
                output::stdout_line(&format!("mode: {}", mode.as_str()));
            }
            Slash::Model(name) => {
                let o = self.session_mut()?;
                o.runtime.block_on(o.agent.set_model(&name))?;
                output::stdout_line(&format!("model: {}", o.agent.model()));
            }
            Slash::Compact(instructions) => {
                let o = self.session_mut()?;
                o.runtime.block_on(o.agent.compact(instructions))?;
                output::stdout_line("the conversation was compacted");
            }
            Slash::Cost => {
                let model = self.session()?.agent.model().to_owned();
                output::stdout_line(&super::cost::summary(&self.usage, &model));
            }
            Slash::Clear => {
                self.reopen(None)?;
                output::stdout_line(&format!(
                    "a new session: {} (the change set stays in the shadow workspace)",
                    self.session_mut()?.agent.session_id()
                ));
            }
            Slash::Resume(None) => self.list_sessions()?,
            Slash::Resume(Some(id)) => {
                self.reopen(Some(id))?;
                output::stdout_line(&format!(
                    "resumed session {}",
                    self.session_mut()?.agent.session_id()
                ));
            }
            Slash::AddDir(dir) => {
                let dir = super::absolute(PathBuf::from(&dir))?;
                if !dir.is_dir() {
                    anyhow::bail!("{} is not a directory", dir.display());
                }
                // The permission engine's directories are fixed when it is built: the session
                // is picked up again (mode, model and history from its log) with one more.
                let id = self.session_mut()?.agent.session_id().to_string();
                self.options.add_dirs.push(dir.clone());
                if let Err(e) = self.reopen(Some(id.clone())) {
                    self.options.add_dirs.pop();
                    if self.opened.is_none() {
                        // Closed but not picked up again: back as it was, without DIR.
                        self.reopen(Some(id))?;
                    }
                    return Err(e);
                }
                output::stdout_line(&format!(
                    "{} is a working directory of this session now (permissions granted for this session only were reset)",
                    dir.display()
                ));
            }
            Slash::Exit => {}
        }
        Ok(())
    }

    /// Ends this session's agent (background commands first) and opens another on the same
    /// folder: a new one (`None`), or the session `id` resumed.
    fn reopen(&mut self, id: Option<String>) -> Result<()> {
        let mut options = self.options.clone();
        options.continue_recent = false;
        options.fork = None;
        options.resume_at = None;
        let same = id.as_deref().is_some_and(|i| {
            self.session()
                .is_ok_and(|o| i == o.agent.session_id().to_string())
        });
        options.session = id;
        if same {
            // The same session again (`/add-dir`): its log is held open until the agent
            // closes it, so it is closed first and then picked up again.
            if let Some(previous) = self.opened.take() {
                finish(previous)?;
            }
            self.opened = Some(open(&mut options, false)?);
            return Ok(());
        }
        // Opened first, so a bad id leaves the current session as it is.
        let next = open(&mut options, false)?;
        self.usage = Usage::default();
        match self.opened.replace(next) {
            Some(previous) => finish(previous),
            None => Ok(()),
        }
    }

    /// The open session.
    fn session(&self) -> Result<&Opened> {
        self.opened
            .as_ref()
            .context("the session could not be opened again; leave with /exit and start `agent chat --continue`")
    }

    /// The open session, to change.
    fn session_mut(&mut self) -> Result<&mut Opened> {
        self.opened
            .as_mut()
            .context("the session could not be opened again; leave with /exit and start `agent chat --continue`")
    }

    /// `/resume` alone: the folder's recent sessions.
    fn list_sessions(&self) -> Result<()> {
        let o = self.session()?;
        let sessions = o.runtime.block_on(o.store.list(agent_store::ListQuery {
            limit: Some(10),
            cwd: Some(o.folder.display().to_string()),
            ..agent_store::ListQuery::default()
        }))?;
        if sessions.is_empty() {
            output::stdout_line("no other session of this folder");
        }
        for m in sessions {
            let current = if &m.id == o.agent.session_id() {
                " (this one)"
            } else {
                ""
            };
            output::stdout_line(&format!(
                "{}  {}  {}{current}",
                m.id,
                m.updated_at,
                output::sanitize(m.first_prompt.as_deref().unwrap_or(""))
                    .chars()
                    .take(60)
                    .collect::<String>()
            ));
        }
        output::stdout_line("/resume ID to pick one up");
        Ok(())
    }

    /// `/commit`: the background commands end, the change set is pinned down as a review,
    /// shown, asked about, and exactly that review is applied.
    fn commit(&mut self) -> Result<()> {
        let o = self.session_mut()?;
        o.runtime.block_on(join_background(&o.bash, false))?;
        let review = o.ws.review()?;
        let set = review.changes().clone();
        if set.is_empty() {
            output::stdout_line("nothing to commit");
            return Ok(());
        }
        super::workspace::print_set(&set);
        for (_, text) in o.ws.diff(None)? {
            output::stdout_text(&Palette::for_stdout().diff(&text));
        }
        let question = format!(
            "Apply these {} change(s) to {}?",
            set.changes.len(),
            o.root.display()
        );
        self.log(EventPayload::WorkspaceDiff(set.event()))?;
        if !self.ask(&question)? {
            output::stdout_line("nothing was applied");
            return Ok(());
        }
        let o = self.session_mut()?;
        match o.ws.commit_review(&review, &CommitOptions::default()) {
            Ok(report) => {
                let applied = report.applied.len();
                self.log(EventPayload::WorkspaceCommit(report.event()))?;
                output::stdout_line(&format!(
                    "committed {applied} path(s) to {}",
                    self.session_mut()?.root.display()
                ));
            }
            Err(WorkspaceError::Conflicts(conflicts)) => {
                self.log(EventPayload::WorkspaceCommit(CommitReport::refused_event(
                    &conflicts,
                )))?;
                output::error(&WorkspaceError::Conflicts(conflicts).to_string());
            }
            Err(e) => return Err(e.into()),
        }
        Ok(())
    }

    /// A yes/no question answered on the session's own input.
    fn ask(&mut self, question: &str) -> Result<bool> {
        match self.editor.readline(&format!("{question} [y/N] ")) {
            Ok(answer) => Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "Yes" | "YES")),
            Err(ReadlineError::Interrupted | ReadlineError::Eof) => Ok(false),
            Err(e) => Err(e).context("cannot read the answer"),
        }
    }

    /// Appends an event to the session's log.
    fn log(&self, payload: EventPayload) -> Result<()> {
        let o = self.session()?;
        o.runtime.block_on(
            o.store
                .append(o.agent.session_id(), vec![Event::new(0, None, payload)]),
        )?;
        Ok(())
    }

    /// Leaves: background commands end, the session is closed, the history saved; a change
    /// set still waiting is named.
    fn close(self) -> Result<()> {
        let Chat {
            opened,
            mut editor,
            history,
            ..
        } = self;
        let (ws_status, root) = match &opened {
            Some(o) => (Some(o.ws.status()), Some(o.root.clone())),
            None => (None, None),
        };
        if let Some(o) = opened {
            finish(o)?;
        }
        if let Some(h) = &history {
            let _ = editor.save_history(h);
        }
        let waiting = match ws_status {
            Some(status) => status?.changes.len(),
            None => 0,
        };
        if let Some(root) = root.filter(|_| waiting > 0) {
            output::stdout_line(&format!(
                "{waiting} change(s) wait in the shadow workspace: `agent chat --continue` and /commit, or `agent workspace commit --workspace {}`",
                root.display()
            ));
        }
        Ok(())
    }
}

/// Ends an opened session: its background commands, the agent (SessionEnd hooks, the log
/// closed), the MCP servers.
fn finish(opened: Opened) -> Result<()> {
    let Opened {
        runtime,
        agent,
        bash,
        mut servers,
        ..
    } = opened;
    runtime.block_on(async {
        join_background(&bash, false).await?;
        agent.close().await?;
        servers.shutdown().await;
        anyhow::Ok(())
    })
}
