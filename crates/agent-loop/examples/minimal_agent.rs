//! The smallest useful agent: a session store, a provider, the built-in tools over a project,
//! and one prompt whose answer is printed as it streams.
//!
//! `cargo run -p agent-loop --example minimal_agent`
//!
//! It runs offline on a [`ScriptedProvider`] (a replayed conversation, clearly not a model).
//! With `ANTHROPIC_API_KEY` set it talks to Anthropic's `claude-sonnet-4-5` instead
//! (`ANTHROPIC_BASE_URL` overrides the endpoint).

#![allow(clippy::print_stdout, reason = "an example prints what it does")]

use std::io::Write as _;
use std::sync::Arc;

use agent_core::events::EventPayload;
use agent_loop::{Agent, AgentEvent, AgentOptions};
use agent_providers::{Provider, ProviderConfig, ProviderKind, ScriptedProvider, ScriptedTurn};
use agent_store::{SessionStore, StoreOptions};
use agent_tools::{ToolState, builtin_tools};
use futures_util::StreamExt as _;
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. A project for the agent to work in. A real host passes the user's directory (or a
    //    shadow workspace of it); here it is a temporary directory with one file.
    let project = tempfile::tempdir()?;
    std::fs::write(
        project.path().join("notes.txt"),
        "Remember: the release is on Friday.\n",
    )?;

    // 2. Where sessions are kept. Every step of the run is appended to a log there, so the
    //    session can be resumed later (see the `resumed_session` example).
    let sessions = tempfile::tempdir()?;
    let store = Arc::new(SessionStore::open(StoreOptions::new(sessions.path())).await?);

    // 3. The model. With a key in the environment, the real API; without one, a script that
    //    reads the file and answers, so the example runs offline.
    let (provider, model): (Arc<dyn Provider>, &str) =
        if std::env::var("ANTHROPIC_API_KEY").is_ok_and(|k| !k.trim().is_empty()) {
            let config = ProviderConfig::from_env(ProviderKind::Anthropic);
            (agent_providers::build(&config)?, "claude-sonnet-4-5")
        } else {
            let script = ScriptedProvider::new(vec![
                ScriptedTurn::tools(
                    Some("Let me read the notes."),
                    vec![("toolu_1", "Read", json!({"file_path": "notes.txt"}))],
                ),
                ScriptedTurn::text("The notes say the release is on Friday."),
            ]);
            (Arc::new(script), "scripted")
        };
    println!("provider: {} (model {model})\n", provider.name());

    // 4. The agent: the built-in tools (Read, Write, Edit, Glob, Grep, ...), every call going
    //    through the permission engine. Its defaults deny what would need a person's consent
    //    (there is no prompter here); reads inside the project are allowed in every mode.
    let mut agent = Agent::builder(provider, store, project.path())
        .options(AgentOptions::new(model).max_turns(5))
        .tools(builtin_tools(&ToolState::new()))
        .start()
        .await?;

    // 5. One prompt, streamed: text as it arrives, each logged tool call and its result, and
    //    the run's result last.
    //    The stream borrows the agent until it is dropped; `Box::pin` makes it pollable.
    let mut events = Box::pin(agent.query("What do my notes say? Answer in one sentence."));
    while let Some(event) = events.next().await {
        match event? {
            AgentEvent::TextDelta(text) => {
                print!("{text}");
                std::io::stdout().flush()?;
            }
            AgentEvent::Logged(e) => match &e.payload {
                EventPayload::ToolUse(u) => println!("\n[tool] {} {}", u.name, u.input),
                EventPayload::ToolResult(r) => {
                    let kind = if r.is_error { "error" } else { "ok" };
                    println!("[tool result: {kind}]");
                }
                _ => {}
            },
            AgentEvent::Notice(n) => println!("\n[notice] {n}"),
            AgentEvent::Retry(r) => println!("\n[retrying in {:?} after {}]", r.delay, r.reason),
            AgentEvent::Finished(result) => {
                println!("\n\nresult: {result:#?}");
            }
        }
    }
    drop(events);

    // 6. Close the session: SessionEnd hooks run and the log is released for writing.
    println!("session: {}", agent.session_id());
    agent.close().await?;
    Ok(())
}
