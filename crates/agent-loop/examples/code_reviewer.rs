//! A read-only code reviewer: it may look at the project but never change it or run anything.
//!
//! `cargo run -p agent-loop --example code_reviewer`
//!
//! Three layers keep it read-only, each enough on its own:
//! - it is only given the Read, Glob and Grep tools (and no `Task` subagents);
//! - the permission engine runs in `plan` mode, with deny rules for `Edit`, `Write` and `Bash`
//!   and a [`ReadOnlyPolicy`] (a policy holds in every mode, even `bypassPermissions`);
//! - an in-process PreToolUse hook logs every call and denies any path outside the project.
//!
//! The model is scripted: it looks around, tries to read `/etc/passwd` (the hook denies it),
//! tries to fix the bug it found with `Edit` (the engine denies it), and writes its review.
//! The session log then shows each decision (`permission.decision` events).

#![allow(clippy::print_stdout, reason = "an example prints what it does")]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_core::events::EventPayload;
use agent_core::hooks::{EventFields, HookEvent, HookInput, HookOptions, HookOutput, HookRegistry};
use agent_core::permissions::{PermissionEngine, PermissionMode, ReadOnlyPolicy, RuleList};
use agent_loop::{Agent, AgentOptions};
use agent_providers::{ScriptedProvider, ScriptedTurn};
use agent_store::{LoadRange, SessionBackend, SessionStore, StoreOptions};
use agent_tools::{ToolState, builtin_tools};
use serde_json::json;

/// The PreToolUse hook: logs the call, and denies it when a path in its input leaves `project`.
fn guard(project: &Path, input: &HookInput) -> HookOutput {
    let EventFields::ToolUse(call) = &input.fields else {
        return HookOutput::default();
    };
    println!("[hook] {} {}", call.tool_name, call.tool_input);
    // Read takes `file_path`; Glob and Grep take an optional `path`. Relative paths are
    // relative to the project; `..` is resolved lexically, so `src/../../x` is caught too.
    let named = ["file_path", "path"]
        .iter()
        .filter_map(|k| call.tool_input.get(*k).and_then(|v| v.as_str()));
    for p in named {
        let full = agent_core::paths::normalize(&project.join(p));
        if !full.starts_with(project) {
            println!("[hook]   denied: {} is outside the project", full.display());
            return HookOutput::deny(format!(
                "{p} is outside the project under review; only files of the project may be read"
            ));
        }
    }
    HookOutput::default()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. The project under review: a small Python package with a bug. The path is
    //    canonicalised so the hook's prefix check sees the same path the tools do.
    let dir = tempfile::tempdir()?;
    let project: PathBuf = std::fs::canonicalize(dir.path())?;
    std::fs::create_dir(project.join("src"))?;
    std::fs::write(
        project.join("src/calc.py"),
        "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
    )?;
    std::fs::write(
        project.join("README.md"),
        "# calc\n\nAdds and multiplies.\n",
    )?;
    let sessions = tempfile::tempdir()?;
    let store = Arc::new(SessionStore::open(StoreOptions::new(sessions.path())).await?);

    // 2. Only the read-only built-in tools.
    let tools: Vec<_> = builtin_tools(&ToolState::new())
        .into_iter()
        .filter(|t| matches!(t.name(), "Read" | "Glob" | "Grep"))
        .collect();

    // 3. The permission engine: plan mode, deny rules, and a read-only policy. Reads inside
    //    the project are allowed in every mode; everything else would need someone to ask,
    //    and there is no prompter, so it is denied.
    let mut permissions = PermissionEngine::builder(&project, project.join(".home"))
        .mode(PermissionMode::Plan)
        .policy(Box::new(ReadOnlyPolicy));
    for rule in ["Edit", "Write", "Bash"] {
        permissions = permissions.rule(RuleList::Deny, rule)?;
    }

    // 4. The hook, registered in process for every tool (no matcher).
    let mut hooks = HookRegistry::new();
    let root = project.clone();
    hooks.register_fn(
        HookEvent::PreToolUse,
        HookOptions::default(),
        move |input| {
            let output = guard(&root, &input);
            async move { Ok(output) }
        },
    )?;

    // 5. The scripted review conversation (a real model would decide these steps itself).
    let provider = Arc::new(ScriptedProvider::new(vec![
        ScriptedTurn::tools(
            Some("I'll look at the project's layout and its functions."),
            vec![
                ("toolu_1", "Glob", json!({"pattern": "**/*"})),
                (
                    "toolu_2",
                    "Grep",
                    json!({"pattern": "^def ", "output_mode": "content"}),
                ),
            ],
        ),
        ScriptedTurn::tools(
            None,
            vec![
                ("toolu_3", "Read", json!({"file_path": "src/calc.py"})),
                ("toolu_4", "Read", json!({"file_path": "/etc/passwd"})),
            ],
        ),
        ScriptedTurn::tools(
            Some("`add` subtracts. Let me fix it."),
            vec![(
                "toolu_5",
                "Edit",
                json!({"file_path": "src/calc.py", "old_string": "a - b", "new_string": "a + b"}),
            )],
        ),
        ScriptedTurn::text(
            "Review of src/calc.py:\n\
             1. Bug: `add` returns `a - b`; it must return `a + b` (line 2).\n\
             2. Neither function has a docstring or a test; add tests for both.\n\
             3. README.md says what the module does but not how to use it.\n\
             I could not apply the fix myself: this reviewer is read-only.",
        ),
    ]));

    // 6. The agent, and the prompt.
    let mut agent = Agent::builder(provider, store.clone(), &project)
        .options(AgentOptions::new("scripted").max_turns(10))
        .permissions(permissions)
        .hooks(Arc::new(hooks))
        .tools(tools)
        .subagents(false)
        .start()
        .await?;
    println!("tools: {:?}, mode: {}\n", agent.tool_names(), agent.mode());
    let result = agent.prompt("Review this project.").await?;
    println!(
        "\n--- review ({}) ---\n{}\n",
        result.stop_reason, result.final_text
    );
    let id = agent.session_id().clone();
    agent.close().await?;

    // 7. What the log says: each call, the decision on it (which step made it and why), and
    //    whether it ran.
    let log = store.load(&id, LoadRange::default()).await?.events;
    let mut names: HashMap<String, String> = HashMap::new();
    println!("--- permission decisions (from the session log) ---");
    for event in &log {
        match &event.payload {
            EventPayload::ToolUse(u) => {
                names.insert(u.tool_use_id.clone(), format!("{} {}", u.name, u.input));
            }
            EventPayload::PermissionDecision(d) => {
                let call = names.get(&d.question_id).map_or("?", String::as_str);
                let verdict = if d.allowed { "allowed" } else { "DENIED" };
                println!(
                    "{verdict:>7} at step {:<9} {call}\n          {}",
                    d.step.as_deref().unwrap_or("?"),
                    d.reason.as_deref().unwrap_or("")
                );
            }
            _ => {}
        }
    }
    let edit_denied = log.iter().any(|e| {
        matches!(&e.payload, EventPayload::PermissionDecision(d)
            if !d.allowed && names.get(&d.question_id).is_some_and(|n| n.starts_with("Edit ")))
    });
    let unchanged = std::fs::read_to_string(project.join("src/calc.py"))?.contains("a - b");
    println!("\nthe Edit was denied: {edit_denied}; src/calc.py unchanged: {unchanged}");
    if !(edit_denied && unchanged) {
        return Err("the reviewer was able to change the project".into());
    }
    Ok(())
}
