//! The Python test server and helpers shared by the tests.

use std::time::{Duration, Instant};

use agent_mcp::{McpConfig, McpOptions, McpServers};
use serde_json::{Value, json};

/// The test server (standard-library Python 3).
pub const SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mcp_server.py");

/// Fails with a clear message when `python3` is missing (CI machines have it).
pub fn require_python() {
    let ok = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "python3 is needed by agent-mcp's tests (the test MCP server is a Python script); install Python 3"
    );
}

/// A stdio server entry running the test server.
pub fn demo_server() -> Value {
    json!({"command": "python3", "args": [SERVER]})
}

/// Starts the given `mcpServers` with `options`.
pub async fn start(servers: Value, options: McpOptions) -> McpServers {
    require_python();
    let config = McpConfig::from_json(&json!({ "mcpServers": servers })).unwrap();
    McpServers::start(&config, options).await
}

/// Whether process `pid` is running (a zombie counts as ended).
pub fn alive(pid: u32) -> bool {
    if std::path::Path::new("/proc/self/stat").exists() {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next());
        return !matches!(state, Some('Z' | 'X') | None);
    }
    std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Waits up to `limit` for process `pid` to end; whether it did.
pub async fn ended_within(pid: u32, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    !alive(pid)
}
