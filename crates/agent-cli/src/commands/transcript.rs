//! What a person reads of a run: [`AgentEvent`]s turned into lines (no terminal I/O here;
//! [`super::live::Live`] prints them and draws the spinner).
//!
//! - Tool calls: a header per call (`● Bash(cargo test)`); when one answer makes several
//!   calls, each header and each result carries the call's number (`● [2] Read(src/a.rs)`,
//!   `⎿ [2] Read src/a.rs · 120 lines`), since results come after all the headers.
//! - Results, per tool: Bash's stdout and stderr as text under its exit status (and
//!   `stopped by …`, `interrupted`), folded past a screenful ([`SCREENFUL`]: the first and last
//!   [`FOLD_KEEP`] lines, how many were folded, and the spill file holding all of it); Read:
//!   path and line count; Edit: path and a short diff; Write: path and size; Glob and Grep:
//!   counts and the first few matches; anything else: its first line.
//! - Paths: the real folder instead of the shadow, and relative to the folder the run started
//!   in ([`Paths`]).
//! - Each error once: a denied call shows its denial, not also the error result that says the
//!   same to the model; the run's closing error is not repeated after its `error` event.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use agent_core::events::{Event, EventPayload};
use agent_core::view::PathView;
use agent_loop::AgentEvent;
use serde_json::{Map, Value};

use crate::colour::{Ink, Palette};
use crate::output::sanitize;

/// Lines of one stream shown whole; past this a result is folded (a 24-row terminal, less the
/// call's header, its status line, the fold line and the prompt).
pub const SCREENFUL: usize = 20;

/// Lines kept at each end of a folded stream.
pub const FOLD_KEEP: usize = 8;

/// The longest line shown of a tool's output (characters); longer lines end in `…`.
const LINE_CHARS: usize = 240;

/// Lines of an Edit's diff shown under its result.
const DIFF_LINES: usize = 8;

/// Matches of a Glob or Grep shown under its count.
const MATCHES_SHOWN: usize = 3;

/// One piece of the transcript.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Out {
    /// The assistant's text, streamed to stdout as it comes.
    Text(String),
    /// A line for stderr.
    Line(String),
    /// A passing state ("retrying in 2 s after HTTP 503"): a spinner on a terminal, a line
    /// elsewhere.
    Status(String),
}

/// Paths as the person knows them: the real folder instead of its shadow, and relative to
/// the folder the run started in when under it.
#[derive(Clone, Debug)]
pub struct Paths {
    folder: String,
    view: Option<PathView>,
}

impl Paths {
    /// Paths relative to `folder` (the real folder the run started in), with `view` mapping
    /// the shadow back to the real folder first.
    pub fn new(folder: &Path, view: Option<PathView>) -> Self {
        Self {
            folder: folder.display().to_string(),
            view,
        }
    }

