//! `agent sessions`: the session store from the shell.
//!
//! Every verb opens the store (the local one, which brings its index in line with the logs, or
//! PostgreSQL: [`super::session_backend`]), does one thing, and prints either plain lines for
//! people or JSON for scripts, the same on either backend. Errors (an invalid or unknown id, a
//! bad event, a session busy in another process) are one line on stderr and exit 2.
//! `migrate` copies between the two ([`super::migrate`]).

use std::io::Read;
use std::path::PathBuf;

use agent_core::events::{
    EVENT_FORMAT_VERSION, Event, EventId, decode_line, encode_line, now_rfc3339,
};
use agent_store::{
    ExportFormat, ForkAt, ForkOptions, ListQuery, LoadRange, NewSession, SessionId, SessionMetadata,
};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::session_backend::{Choice, OpenStore};
use crate::cli::sessions::{SessionsArgs, SessionsCommand};
use crate::exit::Exit;
use crate::output;

/// The longest event summary `show` prints on one line, in characters.
const SUMMARY_CHARS: usize = 120;

pub fn run(args: SessionsArgs) -> Result<Exit> {
    if let SessionsCommand::Migrate(m) = args.command {
        return super::migrate::run(args.store, &args.sessions_url, m);
    }
    let choice = Choice::of(args.store, &args.sessions_url, None)?;
    let runtime = super::open::runtime()?;
    runtime.block_on(async {
        let store = choice.open().await?;
        verb(&store, args.command).await
    })
}

/// One verb on an open store.
async fn verb(opened: &OpenStore, command: SessionsCommand) -> Result<Exit> {
    let store = opened.backend();
    match command {
        SessionsCommand::Create(a) => {
            let cwd = match a.cwd {
                Some(dir) => absolute_dir(&dir)?,
                None => std::env::current_dir().context("cannot read the current directory")?,
            };
            let mut new = NewSession::in_dir(&cwd);
            new.id = a.id.as_deref().map(SessionId::parse).transpose()?;
            new.model = a.model;
            new.title = a.title;
            new.tags = a.tags;
            let meta = store.create(new).await?;
            store.close(&meta.id).await?;
            output::stdout_line(meta.id.as_str());
        }
        SessionsCommand::List(a) => {
            let cwd = match a.cwd {
                Some(dir) => Some(absolute_dir(&dir)?.display().to_string()),
                None => None,
            };
            let query = ListQuery {
                limit: a.limit,
                cwd,
                tag: a.tag,
                text: a.search,
            };
            let sessions = store.list(query).await?;
            if a.json {
                output::stdout_line(&serde_json::to_string(&sessions)?);
            } else {
                for m in &sessions {
                    output::stdout_line(&list_line(m));
                }
            }
        }
        SessionsCommand::Show(a) => {
            let id = SessionId::parse(&a.id)?;
            let loaded = store
                .load(
                    &id,
                    LoadRange {
                        offset: a.offset,
                        limit: a.limit,
                    },
                )
                .await?;
            if a.json {
                let mut text = String::new();
                for e in &loaded.events {
                    text += &encode_line(e)?;
                    text.push('\n');
                }
                output::stdout_text(&text);
            } else {
                let meta = store.metadata(&id).await?;
                output::stdout_line(&output::sanitize(&header(&meta)));
                for e in &loaded.events {
                    output::stdout_line(&output::sanitize(&event_line(e)));
                }
            }
            if let Some(t) = &loaded.torn {
                output::warning(&format!(
                    "the log ends with {} bytes that are not a complete event (a crash while \
                     writing); they were skipped and will be set aside by the next writer",
                    t.len
                ));
            }
        }
        SessionsCommand::Fork(a) => {
            let id = SessionId::parse(&a.id)?;
            let at = match (a.at, a.upto) {
                (Some(uuid), _) => ForkAt::Event(EventId(uuid)),
                (None, Some(n)) => ForkAt::UpToMessage(n),
                (None, None) => ForkAt::Whole,
            };
            let new_id = a.new_id.as_deref().map(SessionId::parse).transpose()?;
            let child = store.fork(&id, ForkOptions { at, new_id }).await?;
            output::stdout_line(child.id.as_str());
        }
        SessionsCommand::Rename(a) => {
            let id = SessionId::parse(&a.id)?;
            let meta = store.rename(&id, &a.title).await?;
            store.close(&id).await?;
            output::stdout_line(&serde_json::to_string(&meta)?);
        }
        SessionsCommand::Tag(a) => {
            let id = SessionId::parse(&a.id)?;
            let meta = store.tag(&id, &a.tag, a.remove).await?;
            store.close(&id).await?;
            output::stdout_line(&serde_json::to_string(&meta)?);
        }
        SessionsCommand::Delete(a) => {
            let id = SessionId::parse(&a.id)?;
            store.delete(&id).await?;
            output::stdout_line(&json!({"id": id, "deleted": true}).to_string());
        }
        SessionsCommand::Export(a) => {
            let id = SessionId::parse(&a.id)?;
            let format = if a.format == "claude" {
                ExportFormat::Claude
            } else {
                ExportFormat::Jsonl
            };
            output::stdout_text(&store.export(&id, format).await?);
        }
        SessionsCommand::Import(a) => {
            let id = a.id.as_deref().map(SessionId::parse).transpose()?;
            let text = read_input(&a.file)?;
            let meta = store.import(text, id).await?;
            output::stdout_line(meta.id.as_str());
        }
        SessionsCommand::Append(a) => {
            let id = SessionId::parse(&a.id)?;
            let event = event_from_json(&a.event)?;
            let logged = store.append(&id, vec![event]).await?;
            store.close(&id).await?;
            for e in &logged {
                output::stdout_line(&encode_line(e)?);
            }
        }
        SessionsCommand::Reindex => {
            let n = opened.reindex().await?;
            output::stdout_line(&json!({"sessions": n}).to_string());
        }
        SessionsCommand::Migrate(_) => {
            bail!("`agent sessions migrate` opens two stores; it does not run on one")
        }
    }
    Ok(Exit::Success)
}

