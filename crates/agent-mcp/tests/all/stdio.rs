//! A stdio server (the Python test server): tools, calls, results, timeouts, failures and the
//! child process's end.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_core::tools::{Tool, ToolContext, ToolError, ToolKind};
use agent_mcp::{McpOptions, McpTool, ServerTool};
use serde_json::json;

use crate::support::{alive, demo_server, ended_within, start};

fn ctx() -> ToolContext {
    ToolContext::new("/tmp", "s-mcp", "toolu_1")
}

fn find(tools: &[Arc<dyn Tool>], name: &str) -> Arc<dyn Tool> {
    tools
        .iter()
        .find(|t| t.name() == name)
        .cloned()
        .unwrap_or_else(|| panic!("no tool {name}"))
}

#[tokio::test]
async fn tools_are_listed_with_mcp_names() {
    let mut servers = start(json!({"demo": demo_server()}), McpOptions::default()).await;
    assert!(servers.failures().is_empty(), "{:?}", servers.failures());
    let tools = servers.tools();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "mcp__demo__add",
            "mcp__demo__echo",
            "mcp__demo__fail",
            "mcp__demo__slow"
        ]
    );
    let echo = find(&tools, "mcp__demo__echo");
    assert_eq!(echo.description(), "Returns its text.");
    assert_eq!(echo.input_schema()["required"], json!(["text"]));
    assert_eq!(echo.kind(), ToolKind::Other);
    assert!(echo.is_read_only(), "echo is annotated readOnlyHint: true");
    assert!(!find(&tools, "mcp__demo__add").is_read_only());
    let mcp = &servers.mcp_tools()[0];
    assert_eq!(mcp.server_name(), "demo");
    let server = servers.server("demo").unwrap();
    assert_eq!(server.transport(), "stdio");
    assert!(server.process_id().is_some());
    servers.shutdown().await;
}

#[tokio::test]
async fn echo_add_and_is_error() {
    let mut servers = start(json!({"demo": demo_server()}), McpOptions::default()).await;
    let tools = servers.tools();
    let out = find(&tools, "mcp__demo__echo")
        .call(json!({"text": "hello"}), &ctx())
        .await
        .unwrap();
    assert_eq!(out.output, json!("hello"));
    assert!(!out.is_error);
    let out = find(&tools, "mcp__demo__add")
        .call(json!({"a": 2, "b": 40}), &ctx())
        .await
        .unwrap();
    assert_eq!(out.output, json!("42"));
    let out = find(&tools, "mcp__demo__fail")
        .call(json!({}), &ctx())
        .await
        .unwrap();
    assert!(out.is_error);
    assert_eq!(out.output, json!("this tool always fails"));
    let err = find(&tools, "mcp__demo__echo")
        .call(json!("not an object"), &ctx())
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::InvalidInput(_)), "{err}");
    servers.shutdown().await;
}

#[tokio::test]
async fn a_protocol_error_names_server_and_tool() {
    let mut servers = start(json!({"demo": demo_server()}), McpOptions::default()).await;
    let server = servers.server("demo").unwrap().clone();
    let ghost = McpTool::new(
        server,
        ServerTool {
            name: "ghost".into(),
            description: String::new(),
            input_schema: json!({"type": "object"}),
            read_only_hint: false,
            requires_user_interaction: false,
        },
        Duration::from_secs(10),
    );
    assert_eq!(ghost.name(), "mcp__demo__ghost");
    let err = ghost.call(json!({}), &ctx()).await.unwrap_err();
    let ToolError::Execution(text) = &err else {
        panic!("not an execution error: {err:?}")
    };
    assert!(text.contains("server `demo`"), "{text}");
    assert!(text.contains("tool `ghost`"), "{text}");
    assert!(text.contains("unknown tool"), "{text}");
    servers.shutdown().await;
}

