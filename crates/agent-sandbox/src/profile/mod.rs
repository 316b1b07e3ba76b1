//! Policy assembly for the OS sandbox (document 001): one selection model, rendered as a macOS
//! Seatbelt profile ([`sbpl`]) and as a Linux bubblewrap command line ([`bwrap`]).
//!
//! A profile tree holds `.sb` files in stages: `00-base.sb`, `10-system-runtime.sb`,
//! `20-network.sb`, then `30-toolchains/`, `40-shared/`, `50-integrations-core/` (all always
//! included), `55-integrations-optional/` (by `--enable` or a `$$require=`), `60-agents/` and
//! `65-apps/` (by the command's basename, `--enable=all-agents` / `all-apps`, or a
//! `$$require=`). Within a stage, files go in `LC_ALL=C` byte order. After the profiles come the
//! read-only add-dirs, the read-write add-dirs, the workdir (each with ancestor `literal`s), the
//! protected paths, the `--append-profile` files, and write-denies of the policy's own files
//! ([`sbpl`] has the details, [`resolved`] the symlinked paths). Agent Safehouse's trees
//! assemble to the same rules as its own generator (docs/sandbox.md). Machine facts (home directory,
//! symlinks, environment) come through a [`host::Host`], so the same inputs give the same bytes
//! on any machine. Comment metadata is described in [`metadata`].
//!
//! ```
//! use agent_sandbox::profile::{host::FixedHost, selection::{ProfilePlan, Selection}, sbpl, ProfileTree};
//! # let dir = tempfile::tempdir().unwrap();
//! # std::fs::write(dir.path().join("00-base.sb"), "(version 1)\n(deny default)\n").unwrap();
//! let tree = ProfileTree::load(dir.path())?;
//! let host = FixedHost { home: "/home/u".into(), cwd: "/home/u/project".into(), ..FixedHost::default() };
//! let plan = ProfilePlan::resolve(&tree, &Selection::default(), &host)?;
//! let policy = sbpl::render(&plan);
//! assert!(policy.contains("(allow file-read* file-write* (subpath \"/home/u/project\"))"));
//! # Ok::<(), agent_sandbox::profile::ProfileError>(())
//! ```

pub mod bwrap;
pub mod env;
pub mod explain;
pub mod host;
pub mod metadata;
pub mod resolved;
pub mod sbpl;
pub mod selection;
mod tree;

pub use tree::{Profile, ProfileStage, ProfileTree};

/// Why a policy could not be assembled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// The profile tree cannot be read.
    #[error("profile tree: {0}")]
    Tree(String),
    /// The selection is invalid (unknown feature, missing or cyclic requirement, root grant).
    #[error("{0}")]
    Selection(String),
    /// A machine fact cannot be read.
    #[error("{0}")]
    Host(String),
}
