//! Integration tests of agent-bundles (one binary, a module for each concern).

#![allow(
    clippy::expect_used,
    clippy::print_stderr,
    clippy::unwrap_used,
    reason = "test code: a panic is a failure report; a skipped test says why on stderr"
)]

mod signatures;
mod store;
