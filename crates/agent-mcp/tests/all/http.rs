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

/// A loopback HTTP server that answers every request with `response` (raw bytes; empty: it
/// closes the connection without answering). Returns its MCP URL.
async fn answering(response: &'static str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
                let mut buf = vec![0u8; 65536];
                let _ = stream.read(&mut buf).await;
                if !response.is_empty() {
                    let _ = stream.write_all(response.as_bytes()).await;
                }
                let _ = stream.shutdown().await;
            });
        }
    });
    url
}

/// The start failure of one http server at `url`.
async fn failure_at(url: &str) -> String {
    let config =
        McpConfig::from_json(&json!({"mcpServers": {"web": {"type": "http", "url": url}}}))
            .unwrap();
    let servers = McpServers::start(&config, McpOptions::default()).await;
    assert_eq!(servers.failures().len(), 1, "{url}");
    let text = servers.failures()[0].to_string();
    assert!(
        text.starts_with("MCP server `web` did not start: "),
        "{text}"
    );
    for internal in ["rmcp::", "WorkerTransport", "reqwest::", "Transport ["] {
        assert!(!text.contains(internal), "{text}");
    }
    assert!(text.contains(url), "the URL is named: {text}");
    text
}

#[tokio::test]
async fn http_failures_say_what_failed_without_internal_type_names() {
    let refused = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let text = failure_at(&format!("http://127.0.0.1:{refused}/mcp")).await;
    assert!(text.contains("cannot connect to"), "{text}");
    assert!(text.contains("refused"), "{text}");
    assert!(text.contains("check that the server is running"), "{text}");

    let url = answering(
        "HTTP/1.1 500 Internal Server Error\r\ncontent-length: 4\r\nconnection: close\r\n\r\noops",
    )
    .await;
    let text = failure_at(&url).await;
    assert!(text.contains("HTTP 500 Internal Server Error"), "{text}");
    assert!(text.contains("see the server's logs"), "{text}");

    let url =
        answering("HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await;
    let text = failure_at(&url).await;
    assert!(text.contains("HTTP 404 Not Found"), "{text}");
    assert!(text.contains("check the URL's path"), "{text}");

    let url = answering("").await;
    let text = failure_at(&url).await;
    assert!(
        text.contains("closed the connection without answering"),
        "{text}"
    );

    let url = answering(
        "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 6\r\nconnection: close\r\n\r\n<html>",
    )
    .await;
    let text = failure_at(&url).await;
    assert!(text.contains("did not answer like an MCP server"), "{text}");
    assert!(text.contains("text/html"), "{text}");
}
