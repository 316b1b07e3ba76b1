//! A log written by a newer version (unknown types and fields) survives a read and a write by
//! this one, line for line.

use agent_core::events::{EventPayload, JsonlReader, encode_line};

const LOG: &str = include_str!("fixtures/future-session.jsonl");

#[test]
fn future_log_round_trips_byte_for_byte() {
    let events: Vec<_> = JsonlReader::new(LOG.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(events.len(), 7);
    assert!(
        matches!(&events[2].payload, EventPayload::Unknown { type_name } if type_name == "assistant.thinking")
    );
    assert_eq!(events[1].extra.keys().collect::<Vec<_>>(), ["attachments"]);
    assert_eq!(events[6].v, 2);
    for (event, line) in events.iter().zip(LOG.lines()) {
        assert_eq!(encode_line(event).unwrap(), line);
    }
}

#[test]
fn every_known_type_round_trips() {
    use agent_core::events::*;
    use serde_json::json;
    let payloads = vec![
        EventPayload::SystemInit(SystemInit {
            session_id: "s".into(),
            cwd: Some("/r".into()),
            model: None,
            tools: vec!["Bash".into()],
            permission_mode: None,
            git_branch: Some("main".into()),
        }),
        EventPayload::UserMessage(UserMessage { text: "hi".into() }),
        EventPayload::AssistantDelta(AssistantDelta {
            text_delta: "h".into(),
        }),
        EventPayload::AssistantMessage(AssistantMessage {
            text: "hello".into(),
            message_id: Some("msg_1".into()),
            request_id: Some("req_1".into()),
            model: Some("claude-x".into()),
            usage: Some(TokenUsage {
                input_tokens: 1,
                output_tokens: 2,
                cache_creation_input_tokens: 3,
                cache_read_input_tokens: 4,
            }),
        }),
        EventPayload::ToolUse(ToolUse {
            tool_use_id: "t".into(),
            name: "Bash".into(),
            input: json!({"command": "ls"}),
            ..ToolUse::default()
        }),
        EventPayload::ToolResult(ToolResultEvent {
            tool_use_id: "t".into(),
            output: json!("ok"),
            is_error: true,
            error_type: Some("timeout".into()),
            error_message: Some("slow".into()),
        }),
        EventPayload::PermissionQuestion(PermissionQuestion {
            question_id: "q".into(),
            tool_name: "Bash".into(),
            prompt: "ok?".into(),
        }),
        EventPayload::PermissionDecision(PermissionDecisionEvent {
            question_id: "q".into(),
            allowed: false,
            decision: Some("deny".into()),
            step: Some("deny_rule".into()),
            rule: Some("Bash(rm *)".into()),
            rule_source: Some("f#permissions.deny[0]".into()),
            reason: Some("no".into()),
        }),
        EventPayload::HookRun(HookRun {
            event: "PreToolUse".into(),
            matcher: Some("Bash".into()),
            outcome: "deny".into(),
            duration_ms: 12,
            command: Some("x.sh".into()),
        }),
        EventPayload::WorkspaceImport(WorkspaceImport {
            root: "/r".into(),
            files: Some(3),
        }),
        EventPayload::WorkspaceDiff(WorkspaceDiff {
            added: vec!["a".into()],
            modified: vec![],
            deleted: vec!["b".into()],
        }),
        EventPayload::WorkspaceCommit(WorkspaceCommit {
            applied: vec!["a".into()],
            conflicts: vec!["c".into()],
        }),
        EventPayload::Compaction(Compaction {
            summary: "s".into(),
            from_seq: 1,
            to_seq: 9,
        }),
        EventPayload::SubagentStart(SubagentStart {
            agent_id: "a".into(),
            agent_type: Some("Explore".into()),
            prompt: None,
        }),
        EventPayload::SubagentStop(SubagentStop {
            agent_id: "a".into(),
            final_text: Some("done".into()),
        }),
        EventPayload::Error(ErrorEvent {
            message: "boom".into(),
            error_type: None,
        }),
        EventPayload::Result(ResultEvent {
            final_text: "done".into(),
            stop_reason: Some("end_turn".into()),
            usage: Some(json!({"input_tokens": 1})),
        }),
        EventPayload::SessionTitle(SessionTitle { title: "t".into() }),
        EventPayload::SessionTag(SessionTag {
            tag: "x".into(),
            removed: true,
        }),
        EventPayload::SessionFork(SessionFork {
            parent_session_id: "p".into(),
            fork_point: Some("e".into()),
            fork_seq: 4,
        }),
    ];
    assert_eq!(payloads.len(), EventPayload::KNOWN_TYPES.len());
    for (i, p) in payloads.into_iter().enumerate() {
        assert_eq!(p.type_name(), EventPayload::KNOWN_TYPES[i]);
        let e = Event::new(i as u64 + 1, None, p);
        let back = decode_line(&encode_line(&e).unwrap()).unwrap();
        assert_eq!(back, e);
        assert!(back.extra.is_empty(), "{}: {:?}", e.type_name(), back.extra);
    }
}

#[test]
fn answer_fields_are_camel_case_on_the_wire_and_absent_in_older_logs() {
    use agent_core::events::*;
    use serde_json::{Value, json};
    let usage = TokenUsage {
        input_tokens: 10,
        output_tokens: 5,
        cache_creation_input_tokens: 2000,
        cache_read_input_tokens: 300,
    };
    let call = Event::new(
        1,
        None,
        EventPayload::ToolUse(ToolUse {
            tool_use_id: "t".into(),
            name: "Read".into(),
            input: json!({}),
            message_id: Some("msg_1".into()),
            request_id: Some("req_1".into()),
            model: Some("claude-x".into()),
            usage: Some(usage),
        }),
    );
    let line: Value = serde_json::from_str(&encode_line(&call).unwrap()).unwrap();
    assert_eq!(line["messageId"], "msg_1");
    assert_eq!(line["requestId"], "req_1");
    assert_eq!(line["model"], "claude-x");
    assert_eq!(
        line["usage"],
        json!({"inputTokens": 10, "outputTokens": 5, "cacheCreationInputTokens": 2000, "cacheReadInputTokens": 300})
    );
    // A line written before these fields existed still loads, without them.
    let old = r#"{"v":1,"seq":2,"id":"e2","parent":null,"ts":"2026-01-01T00:00:00Z","type":"assistant.message","text":"hi"}"#;
    let EventPayload::AssistantMessage(m) = decode_line(old).unwrap().payload else {
        panic!("not an assistant.message")
    };
    assert_eq!(m, AssistantMessage::text("hi"));
    assert_eq!(
        encode_line(&decode_line(old).unwrap()).unwrap(),
        old,
        "written back unchanged"
    );
}
