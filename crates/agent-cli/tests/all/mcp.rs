//! MCP servers in `agent run` (issue 27): a bad `mcpServers` entry is skipped with a warning
//! while the others start, tools removed by a deny rule without argument are not offered to the
//! model, and a stdio server's processes end when the run is interrupted. Against a loopback
//! server speaking the OpenAI wire format that records each request.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::support::model::text;

/// The Python MCP test server of agent-mcp.
fn demo_server() -> Value {
    let server =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent-mcp/tests/fixtures/mcp_server.py");
    json!({"command": "python3", "args": [server]})
}

fn agent(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agent"));
    c.env("AGENT_HOME", home)
        .env("HOME", home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_COMPATIBLE_API_KEY")
        .env_remove("OPENAI_COMPATIBLE_BASE_URL");
    c
}

/// A loopback server answering each POST with the next SSE body; returns its OpenAI base URL
/// and the request bodies it saw.
fn serve(bodies: Vec<String>) -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    std::thread::spawn(move || {
        for (body, stream) in bodies.into_iter().zip(listener.incoming()) {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" || line.is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
            }
            let mut req = vec![0; len];
            reader.read_exact(&mut req).unwrap();
            record
                .lock()
                .unwrap()
                .push(serde_json::from_slice(&req).unwrap_or(Value::Null));
            let head =
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
            let _ = stream.write_all(format!("{head}{body}").as_bytes());
        }
    });
    (url, seen)
}

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
    settings: PathBuf,
}

fn env(settings: Value) -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let project = root.join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("a.txt"), "one\n").unwrap();
    let s = root.join("settings.json");
    std::fs::write(&s, settings.to_string()).unwrap();
    Env {
        _tmp: tmp,
        home,
        project,
        settings: s,
    }
}

/// `agent run --json` against `url` with the settings of `e`.
fn run(e: &Env, url: &str) -> Output {
    agent(&e.home)
        .args(["run", "go", "--provider", "openai-compatible", "--base-url"])
        .arg(url)
        .args(["--model", "m", "--json", "--settings"])
        .arg(&e.settings)
        .arg("--workspace")
        .arg(&e.project)
        .env_remove("AGENT_TEST_UNSET_VAR")
        .output()
        .unwrap()
}

/// The tool names of the first request the model server saw.
fn offered(seen: &Mutex<Vec<Value>>) -> Vec<String> {
    seen.lock().unwrap()[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_bad_mcp_server_entry_is_skipped_with_one_warning_and_the_others_start() {
    let e = env(json!({"mcpServers": {
        "demo": demo_server(),
        "unset": {"command": "srv", "args": ["${AGENT_TEST_UNSET_VAR}"]},
        "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
        "broken": {"command": 3},
        "dflt": {"type": "http", "url": "${AGENT_TEST_UNSET_VAR:-http://127.0.0.1:9/mcp}"}
    }}));
    let (url, seen) = serve(vec![text("done")]);
    let out = run(&e, &url);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        offered(&seen).iter().any(|t| t == "mcp__demo__echo"),
        "{stderr}"
    );
    let settings = e.settings.display().to_string();
    for (server, says) in [
        ("unset", "AGENT_TEST_UNSET_VAR is not set; set it"),
        ("old", "\"type\": \"http\""),
        ("broken", "must be a string"),
    ] {
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains(&format!("MCP server `{server}` is skipped")))
            .collect();
        assert_eq!(lines.len(), 1, "{server}: {stderr}");
        assert!(lines[0].contains(&settings), "{}", lines[0]);
        assert!(lines[0].contains(says), "{}", lines[0]);
    }
    // `${VAR:-default}` expands to its default: the server is tried (and fails to connect),
    // not skipped.
    assert!(!stderr.contains("`dflt` is skipped"), "{stderr}");
    assert!(stderr.contains("`dflt`"), "{stderr}");
}

