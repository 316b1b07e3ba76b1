//! What prompt caching saves (issue 27): the input tokens billed over a scripted 20-turn
//! session, with the Anthropic adapter's cache breakpoints (`caching_on`) and without them
//! (`caching_off`, the baseline, as with `DISABLE_PROMPT_CACHING=1`), from the usage a
//! loopback server reports as the real API would (its prompt caching modelled by
//! `agent-providers/tests/support/prompt_cache.rs`).
//!
//! The session is the real loop (`Agent` with the built-in tools and the default system
//! prompt) through the real `AnthropicProvider`: 19 answers that each read one of four
//! source-like files of about 1.5 KB, then a text answer, so the context grows by a tool call
//! and its result every turn, as a reading-heavy session does. The figures are token counts,
//! deterministic for a given runtime (no timing), written to
//! `target/criterion/prompt_caching/tokens.json` for `cargo xtask bench`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    missing_docs,
    reason = "bench code: a panic is a failure report; it prints its figures"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_core::permissions::{PermissionEngine, RuleList};
use agent_loop::{Agent, AgentOptions};
use agent_providers::{AnthropicProvider, ProviderConfig, ProviderKind};
use agent_store::{SessionStore, StoreOptions};
use agent_tools::{ToolState, builtin_tools};
use serde_json::{Value, json};

#[path = "../../agent-cli/tests/all/support/model.rs"]
mod model;

use model::{Reported, Turn, serve_anthropic};

/// Provider calls in the session.
const TURNS: usize = 20;

/// The files the session reads, in turn.
const FILES: usize = 4;

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"),
        PathBuf::from,
    )
}

/// A source-like file of about 1.5 KB.
fn source(n: usize) -> String {
    (0..40)
        .map(|line| format!("fn step_{n}_{line}(x: u64) -> u64 {{ x * {line} + {n} }}\n"))
        .collect()
}

fn script() -> Vec<Turn> {
    const IDS: [&str; TURNS - 1] = [
        "toolu_01", "toolu_02", "toolu_03", "toolu_04", "toolu_05", "toolu_06", "toolu_07",
        "toolu_08", "toolu_09", "toolu_10", "toolu_11", "toolu_12", "toolu_13", "toolu_14",
        "toolu_15", "toolu_16", "toolu_17", "toolu_18", "toolu_19",
    ];
    let mut turns: Vec<Turn> = IDS
        .iter()
        .enumerate()
        .map(|(i, id)| {
            Turn::Call(
                id,
                "Read",
                json!({"file_path": format!("src/f{}.rs", i % FILES)}),
            )
        })
        .collect();
    turns.push(Turn::Text("Read every file; nothing to change.".into()));
    turns
}

/// One session on a fresh project, store and server; what the server reported, call by call.
fn session(caching: bool) -> Vec<Reported> {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let project = root.join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    for n in 0..FILES {
        std::fs::write(project.join(format!("src/f{n}.rs")), source(n)).unwrap();
    }
    let (url, reported) = serve_anthropic(script());
    let mut config = ProviderConfig::new(ProviderKind::Anthropic)
        .with_base_url(url)
        .with_api_key("bench-key");
    config.prompt_caching = caching;
    let provider = Arc::new(AnthropicProvider::new(&config).unwrap());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = Arc::new(
            SessionStore::open(StoreOptions::new(root.join("sessions")))
                .await
                .unwrap(),
        );
        let permissions = PermissionEngine::builder(&project, root.join("home"))
            .rule(RuleList::Allow, "Read")
            .unwrap();
        let state = ToolState::new();
        let mut agent = Agent::builder(provider, store, &project)
            .options(AgentOptions::new("claude-sonnet-4-5").max_turns(TURNS as u32 + 5))
            .permissions(permissions)
            .tools(builtin_tools(&state))
            .start()
            .await
            .unwrap();
        let result = agent.prompt("Read the sources one by one.").await.unwrap();
        assert_eq!(result.stop_reason, "end_turn", "{result:?}");
        assert_eq!(result.turns as usize, TURNS);
        agent.close().await.unwrap();
    });
    let reported = reported.lock().unwrap().clone();
    assert_eq!(reported.len(), TURNS);
    reported
}

/// The session's totals as the bench writes them.
fn totals(reported: &[Reported]) -> Value {
    let sum = |f: fn(&Reported) -> u64| reported.iter().map(f).sum::<u64>();
    let input = sum(|r| r.usage.input_tokens);
    let written = sum(|r| r.usage.cache_creation_input_tokens);
    let read = sum(|r| r.usage.cache_read_input_tokens);
    let billed: f64 = reported.iter().map(|r| r.usage.billed_equivalent()).sum();
    json!({
        "turns": reported.len(),
        "promptTokens": input + written + read,
        "inputTokens": input,
        "cacheCreationInputTokens": written,
        "cacheReadInputTokens": read,
        "outputTokens": sum(|r| r.output_tokens),
        "billedEquivalentInputTokens": billed,
    })
}

fn main() {
    // `cargo bench` passes criterion's flags (`--bench`, `--warm-up-time` …); this bench
    // counts tokens and has nothing to time, so it ignores them.
    let baseline = totals(&session(false));
    let figure = totals(&session(true));
    let ratio = figure["billedEquivalentInputTokens"].as_f64().unwrap()
        / baseline["billedEquivalentInputTokens"].as_f64().unwrap();
    let report = json!({
        "caching_on": figure,
        "caching_off": baseline,
        "ratio": ratio,
    });
    let dir = target_dir().join("criterion/prompt_caching");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tokens.json"), report.to_string()).unwrap();
    println!("prompt_caching: {report:#}");
}
