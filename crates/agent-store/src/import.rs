//! Checking an events JSONL before it becomes a session (`import`): every rule a log the store
//! wrote itself keeps, so an imported log is one the store could have written. Nothing is written
//! until the whole input passed.
//!
//! The rules (docs/sessions.md, "Import"):
//! - every line at most [`MAX_LINE_BYTES`] and a valid event (blank lines are skipped);
//! - `seq` 1 on the first event, then +1 per event (no duplicate, gap or reordering);
//! - every session id in an event (`sessionId`, `parentSessionId`) and every `agentId` is a
//!   valid id ([`SessionId::parse`]);
//! - the log's *own* events are those after its last `session.fork` (all of them when it has
//!   none; before that point is history copied from its ancestors, kept as fork keeps it). Their
//!   `sessionId`s all name one session; when that is not the id imported to, they are rewritten
//!   to it (the line is re-serialised; every other line is kept byte for byte);
//! - `parentSessionId` is never the id imported to (a session is not its own parent);
//! - a `session.fork` names the event just before it (`forkPoint` its id, `forkSeq` its seq;
//!   `null` and 0 when it is the first event), as `fork` writes it.
//!
//! [`LocalStore::import`] checks its input here, then writes it as a new session.

use agent_core::events::{Event, EventPayload, decode_line};
use serde_json::Value;

use super::error::{Result, StoreError};
use super::id::SessionId;
use super::local::LocalStore;
use super::log::{MAX_LINE_BYTES, oversize_line};
use super::metadata::SessionMetadata;

impl LocalStore {
    /// Imports an events JSONL as a new session `id` (`None`: a new UUID v7). The input must be a
    /// log the store could have written: every line a valid event of at most [`MAX_LINE_BYTES`],
    /// `seq` 1, 2, 3, ..., valid ids in `sessionId`, `parentSessionId` and `agentId`, one
    /// session's `sessionId` after the last `session.fork`, no `parentSessionId` equal to `id`,
    /// and each `session.fork` naming the event before it (docs/sessions.md, "Import"). Lines are
    /// kept verbatim, except that the log's own `sessionId` becomes `id` when it says another.
    /// Nothing is written unless the whole input passes.
    ///
    /// # Errors
    /// [`StoreError::BadInput`] naming the line, the field, the value and what to do;
    /// [`StoreError::AlreadyExists`].
    pub fn import(&self, jsonl: &str, id: Option<SessionId>) -> Result<SessionMetadata> {
        let id = id.unwrap_or_else(SessionId::generate);
        if self.log_path(&id).exists() {
            return Err(StoreError::AlreadyExists { id });
        }
        let text = prepare(jsonl, &id)?;
        self.write_new(&id, text.as_bytes(), false)
    }
}

/// One decoded line of the input.
struct Line<'a> {
    /// 1-based line number in the input.
    number: usize,
    text: &'a str,
    event: Event,
}

fn bad(line: usize, what: String) -> StoreError {
    StoreError::BadInput(format!("line {line}: {what}"))
}

