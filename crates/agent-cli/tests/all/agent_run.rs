//! `agent run` against a loopback server that speaks the OpenAI streaming wire format, and
//! `agent demo` offline: the session log, the change set, the commit, exit codes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

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

/// A loopback server answering each POST with the next SSE body; returns its base URL and
/// the request bodies it saw.
fn serve(bodies: Vec<String>) -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    std::thread::spawn(move || {
        for (body, stream) in bodies.into_iter().zip(listener.incoming()) {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut len = 0usize;
            let mut headers = serde_json::Map::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" || line.is_empty() {
                    break;
                }
                if let Some((k, v)) = line.split_once(':') {
                    headers.insert(k.trim().to_ascii_lowercase(), json!(v.trim()));
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
            }
            let mut req = vec![0; len];
            reader.read_exact(&mut req).unwrap();
            let mut body_json: Value = serde_json::from_slice(&req).unwrap_or(Value::Null);
            if let Some(o) = body_json.as_object_mut() {
                o.insert("__headers".into(), Value::Object(headers));
            }
            seen2.lock().unwrap().push(body_json);
            // A body that is a whole response (status line and all) is sent as it is.
            if !body.starts_with("HTTP/1.1 ") {
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                stream.write_all(head.as_bytes()).unwrap();
            }
            stream.write_all(body.as_bytes()).unwrap();
        }
    });
    (url, seen)
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    format!(
        "data: {}\n\n",
        json!({"id": "c1", "object": "chat.completion.chunk", "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    )
}

fn tool_call_body(id: &str, name: &str, args: &Value) -> String {
    let a = args.to_string();
    let (x, y) = a.split_at(a.len() / 2);
    chunk(
        json!({"role": "assistant", "tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": x}}]}),
        None,
    ) + &chunk(
        json!({"tool_calls": [{"index": 0, "function": {"arguments": y}}]}),
        None,
    ) + &chunk(json!({}), Some("tool_calls"))
        + "data: [DONE]\n\n"
}