/// `dir` made absolute the way sessions record their directory (`.` components removed).
fn absolute_dir(dir: &std::path::Path) -> Result<PathBuf> {
    std::path::absolute(dir).with_context(|| format!("cannot make {} absolute", dir.display()))
}

/// Reads a file, or stdin for `-`.
fn read_input(path: &PathBuf) -> Result<String> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the events from stdin")?;
        return Ok(text);
    }
    std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read {}; pass an events JSONL file, or - for stdin",
            path.display()
        )
    })
}

/// An event given on the command line: a JSON object with at least `type`; the envelope fields
/// it lacks are filled in (the store assigns `seq` and `parent` when appending).
fn event_from_json(text: &str) -> Result<Event> {
    let value: Value = serde_json::from_str(text)
        .with_context(|| format!("--event is not JSON: {text}; give one event object"))?;
    let Value::Object(mut object) = value else {
        anyhow::bail!(
            "--event must be a JSON object such as {{\"type\":\"user.message\",\"text\":\"hi\"}}"
        );
    };
    if !object.contains_key("type") {
        anyhow::bail!(
            "--event has no \"type\"; e.g. {{\"type\":\"user.message\",\"text\":\"hi\"}}"
        );
    }
    object
        .entry("v")
        .or_insert_with(|| json!(EVENT_FORMAT_VERSION));
    object.entry("seq").or_insert_with(|| json!(0));
    object
        .entry("id")
        .or_insert_with(|| json!(EventId::new().0));
    object.entry("ts").or_insert_with(|| json!(now_rfc3339()));
    let line = Value::Object(object).to_string();
    decode_line(&line).with_context(|| format!("--event is not a valid event: {text}"))
}

/// One line of `list`: id, last update, message count, title (or first prompt).
fn list_line(m: &SessionMetadata) -> String {
    let label = m
        .title
        .as_deref()
        .or(m.first_prompt.as_deref())
        .unwrap_or("");
    let tags = if m.tags.is_empty() {
        String::new()
    } else {
        format!(" [{}]", m.tags.join(","))
    };
    output::sanitize(&format!(
        "{}  {}  {:>5} msgs  {}{}",
        m.id,
        m.updated_at,
        m.message_count,
        shorten(&label.replace('\n', " "), 80),
        tags
    ))
}

/// The header `show` prints before the events.
fn header(m: &SessionMetadata) -> String {
    let mut lines = vec![format!("session {}", m.id)];
    if let Some(t) = &m.title {
        lines.push(format!("title    {t}"));
    }
    if let Some(c) = &m.cwd {
        lines.push(format!("cwd      {c}"));
    }
    if let Some(b) = &m.git_branch {
        lines.push(format!("branch   {b}"));
    }
    if let Some(p) = &m.parent_id {
        lines.push(format!(
            "forked   from {p} at {}",
            m.fork_point.as_deref().unwrap_or("its start")
        ));
    }
    if !m.tags.is_empty() {
        lines.push(format!("tags     {}", m.tags.join(", ")));
    }
    lines.push(format!("created  {}", m.created_at));
    lines.push(format!("updated  {}", m.updated_at));
    lines.push(format!(
        "events   {} ({} messages, {} bytes)",
        m.event_count, m.message_count, m.size_bytes
    ));
    lines.join("\n")
}

/// One event as `seq  ts  type  summary`, the summary being its payload's JSON on one line.
fn event_line(e: &Event) -> String {
    let value = encode_line(e).map(|line| serde_json::from_str::<Value>(&line));
    let summary = match value {
        Ok(Ok(Value::Object(mut o))) => {
            for key in ["v", "seq", "id", "parent", "ts", "type"] {
                o.remove(key);
            }
            // A lone text field reads better bare.
            match (o.len(), o.get("text")) {
                (1, Some(Value::String(t))) => t.replace('\n', " "),
                _ => Value::Object(o).to_string(),
            }
        }
        _ => String::new(),
    };
    format!(
        "{:>6}  {}  {:<20} {}",
        e.seq,
        e.ts,
        e.type_name(),
        shorten(&summary, SUMMARY_CHARS)
    )
}

/// At most `max` characters, with `…` when cut.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}
