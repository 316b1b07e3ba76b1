//! Integration tests of agent-mcp, in one binary (one link instead of one per file).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failure report"
)]

mod config;
mod gate;
mod http;
mod stdio;
mod support;