#[test]
fn a_project_mcp_json_with_a_bad_entry_still_starts_the_rest() {
    let e = env(json!({}));
    std::fs::write(
        e.project.join(".mcp.json"),
        json!({"mcpServers": {
            "demo": demo_server(),
            "unset": {"type": "http", "url": "http://x/mcp", "headers": {"A": "${AGENT_TEST_UNSET_VAR}"}}
        }})
        .to_string(),
    )
    .unwrap();
    let out = agent(&e.home)
        .args(["trust"])
        .arg(&e.project)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (url, seen) = serve(vec![text("done")]);
    let out = run(&e, &url);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        offered(&seen).iter().any(|t| t == "mcp__demo__echo"),
        "{stderr}"
    );
    let warning = stderr
        .lines()
        .find(|l| l.contains("MCP server `unset` is skipped"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        warning.contains(&format!(
            "{}: mcpServers.unset.headers.A",
            e.project.join(".mcp.json").display()
        )),
        "{warning}"
    );
}

#[test]
fn tools_denied_without_argument_are_not_offered_to_the_model() {
    let e = env(json!({
        "permissions": {"deny": ["Bash", "WebFetch", "mcp__gone", "mcp__demo__add", "mcp__glob__*",
                                 "Read(./secret/**)"]},
        "mcpServers": {"demo": demo_server(), "gone": demo_server(), "glob": demo_server()}
    }));
    let (url, seen) = serve(vec![text("done")]);
    let out = run(&e, &url);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let tools = offered(&seen);
    for gone in [
        "Bash",
        "WebFetch",
        "mcp__gone__echo",
        "mcp__demo__add",
        "mcp__glob__echo",
    ] {
        assert!(!tools.iter().any(|t| t == gone), "{gone}: {tools:?}");
    }
    for kept in ["Read", "mcp__demo__echo"] {
        assert!(tools.iter().any(|t| t == kept), "{kept}: {tools:?}");
    }
}

#[test]
fn mcp_timeout_and_mcp_tool_timeout_are_read_and_bad_values_warned_about() {
    let server =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent-mcp/tests/fixtures/mcp_server.py");
    let e = env(json!({"mcpServers": {
        "demo": demo_server(),
        "slow": {"command": "sh", "args": ["-c", format!("sleep 10; exec python3 '{}'", server.display())]}
    }}));
    let (url, seen) = serve(vec![text("done")]);
    let out = agent(&e.home)
        .args(["run", "go", "--provider", "openai-compatible", "--base-url"])
        .arg(&url)
        .args(["--model", "m", "--json", "--settings"])
        .arg(&e.settings)
        .arg("--workspace")
        .arg(&e.project)
        .env("MCP_TIMEOUT", "3000")
        .env("MCP_TOOL_TIMEOUT", "soon")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        offered(&seen).iter().any(|t| t == "mcp__demo__echo"),
        "{stderr}"
    );
    let slow = stderr
        .lines()
        .find(|l| l.contains("MCP server `slow` did not start"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(slow.contains("within 3000 ms"), "{slow}");
    let bad: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("MCP_TOOL_TIMEOUT=\"soon\" is not used"))
        .collect();
    assert_eq!(bad.len(), 1, "{stderr}");
}

/// Whether process `pid` runs (a zombie counts as ended).
#[cfg(target_os = "linux")]
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X'))
    })
}

/// Ctrl-C while the model's answer is awaited (SIGINT to `agent` alone: the servers run in
/// process groups of their own, which a terminal's Ctrl-C does not reach): the npx-like
/// server's grandchild is gone when `agent` has exited.
#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_ends_an_mcp_servers_grandchild() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent-mcp/tests/fixtures/forking_server.sh");
    let e = env(json!({}));
    let pidfile = e.home.join("grandchild.pid");
    std::fs::write(
        &e.settings,
        json!({"mcpServers": {"npx": {"command": "sh", "args": [&script, &pidfile]}}}).to_string(),
    )
    .unwrap();
    // A model server that accepts the request and never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let asked = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&asked);
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            flag.store(true, Ordering::SeqCst);
            held.push(stream);
        }
    });
    let mut child = agent(&e.home)
        .args(["run", "go", "--provider", "openai-compatible", "--base-url"])
        .arg(&url)
        .args(["--model", "m", "--json", "--settings"])
        .arg(&e.settings)
        .arg("--workspace")
        .arg(&e.project)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !asked.load(Ordering::SeqCst) || !pidfile.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "agent never asked the model"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let grandchild: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(grandchild));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        !alive(grandchild),
        "the MCP server's grandchild {grandchild} outlived agent\n{stderr}"
    );
}
