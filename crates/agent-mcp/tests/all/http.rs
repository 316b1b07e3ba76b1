//! A streamable HTTP server: the Python test server with `--http` on a loopback port.

use std::process::Stdio;

use agent_core::tools::ToolContext;
use agent_mcp::{McpConfig, McpOptions, McpServers};
use serde_json::json;
use tokio::io::{AsyncBufReadExt as _, BufReader};

use crate::support::{SERVER, require_python};

#[tokio::test]
async fn tools_over_streamable_http_with_headers() {
    require_python();
    let mut child = tokio::process::Command::new("python3")
        .args([SERVER, "--http"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).await.unwrap();
    let port: u16 = line.trim().strip_prefix("PORT ").unwrap().parse().unwrap();

    let env = |name: &str| match name {
        "TEST_TOKEN" => Some("t0ken".to_owned()),
        "MCP_PORT" => Some(port.to_string()),
        _ => None,
    };
    let config = McpConfig::from_json_with_env(
        &json!({"mcpServers": {"web": {
            "type": "http",
            "url": "http://127.0.0.1:${MCP_PORT}/mcp",
            "headers": {"X-Test-Token": "${TEST_TOKEN}", "Authorization": "Bearer ${TEST_TOKEN}"}
        }}}),
        env,
    )
    .unwrap();
    let mut servers = McpServers::start(&config, McpOptions::default()).await;
    assert!(servers.failures().is_empty(), "{:?}", servers.failures());
    assert_eq!(servers.server("web").unwrap().transport(), "http");
    let tools = servers.tools();
    let tool = |name: &str| tools.iter().find(|t| t.name() == name).cloned().unwrap();
    let ctx = ToolContext::new("/tmp", "s-http", "toolu_1");
    let out = tool("mcp__web__echo")
        .call(json!({"text": "over http"}), &ctx)
        .await
        .unwrap();
    assert_eq!(out.output, json!("over http"));
    let out = tool("mcp__web__header")
        .call(json!({}), &ctx)
        .await
        .unwrap();
    assert_eq!(
        out.output,
        json!("t0ken"),
        "the configured header reaches the server"
    );
    let out = tool("mcp__web__fail").call(json!({}), &ctx).await.unwrap();
    assert!(out.is_error);
    servers.shutdown().await;
    drop(child.stdin.take());
    let _ = child.wait().await;
}

#[tokio::test]
async fn an_unreachable_http_server_is_a_start_failure() {
    // Bind then drop a listener to get a port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = McpConfig::from_json(&json!({"mcpServers": {"down": {
        "type": "http", "url": format!("http://127.0.0.1:{port}/mcp")
    }}}))
    .unwrap();
    let servers = McpServers::start(&config, McpOptions::default()).await;
    assert_eq!(servers.failures().len(), 1);
    let failure = &servers.failures()[0];
    assert_eq!(failure.server, "down");
    assert!(
        failure.reason.contains(&format!("127.0.0.1:{port}")),
        "{failure}"
    );
}