fn text_body(text: &str) -> String {
    chunk(json!({"role": "assistant", "content": text}), None)
        + &chunk(json!({}), Some("stop"))
        + "data: [DONE]\n\n"
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

fn json_out(o: &Output) -> Value {
    let text = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(text.lines().last().unwrap_or("")).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {text}\nstderr: {}",
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

fn session_log(home: &Path, id: &str) -> Vec<Value> {
    std::fs::read_to_string(home.join("sessions").join(id).join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn run_streams_a_real_wire_format_edits_the_shadow_and_commits_with_yes() {
    let e = env(json!({"permissions": {"allow": ["Write"]}}));
    let (url, seen) = serve(vec![
        tool_call_body(
            "call_1",
            "Write",
            &json!({"file_path": "b.txt", "content": "two\n"}),
        ),
        text_body("Wrote b.txt."),
    ]);
    let out = agent(&e.home)
        .args([
            "run",
            "write b.txt",
            "--provider",
            "openai-compatible",
            "--base-url",
        ])
        .arg(&url)
        .args(["--model", "m", "--yes", "--json", "--settings"])
        .arg(&e.settings)
        .arg("--workspace")
        .arg(&e.project)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_out(&out);
    assert_eq!(v["stopReason"], "end_turn");
    assert_eq!(v["finalText"], "Wrote b.txt.");
    assert_eq!(v["changes"][0]["path"], "b.txt");
    assert_eq!(
        std::fs::read_to_string(e.project.join("b.txt")).unwrap(),
        "two\n"
    );
    // The second request carried the tool result back in the wire format.
    let reqs = seen.lock().unwrap();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0]["model"], "m");
    assert!(
        reqs[1]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "tool" && m["tool_call_id"] == "call_1")
    );
    // The log holds the whole run, the review and the commit.
    let log = session_log(&e.home, v["sessionId"].as_str().unwrap());
    let types: Vec<&str> = log.iter().map(|l| l["type"].as_str().unwrap()).collect();
    for t in [
        "system.init",
        "workspace.import",
        "user.message",
        "tool.use",
        "permission.decision",
        "tool.result",
        "assistant.message",
        "result",
        "workspace.diff",
        "workspace.commit",
    ] {
        assert!(types.contains(&t), "{t} missing from {types:?}");
    }
}

#[test]
fn run_without_yes_or_a_terminal_leaves_the_change_in_the_shadow_and_resumes_with_continue() {
    let e = env(json!({"permissions": {"allow": ["Write"]}}));
    let (url, _) = serve(vec![
        tool_call_body(
            "call_1",
            "Write",
            &json!({"file_path": "c.txt", "content": "three\n"}),
        ),
        text_body("done"),
        text_body("resumed answer"),
    ]);
    let base = |c: &mut Command| {
        c.args(["--provider", "openai-compatible", "--base-url"])
            .arg(&url)
            .args(["--model", "m", "--json", "--settings"])
            .arg(&e.settings)
            .arg("--workspace")
            .arg(&e.project);
    };
    let mut c = agent(&e.home);
    c.args(["run", "write c.txt"]);
    base(&mut c);
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let first = json_out(&out);
    assert!(
        !e.project.join("c.txt").exists(),
        "nothing reaches the real folder"
    );
    assert!(first["commit"].is_null());
    let mut c = agent(&e.home);
    c.args(["run", "and now?", "--continue"]);
    base(&mut c);
    let out = c.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let second = json_out(&out);
    assert_eq!(second["sessionId"], first["sessionId"]);
    assert_eq!(second["finalText"], "resumed answer");
}

#[test]
fn run_reports_a_provider_failure_with_exit_1_and_a_logged_error() {
    let e = env(json!({}));
    // A stream that stops without a finish reason.
    let (url, _) = serve(vec![chunk(json!({"content": "partial"}), None)]);
    let out = agent(&e.home)
        .args(["run", "hi", "--provider", "openai-compatible", "--base-url"])
        .arg(&url)
        .args(["--model", "m", "--json", "--workspace"])
        .arg(&e.project)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v = json_out(&out);
    assert_eq!(v["stopReason"], "error");
    let log = session_log(&e.home, v["sessionId"].as_str().unwrap());
    assert!(log.iter().any(|l| l["type"] == "error"));
    assert_eq!(log.last().unwrap()["type"], "workspace.diff");
}

#[test]
fn run_without_a_key_says_what_to_do_and_exits_2() {
    let e = env(json!({}));
    let out = agent(&e.home)
        .args(["run", "hi", "--workspace"])
        .arg(&e.project)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ANTHROPIC_API_KEY") && err.contains("agent demo"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn demo_runs_the_whole_loop_offline_and_leaves_a_change_set() {
    let tmp = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(tmp.path()).unwrap();
    let dir = home.join("demo-here");
    let out = agent(&home)
        .args(["demo", "--json", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_out(&out);
    assert_eq!(v["demo"], true);
    assert_eq!(v["stopReason"], "end_turn");
    assert_eq!(v["events"]["tool.use"], 6);
    assert_eq!(v["events"]["permission.question"], 1);
    assert!(v["events"]["hook.run"].as_u64().unwrap() >= 2);
    assert_eq!(v["changes"].as_array().unwrap().len(), 1);
    assert_eq!(v["changes"][0]["path"], "src/calc.py");
    assert!(v["diff"][0].as_str().unwrap().contains("+    return a + b"));
    // The real demo project is unchanged; the shadow has the fix.
    let real = std::fs::read_to_string(dir.join("project/src/calc.py")).unwrap();
    assert!(real.contains("return a - b"));
    let shadow = PathBuf::from(v["shadow"].as_str().unwrap());
    assert!(
        std::fs::read_to_string(shadow.join("src/calc.py"))
            .unwrap()
            .contains("return a + b")
    );
    // The log: the denied curl, the allowed edit after its question, the hook's context.
    let log = session_log(&home, v["sessionId"].as_str().unwrap());
    let decisions: Vec<(bool, String)> = log
        .iter()
        .filter(|l| l["type"] == "permission.decision")
        .map(|l| {
            (
                l["allowed"].as_bool().unwrap(),
                l["step"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(decisions.len(), 6);
    assert!(decisions.contains(&(false, "deny_rule".into())));
    assert!(decisions.contains(&(true, "prompt".into())));
    assert!(log.iter().any(|l| {
        l["type"] == "user.message"
            && l["isMeta"] == true
            && l["text"]
                .as_str()
                .unwrap()
                .contains("UserPromptSubmit hook")
    }));
    // A second demo into the same folder is refused.
    let again = agent(&home)
        .args(["demo", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
}

#[test]
fn completions_print_a_script() {
    let tmp = tempfile::tempdir().unwrap();
    let out = agent(tmp.path())
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("agent"));
}

#[test]
fn run_calls_an_mcp_servers_tool_through_the_permission_gate() {
    let server =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent-mcp/tests/fixtures/mcp_server.py");
    let e = env(json!({
        "permissions": {"allow": ["mcp__demo__echo"], "deny": ["mcp__demo__add"]},
        "mcpServers": {"demo": {"command": "python3", "args": [server]}}
    }));
    let (url, seen) = serve(vec![
        tool_call_body(
            "call_1",
            "mcp__demo__echo",
            &json!({"text": "hello from mcp"}),
        ),
        tool_call_body("call_2", "mcp__demo__add", &json!({"a": 1, "b": 2})),
        text_body("done"),
    ]);
    let out = agent(&e.home)
        .args([
            "run",
            "use the tools",
            "--provider",
            "openai-compatible",
            "--base-url",
        ])
        .arg(&url)
        .args(["--model", "m", "--json", "--settings"])
        .arg(&e.settings)
        .arg("--workspace")
        .arg(&e.project)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_out(&out);
    let reqs = seen.lock().unwrap();
    let tools: Vec<&str> = reqs[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"mcp__demo__echo"), "{tools:?}");
    let log = session_log(&e.home, v["sessionId"].as_str().unwrap());
    let result = |id: &str| {
        log.iter()
            .find(|l| l["type"] == "tool.result" && l["toolUseId"] == id)
            .cloned()
            .unwrap()
    };
    assert_eq!(result("call_1")["isError"], false);
    assert!(
        result("call_1")["output"]
            .to_string()
            .contains("hello from mcp")
    );
    assert_eq!(result("call_2")["errorType"], "permission_denied");
}

/// Runs `agent run` against `bodies` (OpenAI wire format) and returns the JSON result, the
/// exit code, the session log and how many requests the server saw.
fn run_openai(
    e: &Env,
    bodies: Vec<String>,
    extra: &[&str],
) -> (Value, Option<i32>, Vec<Value>, usize) {
    let (url, seen) = serve(bodies);
    let out = agent(&e.home)
        .args(["run", "go", "--provider", "openai-compatible", "--base-url"])
        .arg(&url)
        .args(["--model", "m", "--json", "--settings"])
        .arg(&e.settings)
        .arg("--workspace")
        .arg(&e.project)
        .args(extra)
        .output()
        .unwrap();
    let v = json_out(&out);
    let log = session_log(&e.home, v["sessionId"].as_str().unwrap());
    let n = seen.lock().unwrap().len();
    (v, out.status.code(), log, n)
}

/// Every `tool.use` has one `tool.result`, and the log ends its run with `result`.
fn assert_whole(log: &[Value]) {
    for u in log.iter().filter(|l| l["type"] == "tool.use") {
        let n = log
            .iter()
            .filter(|l| l["type"] == "tool.result" && l["toolUseId"] == u["toolUseId"])
            .count();
        assert_eq!(n, 1, "{u}");
    }
    assert!(log.iter().any(|l| l["type"] == "result"));
}

#[test]
fn the_loop_ends_each_wire_case_in_a_whole_resumable_log() {
    let e = env(json!({"permissions": {"allow": ["Read"]}}));
    let json_error = |status: &str, extra: &str| {
        let body = r#"{"error":{"message":"slow down","type":"rate_limit"}}"#;
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    // 429, then success.
    let (v, code, log, n) = run_openai(
        &e,
        vec![
            json_error("429 Too Many Requests", "retry-after: 0\r\n"),
            text_body("after the 429"),
        ],
        &[],
    );
    assert_eq!((code, n), (Some(0), 2));
    assert_eq!(v["finalText"], "after the 429");
    assert_whole(&log);
    // 500 mid-stream: a text fragment, then the connection drops without a finish.
    let (v, code, log, _) = run_openai(
        &e,
        vec![chunk(json!({"content": "half an ans"}), None)],
        &[],
    );
    assert_eq!((code, v["stopReason"].as_str()), (Some(1), Some("error")));
    assert!(
        log.iter()
            .any(|l| l["type"] == "assistant.message" && l["partial"] == true)
    );
    assert_whole(&log);
    // A malformed SSE data line.
    let (v, code, log, _) = run_openai(&e, vec!["data: {not json\n\n".into()], &[]);
    assert_eq!((code, v["stopReason"].as_str()), (Some(1), Some("error")));
    assert!(
        log.iter()
            .any(|l| l["type"] == "error" && l["errorType"] == "provider_stream")
    );
    assert_whole(&log);
    // A tool call whose arguments are not JSON: answered with an error, the loop goes on.
    let bad_args = chunk(
        json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_x", "type": "function",
               "function": {"name": "Read", "arguments": "{\"file_path\": "}}]}),
        None,
    ) + &chunk(json!({}), Some("tool_calls"))
        + "data: [DONE]\n\n";
    let (v, code, log, _) = run_openai(&e, vec![bad_args, text_body("sorry")], &[]);
    assert_eq!(
        (code, v["stopReason"].as_str()),
        (Some(0), Some("end_turn"))
    );
    assert!(
        log.iter()
            .any(|l| l["type"] == "tool.result" && l["errorType"] == "invalid_input")
    );
    assert_whole(&log);
    // max_tokens (`length`) and refusal (`content_filter`).
    let stop = |reason: &str| {
        chunk(json!({"role": "assistant", "content": "cut"}), None)
            + &chunk(json!({}), Some(reason))
            + "data: [DONE]\n\n"
    };
    let (v, code, log, _) = run_openai(&e, vec![stop("length")], &[]);
    assert_eq!(
        (code, v["stopReason"].as_str()),
        (Some(0), Some("max_tokens"))
    );
    assert_whole(&log);
    let (v, code, log, _) = run_openai(&e, vec![stop("content_filter")], &[]);
    assert_eq!((code, v["stopReason"].as_str()), (Some(0), Some("refusal")));
    assert_whole(&log);
    // Every one of these sessions resumes: the last one continues.
    let (v2, code, _, _) = run_openai(&e, vec![text_body("resumed")], &["--continue"]);
    assert_eq!(code, Some(0));
    assert_eq!(v2["sessionId"], v["sessionId"]);
}

#[test]
fn run_speaks_the_anthropic_wire_format_through_the_loop() {
    let e = env(json!({"permissions": {"allow": ["Read"]}}));
    let ev = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let start = |id: &str| {
        ev(
            "message_start",
            json!({"type": "message_start", "message": {"id": id, "type": "message",
            "role": "assistant", "model": "claude-x", "content": [], "stop_reason": null,
            "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        )
    };
    let tool_turn = start("msg_1")
        + &ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}}),
        )
        + &ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{\"file_path\": \"a."}}),
        )
        + &ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "txt\"}"}}),
        )
        + &ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        )
        + &ev(
            "message_delta",
            json!({"type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 12}}),
        )
        + &ev("message_stop", json!({"type": "message_stop"}));
    let text_turn = start("msg_2")
        + &ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        )
        + &ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": "It says one."}}),
        )
        + &ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        )
        + &ev(
            "message_delta",
            json!({"type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 4}}),
        )
        + &ev("message_stop", json!({"type": "message_stop"}));
    let (url, seen) = serve(vec![tool_turn, text_turn]);
    let url = url.trim_end_matches("/v1").to_owned();
    let out = agent(&e.home)
        .env("ANTHROPIC_API_KEY", "test-key")
        .args([
            "run",
            "what does a.txt say?",
            "--provider",
            "anthropic",
            "--base-url",
        ])
        .arg(&url)
        .args(["--json", "--settings"])
        .arg(&e.settings)
        .arg("--workspace")
        .arg(&e.project)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_out(&out);
    assert_eq!(v["finalText"], "It says one.");
    assert_eq!(v["usage"]["inputTokens"], 20);
    assert_eq!(v["usage"]["outputTokens"], 16);
    // claude-sonnet-4-5 at $3 in / $15 out per million tokens.
    assert!(
        (v["costUsd"].as_f64().unwrap() - 0.000_3).abs() < 1e-12,
        "{v}"
    );
    let reqs = seen.lock().unwrap();
    assert_eq!(reqs[0]["model"], "claude-sonnet-4-5");
    let last = reqs[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"][0]["type"], "tool_result");
    assert!(last["content"][0]["content"].to_string().contains("one"));
    assert_whole(&session_log(&e.home, v["sessionId"].as_str().unwrap()));
}

#[test]
fn the_provider_comes_from_trusted_settings_only() {
    let (url, seen) = serve(vec![text_body("configured")]);
    let e = env(
        json!({"provider": {"name": "openai-compatible", "baseUrl": url,
                                     "apiKeyEnv": "AGENT_TEST_KEY"},
                       "model": "from-settings"}),
    );
    let out = agent(&e.home)
        .env("AGENT_TEST_KEY", "sekrit-value")
        .args(["run", "hi", "--json", "--settings"])
        .arg(&e.settings)
        .arg("--workspace")
        .arg(&e.project)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("sekrit"));
    let reqs = seen.lock().unwrap();
    assert_eq!(reqs[0]["model"], "from-settings");
    assert_eq!(reqs[0]["__headers"]["authorization"], "Bearer sekrit-value");
    // The same settings in an untrusted project are not used: nothing is configured.
    let e2 = env(json!({}));
    std::fs::create_dir_all(e2.project.join(".agent")).unwrap();
    std::fs::write(
        e2.project.join(".agent/settings.json"),
        json!({"provider": {"name": "openai-compatible", "baseUrl": "http://127.0.0.1:9/v1"},
               "model": "x"})
        .to_string(),
    )
    .unwrap();
    let out = agent(&e2.home)
        .args(["run", "hi", "--workspace"])
        .arg(&e2.project)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not trusted") && err.contains("no model provider"),
        "{err}"
    );
}
