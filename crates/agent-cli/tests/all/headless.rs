//! `agent` headless (issue 27, parts 1 and 2): `agent run --output-format text|json|
//! stream-json`, the rule flags and their Claude Code aliases, the exit status at the turn
//! limit, `agent -p`, flags accepted without being honoured, and the SDK's stdio transport
//! spoken by hand (the real SDK drives it in `sdk.rs`). Against a loopback model server
//! speaking the OpenAI wire format.

use crate::support::model;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::model::{call, serve, text};

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    folder: PathBuf,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let folder = root.join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("README.md"), "# project\n").unwrap();
    Env {
        _tmp: tmp,
        home,
        folder,
    }
}

fn agent(e: &Env) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agent"));
    c.env("AGENT_HOME", &e.home)
        .env("HOME", &e.home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .current_dir(&e.folder)
        .stdin(Stdio::null());
    c
}

/// `agent run PROMPT` against `replies`, with `extra` flags.
fn run(e: &Env, replies: Vec<String>, extra: &[&str]) -> Output {
    let url = serve(replies);
    agent(e)
        .args([
            "run",
            "work",
            "--provider",
            "openai-compatible",
            "--base-url",
        ])
        .arg(&url)
        .args(["--model", "m"])
        .args(extra)
        .output()
        .unwrap()
}

fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect()
}

fn kinds(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m["subtype"].as_str() {
            Some(s) => format!("{}/{s}", m["type"].as_str().unwrap()),
            None => m["type"].as_str().unwrap().to_owned(),
        })
        .collect()
}

/// The model reads README.md, then answers.
fn read_then_answer() -> Vec<String> {
    vec![
        call("call_1", "Read", &json!({"file_path": "README.md"})),
        text("It is a project."),
    ]
}

