//! The protocol table of claude-code.md §5.5–§5.6: exit 0 / 2 / 1 / 127 / timeout × empty /
//! plain / JSON / invalid-JSON / schema-invalid-JSON stdout, for six events. Every row is checked
//! twice: through the pure interpreter, and through a real `sh -c` command hook.

use agent_core::hooks::protocol::{OnFailure, RawExit, RawRun, interpret};
use agent_core::hooks::{Decision, HookEvent, HookInput, HookOutcome, HookRegistry, HooksConfig};
use agent_core::settings::Settings;
use serde_json::json;

const EVENTS: [HookEvent; 6] = [
    HookEvent::PreToolUse,
    HookEvent::PostToolUse,
    HookEvent::UserPromptSubmit,
    HookEvent::Stop,
    HookEvent::SessionStart,
    HookEvent::PermissionRequest,
];

#[derive(Clone, Copy, Debug)]
enum Exit {
    Code(i32),
    Timeout,
}

#[derive(Clone, Copy, Debug)]
enum Out {
    Empty,
    Plain,
    Json,
    Invalid,
    Schema,
}

const STDERR: &str = "stderr words";

/// Event-appropriate valid JSON.
fn json_for(event: HookEvent) -> String {
    match event {
        HookEvent::PreToolUse => json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "allow", "permissionDecisionReason": "json says allow"}}),
        HookEvent::SessionStart => json!({"hookSpecificOutput": {"hookEventName": "SessionStart",
            "additionalContext": "json context"}}),
        HookEvent::PermissionRequest => json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}),
        _ => json!({"decision": "block", "reason": "json says block"}),
    }
    .to_string()
}

fn stdout_for(out: Out, event: HookEvent) -> String {
    match out {
        Out::Empty => String::new(),
        Out::Plain => "plain words\n".into(),
        Out::Json => json_for(event),
        Out::Invalid => "{\"oops\": ".into(),
        Out::Schema => "{\"continue\": \"yes\"}".into(),
    }
}

/// One row: (exit, stdout) and the expected outcome for each of [`EVENTS`].
/// `decision:reason`, `ctx:text`, `notice` joined with `+`; `none` when nothing happened.
const TABLE: &[(Exit, Out, [&str; 6])] = &[
    // Exit 0: JSON is read; plain text is context only for UserPromptSubmit and SessionStart;
    // invalid JSON is plain text; schema-invalid JSON is a non-blocking error.
    (
        Exit::Code(0),
        Out::Empty,
        ["none", "none", "none", "none", "none", "none"],
    ),
    (
        Exit::Code(0),
        Out::Plain,
        [
            "none",
            "none",
            "ctx:plain words",
            "none",
            "ctx:plain words",
            "none",
        ],
    ),
    (
        Exit::Code(0),
        Out::Json,
        [
            "allow:json says allow",
            "block:json says block",
            "block:json says block",
            "block:json says block",
            "ctx:json context",
            "allow",
        ],
    ),
    (
        Exit::Code(0),
        Out::Invalid,
        [
            "none",
            "none",
            "ctx:{\"oops\":",
            "none",
            "ctx:{\"oops\":",
            "none",
        ],
    ),
    (Exit::Code(0), Out::Schema, ["notice"; 6]),
    // Exit 2 blocks where the event can block (stderr is the message unless the JSON gives a
    // reason; exit 2 beats a JSON allow; schema-invalid JSON still blocks); SessionStart
    // shows stderr to the user; PermissionRequest ignores it.
    (
        Exit::Code(2),
        Out::Empty,
        [
            "deny:stderr words",
            "block:stderr words",
            "block:stderr words",
            "block:stderr words",
            "notice",
            "none",
        ],
    ),
    (
        Exit::Code(2),
        Out::Plain,
        [
            "deny:stderr words",
            "block:stderr words",
            "block:stderr words",
            "block:stderr words",
            "notice",
            "none",
        ],
    ),
    (
        Exit::Code(2),
        Out::Json,
        [
            "deny:stderr words",
            "block:json says block",
            "block:json says block",
            "block:json says block",
            "ctx:json context+notice",
            "none",
        ],
    ),
    (
        Exit::Code(2),
        Out::Invalid,
        [
            "deny:stderr words",
            "block:stderr words",
            "block:stderr words",
            "block:stderr words",
            "notice",
            "none",
        ],
    ),
    (
        Exit::Code(2),
        Out::Schema,
        [
            "deny:stderr words",
            "block:stderr words",
            "block:stderr words",
            "block:stderr words",
            "notice",
            "none",
        ],
    ),
    // Exit 1 (any other code): non-blocking, unless stdout is schema-valid JSON, which is
    // honoured.
    (Exit::Code(1), Out::Empty, ["notice"; 6]),
    (Exit::Code(1), Out::Plain, ["notice"; 6]),
    (
        Exit::Code(1),
        Out::Json,
        [
            "allow:json says allow",
            "block:json says block",
            "block:json says block",
            "block:json says block",
            "ctx:json context",
            "allow",
        ],
    ),
    (Exit::Code(1), Out::Invalid, ["notice"; 6]),
    (Exit::Code(1), Out::Schema, ["notice"; 6]),
    // Exit 127 (not found) and 126: the hook did not run; fail open.
    (Exit::Code(127), Out::Empty, ["notice"; 6]),
    (Exit::Code(127), Out::Plain, ["notice"; 6]),
    (Exit::Code(127), Out::Json, ["notice"; 6]),
    (Exit::Code(127), Out::Invalid, ["notice"; 6]),
    (Exit::Code(127), Out::Schema, ["notice"; 6]),
    // Timeout: output discarded, no decision, fail open.
    (Exit::Timeout, Out::Empty, ["notice"; 6]),
    (Exit::Timeout, Out::Plain, ["notice"; 6]),
    (Exit::Timeout, Out::Json, ["notice"; 6]),
    (Exit::Timeout, Out::Invalid, ["notice"; 6]),
    (Exit::Timeout, Out::Schema, ["notice"; 6]),
];

