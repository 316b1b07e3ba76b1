//! What a run costs, end to end (issue 27): `agent run` against a loopback server that speaks
//! the Anthropic Messages API and reports usage as the real API would (prompt caching
//! modelled), then the run's summary, its `--json` result, the session log, and the Claude
//! transcript export as ccusage (npm, the most used reader of Claude Code transcripts) reads
//! it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::model::{Reported, Turn, on_path, serve_anthropic};

fn agent(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agent"));
    c.env("AGENT_HOME", home)
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .env("ANTHROPIC_API_KEY", "test-key")
        .env_remove("DISABLE_PROMPT_CACHING")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_COMPATIBLE_API_KEY")
        .env_remove("OPENAI_COMPATIBLE_BASE_URL");
    c
}

struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    project: PathBuf,
    settings: PathBuf,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let project = root.join("project");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("a.txt"), "one\n").unwrap();
    std::fs::write(project.join("b.txt"), "two\n").unwrap();
    let settings = root.join("settings.json");
    std::fs::write(
        &settings,
        json!({"permissions": {"allow": ["Read"]}}).to_string(),
    )
    .unwrap();
    Env {
        _tmp: tmp,
        root,
        home,
        project,
        settings,
    }
}

/// Three model answers: two tool calls, then the text.
fn script() -> Vec<Turn> {
    vec![
        Turn::Call("toolu_1", "Read", json!({"file_path": "a.txt"})),
        Turn::Call("toolu_2", "Read", json!({"file_path": "b.txt"})),
        Turn::Text("a.txt says one, b.txt says two.".into()),
    ]
}

/// `agent run` on the project against `url`, with `extra` arguments.
fn run(e: &Env, url: &str, extra: &[&str]) -> Output {
    let out = agent(&e.home)
        .args([
            "run",
            "what do a.txt and b.txt say?",
            "--provider",
            "anthropic",
        ])
        .args(["--base-url", url, "--settings"])
        .arg(&e.settings)
        .arg("--workspace")
        .arg(&e.project)
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The tokens the server reported, added up: input, output, cache written, cache read.
fn totals(reported: &[Reported]) -> [u64; 4] {
    reported.iter().fold([0; 4], |t, r| {
        [
            t[0] + r.usage.input_tokens,
            t[1] + r.output_tokens,
            t[2] + r.usage.cache_creation_input_tokens,
            t[3] + r.usage.cache_read_input_tokens,
        ]
    })
}

#[test]
fn a_second_anthropic_request_carries_cache_breakpoints_and_the_runs_summary_shows_cached_tokens() {
    let e = env();
    let (url, reported) = serve_anthropic(script());
    let out = run(&e, &url, &[]);
    let reported = reported.lock().unwrap().clone();
    assert_eq!(reported.len(), 3);
    let second = &reported[1].request;
    let ephemeral = json!({"type": "ephemeral"});
    let tools = second["tools"].as_array().unwrap();
    assert_eq!(tools.last().unwrap()["cache_control"], ephemeral);
    assert_eq!(second["system"][0]["cache_control"], ephemeral);
    let user_marks = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter(|m| m["content"].as_array().unwrap().last().unwrap()["cache_control"] == ephemeral)
        .count();
    assert_eq!(user_marks, 2);
    // The server read from its cache what the first request wrote.
    assert!(
        reported[1].usage.cache_read_input_tokens > 0,
        "{reported:?}"
    );
    let [input, output, written, read] = totals(&reported);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary = format!(
        "tokens: {input} in, {output} out, {written} cache written, {read} cache read; about $"
    );
    assert!(stderr.contains(&summary), "{summary}\n{stderr}");
    assert!(
        stderr.contains("at claude-sonnet-4-5's list price"),
        "{stderr}"
    );
}

#[test]
fn ccusage_reads_back_the_tokens_the_server_reported_from_the_exported_transcript() {
    if !on_path("ccusage") {
        assert!(
            std::env::var_os("CI").is_none(),
            "ccusage is not installed; .ci/run installs it (npm install -g ccusage@20.0.24)"
        );
        eprintln!(
            "skipped: ccusage is not on PATH (npm install -g ccusage@20.0.24 to run this test)"
        );
        return;
    }
    let e = env();
    let (url, reported) = serve_anthropic(script());
    let out = run(&e, &url, &["--json"]);
    let result: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    let reported = reported.lock().unwrap().clone();
    let [input, output, written, read] = totals(&reported);
    assert!(written > 0 && read > 0, "caching at work: {reported:?}");
    assert_eq!(
        result["usage"],
        json!({"inputTokens": input, "outputTokens": output,
               "cacheCreationInputTokens": written, "cacheReadInputTokens": read})
    );
    let cost = result["costUsd"].as_f64().unwrap();

    // The export, laid out as Claude Code keeps its transcripts.
    let id = result["sessionId"].as_str().unwrap();
    let export = agent(&e.home)
        .args(["sessions", "export", id, "--format", "claude"])
        .output()
        .unwrap();
    assert!(export.status.success(), "{export:?}");
    let config = e.root.join("claude");
    let project = config.join("projects").join("-project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join(format!("{id}.jsonl")), &export.stdout).unwrap();
    std::fs::write("/tmp/cct/export.jsonl", &export.stdout).unwrap();
    let ccusage = Command::new("ccusage")
        .args(["claude", "session", "--json", "--offline"])
        .env("CLAUDE_CONFIG_DIR", &config)
        .env("HOME", e.root.join("ccusage-home"))
        .env_remove("CCUSAGE_CLAUDE_EXTRA_DIRS")
        .output()
        .unwrap();
    assert!(
        ccusage.status.success(),
        "{}",
        String::from_utf8_lossy(&ccusage.stderr)
    );
    let report: Value = serde_json::from_slice(&ccusage.stdout).unwrap_or_else(|err| {
        panic!(
            "ccusage printed no JSON ({err}): {}",
            String::from_utf8_lossy(&ccusage.stdout)
        )
    });
    let sessions = report["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{report}");
    let s = &sessions[0];
    assert_eq!(s["sessionId"], id);
    // Each of the three answers once, though the answers' lines carry their usage each.
    assert_eq!(
        [
            &s["inputTokens"],
            &s["outputTokens"],
            &s["cacheCreationTokens"],
            &s["cacheReadTokens"]
        ],
        [&json!(input), &json!(output), &json!(written), &json!(read)],
        "{report}"
    );
    assert_eq!(s["modelsUsed"], json!(["claude-sonnet-4-5"]));
    // ccusage's own price table agrees with ours on what the run cost.
    let theirs = s["totalCost"].as_f64().unwrap();
    assert!(
        (theirs - cost).abs() < 1e-6,
        "ccusage ${theirs}, agent ${cost}"
    );
}
