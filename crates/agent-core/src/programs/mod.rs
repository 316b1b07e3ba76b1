//! What known programs do with their arguments.
//!
//! - [`getopt`]: options as the programs parse them (clusters, attached values, `--long=v`,
//!   options after operands, abbreviations).
//! - [`read_only`]: the built-in read-only set, an allowlist of options per command (with
//!   `find`, `test` / `[` and `git` in modules of their own).
//! - [`effects`]: what known programs write or run through their options, for the safety
//!   step that no allow rule waives.
//! - [`sed`]: sed's options and scripts as sed reads them (for the effects, `acceptEdits` and
//!   the sandbox's command checker).
//! - `accept_edits`: the filesystem commands `acceptEdits` runs, an allowlist of options each.
//! - [`recursion`]: recursive readers, and which options make them follow symbolic links.
//! - `rule_scope` (crate-internal): the commands only an exact-string allow rule approves (hidden options,
//!   `find` actions, package scripts run with unknown options).
//! - [`getopt_long`]: GNU `getopt_long` over a program's complete option table.
//! - [`wrappers`]: the programs that run another program (`xargs`, `env`, `timeout`, `sudo`,
//!   ...), one complete option table each, with example rows.

pub(crate) mod accept_edits;
pub mod effects;
pub(crate) mod find;
pub mod getopt;
pub mod getopt_long;
pub(crate) mod git;
pub mod read_only;
pub mod recursion;
pub(crate) mod rule_scope;
pub mod sed;
pub(crate) mod test;
pub mod wrappers;

pub use git::subcommands as git_read_only_subcommands;