#[test]
fn stream_json_writes_one_message_per_line_as_the_run_goes() {
    let e = env();
    let out = run(&e, read_then_answer(), &["--output-format", "stream-json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let messages = lines(&out);
    assert_eq!(
        kinds(&messages),
        [
            "system/init",
            "assistant",
            "user",
            "assistant",
            "result/success"
        ]
    );
    let init = &messages[0];
    assert_eq!(
        init["cwd"],
        json!(e.folder),
        "the real folder, never the shadow"
    );
    assert_eq!(init["model"], "m");
    assert!(init["session_id"].is_string());
    assert_eq!(messages[1]["message"]["content"][0]["type"], "tool_use");
    assert_eq!(messages[1]["message"]["model"], "m");
    let result = &messages[2]["message"]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "call_1");
    assert!(result["content"].as_str().unwrap().contains("# project"));
    let end = &messages[4];
    assert_eq!(end["result"], "It is a project.");
    assert_eq!(end["num_turns"], 2);
    assert_eq!(end["is_error"], false);
    assert_eq!(end["session_id"], init["session_id"]);
    for key in ["duration_ms", "duration_api_ms", "usage", "total_cost_usd"] {
        assert!(end.get(key).is_some(), "result has {key}: {end}");
    }
}

#[test]
fn text_output_is_the_final_answer_alone() {
    let e = env();
    let out = run(&e, read_then_answer(), &["--output-format", "text"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "It is a project.\n");
}

#[test]
fn the_turn_limit_ends_with_error_max_turns_exit_1_and_the_count_max_turns_counts() {
    let e = env();
    let replies = vec![
        call("call_1", "Read", &json!({"file_path": "README.md"})),
        call("call_2", "Read", &json!({"file_path": "README.md"})),
        text("Summary: I read it twice."),
    ];
    let out = run(
        &e,
        replies,
        &["--output-format", "json", "--max-turns", "2"],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = &lines(&out)[0];
    assert_eq!(result["type"], "result");
    assert_eq!(result["subtype"], "error_max_turns");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["num_turns"], 2, "the count --max-turns counts");
    assert_eq!(result["result"], "Summary: I read it twice.");
}

#[test]
fn allowed_tools_alias_allows_and_disallowed_tools_alias_denies() {
    let e = env();
    let write = || {
        vec![
            call(
                "call_1",
                "Write",
                &json!({"file_path": "notes.txt", "content": "hi\n"}),
            ),
            text("done"),
        ]
    };
    // Without a rule, nobody can be asked: the write is denied.
    let out = run(&e, write(), &["--output-format", "json", "--no-commit"]);
    let result = &lines(&out)[0];
    assert_eq!(
        result["permission_denials"][0]["tool_name"], "Write",
        "{result}"
    );
    // --allowedTools (Claude Code's spelling) allows it.
    let out = run(
        &e,
        write(),
        &[
            "--output-format",
            "json",
            "--allowedTools",
            "Read,Write",
            "--no-commit",
        ],
    );
    let result = &lines(&out)[0];
    assert_eq!(result["permission_denials"], json!([]), "{result}");
    assert_eq!(result["changes"][0]["path"], "notes.txt", "{result}");
    // --deny (and --disallowedTools) wins over --allow.
    let out = run(
        &e,
        write(),
        &[
            "--output-format",
            "json",
            "--allow",
            "Write",
            "--disallowedTools",
            "Write(notes.txt)",
            "--no-commit",
        ],
    );
    let result = &lines(&out)[0];
    assert_eq!(
        result["permission_denials"][0]["tool_name"], "Write",
        "{result}"
    );
}

#[test]
fn a_malformed_rule_flag_is_one_clear_error() {
    let e = env();
    let out = run(&e, Vec::new(), &["--allow", "Bash(unclosed"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--allow") && err.contains("Bash(unclosed"),
        "{err}"
    );
}

fn settings(e: &Env, url: &str) {
    std::fs::write(
        e.home.join("settings.json"),
        json!({"provider": {"name": "openai-compatible", "baseUrl": url}, "model": "m"})
            .to_string(),
    )
    .unwrap();
}

#[test]
fn print_mode_runs_the_prompt_and_reports_unhonoured_flags_once() {
    let e = env();
    settings(&e, &serve(vec![text("hello")]));
    let out = agent(&e)
        .args([
            "-p",
            "say hello",
            "--output-format",
            "json",
            "--max-thinking-tokens",
            "1000",
            "--betas",
            "x",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let result = &lines(&out)[0];
    assert_eq!(result["result"], "hello");
    assert_eq!(result["subtype"], "success");
    assert_eq!(err.matches("not honoured").count(), 1, "{err}");
    assert!(
        err.contains("--max-thinking-tokens") && err.contains("--betas"),
        "{err}"
    );
}

/// Talks to `agent` as the SDK does, by hand: `lines` on stdin, then stdin closed.
fn sdk_by_hand(e: &Env, args: &[&str], input: &[Value]) -> (Output, Vec<Value>) {
    let mut child = agent(e)
        .args([
            "--output-format",
            "stream-json",
            "--verbose",
            "--system-prompt",
            "",
        ])
        .args(args)
        .args(["--input-format", "stream-json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        for l in input {
            writeln!(stdin, "{l}").unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    let messages = lines(&out);
    (out, messages)
}

#[test]
fn the_sdk_transport_answers_initialize_runs_the_prompt_and_exits_when_stdin_closes() {
    let e = env();
    settings(&e, &serve(vec![text("hi there")]));
    let (out, messages) = sdk_by_hand(
        &e,
        &["--max-turns", "3", "--permission-mode", "acceptEdits"],
        &[
            json!({"type": "control_request", "request_id": "req_1_abc", "request": {"subtype": "initialize", "hooks": null}}),
            json!({"type": "user", "message": {"role": "user", "content": "hello"}, "parent_tool_use_id": null, "session_id": ""}),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        kinds(&messages),
        [
            "control_response",
            "system/init",
            "assistant",
            "result/success"
        ]
    );
    let answer = &messages[0]["response"];
    assert_eq!(answer["subtype"], "success");
    assert_eq!(answer["request_id"], "req_1_abc");
    assert_eq!(messages[1]["permissionMode"], "acceptEdits");
    assert_eq!(messages[3]["result"], "hi there");
}

#[test]
fn unsupported_control_requests_get_an_error_answer_not_silence() {
    let e = env();
    settings(&e, &serve(Vec::new()));
    let (out, messages) = sdk_by_hand(
        &e,
        &[],
        &[
            json!({"type": "control_request", "request_id": "req_1", "request": {"subtype": "initialize", "hooks": null}}),
            json!({"type": "control_request", "request_id": "req_2", "request": {"subtype": "rewind_files", "user_message_id": "x"}}),
            json!({"type": "control_request", "request_id": "req_3", "request": {"subtype": "set_permission_mode", "mode": "plan"}}),
            json!({"type": "control_request", "request_id": "req_4", "request": {"subtype": "set_permission_mode", "mode": "sideways"}}),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<(&str, &str)> = messages
        .iter()
        .map(|m| {
            (
                m["response"]["request_id"].as_str().unwrap(),
                m["response"]["subtype"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        answers,
        [
            ("req_1", "success"),
            ("req_2", "error"),
            ("req_3", "success"),
            ("req_4", "error")
        ]
    );
    assert!(
        messages[1]["response"]["error"]
            .as_str()
            .unwrap()
            .contains("rewind_files")
    );
}

#[test]
fn a_provider_that_is_not_configured_fails_initialize_with_the_reason() {
    let e = env();
    let (out, messages) = sdk_by_hand(
        &e,
        &[],
        &[
            json!({"type": "control_request", "request_id": "req_1", "request": {"subtype": "initialize", "hooks": null}}),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(messages[0]["response"]["subtype"], "error");
    assert!(
        messages[0]["response"]["error"]
            .as_str()
            .unwrap()
            .contains("no model provider is configured"),
        "{messages:?}"
    );
}

/// The system prompt of the first request `agent run` sent with `extra` flags.
fn system_prompt_sent(e: &Env, extra: &[&str]) -> String {
    let (url, _, requests) = model::serve_recording(|k| (k == 0).then(|| text("ok")));
    let out = agent(e)
        .args(["run", "hi", "--provider", "openai-compatible", "--base-url"])
        .arg(format!("{url}/v1"))
        .args(["--model", "m", "--output-format", "json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = requests.lock().unwrap();
    let first = &requests[0]["messages"][0];
    assert_eq!(first["role"], "system");
    first["content"].as_str().unwrap().to_owned()
}

#[test]
fn system_prompt_replaces_the_instructions_and_keeps_the_facts() {
    let e = env();
    let own = system_prompt_sent(&e, &[]);
    assert!(own.contains("You are a coding agent"), "{own}");
    // The SDK passes an empty --system-prompt when its caller set none: the agent's own.
    assert_eq!(system_prompt_sent(&e, &["--system-prompt", ""]), own);
    let custom = system_prompt_sent(
        &e,
        &[
            "--system-prompt",
            "You are terse.",
            "--append-system-prompt",
            "End with OK.",
        ],
    );
    assert!(custom.starts_with("You are terse."), "{custom}");
    assert!(!custom.contains("You are a coding agent"), "{custom}");
    assert!(custom.trim_end().ends_with("End with OK."), "{custom}");
    assert!(
        custom.contains(&e.folder.display().to_string()),
        "the facts stay: {custom}"
    );
}

#[test]
fn resume_in_the_sdks_equals_form_continues_the_same_session() {
    let e = env();
    let (url, _, requests) = model::serve_recording(|k| Some(text(&format!("answer {k}"))));
    settings(&e, &format!("{url}/v1"));
    let init = json!({"type": "control_request", "request_id": "req_1", "request": {"subtype": "initialize", "hooks": null}});
    let user = |t: &str| json!({"type": "user", "message": {"role": "user", "content": t}, "parent_tool_use_id": null, "session_id": ""});
    let (_, first) = sdk_by_hand(
        &e,
        &[],
        &[init.clone(), user("remember the word tangerine")],
    );
    let id = first.last().unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (out, second) = sdk_by_hand(
        &e,
        &[&format!("--resume={id}")],
        &[init, user("which word?")],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(second.last().unwrap()["session_id"], id.as_str());
    let sent = requests.lock().unwrap()[1].to_string();
    assert!(
        sent.contains("tangerine"),
        "the resumed history reached the model: {sent}"
    );
}

#[test]
fn tools_and_the_mode_are_set_as_the_sdk_asks() {
    let e = env();
    settings(&e, &serve(vec![text("ok")]));
    let (out, messages) = sdk_by_hand(
        &e,
        &["--tools", "Read,Grep"],
        &[
            json!({"type": "control_request", "request_id": "req_1", "request": {"subtype": "initialize", "hooks": null}}),
            json!({"type": "control_request", "request_id": "req_2", "request": {"subtype": "set_permission_mode", "mode": "plan"}}),
            json!({"type": "user", "message": {"role": "user", "content": "look"}, "parent_tool_use_id": null, "session_id": ""}),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let init = messages.iter().find(|m| m["subtype"] == "init").unwrap();
    assert_eq!(init["tools"], json!(["Read", "Grep"]));
    assert_eq!(init["permissionMode"], "plan");
}

#[test]
fn max_budget_usd_stops_the_prompt_once_its_cost_reaches_the_limit() {
    let e = env();
    // An Anthropic server that reports usage as the API does; a priced model.
    let (url, reported) = model::serve_anthropic(vec![
        model::Turn::Call("call_1", "Read", json!({"file_path": "README.md"})),
        model::Turn::Call("call_2", "Read", json!({"file_path": "README.md"})),
        model::Turn::Text("never reached".into()),
    ]);
    let out = agent(&e)
        .args([
            "-p",
            "read it",
            "--output-format",
            "json",
            "--max-budget-usd",
            "0.000001",
        ])
        .args([
            "--provider",
            "anthropic",
            "--base-url",
            &url,
            "--model",
            "claude-sonnet-4-5",
        ])
        .env("ANTHROPIC_API_KEY", "test-key")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = &lines(&out)[0];
    assert_eq!(result["subtype"], "error_max_budget_usd", "{result}");
    assert_eq!(result["is_error"], true);
    assert!(
        result["total_cost_usd"].as_f64().unwrap() >= 0.000001,
        "{result}"
    );
    assert_eq!(
        reported.lock().unwrap().len(),
        1,
        "no call after the budget was reached"
    );
}

#[test]
fn stream_json_assistant_messages_carry_the_answers_id_and_usage() {
    let e = env();
    let (url, _) = model::serve_anthropic(vec![
        model::Turn::Call("call_1", "Read", json!({"file_path": "README.md"})),
        model::Turn::Text("done".into()),
    ]);
    let out = agent(&e)
        .args(["run", "read it", "--output-format", "stream-json"])
        .args([
            "--provider",
            "anthropic",
            "--base-url",
            &url,
            "--model",
            "claude-sonnet-4-5",
        ])
        .env("ANTHROPIC_API_KEY", "test-key")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let messages = lines(&out);
    let answers: Vec<&Value> = messages
        .iter()
        .filter(|m| m["type"] == "assistant")
        .collect();
    assert_eq!(answers.len(), 2);
    for a in &answers {
        let u = &a["message"]["usage"];
        let prompt: u64 = [
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ]
        .iter()
        .map(|k| u[k].as_u64().unwrap())
        .sum();
        assert!(prompt > 0, "{a}");
    }
    assert_ne!(answers[0]["message"]["id"], answers[1]["message"]["id"]);
    let result = messages.last().unwrap();
    let sum: u64 = answers
        .iter()
        .map(|a| a["message"]["usage"]["output_tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(result["usage"]["output_tokens"], sum, "{result}");
    assert!(result["total_cost_usd"].as_f64().unwrap() > 0.0, "{result}");
}

#[test]
fn the_typescript_sdks_flags_and_initialize_fields_are_taken() {
    let e = env();
    let (url, _, requests) = model::serve_recording(|k| (k == 0).then(|| text("ok")));
    settings(&e, &format!("{url}/v1"));
    // The argv @anthropic-ai/claude-agent-sdk builds (its flags use the equals form).
    let mut child = agent(&e)
        .args([
            "--output-format",
            "stream-json",
            "--verbose",
            "--input-format",
            "stream-json",
            "--thinking=adaptive",
            "--max-turns=5",
            "--permission-prompt-tool=stdio",
            "--setting-sources=",
            "--await-initialize",
            "--allow-dangerously-skip-permissions",
            "--no-session-persistence",
            "--permission-mode=default",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        let init = json!({"type": "control_request", "request_id": "req_1", "request": {
            "subtype": "initialize", "hooks": null,
            "systemPrompt": ["You answer in haiku."], "appendSystemPrompt": "Sign with -A."}});
        let user = json!({"type": "user", "message": {"role": "user", "content": "hi"}, "parent_tool_use_id": null, "session_id": ""});
        writeln!(stdin, "{init}").unwrap();
        writeln!(stdin, "{user}").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(lines(&out).last().unwrap()["result"], "ok");
    assert_eq!(err.matches("not honoured").count(), 1, "{err}");
    assert!(
        err.contains("--thinking") && err.contains("--no-session-persistence"),
        "{err}"
    );
    let system = requests.lock().unwrap()[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(system.starts_with("You answer in haiku."), "{system}");
    assert!(
        system.contains("applied to the user's folder at the end of each prompt"),
        "the prompt says where edits land under the SDK: {system}"
    );
    assert!(system.trim_end().ends_with("Sign with -A."), "{system}");
}

#[test]
fn the_transcript_counts_the_turns_max_turns_counts() {
    let e = env();
    let replies = vec![
        call("call_1", "Read", &json!({"file_path": "README.md"})),
        text("Summary: read it once."),
    ];
    let out = run(&e, replies, &["--max-turns", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("max_turns · 1 turn(s)"), "{err}");
}

#[test]
fn a_mode_switched_while_a_prompt_runs_applies_to_its_next_call() {
    let e = env();
    settings(
        &e,
        &serve(vec![
            call(
                "call_1",
                "Write",
                &json!({"file_path": "notes.txt", "content": "hi\n"}),
            ),
            text("done"),
        ]),
    );
    // The switch arrives while the prompt runs (it is read after the user message); nobody
    // can be asked, so only acceptEdits lets the Write through.
    let (out, messages) = sdk_by_hand(
        &e,
        &["--keep-shadow"],
        &[
            json!({"type": "control_request", "request_id": "req_1", "request": {"subtype": "initialize", "hooks": null}}),
            json!({"type": "user", "message": {"role": "user", "content": "write"}, "parent_tool_use_id": null, "session_id": ""}),
            json!({"type": "control_request", "request_id": "req_2", "request": {"subtype": "set_permission_mode", "mode": "acceptEdits"}}),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = messages.iter().find(|m| m["type"] == "result").unwrap();
    assert_eq!(result["permission_denials"], json!([]), "{result}");
    let changes = messages
        .iter()
        .find(|m| m["subtype"] == "workspace_changes")
        .unwrap();
    assert_eq!(changes["changes"][0]["path"], "notes.txt", "{changes}");
}