#[tokio::test]
async fn a_slow_call_times_out_and_the_server_keeps_working() {
    let options = McpOptions {
        call_timeout: Duration::from_millis(300),
        ..McpOptions::default()
    };
    let mut servers = start(json!({"demo": demo_server()}), options).await;
    let tools = servers.tools();
    let started = Instant::now();
    let err = find(&tools, "mcp__demo__slow")
        .call(json!({}), &ctx())
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::Timeout(300)), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    let out = find(&tools, "mcp__demo__echo")
        .call(json!({"text": "still here"}), &ctx())
        .await
        .unwrap();
    assert_eq!(out.output, json!("still here"));
    servers.shutdown().await;
}

#[tokio::test]
async fn a_call_honours_cancellation() {
    let mut servers = start(json!({"demo": demo_server()}), McpOptions::default()).await;
    let slow = find(&servers.tools(), "mcp__demo__slow");
    let ctx = ctx();
    let flag = ctx.cancellation.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        flag.cancel();
    });
    let started = Instant::now();
    let err = slow.call(json!({}), &ctx).await.unwrap_err();
    assert!(matches!(err, ToolError::Cancelled), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    servers.shutdown().await;
}

#[tokio::test]
async fn a_server_that_cannot_start_does_not_stop_the_others() {
    let mut servers = start(
        json!({
            "demo": demo_server(),
            "missing": {"command": "/nonexistent/agent-mcp-no-such-server"},
            "crashes": {"command": "python3", "args": ["-c", "import sys; sys.stderr.write('boom: bad token\\n'); sys.exit(3)"]}
        }),
        McpOptions::default(),
    )
    .await;
    let failures = servers.failures();
    assert_eq!(failures.len(), 2, "{failures:?}");
    let crashes = failures.iter().find(|f| f.server == "crashes").unwrap();
    assert!(crashes.reason.contains("boom: bad token"), "{crashes}");
    let missing = failures.iter().find(|f| f.server == "missing").unwrap();
    assert!(missing.reason.contains("cannot start"), "{missing}");
    assert!(
        missing.reason.contains("mcpServers.missing.command"),
        "{missing}"
    );
    assert!(
        missing
            .to_string()
            .starts_with("MCP server `missing` did not start")
    );
    let tools = servers.tools();
    assert!(tools.iter().all(|t| t.name().starts_with("mcp__demo__")));
    let out = find(&tools, "mcp__demo__echo")
        .call(json!({"text": "ok"}), &ctx())
        .await
        .unwrap();
    assert_eq!(out.output, json!("ok"));
    servers.shutdown().await;
}

#[tokio::test]
async fn a_server_that_never_answers_hits_the_startup_timeout() {
    let options = McpOptions {
        startup_timeout: Duration::from_millis(500),
        ..McpOptions::default()
    };
    let started = Instant::now();
    let servers = start(
        json!({"mute": {"command": "python3", "args": ["-c", "import time; time.sleep(30)"]}}),
        options,
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(servers.failures().len(), 1);
    assert!(
        servers.failures()[0].reason.contains("startup timeout"),
        "{}",
        servers.failures()[0]
    );
    assert!(servers.tools().is_empty());
}

#[tokio::test]
async fn shutdown_ends_the_child_process() {
    let mut servers = start(json!({"demo": demo_server()}), McpOptions::default()).await;
    let pid = servers.server("demo").unwrap().process_id().unwrap();
    assert!(alive(pid));
    let echo = find(&servers.tools(), "mcp__demo__echo");
    servers.shutdown().await;
    assert!(
        ended_within(pid, Duration::from_secs(2)).await,
        "pid {pid} still runs"
    );
    assert!(servers.tools().is_empty());
    // A tool held past shutdown fails cleanly.
    let err = echo.call(json!({"text": "x"}), &ctx()).await.unwrap_err();
    assert!(matches!(err, ToolError::Execution(_)), "{err:?}");
}

#[tokio::test]
async fn drop_ends_the_child_process_even_when_tools_are_still_held() {
    let servers = start(json!({"demo": demo_server()}), McpOptions::default()).await;
    let pid = servers.server("demo").unwrap().process_id().unwrap();
    let held = servers.tools();
    drop(servers);
    assert!(
        ended_within(pid, Duration::from_secs(8)).await,
        "pid {pid} still runs"
    );
    drop(held);
}

#[test]
fn a_runtime_that_ends_kills_the_child_process() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (servers, pid) = runtime.block_on(async {
        let servers = start(json!({"demo": demo_server()}), McpOptions::default()).await;
        let pid = servers.server("demo").unwrap().process_id().unwrap();
        (servers, pid)
    });
    assert!(alive(pid));
    // The runtime goes first; then the servers are dropped outside any runtime.
    drop(runtime);
    drop(servers);
    let start = Instant::now();
    while alive(pid) && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(pid), "pid {pid} outlived the runtime");
}

