//! A tour of the session store: create, append, read the tail, fork, resume.
//!
//! `cargo run -p agent-store --example sessions` (works in a temporary store).

#![allow(clippy::print_stdout, reason = "an example prints what it does")]

use agent_core::events::{AssistantMessage, Event, EventPayload, UserMessage};
use agent_store::recovery::{ResumeOptions, resume};
use agent_store::{
    ForkAt, ForkOptions, ListQuery, LoadRange, NewSession, SessionBackend, SessionStore,
    StoreOptions,
};

fn say(user: bool, text: &str) -> Event {
    let payload = if user {
        EventPayload::UserMessage(UserMessage { text: text.into() })
    } else {
        EventPayload::AssistantMessage(AssistantMessage::text(text))
    };
    // seq and parent are filled in by the store.
    Event::new(0, None, payload)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let store = SessionStore::open(StoreOptions::new(dir.path().join("sessions"))).await?;

    // A session in /work/app, with two exchanges.
    let session = store
        .create(NewSession {
            cwd: Some("/work/app".into()),
            title: Some("Parser bug".into()),
            ..NewSession::default()
        })
        .await?;
    store
        .append(
            &session.id,
            vec![
                say(true, "Why does the parser reject `let x = 1;`?"),
                say(false, "A missing token rule."),
            ],
        )
        .await?;
    store
        .append(
            &session.id,
            vec![say(true, "Fix it."), say(false, "Done, with a test.")],
        )
        .await?;
    store.close(&session.id).await?;

    // The last two events, read from the end of the log.
    let tail = store
        .load(
            &session.id,
            LoadRange {
                offset: 0,
                limit: Some(2),
            },
        )
        .await?;
    for e in &tail.events {
        println!("#{} {}", e.seq, e.type_name());
    }

    // A fork after the first exchange.
    let fork = store
        .fork(
            &session.id,
            ForkOptions {
                at: ForkAt::UpToMessage(2),
                new_id: None,
            },
        )
        .await?;
    println!(
        "forked {} from {:?}: {} messages",
        fork.id, fork.parent_id, fork.message_count
    );

    // What the agent loop does on `--continue`: the latest session of this directory.
    let options = ResumeOptions {
        continue_recent: true,
        cwd: Some("/work/app".into()),
        ..ResumeOptions::default()
    };
    if let Some(r) = resume(&store, &options).await? {
        println!(
            "resuming {} ({}) with {} messages",
            r.session.id,
            r.hook_source(),
            r.messages.len()
        );
    }

    for m in store.list(ListQuery::default()).await? {
        println!("{}  {:?}  {} messages", m.id, m.title, m.message_count);
    }
    Ok(())
}
