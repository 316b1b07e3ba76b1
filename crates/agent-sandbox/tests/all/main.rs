//! Integration tests of agent-sandbox (one binary, a module for each concern).

#![allow(
    clippy::expect_used,
    clippy::print_stderr,
    clippy::unwrap_used,
    reason = "test code: a panic is a failure report; a skipped test says why on stderr"
)]

mod bypasses;
mod commands;
#[cfg(target_os = "linux")]
mod outer;
#[cfg(unix)]
mod paths;
mod profile;
mod safehouse;
mod trust_table;
mod urls;
mod wrappers;
