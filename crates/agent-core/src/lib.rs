//! The core of the agent runtime: the session log's [`events`], the [`tools::Tool`] trait, the
//! [`permissions`] engine, the lifecycle [`hooks`], and the one [`shell`] parser everything that
//! reads shell text uses.
//!
//! This crate is the bottom layer: it depends on no other crate of the workspace and on nothing
//! heavy (no wasmtime, reqwest or rusqlite), so an embedder can use the permission engine alone.
//!
//! # Core concepts
//! - [`events::Event`]: one entry of a session's append-only log, forward compatible.
//! - [`tools::Tool`]: a capability the model calls; it only ever runs through the permission
//!   gate.
//! - [`permissions::PermissionEngine`]: the nine-step decision for one tool call, reading
//!   Claude Code's `settings.json` rules.
//! - [`settings::Settings`]: the merged settings files every layer reads, with the trust
//!   rules for project files; [`home::AgentHome`]: where the user's files live.
//! - [`hooks::HookRegistry`]: Claude Code compatible lifecycle hooks (command, http and
//!   in-process), wired into the permission engine.
//! - [`shell::parse`]: shell text to the simple commands it can run, at every nesting level;
//!   [`shell::runtime_eval`]: the text bash evaluates at run time, out of the parse's sight.
//! - [`programs`]: what known programs do with their arguments: options parsed as the
//!   programs parse them, the read-only allowlist, files written and programs run through
//!   options.
//! - [`glob`]: what a glob pattern over paths could match, and what it matches now.
//! - [`paths`]: what a path says (lexical) and what it names (resolved in the kernel's order).
//! - [`secrets::is_secret_name`]: which environment variable names count as secrets, for every
//!   environment the runtime hands to another program.

#![deny(missing_docs)]

pub mod events;
pub mod glob;
pub mod home;
pub mod hooks;
pub mod modes;
pub mod paths;
pub mod permissions;
pub mod process;
pub mod programs;
pub mod secrets;
pub mod settings;
pub mod shell;
pub mod spelling;
pub mod tools;
pub mod view;