fn render(o: &HookOutcome) -> String {
    let mut parts = Vec::new();
    if o.decision != Decision::None {
        parts.push(match &o.reason {
            Some(r) => format!("{}:{r}", o.decision.as_str()),
            None => o.decision.as_str().to_owned(),
        });
    }
    if !o.additional_context.is_empty() {
        parts.push(format!("ctx:{}", o.additional_context.join("|")));
    }
    if !o.notices.is_empty() {
        parts.push("notice".into());
    }
    if !o.continue_ {
        parts.push("stop".into());
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join("+")
    }
}

#[test]
fn pure_interpreter_follows_the_table() {
    assert_eq!(TABLE.len(), 25);
    for (exit, out, expected) in TABLE {
        for (event, want) in EVENTS.iter().zip(expected) {
            let raw = RawRun {
                exit: match exit {
                    Exit::Code(c) => RawExit::Code(*c),
                    Exit::Timeout => RawExit::TimedOut,
                },
                stdout: stdout_for(*out, *event),
                stderr: STDERR.into(),
            };
            let got = render(&interpret(*event, OnFailure::Continue, "h", &raw));
            assert_eq!(&got, want, "{exit:?} × {out:?} on {event}");
        }
    }
}

fn input_for(event: HookEvent, cwd: &std::path::Path) -> HookInput {
    let mut v = json!({"session_id": "s-proto", "cwd": cwd.to_str().unwrap()});
    let m = v.as_object_mut().unwrap();
    match event {
        HookEvent::PreToolUse | HookEvent::PermissionRequest => {
            m.insert("tool_name".into(), json!("Bash"));
            m.insert("tool_input".into(), json!({"command": "ls"}));
        }
        HookEvent::PostToolUse => {
            m.insert("tool_name".into(), json!("Bash"));
            m.insert("tool_input".into(), json!({"command": "ls"}));
            m.insert("tool_response".into(), json!({"stdout": "x"}));
        }
        HookEvent::UserPromptSubmit => {
            m.insert("prompt".into(), json!("hello"));
        }
        HookEvent::SessionStart => {
            m.insert("source".into(), json!("startup"));
        }
        _ => {}
    }
    HookInput::from_json(event, v).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_command_hooks_follow_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    for (i, (exit, out, expected)) in TABLE.iter().enumerate() {
        for (j, (event, want)) in EVENTS.iter().zip(expected).enumerate() {
            let file = dir.path().join(format!("out-{i}-{j}"));
            std::fs::write(&file, stdout_for(*out, *event)).unwrap();
            let body = format!("cat '{}'; printf '{STDERR}' >&2", file.display());
            let (command, timeout) = match exit {
                Exit::Code(127) => (format!("{body}; exit 127"), 10.0),
                Exit::Code(c) => (format!("cat >/dev/null; {body}; exit {c}"), 10.0),
                Exit::Timeout => (format!("{body}; sleep 30"), 0.3),
            };
            let settings = Settings::from_value(
                json!({"hooks": {event.as_str(): [{"hooks": [
                    {"type": "command", "command": command, "timeout": timeout}]}]}}),
                "table.json",
                dir.path(),
                dir.path(),
            )
            .unwrap();
            let mut reg = HookRegistry::new();
            reg.load(&HooksConfig::from_settings(&settings).unwrap())
                .unwrap();
            cases.push((
                format!("{exit:?} × {out:?} on {event}"),
                *want,
                reg,
                input_for(*event, dir.path()),
            ));
        }
    }
    let runs = futures_util::future::join_all(cases.iter().map(|(_, _, reg, input)| {
        let input = input.clone();
        async move { reg.execute(input).await }
    }))
    .await;
    for ((name, want, _, _), run) in cases.iter().zip(runs) {
        assert_eq!(run.runs.len(), 1, "{name}");
        assert_eq!(&render(&run.outcome), want, "{name}");
    }
}

