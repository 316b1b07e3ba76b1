//! The conversation both session benches write: realistic events (user, assistant, tool use,
//! tool result) and whole logs of them, as `import` takes them.

use agent_core::events::{
    AssistantMessage, Event, EventId, EventPayload, SystemInit, ToolResultEvent, ToolUse,
    UserMessage, encode_line,
};
use serde_json::json;

/// The text of a message: about what a short chat turn holds.
pub fn text(i: usize) -> String {
    format!(
        "message {i}: please look at src/lib.rs and explain why the parser rejects the input \
         `let x = 1;` when it follows a comment; then propose a fix and a test for it."
    )
}

/// Event `i` (1-based) of a realistic conversation: user, assistant, tool use, tool result.
pub fn event(i: usize, parent: Option<EventId>) -> Event {
    let payload = match i % 4 {
        1 => EventPayload::UserMessage(UserMessage { text: text(i) }),
        2 => EventPayload::AssistantMessage(AssistantMessage::text(text(i))),
        3 => EventPayload::ToolUse(ToolUse {
            tool_use_id: format!("toolu_{i}"),
            name: "Read".into(),
            input: json!({"file_path": "/work/project/src/lib.rs"}),
            ..ToolUse::default()
        }),
        _ => EventPayload::ToolResult(ToolResultEvent {
            tool_use_id: format!("toolu_{}", i - 1),
            output: json!(text(i)),
            is_error: false,
            error_type: None,
            error_message: None,
        }),
    };
    Event::new(i as u64, parent, payload)
}

/// The log of a session of `n` events (system.init then `n - 1` conversation events).
pub fn log_text(id: &str, n: usize) -> String {
    let mut out = String::new();
    let mut parent = None;
    for i in 0..n {
        let e = if i == 0 {
            Event::new(
                1,
                None,
                EventPayload::SystemInit(SystemInit {
                    session_id: id.into(),
                    cwd: Some("/work/project".into()),
                    model: Some("claude-sonnet-4-6".into()),
                    tools: vec!["Read".into(), "Bash".into()],
                    permission_mode: None,
                    git_branch: None,
                }),
            )
        } else {
            event(i + 1, parent.take())
        };
        parent = Some(e.id.clone());
        out += &encode_line(&e).unwrap();
        out.push('\n');
    }
    out
}

/// A user message to append (the store assigns `seq` and parent).
pub fn user(i: usize) -> Event {
    Event::new(
        0,
        None,
        EventPayload::UserMessage(UserMessage { text: text(i) }),
    )
}
