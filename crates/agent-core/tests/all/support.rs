//! Shared fixtures: a fixed fake project and home (paths that need not exist: resolution then
//! works lexically), and helpers to build engines and calls.

use agent_core::permissions::{
    Behavior, PermissionDecision, PermissionEngine, PermissionMode, PreToolUseOutcome, Step,
    ToolCall,
};
use agent_core::settings::Settings;
use serde_json::{Value, json};
use std::path::Path;

pub const CWD: &str = "/srv/agent-fixture/proj";
pub const HOME: &str = "/srv/agent-fixture/home";

pub fn settings(value: Value) -> Settings {
    Settings::from_value(value, "fixture.json", Path::new(CWD), Path::new(HOME)).unwrap()
}

pub fn engine(value: Value, mode: PermissionMode) -> PermissionEngine {
    PermissionEngine::builder(CWD, HOME)
        .settings(&settings(value))
        .mode(mode)
        .build()
        .unwrap()
}

/// The input of a call, from a short form: Bash takes the command, file tools the path,
/// WebFetch the URL; anything else is parsed as JSON.
pub fn input(tool: &str, arg: &str) -> Value {
    if arg.starts_with('{')
        && let Ok(v) = serde_json::from_str(arg)
    {
        return v;
    }
    match tool {
        "Bash" => json!({ "command": arg }),
        "Read" | "Edit" | "Write" | "MultiEdit" => {
            json!({ "file_path": arg, "content": "x", "old_string": "a", "new_string": "b" })
        }
        "NotebookEdit" => json!({ "notebook_path": arg }),
        "Glob" | "Grep" => json!({ "pattern": "*", "path": arg }),
        "WebFetch" => json!({ "url": arg, "prompt": "p" }),
        _ => serde_json::from_str(arg).unwrap_or_else(|_| json!({ "value": arg })),
    }
}

pub fn check(engine: &PermissionEngine, tool: &str, arg: &str) -> PermissionDecision {
    engine.check(
        &ToolCall::new(tool, input(tool, arg)),
        &PreToolUseOutcome::default(),
    )
}

/// Under the allow rule `rule`, the command `cmd` asks at `step` in default mode and is denied
/// in dontAsk.
pub fn asked_under(rule: &str, cmd: &str, step: Step) {
    let e = engine(
        json!({"permissions": {"allow": [rule]}}),
        PermissionMode::Default,
    );
    let d = check(&e, "Bash", cmd);
    assert_eq!(
        (d.behavior, d.step),
        (Behavior::Ask, step),
        "{rule}: {cmd:?}: {}",
        d.reason
    );
    let e = engine(
        json!({"permissions": {"allow": [rule]}}),
        PermissionMode::DontAsk,
    );
    assert_eq!(
        check(&e, "Bash", cmd).behavior,
        Behavior::Deny,
        "dontAsk {rule}: {cmd:?}"
    );
}

/// Under the allow rule `rule`, the command `cmd` is allowed in default mode.
pub fn allowed_under(rule: &str, cmd: &str) {
    let e = engine(
        json!({"permissions": {"allow": [rule]}}),
        PermissionMode::Default,
    );
    let d = check(&e, "Bash", cmd);
    assert_eq!(d.behavior, Behavior::Allow, "{rule}: {cmd:?}: {}", d.reason);
}