    /// `text` with every mention of the shadow shown as the real folder, and of the folder
    /// (as whole path components) made relative: `/work/app/src/x.rs` → `src/x.rs`,
    /// `/work/app` → `.`; `/work/app2` and `/other/work/app` stay.
    pub fn text(&self, text: &str) -> String {
        let text = match &self.view {
            Some(v) => v.to_shown(text),
            None => text.to_owned(),
        };
        let from = self.folder.as_str();
        // The root folder would make every absolute path "relative": leave them be.
        if from.len() <= 1 || !text.contains(from) {
            return text;
        }
        let path_char = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '~');
        let mut out = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(i) = rest.find(from) {
            let before = rest[..i].chars().last().or_else(|| out.chars().last());
            let after = &rest[i + from.len()..];
            let starts_whole = before.is_none_or(|c| !(path_char(c) || c == '/'));
            out.push_str(&rest[..i]);
            match after.chars().next() {
                Some('/') if starts_whole => {
                    rest = &after[1..];
                }
                next if starts_whole && next.is_none_or(|c| !path_char(c)) => {
                    out.push('.');
                    rest = after;
                }
                _ => {
                    out.push_str(from);
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }

    /// A call's input in a few words: its path (relative), pattern or command, else the
    /// JSON, cut to 80 characters.
    pub fn brief(&self, input: &Value) -> String {
        for key in ["file_path", "notebook_path", "path"] {
            if let Some(v) = input.get(key).and_then(Value::as_str) {
                return cut(&self.text(v), 80);
            }
        }
        for key in ["command", "pattern", "url", "description", "prompt"] {
            if let Some(v) = input.get(key).and_then(Value::as_str) {
                return cut(&self.text(v).replace('\n', " "), 80);
            }
        }
        cut(&self.text(&input.to_string()), 80)
    }

    /// `text` with every mention of the shadow shown as the real folder (absolute paths
    /// stay absolute).
    pub fn real(&self, text: &str) -> String {
        match &self.view {
            Some(v) => v.to_shown(text),
            None => text.to_owned(),
        }
    }

    /// Where a file the result names really is: in the shadow when the view moved it (a
    /// spill file lives only there), else as given.
    pub fn actual(&self, path: &str) -> String {
        self.view
            .as_ref()
            .and_then(|v| v.to_actual(path))
            .unwrap_or_else(|| path.to_owned())
    }
}

/// A tool call whose result is still to come.
#[derive(Clone, Debug)]
struct Call {
    name: String,
    input: Value,
    /// `[2] ` when its answer made several calls, else empty.
    number: String,
    denied: bool,
}

/// Turns a run's events into [`Out`]s. One per run or session: it remembers the calls in
/// flight and the errors already shown.
#[derive(Debug)]
pub struct Transcript {
    palette: Palette,
    paths: Paths,
    calls: HashMap<String, Call>,
    /// Calls without a result yet, in the order they were made.
    pending: Vec<String>,
    errors: HashSet<String>,
    /// `permission.question` events are not shown (the question was asked on screen).
    hide_questions: bool,
}

impl Transcript {
    /// A transcript painting with `palette`, showing paths through `paths`.
    pub fn new(palette: Palette, paths: Paths) -> Self {
        Self {
            palette,
            paths,
            calls: HashMap::new(),
            pending: Vec::new(),
            errors: HashSet::new(),
            hide_questions: false,
        }
    }

    /// Leaves `permission.question` events out: the person saw the question when it was
    /// asked on the terminal, and its answer shows in the decision.
    pub fn hide_questions(&mut self) {
        self.hide_questions = true;
    }

    /// The paths it shows.
    pub fn paths(&self) -> &Paths {
        &self.paths
    }

    /// The events that arrived together (the calls of one answer come together, so their
    /// number is known when their headers are written).
    pub fn events(&mut self, events: &[AgentEvent]) -> Vec<Out> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < events.len() {
            let run = events[i..].iter().take_while(|e| is_tool_use(e)).count();
            if run > 0 {
                for (n, e) in events[i..i + run].iter().enumerate() {
                    if let AgentEvent::Logged(ev) = e
                        && let EventPayload::ToolUse(u) = &ev.payload
                    {
                        let number = if run > 1 {
                            format!("[{}] ", n + 1)
                        } else {
                            String::new()
                        };
                        out.push(self.header(&u.tool_use_id, &u.name, &u.input, number));
                    }
                }
                i += run;
            } else {
                out.extend(self.event(&events[i]));
                i += 1;
            }
        }
        out
    }

    /// The call the run is waiting on, for a spinner: `Bash(sleep 5)`, with `(+2 more)` when
    /// others of its answer run with it.
    pub fn waiting_on(&self) -> Option<String> {
        let first = self.calls.get(self.pending.first()?)?;
        let mut label = format!(
            "{}{}({})",
            first.number,
            first.name,
            sanitize(&self.paths.brief(&first.input))
        );
        if self.pending.len() > 1 {
            label.push_str(&format!(" (+{} more)", self.pending.len() - 1));
        }
        Some(label)
    }

    fn header(&mut self, id: &str, name: &str, input: &Value, number: String) -> Out {
        let text = format!("● {number}{name}({})", sanitize(&self.paths.brief(input)));
        self.calls.insert(
            id.to_owned(),
            Call {
                name: name.to_owned(),
                input: input.clone(),
                number,
                denied: false,
            },
        );
        self.pending.push(id.to_owned());
        Out::Line(self.palette.paint(Ink::Call, &text))
    }

    fn event(&mut self, event: &AgentEvent) -> Vec<Out> {
        match event {
            AgentEvent::TextDelta(d) => {
                // The model speaks again: whatever was in flight is over.
                self.pending.clear();
                vec![Out::Text(sanitize(d))]
            }
            AgentEvent::Notice(n) => vec![Out::Line(
                self.palette
                    .paint(Ink::Warn, &format!("  ! {}", sanitize(&self.paths.text(n)))),
            )],
            AgentEvent::Retry(r) => {
                let text = format!(
                    "retrying in {} after {} (retry {} of {})",
                    seconds(r.delay),
                    sanitize(&r.reason),
                    r.attempt,
                    r.max_retries
                );
                vec![Out::Status(text)]
            }
            AgentEvent::Logged(e) => self.logged(e),
            AgentEvent::Finished(r) => {
                self.pending.clear();
                let mut out = vec![Out::Line(self.palette.paint(
                    Ink::Dim,
                    &format!(
                        "── {} · {} turn(s) · {} in / {} out tokens · session {}",
                        r.stop_reason,
                        r.turns,
                        r.usage.context_tokens(),
                        r.usage.output_tokens,
                        r.session_id
                    ),
                ))];
                if let Some(e) = &r.error {
                    out.extend(self.error_once(e));
                }
                out
            }
        }
    }

    fn error_once(&mut self, message: &str) -> Option<Out> {
        if !self.errors.insert(message.to_owned()) {
            return None;
        }
        let text = format!("  error: {}", sanitize(&self.paths.text(message)));
        Some(Out::Line(self.palette.paint(Ink::Bad, &text)))
    }

    fn logged(&mut self, e: &Event) -> Vec<Out> {
        let line = |s: String| vec![Out::Line(s)];
        match &e.payload {
            EventPayload::ToolUse(u) => {
                let header = self.header(&u.tool_use_id, &u.name, &u.input, String::new());
                vec![header]
            }
            EventPayload::PermissionQuestion(_) if self.hide_questions => Vec::new(),
            EventPayload::PermissionQuestion(q) => line(self.palette.paint(
                Ink::Ask,
                &format!(
                    "  ? {} asks: {}",
                    q.tool_name,
                    sanitize(&self.paths.text(&q.prompt))
                ),
            )),
            EventPayload::PermissionDecision(d) => {
                let number = match self.calls.get_mut(&d.question_id) {
                    Some(call) => {
                        call.denied = !d.allowed;
                        call.number.clone()
                    }
                    None => String::new(),
                };
                let how = match (&d.rule, &d.step) {
                    (Some(r), Some(s)) => format!("{s}: {}", sanitize(&self.paths.text(r))),
                    (None, Some(s)) => s.clone(),
                    _ => String::new(),
                };
                if d.allowed {
                    line(
                        self.palette
                            .paint(Ink::Good, &format!("  ✓ {number}allowed ({how})")),
                    )
                } else {
                    let reason = d.reason.as_deref().unwrap_or("");
                    line(self.palette.paint(
                        Ink::Bad,
                        &format!(
                            "  ✗ {number}denied ({how}): {}",
                            sanitize(&self.paths.text(reason))
                        ),
                    ))
                }
            }
            EventPayload::ToolResult(r) => {
                self.pending.retain(|id| *id != r.tool_use_id);
                let call = self.calls.remove(&r.tool_use_id);
                if call.as_ref().is_some_and(|c| c.denied)
                    && r.error_type.as_deref() == Some("permission_denied")
                {
                    // Its denial was just shown; the result says the same to the model.
                    return Vec::new();
                }
                self.result(call.as_ref(), &r.output, r.is_error)
                    .into_iter()
                    .map(Out::Line)
                    .collect()
            }
            EventPayload::HookRun(h) => line(self.palette.paint(
                Ink::Dim,
                &format!(
                    "  ↳ hook {} ({}) → {} in {} ms",
                    h.event,
                    sanitize(&self.paths.text(h.command.as_deref().unwrap_or("in-process"))),
                    h.outcome,
                    h.duration_ms
                ),
            )),
            EventPayload::Compaction(c) => line(self.palette.paint(
                Ink::Dim,
                &format!(
                    "  ⋯ compacted events {}..{} into a summary",
                    c.from_seq, c.to_seq
                ),
            )),
            EventPayload::SubagentStart(s) => line(
                self.palette
                    .paint(Ink::Call, &format!("  ⤷ subagent {} started", s.agent_id)),
            ),
            EventPayload::Error(err) => self.error_once(&err.message).into_iter().collect(),
            _ => Vec::new(),
        }
    }

    /// The lines of one result.
    fn result(&self, call: Option<&Call>, output: &Value, is_error: bool) -> Vec<String> {
        let name = call.map_or("", |c| c.name.as_str());
        let input = call.map_or(&Value::Null, |c| &c.input);
        // Results of an answer with several calls name their call.
        let head = match call {
            Some(c) if !c.number.is_empty() => format!("  ⎿ {}{} ", c.number, c.name),
            _ => "  ⎿ ".to_owned(),
        };
        if let (Value::Object(o), "Bash") = (output, name)
            && (o.contains_key("exitCode") || o.contains_key("backgroundTaskId"))
        {
            return self.bash(&head, o);
        }
        if is_error {
            let text = plain(output);
            return vec![self.palette.paint(
                Ink::Bad,
                &format!("{head}error: {}", self.first_line(&text)),
            )];
        }
        match (name, output) {
            ("Read", _) => vec![format!("{head}{}", self.read(input, output))],
            ("Edit" | "MultiEdit", _) => self.edit(&head, input, output),
            ("Write", _) => vec![format!("{head}{}", self.write(input, output))],
            ("Glob" | "Grep", Value::String(text)) => self.matches(&head, name, text),
            _ => vec![format!("{head}{}", self.first_line(&plain(output)))],
        }
    }

    /// A text's first line (relative, sanitised, cut), with how many lines follow.
    fn first_line(&self, text: &str) -> String {
        let text = self.paths.text(text).replace('\t', "  ");
        let first = text.lines().next().unwrap_or("");
        let more = text.lines().count().saturating_sub(1);
        let mut s = sanitize(&cut(first, 100));
        if more > 0 {
            s.push_str(&format!(" (+{more} lines)"));
        }
        s
    }

    fn bash(&self, head: &str, o: &Map<String, Value>) -> Vec<String> {
        if let Some(id) = o.get("backgroundTaskId").and_then(Value::as_str) {
            let file = o.get("outputFile").and_then(Value::as_str).unwrap_or("");
            return vec![format!(
                "{head}started in the background (task {}); its result will be in {}",
                sanitize(id),
                sanitize(&self.paths.actual(file))
            )];
        }
        let code = o.get("exitCode").and_then(Value::as_i64);
        let mut status = match code {
            Some(0) => self.palette.paint(Ink::Good, "exit 0"),
            Some(c) => self.palette.paint(Ink::Bad, &format!("exit {c}")),
            None => self.palette.paint(Ink::Bad, "no exit status"),
        };
        if let Some(why) = o.get("stoppedBy").and_then(Value::as_str) {
            status.push_str(
                &self
                    .palette
                    .paint(Ink::Bad, &format!(" · stopped by {}", sanitize(why))),
            );
        }
        if o.get("interrupted").and_then(Value::as_bool) == Some(true) {
            status.push_str(&self.palette.paint(Ink::Bad, " · interrupted"));
        }
        let stdout = o.get("stdout").and_then(Value::as_str).unwrap_or("");
        let stderr = o.get("stderr").and_then(Value::as_str).unwrap_or("");
        if stdout.trim().is_empty() && stderr.trim().is_empty() {
            status.push_str(" · no output");
        }
        let mut lines = vec![format!("{head}{status}")];
        let spill = |key: &str| {
            o.get(key)
                .and_then(Value::as_str)
                .map(|p| self.paths.actual(p))
        };
        lines.extend(self.stream(stdout, spill("stdoutFile").as_deref()));
        if !stderr.trim().is_empty() {
            lines.push(format!("    {}", self.palette.paint(Ink::Bad, "stderr:")));
            lines.extend(self.stream(stderr, spill("stderrFile").as_deref()));
        }
        if let Some(Value::Array(notes)) = o.get("notes") {
            for n in notes.iter().filter_map(Value::as_str) {
                lines.push(self.palette.paint(
                    Ink::Dim,
                    &format!("    note: {}", sanitize(&self.paths.text(n))),
                ));
            }
        }
        lines
    }

    /// One output stream as indented lines, folded past a screenful; `spill` is the file
    /// holding all of it when the inline text was cut.
    fn stream(&self, text: &str, spill: Option<&str>) -> Vec<String> {
        let text = self.paths.text(text).replace('\t', "    ");
        let mut lines: Vec<&str> = text.lines().collect();
        // The tool's own note that the output was cut (the fold line says it instead).
        if spill.is_some() && lines.last().is_some_and(|l| l.starts_with("[output cut:")) {
            lines.pop();
        }
        while lines.last().is_some_and(|l| l.trim().is_empty()) {
            lines.pop();
        }
        let show = |l: &str| format!("    {}", sanitize(&cut(l, LINE_CHARS)));
        let where_ = spill.map(|p| format!("; all of it is in {}", sanitize(p)));
        let mut out = Vec::new();
        if lines.len() > SCREENFUL {
            let folded = lines.len() - 2 * FOLD_KEEP;
            out.extend(lines[..FOLD_KEEP].iter().map(|l| show(l)));
            out.push(self.palette.paint(
                Ink::Dim,
                &format!(
                    "    … {folded} lines folded{} …",
                    where_.clone().unwrap_or_default()
                ),
            ));
            out.extend(lines[lines.len() - FOLD_KEEP..].iter().map(|l| show(l)));
        } else {
            out.extend(lines.iter().map(|l| show(l)));
            if let Some(w) = where_ {
                out.push(
                    self.palette
                        .paint(Ink::Dim, &format!("    … output cut{w} …")),
                );
            }
        }
        out
    }

    fn read(&self, input: &Value, output: &Value) -> String {
        let path = sanitize(&self.paths.brief(input));
        match output {
            Value::Object(o) => format!(
                "{path} · {} {}, {} bytes",
                o.get("type").and_then(Value::as_str).unwrap_or("file"),
                o.get("mediaType").and_then(Value::as_str).unwrap_or(""),
                o.get("bytes").and_then(Value::as_u64).unwrap_or(0)
            ),
            Value::String(text) => {
                let numbered = text.lines().filter(|l| is_numbered(l)).count();
                if numbered == 0 {
                    return self.first_line(text);
                }
                let total = text.lines().rev().find_map(|l| {
                    l.strip_prefix("… (")?
                        .split(' ')
                        .next()?
                        .parse::<u64>()
                        .ok()
                });
                match total {
                    Some(t) => format!("{path} · {numbered} of {t} lines"),
                    None => format!("{path} · {}", count(numbered, "line")),
                }
            }
            other => self.first_line(&other.to_string()),
        }
    }

    fn edit(&self, head: &str, input: &Value, output: &Value) -> Vec<String> {
        let path = sanitize(&self.paths.brief(input));
        let pairs: Vec<(&str, &str)> = match input.get("edits").and_then(Value::as_array) {
            Some(edits) => edits
                .iter()
                .map(|e| {
                    (
                        e.get("old_string").and_then(Value::as_str).unwrap_or(""),
                        e.get("new_string").and_then(Value::as_str).unwrap_or(""),
                    )
                })
                .collect(),
            None => vec![(
                input
                    .get("old_string")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
                input
                    .get("new_string")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
            )],
        };
        let what = match output.get("type").and_then(Value::as_str) {
            Some("create") => "created".to_owned(),
            _ => match output.get("replacements").and_then(Value::as_u64) {
                Some(1) => "1 replacement".to_owned(),
                Some(n) => format!("{n} replacements"),
                None if pairs.len() > 1 => format!("{} edits", pairs.len()),
                None => "edited".to_owned(),
            },
        };
        let mut lines = vec![format!("{head}{path} · {what}")];
        let mut diff: Vec<String> = Vec::new();
        for (old, new) in pairs {
            diff.extend(old.lines().map(|l| format!("- {l}")));
            diff.extend(new.lines().map(|l| format!("+ {l}")));
        }
        let more = diff.len().saturating_sub(DIFF_LINES);
        for l in diff.into_iter().take(DIFF_LINES) {
            let role = if l.starts_with('-') {
                Ink::Removed
            } else {
                Ink::Added
            };
            let l = sanitize(&cut(&l.replace('\t', "    "), LINE_CHARS));
            lines.push(format!("    {}", self.palette.paint(role, &l)));
        }
        if more > 0 {
            lines.push(
                self.palette
                    .paint(Ink::Dim, &format!("    … {more} more diff lines")),
            );
        }
        lines
    }

    fn write(&self, input: &Value, output: &Value) -> String {
        let path = sanitize(&self.paths.brief(input));
        let content = input.get("content").and_then(Value::as_str).unwrap_or("");
        let what = match output.get("type").and_then(Value::as_str) {
            Some("create") => "created",
            _ => "updated",
        };
        format!(
            "{path} · {what} · {}, {}",
            count(content.lines().count(), "line"),
            count(content.len(), "byte")
        )
    }

    /// Glob's and Grep's text: how many lines (or files), and the first few.
    fn matches(&self, head: &str, name: &str, text: &str) -> Vec<String> {
        let text = self.paths.text(text);
        let mut lines: Vec<&str> = text.lines().collect();
        if lines.len() == 1 && lines[0].starts_with("No ") {
            return vec![format!("{head}{}", sanitize(lines[0]))];
        }
        // Grep's files mode says how many files first; Glob and Grep end with what they cut.
        let found = lines
            .first()
            .filter(|l| l.starts_with("Found "))
            .map(|l| (*l).to_owned());
        if found.is_some() {
            lines.remove(0);
        }
        let omitted: usize = lines
            .last()
            .and_then(|l| l.strip_prefix("… ("))
            .and_then(|l| l.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        lines.retain(|l| !l.starts_with('…') && *l != "--");
        let total = match found {
            Some(f) => f.trim_start_matches("Found ").to_owned(),
            None => {
                let what = if name == "Glob" { "file" } else { "line" };
                count(lines.len() + omitted, what)
            }
        };
        let mut out = vec![format!("{head}{}", sanitize(&total))];
        for l in lines.iter().take(MATCHES_SHOWN) {
            out.push(format!("    {}", sanitize(&cut(l, LINE_CHARS))));
        }
        let rest = lines.len().saturating_sub(MATCHES_SHOWN) + omitted;
        if rest > 0 {
            out.push(
                self.palette
                    .paint(Ink::Dim, &format!("    … and {rest} more")),
            );
        }
        out
    }
}

fn is_tool_use(e: &AgentEvent) -> bool {
    matches!(e, AgentEvent::Logged(ev) if matches!(ev.payload, EventPayload::ToolUse(_)))
}

/// A line of Read's output: the line number, a tab, the text.
fn is_numbered(line: &str) -> bool {
    line.split_once('\t').is_some_and(|(n, _)| {
        let n = n.trim_start();
        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
    })
}

/// A result as text: a string as is, anything else as compact JSON.
fn plain(output: &Value) -> String {
    match output {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `s` cut to `n` characters, with `…` when cut.
fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// `n` and the noun, plural unless one: `1 line`, `3 lines`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A wait in words: `2 s`, `0.5 s`.
fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 10.0 || (s - s.round()).abs() < 0.05 {
        format!("{:.0} s", s.round())
    } else {
        format!("{s:.1} s")
    }
}

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
