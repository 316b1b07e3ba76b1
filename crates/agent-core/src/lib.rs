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
//!
//! # Public surface
//! Each public module is a concept an embedder or another crate of the workspace uses; every
//! other module (the engine's steps, rule indexing, the shell's lowering and guards, hook
//! plumbing, modes, secret names) is private, and what a module's types need in their
//! signatures is re-exported at the module.
//!
//! | module | what other code takes from it |
//! |---|---|
//! | [`events`] | `Event`, `EventPayload` and its payload types, the JSONL codec |
//! | [`tools`] | `Tool`, `ToolContext`, `ToolOutput`, `ToolError` |
//! | [`permissions`] | `PermissionEngine` (+ builder), `ToolCall`, `PermissionDecision`, `PermissionMode`, policies, grants, `Prompter`; [`permissions::rules`] (the rule grammar) and [`permissions::environment`] (safe variables) |
//! | [`settings`] | `Settings`, `SettingsLoader`, `SettingSources`, `TrustedFolders`; [`settings::trust_table`] and [`settings::known_keys`] |
//! | [`home`] | `AgentHome` |
//! | [`hooks`] | `HookRegistry`, `HooksConfig`, `HookInput`/`HookOutput`, `check_tool_call`; [`hooks::protocol`] |
//! | [`process`] | `ProcessTree` |
//! | [`shell`] | `parse`, `ParsedScript`, `SimpleCommand`, `Word`; [`shell::tree`] (the lowered tree the WASI shell compiles), `arithmetic`, `braces`, `runtime_eval`, `wrappers` |
//! | [`programs`] | per-program knowledge the sandbox's checker and the WASI builtins share: `getopt`, `getopt_long`, `read_only`, `effects`, `recursion`, `sed`, `wrappers` |
//! | [`glob`], [`paths`], [`view`], [`spelling`] | glob reach and expansion, path resolution, the real/shadow `PathView`, edit distance |

#![deny(missing_docs)]

pub mod events;
pub mod glob;
pub mod home;
pub mod hooks;
mod modes;
pub mod paths;
pub mod permissions;
pub mod process;
pub mod programs;
mod secrets;
pub mod settings;
pub mod shell;
pub mod spelling;
pub mod tools;
pub mod view;
