//! The bench whose figures are token counts, not times: prompt caching
//! (`crates/agent-loop/benches/caching.rs`). The bench writes
//! `target/criterion/prompt_caching/tokens.json` (the session's totals with caching on, the
//! figure, and off, the baseline, from the same run); this renders its section of
//! `docs/benchmarks.md`.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value;

/// The group's name for `--only`.
pub const NAME: &str = "prompt_caching";
/// The package and bench target that measure it.
pub const PACKAGE: &str = "agent-loop";
/// The bench target.
pub const BENCH: &str = "caching";
/// The section's heading in docs/benchmarks.md.
pub const HEADING: &str = "Prompt caching (`crates/agent-loop/benches/caching.rs`, input tokens billed over a scripted 20-turn session)";

/// The section, from the figures the bench wrote under `root/target/criterion`.
pub fn section(root: &Path) -> Result<String> {
    let file = root.join("target/criterion").join(NAME).join("tokens.json");
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("cannot read {}; did the bench run?", file.display()))?;
    let v: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", file.display()))?;
    let count = |run: &Value, key: &str| -> Result<f64> {
        run[key]
            .as_f64()
            .with_context(|| format!("{} has no {key}", file.display()))
    };
    let baseline_billed = count(&v["caching_off"], "billedEquivalentInputTokens")?;
    let mut out = String::new();
    writeln!(out, "## {HEADING}\n")?;
    writeln!(
        out,
        "| run | full-rate input | cache writes (×1.25) | cache reads (×0.1) | prompt tokens in all | billed-equivalent input | ratio to `caching_off` |"
    )?;
    writeln!(out, "|---|---:|---:|---:|---:|---:|---:|")?;
    for run in ["caching_off", "caching_on"] {
        let r = &v[run];
        let billed = count(r, "billedEquivalentInputTokens")?;
        writeln!(
            out,
            "| `{run}`{} | {:.0} | {:.0} | {:.0} | {:.0} | {billed:.0} | {:.2} |",
            if run == "caching_off" {
                " (baseline)"
            } else {
                ""
            },
            count(r, "inputTokens")?,
            count(r, "cacheCreationInputTokens")?,
            count(r, "cacheReadInputTokens")?,
            count(r, "promptTokens")?,
            billed / baseline_billed,
        )?;
    }
    writeln!(
        out,
        "\n- `caching_off`: the session without cache breakpoints (`DISABLE_PROMPT_CACHING=1`): every prompt token of every call billed at the full rate"
    )?;
    writeln!(
        out,
        "- `caching_on`: the same session with the Anthropic adapter's breakpoints (the last tool, the system prompt, the last two user turns; docs/agent.md, Prompt caching): each call reads what the one before wrote and writes its new turn\n"
    )?;
    writeln!(
        out,
        "Token counts, not times: the same figures on every machine for a given runtime (tokens counted as one per four bytes of each block's JSON). The session is the real loop (`Agent`, the built-in tools, the default system prompt) through the real `AnthropicProvider` against a loopback server that reports usage as the Messages API would, its prompt caching modelled by `crates/agent-providers/tests/support/prompt_cache.rs` (the longest cached prefix at a breakpoint or the 20 blocks before it is read, the prefix up to the last breakpoint is written, nothing under 1,024 tokens is cached). 19 answers each read one of four 1.5 KB source files, then one answers in text. Billed-equivalent input weighs cache writes ×1.25 and reads ×0.1, Anthropic's prices relative to plain input.\n"
    )?;
    Ok(out)
}
