//! The symbolic links a recursive reader follows out of the tree it is given.
//!
//! A recursive reader given a directory reads everything below it: the directory must not hold
//! a denied path. One that follows symlinks inside the tree (`grep -R`, `find -L`, `du -L`,
//! `tar -h`, `cp -rL`, `rsync -L`, `zip -r`, `diff -r`, ...) also reads wherever those links
//! lead, so each link below the directory is resolved and its target checked like a path the
//! command names. Which commands recurse and which follow links is read by
//! [`agent_core::programs::recursion::of`], from the one table of the programs known to keep
//! links as links (and the options that make them follow them) that the permission engine's
//! read-only set is held to; a recursive program not in it is taken to follow them.
//!
//! | command (with `/out/k` denied, `./l -> /out`) | verdict | why |
//! |-----------------------------------------------|---------|-----|
//! | `grep -r x .`                                 | allow   | `-r` does not follow `l` |
//! | `grep -R x .`, `grep --dereference-rec x .`   | deny    | follows `l` to `/out`, which holds `/out/k` |
//! | `find -L .`, `find . -follow`, `du -L .`      | deny    | |
//! | `tar -hcf a.tar .`, `tar chf a.tar .`         | deny    | |
//! | `zip -r a.zip .`                              | deny    | `zip` is not known to keep links |

use std::path::{Path, PathBuf};

pub(crate) use agent_core::programs::recursion::{Recursion, of};

use crate::paths::{Op, PathPolicy, resolve};

/// Directory entries walked looking for links before the command is refused as too large to
/// check.
pub(crate) const MAX_WALK_ENTRIES: usize = 20_000;

/// Why a reader that follows links, given the resolved directory `root`, would reach a path the
/// policy refuses, if it would: every symlink below `root` (and below the directories links
/// lead to) is resolved and its target checked.
pub(crate) fn links_refusal(
    policy: &PathPolicy,
    root: &Path,
    op: Op,
) -> Option<(String, Option<String>)> {
    if !root.is_dir() {
        return None;
    }
    let mut walked: Vec<PathBuf> = vec![root.to_path_buf()];
    let mut todo = vec![root.to_path_buf()];
    let mut entries = 0usize;
    while let Some(dir) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            entries += 1;
            if entries > MAX_WALK_ENTRIES {
                return Some((
                    format!(
                        "follows symbolic links below {}, which holds more than {MAX_WALK_ENTRIES} entries to check; recurse without following links (`grep -r`, no `-L`) or name smaller directories",
                        root.display()
                    ),
                    Some("built-in: links followed".into()),
                ));
            }
            let Ok(kind) = e.file_type() else { continue };
            let path = e.path();
            if kind.is_dir() {
                todo.push(path);
                continue;
            }
            if !kind.is_symlink() {
                continue;
            }
            let target = match resolve(&path) {
                Ok(t) => t,
                Err(err) => {
                    return Some((
                        format!(
                            "follows the symbolic link {}, which cannot be resolved: {err}",
                            path.display()
                        ),
                        Some("built-in: links followed".into()),
                    ));
                }
            };
            let held = policy.denied_paths(op).find(|d| d.starts_with(&target));
            let follows = |reason: &str| {
                format!(
                    "follows the symbolic link {} to {}: {reason}",
                    path.display(),
                    target.display()
                )
            };
            if let Some(v) = policy.denied(&target, op) {
                return Some((follows(&v.reason), v.rule));
            }
            if let Some(d) = held {
                return Some((
                    format!(
                        "follows the symbolic link {} to {}, which holds the denied path {}",
                        path.display(),
                        target.display(),
                        d.display()
                    ),
                    Some("deniedPaths (links followed)".into()),
                ));
            }
            if policy.reads_limited() && op == Op::Read {
                let v = policy.check_resolved(&target, op);
                if !v.allowed {
                    return Some((follows(&v.reason), v.rule));
                }
            }
            if target.is_dir() && !walked.iter().any(|w| target.starts_with(w)) {
                walked.push(target.clone());
                todo.push(target);
            }
        }
    }
    None
}
