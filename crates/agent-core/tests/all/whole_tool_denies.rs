//! Deny rules without an argument remove a tool from what the model is offered
//! (`PermissionEngine::denies_whole_tool`); a rule with an argument leaves it offered.

use agent_core::permissions::{
    Behavior, PermissionEngine, PermissionMode, PreToolUseOutcome, RuleList, Step, ToolCall,
};
use serde_json::json;

use crate::support::{CWD, HOME, engine, input, settings};

#[test]
fn a_deny_rule_without_argument_removes_the_whole_tool() {
    let e = engine(
        json!({"permissions": {
            "deny": ["Bash", "WebFetch", "mcp__gone", "mcp__glob__*", "mcp__one__drop", "Edit",
                     "Task"],
            // An allow rule does not bring a denied tool back: deny rules come first.
            "allow": ["Bash", "mcp__gone__x", "WebFetch"]
        }}),
        PermissionMode::BypassPermissions,
    );
    for tool in [
        "Bash",
        "WebFetch",
        "mcp__gone__x",
        "mcp__gone__y",
        "mcp__glob__a",
        "mcp__one__drop",
        "Edit",
        "Write",
        "MultiEdit",
        "NotebookEdit",
        "Agent",
    ] {
        let rule = e.denies_whole_tool(tool);
        assert!(rule.is_some(), "{tool} is still offered");
        // Called by name all the same, it is refused by the same rule.
        let arg = match tool {
            "Bash" => input("Bash", "ls"),
            "WebFetch" => input("WebFetch", "https://example.com/"),
            "Write" => json!({"file_path": format!("{CWD}/a.txt"), "content": "x"}),
            "Edit" | "MultiEdit" | "NotebookEdit" => input(tool, &format!("{CWD}/a.txt")),
            _ => json!({}),
        };
        let d = e.check(&ToolCall::new(tool, arg), &PreToolUseOutcome::default());
        assert_eq!(
            (d.behavior, d.step),
            (Behavior::Deny, Step::DenyRule),
            "{tool}"
        );
        assert_eq!(d.rule, rule, "{tool}");
    }
    assert_eq!(e.denies_whole_tool("Task").unwrap().text, "Task");
    assert_eq!(
        e.denies_whole_tool("mcp__gone__x").unwrap().text,
        "mcp__gone"
    );
    for tool in [
        "Read",
        "Grep",
        "mcp__one__keep",
        "mcp__gonex__a",
        "mcp__globe__a",
    ] {
        assert_eq!(e.denies_whole_tool(tool), None, "{tool} is removed");
    }
}

#[test]
fn a_deny_rule_with_an_argument_leaves_the_tool_offered() {
    let e = engine(
        json!({"permissions": {"deny": ["Bash(rm *)", "WebFetch(domain:example.com)",
                                        "Read(./secret/**)", "Agent(Explore)"]}}),
        PermissionMode::Default,
    );
    for tool in ["Bash", "WebFetch", "Read", "Agent"] {
        assert_eq!(e.denies_whole_tool(tool), None, "{tool} is removed");
    }
    let d = e.check(
        &ToolCall::new("Bash", input("Bash", "rm -rf x")),
        &PreToolUseOutcome::default(),
    );
    assert_eq!(d.behavior, Behavior::Deny);
}

#[test]
fn rules_added_in_code_and_a_global_glob_remove_tools_too() {
    let e = PermissionEngine::builder(CWD, HOME)
        .settings(&settings(json!({})))
        .rule(RuleList::Deny, "Glob")
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(e.denies_whole_tool("Glob").unwrap().text, "Glob");
    assert_eq!(e.denies_whole_tool("Grep"), None);
    let all = engine(
        json!({"permissions": {"deny": ["*"]}}),
        PermissionMode::Default,
    );
    assert!(all.denies_whole_tool("Read").is_some());
    assert!(all.denies_whole_tool("mcp__x__y").is_some());
    // Ask rules never remove a tool.
    let ask = engine(
        json!({"permissions": {"ask": ["Bash"]}}),
        PermissionMode::Default,
    );
    assert_eq!(ask.denies_whole_tool("Bash"), None);
}