#[test]
fn on_failure_block_turns_failures_into_blocks() {
    let raw = RawRun {
        exit: RawExit::Code(1),
        stdout: String::new(),
        stderr: "crashed".into(),
    };
    let rendered: Vec<String> = EVENTS
        .iter()
        .map(|e| {
            let o = interpret(*e, OnFailure::Block, "h", &raw);
            format!(
                "{}{}",
                o.decision.as_str(),
                if o.continue_ { "" } else { "+stop" }
            )
        })
        .collect();
    assert_eq!(
        rendered,
        ["deny", "block", "block", "block", "none+stop", "deny"]
    );
    for exit in [
        RawExit::TimedOut,
        RawExit::Code(127),
        RawExit::Failed("gone".into()),
    ] {
        let o = interpret(
            HookEvent::PreToolUse,
            OnFailure::Block,
            "h",
            &RawRun {
                exit,
                stdout: String::new(),
                stderr: String::new(),
            },
        );
        assert_eq!(o.decision, Decision::Deny);
        assert!(o.reason.unwrap().contains("fail closed"));
    }
    // Exit 2 and a clean exit 0 are not failures.
    let ok = interpret(
        HookEvent::PreToolUse,
        OnFailure::Block,
        "h",
        &RawRun {
            exit: RawExit::Code(0),
            stdout: String::new(),
            stderr: String::new(),
        },
    );
    assert_eq!(ok.decision, Decision::None);
}

#[test]
fn json_details_of_section_5_6() {
    let run = |event: HookEvent, exit: i32, stdout: serde_json::Value| {
        interpret(
            event,
            OnFailure::Continue,
            "h",
            &RawRun {
                exit: RawExit::Code(exit),
                stdout: stdout.to_string(),
                stderr: String::new(),
            },
        )
    };
    // Deprecated top-level approve / block on PreToolUse.
    let o = run(
        HookEvent::PreToolUse,
        0,
        json!({"decision": "approve", "reason": "ok"}),
    );
    assert_eq!(
        (o.decision, o.reason.as_deref()),
        (Decision::Allow, Some("ok"))
    );
    let o = run(
        HookEvent::PreToolUse,
        0,
        json!({"decision": "block", "reason": "no"}),
    );
    assert_eq!(
        (o.decision, o.reason.as_deref()),
        (Decision::Deny, Some("no"))
    );
    // A bare top-level permissionDecision is not a decision (#4669), and says so.
    let o = run(
        HookEvent::PreToolUse,
        0,
        json!({"permissionDecision": "deny"}),
    );
    assert_eq!(o.decision, Decision::None);
    assert!(
        o.notices[0].contains("hookSpecificOutput"),
        "{:?}",
        o.notices
    );
    // continue:false wins over everything and stops the agent.
    let o = run(
        HookEvent::PreToolUse,
        0,
        json!({"continue": false, "stopReason": "enough",
               "hookSpecificOutput": {"permissionDecision": "allow"}}),
    );
    assert!(!o.continue_);
    assert_eq!(
        o.pre_tool_use().decision,
        Some(agent_core::permissions::HookDecision::Deny)
    );
    assert_eq!(o.stop_reason.as_deref(), Some("enough"));
    // updatedInput with ask; systemMessage; additionalContext.
    let o = run(
        HookEvent::PreToolUse,
        0,
        json!({"systemMessage": "careful", "hookSpecificOutput": {"permissionDecision": "ask",
               "updatedInput": {"command": "ls -la"}, "additionalContext": "ctx"}}),
    );
    assert_eq!(o.decision, Decision::Ask);
    assert_eq!(o.updated_input, Some(json!({"command": "ls -la"})));
    assert_eq!(o.system_message.as_deref(), Some("careful"));
    assert_eq!(o.additional_context, vec!["ctx"]);
    // PermissionRequest deny with interrupt.
    let o = run(
        HookEvent::PermissionRequest,
        0,
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "nope", "interrupt": true}}}),
    );
    assert_eq!(
        (o.decision, o.reason.as_deref()),
        (Decision::Deny, Some("nope"))
    );
    // Stop block without a reason still continues the agent, with a default instruction.
    let o = run(HookEvent::Stop, 0, json!({"decision": "block"}));
    assert_eq!(o.decision, Decision::Block);
    assert!(o.reason.is_some());
    // Document 000's block / message.
    let o = run(
        HookEvent::PreToolUse,
        0,
        json!({"block": true, "message": "Intercepted"}),
    );
    assert_eq!(
        (o.decision, o.reason.as_deref()),
        (Decision::Deny, Some("Intercepted"))
    );
    // A hookEventName for another event is a schema error: fail open with a notice.
    let o = run(
        HookEvent::PreToolUse,
        0,
        json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "deny"}}),
    );
    assert_eq!(o.decision, Decision::None);
    assert_eq!(o.notices.len(), 1);
    // WorktreeCreate fails on any non-zero exit.
    let o = run(HookEvent::WorktreeCreate, 1, json!("x"));
    assert_eq!(o.decision, Decision::Block);
}
