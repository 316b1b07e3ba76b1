//! MCP tools run only through the runtime's gate: PreToolUse hooks and the permission engine
//! decide on `mcp__server__tool` names like on any tool.

use std::path::Path;

use agent_core::hooks::{HookContext, HookRegistry, check_tool_call};
use agent_core::permissions::{Behavior, PermissionEngine, Step};
use agent_core::settings::Settings;
use agent_core::tools::{Tool, ToolContext};
use agent_mcp::McpOptions;
use serde_json::json;

use crate::support::{demo_server, start};

const CWD: &str = "/srv/agent-mcp-fixture/proj";
const HOME: &str = "/srv/agent-mcp-fixture/home";

#[tokio::test]
async fn allow_and_deny_rules_decide_on_mcp_tools() {
    let settings = Settings::from_value(
        json!({"permissions": {"allow": ["mcp__demo__echo"], "deny": ["mcp__demo__add"]}}),
        "settings.json",
        Path::new(CWD),
        Path::new(HOME),
    )
    .unwrap();
    let engine = PermissionEngine::builder(CWD, HOME)
        .settings(&settings)
        .build()
        .unwrap();
    let hooks = HookRegistry::new();
    let hook_ctx = HookContext::new("s-gate", CWD);

    let mut servers = start(json!({"demo": demo_server()}), McpOptions::default()).await;
    let tool = |name: &str| {
        servers
            .mcp_tools()
            .iter()
            .find(|t| t.name() == name)
            .cloned()
            .unwrap()
    };

    // echo: allowed by its rule, then run.
    let echo = tool("mcp__demo__echo");
    let input = json!({"text": "through the gate"});
    let mut call = echo.tool_call(input.clone());
    call.tool_use_id = Some("toolu_echo".into());
    let gated = check_tool_call(&engine, &hooks, &hook_ctx, &call).await;
    assert_eq!(
        (gated.decision.behavior, gated.decision.step),
        (Behavior::Allow, Step::AllowRule),
        "{}",
        gated.decision.reason
    );
    let out = echo
        .call(input, &ToolContext::new(CWD, "s-gate", "toolu_echo"))
        .await
        .unwrap();
    assert_eq!(out.output, json!("through the gate"));

    // add: denied by its rule; the runtime never calls it.
    let add = tool("mcp__demo__add");
    let gated = check_tool_call(
        &engine,
        &hooks,
        &hook_ctx,
        &add.tool_call(json!({"a": 1, "b": 2})),
    )
    .await;
    assert_eq!(
        (gated.decision.behavior, gated.decision.step),
        (Behavior::Deny, Step::DenyRule),
        "{}",
        gated.decision.reason
    );

    // A tool no rule covers is asked about; with nobody to ask, it is denied.
    let fail = tool("mcp__demo__fail");
    let gated = check_tool_call(&engine, &hooks, &hook_ctx, &fail.tool_call(json!({}))).await;
    assert_eq!(gated.decision.behavior, Behavior::Deny);
    servers.shutdown().await;
}