/// What a stdio server leaves behind (a launcher's grandchild in its own session, as `npx`
/// leaves) ends with the server, on shutdown and on drop (Ctrl-C), through the runtime's one
/// containment runner.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_servers_detached_grandchild_ends_with_it() {
    for shutdown in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let script = format!(
            "setsid sleep 300 & echo $! > '{}'; exec python3 '{}'",
            pidfile.display(),
            crate::support::SERVER
        );
        let mut servers = start(
            json!({"demo": {"command": "sh", "args": ["-c", script]}}),
            McpOptions::default(),
        )
        .await;
        assert!(servers.server("demo").is_some(), "{:?}", servers.failures());
        let grandchild: u32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(alive(grandchild));
        if shutdown {
            servers.shutdown().await;
        } else {
            drop(servers);
        }
        assert!(
            ended_within(grandchild, Duration::from_secs(8)).await,
            "shutdown {shutdown}: the detached grandchild {grandchild} outlived its server"
        );
    }
}

/// A stdio server that takes `seconds` to start answering.
fn slow_to_start(seconds: f32) -> serde_json::Value {
    json!({"command": "sh", "args": ["-c", format!("sleep {seconds}; exec python3 '{}'", crate::support::SERVER)]})
}

#[tokio::test]
async fn mcp_timeout_bounds_a_slow_server_start() {
    let env = |name: &str| (name == "MCP_TIMEOUT").then(|| "300".to_owned());
    let (options, warnings) = McpOptions::from_env_with(env);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(options.startup_timeout, Duration::from_millis(300));
    assert_eq!(options.call_timeout, McpOptions::default().call_timeout);
    let servers = start(json!({"slow": slow_to_start(3.0)}), options).await;
    assert_eq!(servers.failures().len(), 1);
    let text = servers.failures()[0].to_string();
    assert!(text.contains("within 300 ms"), "{text}");
    assert!(text.contains("MCP_TIMEOUT"), "{text}");
}

#[tokio::test]
async fn mcp_timeout_can_be_raised_and_mcp_tool_timeout_bounds_each_call() {
    let env = |name: &str| match name {
        "MCP_TIMEOUT" => Some("20000".to_owned()),
        "MCP_TOOL_TIMEOUT" => Some(" 400 ".to_owned()),
        _ => None,
    };
    let (options, warnings) = McpOptions::from_env_with(env);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(options.startup_timeout, Duration::from_secs(20));
    let mut servers = start(json!({"slow": slow_to_start(0.5)}), options).await;
    assert!(servers.failures().is_empty(), "{:?}", servers.failures());
    let err = find(&servers.tools(), "mcp__slow__slow")
        .call(json!({}), &ctx())
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::Timeout(400)), "{err:?}");
    servers.shutdown().await;
}

#[test]
fn invalid_mcp_timeouts_are_warned_about_and_the_defaults_apply() {
    for bad in ["abc", "0", "-5", "1.5", "", "30s"] {
        let (options, warnings) = McpOptions::from_env_with(|name| {
            matches!(name, "MCP_TIMEOUT" | "MCP_TOOL_TIMEOUT").then(|| bad.to_owned())
        });
        assert_eq!(options, McpOptions::default(), "{bad:?}");
        assert_eq!(warnings.len(), 2, "{bad:?}: {warnings:?}");
        assert!(warnings[0].starts_with("MCP_TIMEOUT="), "{warnings:?}");
        assert!(
            warnings[0].contains("the default of 30000 ms applies"),
            "{warnings:?}"
        );
        assert!(warnings[1].starts_with("MCP_TOOL_TIMEOUT="), "{warnings:?}");
        assert!(warnings[1].contains("120000 ms"), "{warnings:?}");
    }
}

