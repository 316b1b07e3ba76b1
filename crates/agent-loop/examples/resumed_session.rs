//! Resume and fork: run a prompt, close the agent, pick the session up again (its model and
//! conversation restored from the log), then fork it at an earlier event.
//!
//! `cargo run -p agent-loop --example resumed_session`

#![allow(clippy::print_stdout, reason = "an example prints what it does")]

use std::sync::Arc;

use agent_core::events::{EventId, EventPayload};
use agent_loop::{Agent, AgentOptions};
use agent_providers::{ScriptedProvider, ScriptedTurn};
use agent_store::recovery::ResumeOptions;
use agent_store::{LoadRange, SessionBackend, SessionStore, StoreOptions};
use agent_tools::{ToolState, builtin_tools};
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let project = tempfile::tempdir()?;
    std::fs::write(
        project.path().join("todo.txt"),
        "- write the changelog\n- tag v1.2\n",
    )?;
    let sessions = tempfile::tempdir()?;
    let store = Arc::new(SessionStore::open(StoreOptions::new(sessions.path())).await?);

    // 1. A first run, in a new session, on the model "reviewer-model" (a name the scripted
    //    provider ignores, but the session records). Two prompts, so there is an earlier
    //    point to fork at later.
    let provider = Arc::new(ScriptedProvider::new(vec![
        ScriptedTurn::tools(
            None,
            vec![("toolu_1", "Read", json!({"file_path": "todo.txt"}))],
        ),
        ScriptedTurn::text("Two items: write the changelog, tag v1.2."),
        ScriptedTurn::text("Start with the changelog."),
    ]));
    let mut agent = Agent::builder(provider, store.clone(), project.path())
        .options(AgentOptions::new("reviewer-model"))
        .tools(builtin_tools(&ToolState::new()))
        .start()
        .await?;
    agent.prompt("What is on my todo list?").await?;
    agent.prompt("Which one first?").await?;
    let id = agent.session_id().clone();
    println!(
        "first run: session {id}, model {}, {} messages",
        agent.model(),
        agent.history().messages().len()
    );
    // Closing releases the session's log for writing (another process may now resume it).
    agent.close().await?;

    // 2. The event to fork at later: the first answer (`assistant.message`) of the log.
    let log = store.load(&id, LoadRange::default()).await?.events;
    let first_answer: EventId = log
        .iter()
        .find(|e| matches!(e.payload, EventPayload::AssistantMessage(_)))
        .map(|e| e.id.clone())
        .ok_or("the log has no assistant message")?;

    // 3. Resume by id. No model is given (`""`), so the session's model is restored; the
    //    conversation is rebuilt from the log and sent with the next prompt.
    let provider = Arc::new(ScriptedProvider::new(vec![ScriptedTurn::text(
        "You asked about your todo list; the changelog comes first.",
    )]));
    let mut resumed = Agent::builder(provider.clone(), store.clone(), project.path())
        .options(AgentOptions::new("").resume(ResumeOptions {
            session_id: Some(id.clone()),
            ..ResumeOptions::default()
        }))
        .tools(builtin_tools(&ToolState::new()))
        .start()
        .await?;
    let restored = resumed.history().messages().len();
    println!(
        "resumed:   session {}, model {} (restored), {restored} messages carried over",
        resumed.session_id(),
        resumed.model()
    );
    let answer = resumed.prompt("What did I ask you before?").await?;
    let sent = provider.requests()[0].messages.len();
    println!(
        "           the model received {sent} messages with the new prompt; it answered {:?}",
        answer.final_text
    );
    if resumed.session_id() != &id || resumed.model() != "reviewer-model" || sent != restored + 1 {
        return Err("the session was not resumed as it was".into());
    }
    resumed.close().await?;

    // 4. Fork at the first answer: `resume_at` keeps the history up to (and including) that
    //    event in a *new* session; the original log is never cut.
    let mut fork = Agent::builder(
        Arc::new(ScriptedProvider::new(vec![ScriptedTurn::text(
            "Tag v1.2 first, then.",
        )])),
        store.clone(),
        project.path(),
    )
    .options(AgentOptions::new("").resume(ResumeOptions {
        session_id: Some(id.clone()),
        resume_at: Some(first_answer),
        ..ResumeOptions::default()
    }))
    .tools(builtin_tools(&ToolState::new()))
    .start()
    .await?;
    let forked = fork.history().messages().len();
    println!(
        "forked:    session {} from {}, {forked} messages (the original has {})",
        fork.session_id(),
        fork.forked_from().map_or("?".into(), ToString::to_string),
        store.messages(&id, None).await?.len()
    );
    if fork.forked_from() != Some(&id) || forked >= restored {
        return Err("the fork is not a shorter copy".into());
    }
    // The fork goes its own way; the original session is untouched.
    fork.prompt("Actually, what should come first?").await?;
    fork.close().await?;
    println!(
        "done: {} sessions in the store",
        store.list(Default::default()).await?.len()
    );
    Ok(())
}
