//! Recursive readers, and the symbolic links they follow out of the tree they are given.
//!
//! A recursive reader given a directory reads everything below it: the directory must not hold
//! a denied path. One that follows symlinks inside the tree (`grep -R`, `find -L`, `du -L`,
//! `tar -h`, `cp -rL`, `rsync -L`, `zip -r`, ...) also reads wherever those links lead, so each
//! link below the directory is resolved and its target checked like a path the command names.
//!
//! Which recursion does *not* follow links is an allowlist: [`NO_FOLLOW`] names the programs
//! known to keep links as links when recursing, with the options that make them follow. A
//! recursive program not listed there is taken to follow them.
//!
//! | command (with `/out/k` denied, `./l -> /out`) | verdict | why |
//! |-----------------------------------------------|---------|-----|
//! | `grep -r x .`                                 | allow   | `-r` does not follow `l` |
//! | `grep -R x .`, `grep --dereference-rec x .`   | deny    | follows `l` to `/out`, which holds `/out/k` |
//! | `find -L .`, `find . -follow`, `du -L .`      | deny    | |
//! | `tar -hcf a.tar .`, `tar chf a.tar .`         | deny    | |
//! | `zip -r a.zip .`                              | deny    | `zip` is not known to keep links |

use std::path::{Path, PathBuf};

use agent_core::programs::getopt::long_matches;
use agent_core::shell::Word;
use agent_core::shell::wrappers::basename;

use crate::paths::{Op, PathPolicy, resolve};

/// Programs that read directories recursively without being asked to.
const RECURSIVE_BY_DEFAULT: &[&str] = &[
    "find", "rg", "du", "tree", "tar", "zip", "rsync", "fd", "fdfind", "ag", "ack",
];
/// Flags that make a program recurse (`grep -r`, `cp -a`, `ls -R`).
const RECURSIVE_FLAGS: &[&str] = &["-r", "-R", "--recursive", "-a", "--archive"];
/// Short letters that make a program recurse inside a cluster (`-rn`); `cp`'s `-a` too.
fn recursive_letters(name: &str) -> &'static [char] {
    if name == "cp" {
        &['r', 'R', 'a']
    } else {
        &['r', 'R']
    }
}

/// How a program that recurses keeps links as links: its name, and the short letters, long
/// options and words (`find`'s `-follow`) that make it follow them instead.
struct NoFollow {
    names: &'static [&'static str],
    short: &'static str,
    long: &'static [&'static str],
    words: &'static [&'static str],
}

/// The programs whose recursion is known not to follow symlinks below the directories they are
/// given, unless one of the listed options is present.
const NO_FOLLOW: &[NoFollow] = &[
    NoFollow {
        names: &["grep", "egrep", "fgrep", "rgrep"],
        short: "R",
        long: &["dereference-recursive"],
        words: &[],
    },
    NoFollow {
        names: &["ls"],
        short: "L",
        long: &["dereference"],
        words: &[],
    },
    NoFollow {
        names: &["du"],
        short: "L",
        long: &["dereference"],
        words: &[],
    },
    NoFollow {
        names: &["find"],
        short: "L",
        long: &[],
        words: &["-follow"],
    },
    NoFollow {
        names: &["tree"],
        short: "l",
        long: &[],
        words: &[],
    },
    NoFollow {
        names: &["rg", "fd", "fdfind"],
        short: "L",
        long: &["follow"],
        words: &[],
    },
    NoFollow {
        names: &["ag"],
        short: "f",
        long: &["follow"],
        words: &[],
    },
    NoFollow {
        names: &["ack"],
        short: "",
        long: &["follow"],
        words: &[],
    },
    NoFollow {
        names: &["tar", "gtar", "bsdtar"],
        short: "hL",
        long: &["dereference"],
        words: &[],
    },
    NoFollow {
        names: &["cp"],
        short: "L",
        long: &["dereference"],
        words: &[],
    },
    NoFollow {
        names: &["rsync"],
        short: "Lk",
        long: &["copy-links", "copy-dirlinks", "copy-unsafe-links"],
        words: &[],
    },
];