/// The fixture that starts like `npx`: a launcher shell, the server as its child, and a helper
/// grandchild that writes its pid to `pidfile` (and "term" to `<pidfile>.term` on SIGTERM).
fn npx_like(pidfile: &std::path::Path) -> serde_json::Value {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/forking_server.sh"
    );
    json!({"command": "sh", "args": [script, pidfile]})
}

/// Waits for the helper grandchild to write its pid.
async fn grandchild(pidfile: &std::path::Path) -> u32 {
    for _ in 0..100 {
        if let Ok(text) = std::fs::read_to_string(pidfile)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "the fixture's grandchild did not write {}",
        pidfile.display()
    );
}

/// The process group of `pid` (`/proc/<pid>/stat`, field 5).
#[cfg(target_os = "linux")]
fn process_group(pid: u32) -> u32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = stat.rsplit_once(") ").unwrap().1;
    rest.split(' ').nth(2).unwrap().parse().unwrap()
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_stdio_server_runs_in_a_process_group_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let mut servers = start(json!({"npx": npx_like(&pidfile)}), McpOptions::default()).await;
    let pid = servers.server("npx").unwrap().process_id().unwrap();
    assert_eq!(process_group(pid), pid);
    let helper = grandchild(&pidfile).await;
    assert_eq!(
        process_group(helper),
        pid,
        "the launcher's children share its group"
    );
    let own = process_group(std::process::id());
    assert_ne!(process_group(pid), own);
    servers.shutdown().await;
}

#[tokio::test]
async fn shutdown_ends_an_npx_like_servers_grandchild_with_sigterm_first() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let mut servers = start(json!({"npx": npx_like(&pidfile)}), McpOptions::default()).await;
    assert!(servers.server("npx").is_some(), "{:?}", servers.failures());
    let helper = grandchild(&pidfile).await;
    assert!(alive(helper));
    servers.shutdown().await;
    assert!(!alive(helper), "the grandchild {helper} outlived shutdown");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("pid.term"))
            .unwrap_or_default()
            .trim(),
        "term",
        "the grandchild was asked to end (SIGTERM) before it was killed"
    );
}

#[tokio::test]
async fn drop_ends_an_npx_like_servers_grandchild_with_sigterm_first() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let servers = start(json!({"npx": npx_like(&pidfile)}), McpOptions::default()).await;
    let helper = grandchild(&pidfile).await;
    drop(servers);
    assert!(
        ended_within(helper, Duration::from_secs(8)).await,
        "the grandchild {helper} outlived the dropped servers"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("pid.term"))
            .unwrap_or_default()
            .trim(),
        "term"
    );
}

/// `end_all_blocking` ends every server of the process, so it runs in a process of its own
/// (this test binary again, with `AGENT_MCP_END_ALL_CHILD` set), never among other tests.
#[tokio::test]
async fn end_all_blocking_ends_every_servers_processes_before_an_exit() {
    if std::env::var_os("AGENT_MCP_END_ALL_CHILD").is_none() {
        let out = tokio::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "stdio::end_all_blocking_ends_every_servers_processes_before_an_exit",
                "--nocapture",
            ])
            .env("AGENT_MCP_END_ALL_CHILD", "1")
            .output()
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{text}");
        assert!(text.contains("1 passed"), "the child ran the test: {text}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    let servers = start(
        json!({"one": npx_like(&one), "two": npx_like(&two)}),
        McpOptions::default(),
    )
    .await;
    let helpers = [grandchild(&one).await, grandchild(&two).await];
    let pids: Vec<u32> = servers
        .servers()
        .iter()
        .map(|s| s.process_id().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "{:?}", servers.failures());
    tokio::task::spawn_blocking(agent_mcp::end_all_blocking)
        .await
        .unwrap();
    for pid in helpers.iter().chain(&pids) {
        assert!(!alive(*pid), "{pid} outlived end_all_blocking");
    }
    for file in [&one, &two] {
        let term = std::fs::read_to_string(file.with_extension("term")).unwrap_or_default();
        assert_eq!(term.trim(), "term", "SIGTERM came first");
    }
    drop(servers);
}
