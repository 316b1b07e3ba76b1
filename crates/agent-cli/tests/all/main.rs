//! Integration tests of agent-cli: the `agent` binary run as a user runs it (one binary, a module
//! for each concern).

#![allow(
    clippy::expect_used,
    clippy::print_stderr,
    clippy::unwrap_used,
    reason = "test code: a panic is a failure report; a skipped test says why on stderr"
)]

mod agent_run;
mod bundles;
mod chat;
mod cli;
mod default_home;
mod headless;
mod hooks;
mod json_casing;
mod mcp;
mod options;
mod postgres;
#[cfg(target_os = "linux")]
mod run_cancel;
mod run_workspace;
mod sandbox;
mod sdk;
#[cfg(target_os = "linux")]
mod session_pty;
mod sessions;
mod support;
mod system_prompt;
mod tool;
mod transcript;
mod usage;
mod wasi;
mod workspace;