/// Directory entries walked looking for links before the command is refused as too large to
/// check.
pub(crate) const MAX_WALK_ENTRIES: usize = 20_000;

/// How a command reads the directories it is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Recursion {
    /// Not recursively.
    No,
    /// Recursively, keeping links below them as links.
    Tree,
    /// Recursively, following links below them.
    FollowingLinks,
}

impl Recursion {
    /// Whether the command reads below the directories it is given.
    pub(crate) fn is_recursive(self) -> bool {
        self != Self::No
    }
}

/// How the command `words` (name first, after wrappers) reads directories.
pub(crate) fn of(words: &[Word]) -> Recursion {
    let Some(name) = words.first().map(|w| basename(&w.text)) else {
        return Recursion::No;
    };
    let args = words.get(1..).unwrap_or(&[]);
    let recursive = RECURSIVE_BY_DEFAULT.contains(&name)
        || args.iter().any(|w| {
            let t = w.text.as_str();
            RECURSIVE_FLAGS.contains(&t)
                || long_matches(t, "recursive")
                || long_matches(t, "dereference-recursive")
                || (is_short_cluster(t) && t[1..].contains(recursive_letters(name)))
        });
    if !recursive {
        return Recursion::No;
    }
    let Some(table) = NO_FOLLOW.iter().find(|t| t.names.contains(&name)) else {
        return Recursion::FollowingLinks;
    };
    // tar's first word may be a cluster without a dash (`tar chf a.tar .`).
    let old_tar = name.contains("tar")
        && args
            .first()
            .is_some_and(|w| !w.text.starts_with('-') && w.text.contains(['h', 'L']));
    let follows = old_tar
        || args.iter().any(|w| {
            let t = w.text.as_str();
            !w.is_static()
                || table.words.contains(&t)
                || table.long.iter().any(|l| long_matches(t, l))
                || (is_short_cluster(t) && t[1..].contains(|c| table.short.contains(c)))
        });
    if follows {
        Recursion::FollowingLinks
    } else {
        Recursion::Tree
    }
}

fn is_short_cluster(t: &str) -> bool {
    t.len() > 1 && t.starts_with('-') && !t.starts_with("--")
}

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
            if let Some(v) = policy.denied(&target, op) {
                return Some((
                    format!(
                        "follows the symbolic link {} to {}: {}",
                        path.display(),
                        target.display(),
                        v.reason
                    ),
                    v.rule,
                ));
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
                    return Some((
                        format!(
                            "follows the symbolic link {} to {}: {}",
                            path.display(),
                            target.display(),
                            v.reason
                        ),
                        v.rule,
                    ));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace().map(Word::literal).collect()
    }

    #[test]
    fn recursion_follows_links_unless_the_program_is_known_to_keep_them() {
        for c in [
            "grep -R x .",
            "grep -rR x .",
            "grep --dereference-recursive x .",
            "grep --deref x .",
            "ls -RL .",
            "ls -R --dereference .",
            "du -L .",
            "find -L .",
            "find . -follow",
            "tree -l .",
            "rg -L x",
            "rg --follow x",
            "tar -hcf a.tar .",
            "tar --dereference -cf a.tar .",
            "tar chf a.tar .",
            "cp -rL a b",
            "cp -aL a b",
            "rsync -aL a b",
            "rsync -r --copy-links a b",
            "zip -r a.zip .",
            "scp -r a h:b",
            "ag -f x",
        ] {
            assert_eq!(of(&words(c)), Recursion::FollowingLinks, "{c}");
        }
        for c in [
            "grep -r x .",
            "ls -R .",
            "du .",
            "find . -name x",
            "find -H . -name x",
            "tar -cf a.tar .",
            "cp -a a b",
            "rsync -a a b",
            "rg x",
        ] {
            assert_eq!(of(&words(c)), Recursion::Tree, "{c}");
        }
        for c in ["ls -L x", "cat x", "grep x f"] {
            assert_eq!(of(&words(c)), Recursion::No, "{c}");
        }
    }
}
