//! The application-level sandbox: the last line inside every tool. Even `bypassPermissions`
//! cannot leave it.
//!
//! Each part is usable alone:
//! - [`settings::SandboxSettings`]: one model for documents 000 and 002 and Claude Code's
//!   `sandbox` block.
//! - [`paths`]: normalisation (`.`, `..`, slashes, symlinks), a policy compared by whole path
//!   components with deny winning and the root never grantable, and [`paths::SandboxedFs`],
//!   which performs file operations through capability handles so a symlink swapped in after
//!   the check cannot escape.
//! - [`commands::CommandChecker`]: every simple command of a shell string, at every nesting
//!   level, checked against allow/deny lists of basenames, through the same parse the
//!   permission engine uses.
//! - [`urls`]: SSRF checks (schemes, every private and special address range, odd spellings,
//!   domain lists) with DNS resolution that can be pinned.
//! - [`caps::OutputCaps`]: file-read pages, line, listing and command-output caps with spill
//!   files.
//! - [`profile`]: the OS sandbox's policy, assembled from a profile tree and rendered for
//!   macOS Seatbelt or Linux bubblewrap; [`outer`] runs a command inside it with resource
//!   limits and an audit record.
//!
//! What it does not stop (a process that reads a file it was allowed to run, hard links created
//! outside, kernel-level escapes) is for the OS sandbox; see docs/sandbox.md.
//!
//! ```
//! use agent_sandbox::commands::CommandChecker;
//! use agent_sandbox::settings::SandboxSettings;
//!
//! let settings = SandboxSettings { denied_commands: vec!["rm".into()], ..SandboxSettings::default() };
//! let checker = CommandChecker::new(&settings);
//! assert!(checker.check("ls -la && git status").allowed);
//! assert!(!checker.check("echo ok; bash -lc 'x=1; \\rm -rf /'").allowed);
//! ```

#![deny(missing_docs)]

pub mod caps;
pub mod commands;
pub mod outer;
pub mod paths;
pub mod profile;
pub mod settings;
pub mod urls;
mod verdict;

pub use verdict::Verdict;