/// Checks `jsonl` against the import rules for a session to be called `target`, and returns the
/// log to write (lines as given, own `sessionId`s rewritten to `target`, one `\n` each).
///
/// # Errors
/// [`StoreError::BadInput`] for the first line that breaks a rule, naming the line number, the
/// field, the value and what to do.
pub(crate) fn prepare(jsonl: &str, target: &SessionId) -> Result<String> {
    let lines = decode(jsonl)?;
    check_seqs(&lines)?;
    let own_from = lines
        .iter()
        .rposition(|l| matches!(l.event.payload, EventPayload::SessionFork(_)))
        .map_or(0, |i| i + 1);
    let mut own_id: Option<(String, usize)> = None;
    for (i, line) in lines.iter().enumerate() {
        for (field, value) in id_fields(line.number, &line.event, "sessionId")? {
            let value = valid_id(line.number, field, value)?;
            if i < own_from {
                continue;
            }
            match &own_id {
                None => own_id = Some((value.to_owned(), line.number)),
                Some((own, first)) if own != value => {
                    return Err(bad(
                        line.number,
                        format!(
                            "`{field}` {value:?} is another session's: this session's events \
                             say {own:?} (line {first}); a log holds one session's events after \
                             its last session.fork; remove the other session's events"
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        for (field, value) in id_fields(line.number, &line.event, "parentSessionId")? {
            let value = valid_id(line.number, field, value)?;
            if value == target.as_str() {
                return Err(bad(
                    line.number,
                    format!(
                        "`{field}` {value:?} is the id being imported to; a session cannot be its \
                         own parent: import under another id"
                    ),
                ));
            }
        }
        for (field, value) in id_fields(line.number, &line.event, "agentId")? {
            valid_id(line.number, field, value)?;
        }
        if let EventPayload::SessionFork(fork) = &line.event.payload {
            let before = i.checked_sub(1).and_then(|j| lines.get(j));
            let want_point = before.map(|b| b.event.id.as_str());
            let want_seq = before.map_or(0, |b| b.event.seq);
            if fork.fork_point.as_deref() != want_point || fork.fork_seq != want_seq {
                let expected = match before {
                    Some(b) => format!(
                        "the event before it (line {}: id {:?}, seq {})",
                        b.number,
                        b.event.id.as_str(),
                        b.event.seq
                    ),
                    None => "nothing (it is the first event: forkPoint null, forkSeq 0)".into(),
                };
                return Err(bad(
                    line.number,
                    format!(
                        "session.fork has forkPoint {} and forkSeq {}, which must name {expected}; \
                         a session.fork follows the last event copied from its parent",
                        fork.fork_point
                            .as_deref()
                            .map_or_else(|| "null".to_owned(), |p| format!("{p:?}")),
                        fork.fork_seq
                    ),
                ));
            }
        }
    }
    let rewrite = own_id.filter(|(own, _)| own != target.as_str());
    let mut text = String::with_capacity(jsonl.len() + 1);
    for (i, line) in lines.iter().enumerate() {
        if i >= own_from && rewrite.is_some() && has_field(&line.event, "sessionId") {
            text += &rewritten(line, target)?;
        } else {
            text += line.text;
        }
        text.push('\n');
    }
    Ok(text)
}

/// Every non-blank line, size-checked and decoded.
fn decode(jsonl: &str) -> Result<Vec<Line<'_>>> {
    let mut lines = Vec::new();
    for (i, text) in jsonl.lines().enumerate() {
        let number = i + 1;
        if text.len() > MAX_LINE_BYTES {
            return Err(bad(
                number,
                format!(
                    "{}; shorten the event (keep large output in a file it names)",
                    oversize_line(text.len())
                ),
            ));
        }
        if text.trim().is_empty() {
            continue;
        }
        let event = decode_line(text).map_err(|e| bad(number, e.to_string()))?;
        lines.push(Line {
            number,
            text,
            event,
        });
    }
    if lines.is_empty() {
        return Err(StoreError::BadInput(
            "nothing to import: the input holds no events".into(),
        ));
    }
    Ok(lines)
}

/// `seq`: 1 first, then +1 per event.
fn check_seqs(lines: &[Line<'_>]) -> Result<()> {
    let mut previous: Option<u64> = None;
    for line in lines {
        let seq = line.event.seq;
        let expected = previous.map_or(1, |p| p + 1);
        if seq == expected {
            previous = Some(seq);
            continue;
        }
        let what = match previous {
            None => format!(
                "seq {seq} on the first event; seqs must start at 1 and increase by 1: \
                 renumber the events"
            ),
            Some(p) => {
                let kind = if seq == p {
                    "a duplicate"
                } else if seq > p {
                    "a gap"
                } else {
                    "out of order"
                };
                format!(
                    "seq {seq} follows seq {p} ({kind}); seqs must increase by 1 from 1, so this \
                     one must be {expected}: renumber the events"
                )
            }
        };
        return Err(bad(line.number, what));
    }
    Ok(())
}

/// The values of the id field `name` of an event: the typed payload's, or an unknown field of
/// that name (on any type). A value that is not a string is an error.
fn id_fields<'e>(
    line: usize,
    event: &'e Event,
    name: &'static str,
) -> Result<Vec<(&'static str, &'e str)>> {
    let mut out = Vec::new();
    match (&event.payload, name) {
        (EventPayload::SystemInit(init), "sessionId") => out.push((name, init.session_id.as_str())),
        (EventPayload::SessionFork(fork), "parentSessionId") => {
            out.push((name, fork.parent_session_id.as_str()));
        }
        (EventPayload::SubagentStart(s), "agentId") => out.push((name, s.agent_id.as_str())),
        (EventPayload::SubagentStop(s), "agentId") => out.push((name, s.agent_id.as_str())),
        _ => {}
    }
    match event.extra.get(name) {
        None => {}
        Some(Value::String(s)) => out.push((name, s.as_str())),
        Some(other) => {
            return Err(bad(
                line,
                format!("`{name}` is {other}, not a string; an id field holds an id as a string"),
            ));
        }
    }
    Ok(out)
}

fn has_field(event: &Event, name: &'static str) -> bool {
    matches!(event.payload, EventPayload::SystemInit(_)) || event.extra.contains_key(name)
}

/// `value` as a session id, or the error naming the line and field.
fn valid_id<'v>(line: usize, field: &str, value: &'v str) -> Result<&'v str> {
    match SessionId::parse(value) {
        Ok(_) => Ok(value),
        Err(e) => Err(bad(
            line,
            format!(
                "`{field}` {:?} is not a valid id: {}; fix or remove the event",
                cut(value),
                e.rule()
            ),
        )),
    }
}

/// A value cut to a readable length for a message.
fn cut(value: &str) -> String {
    let mut s: String = value.chars().take(60).collect();
    if s.len() < value.len() {
        s.push('…');
    }
    s
}

/// The line with its `sessionId` set to `target`, other fields in their order.
fn rewritten(line: &Line<'_>, target: &SessionId) -> Result<String> {
    let mut value: serde_json::Map<String, Value> = serde_json::from_str(line.text)
        .map_err(|e| bad(line.number, format!("cannot rewrite its sessionId: {e}")))?;
    value.insert("sessionId".into(), Value::String(target.to_string()));
    let text = Value::Object(value).to_string();
    if text.len() > MAX_LINE_BYTES {
        return Err(bad(
            line.number,
            format!(
                "with its sessionId rewritten to {:?}, {}; shorten the event",
                target.as_str(),
                oversize_line(text.len())
            ),
        ));
    }
    Ok(text)
}
