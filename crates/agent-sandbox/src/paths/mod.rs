//! Paths: normalisation, the read/write policy, and enforcement at use through capability
//! handles ([`SandboxedFs`]).

mod fs;
mod normalize;
mod policy;
mod tree;

pub use fs::{FsError, SandboxedFs};
pub use normalize::{MAX_SYMLINKS, PathError, absolute, lexical, resolve};
pub use policy::{Op, PathPolicy};
pub use tree::ReadTree;
