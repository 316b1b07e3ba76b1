//! Integration tests of agent-providers, in one binary (one link instead of one per file).
//!
//! `tests/support` (the loopback server and the prompt-cache model) sits beside this folder
//! rather than in it: agent-cli's tests and benches include its `prompt_cache.rs` by path.

#![allow(
    clippy::unwrap_used,
    reason = "helpers outside #[test] functions; a failure is a test failure"
)]

mod anthropic;
mod openai;
#[path = "../support/mod.rs"]
mod support;
mod timeouts;
