//! Integration tests of agent-wasi: one binary, one module per concern.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests fail by panicking, with the value in the message"
)]

mod cache;
mod cancel;
mod checker_agrees;
mod command;
mod contained;
mod coreutils_wasm;
mod guests;
mod isolation;
mod limits;
mod mount;
mod net;
mod route;
mod shell_differential;
mod special_files;
mod support;

/// WASI preview 1 errno values the tests expect.
pub mod errno {
    /// `ENOENT`.
    pub const NOENT: i32 = 44;
    /// `EPIPE`.
    pub const PIPE: i32 = 64;
    /// `EPERM`: what wasmtime-wasi 48 returns for a path that leads outside the preopened
    /// directory (`..`, a symlink out). Its cap-std layer reports "a path led outside of the
    /// filesystem" as permission denied, not as WASI's `ENOTCAPABLE`.
    pub const PERM: i32 = 63;
}
