//! The paths a command's arguments can name, judged against the path policy: what the shell
//! expands (globs and braces, matched against the denied paths; variables, whose value is
//! unknown), what options carry attached (`-f/x/secret`, `--file=/x/secret`), and what a
//! recursive reader reaches (a directory that contains a denied path).
//!
//! | argument (with `/x/secret` denied)  | verdict | why |
//! |-------------------------------------|---------|-----|
//! | `cat /x/secre?`, `cat /x/*`         | deny    | the glob can match `/x/secret` |
//! | `cat {/x/secret,y}`                 | deny    | one brace alternative is it |
//! | `grep -f/x/secret k`                | deny    | an attached option value |
//! | `p=/x/secret; cat $p`, `cat "$p"`   | deny    | a value only known at run time could be it |
//! | `grep -r k /x`, `find /x`           | deny    | recursion into a directory holding it |
//! | `ls /x`                             | allow   | not recursive |

use std::path::{Path, PathBuf};

use agent_core::shell::Word;
use globset::{GlobBuilder, GlobMatcher};

use crate::paths::{Op, PathPolicy, absolute, lexical};

/// Programs that read directories recursively without being asked to.
const RECURSIVE_BY_DEFAULT: &[&str] = &[
    "find", "rg", "du", "tree", "tar", "zip", "rsync", "fd", "ag", "ack",
];
/// Flags that make a program recurse (`grep -r`, `cp -a`, `ls -R`).
const RECURSIVE_FLAGS: &[&str] = &["-r", "-R", "--recursive", "-a", "--archive"];

/// Programs whose arguments are text, never opened.
const TEXT_ONLY: &[&str] = &["echo", "printf", "true", "false", ":"];

/// One argument's path candidates.
pub(crate) enum Candidate {
    /// A static path (absolute, unnormalised; `~` expanded).
    Path(PathBuf),
    /// A glob or brace pattern (absolute), matched against the denied paths.
    Pattern(PathBuf),
    /// A value only known at run time, from this static prefix (absolute; the cwd when it
    /// starts with the expansion, `/` when it could be absolute).
    Unknown(PathBuf),
}

/// The path candidates of an argument word: the word itself, the value of `--opt=value`, the
/// attached value of a short option (`-f/path`, from the first `/`), and `key=value` forms.
pub(crate) fn candidates(word: &Word, cwd: &Path, home: Option<&Path>) -> Vec<Candidate> {
    let text = word.text.as_str();
    let mut texts: Vec<&str> = Vec::new();
    if let Some(body) = text.strip_prefix("--") {
        if let Some((_, v)) = body.split_once('=') {
            texts.push(v);
        }
    } else if text.len() > 1 && text.starts_with('-') {
        // A cluster of short options whose last one takes the rest of the word as its value:
        // where the letters end is the program's business, so every split is a candidate
        // (`-fx/secret` is `-f x/secret` or `-f -x /secret`, ...), up to the first `/`.
        let end = text.find('/').map_or(text.len(), |i| i + 1);
        for (at, _) in text.char_indices().skip(1).take_while(|(i, _)| *i < end) {
            texts.push(&text[at..]);
        }
    } else {
        texts.push(text);
        if let Some((_, v)) = text.split_once('=') {
            texts.push(v);
        }
    }
    let texts: Vec<String> = texts
        .into_iter()
        .flat_map(|t| {
            if word.glob && !word.dynamic && t.contains('{') {
                expand_braces(t)
            } else {
                vec![t.to_owned()]
            }
        })
        .collect();
    texts
        .iter()
        .map(String::as_str)
        .filter(|t| !t.is_empty())
        .map(|t| {
            let expanded = expand_home(t, word.home, home);
            let abs = absolute(&expanded, cwd);
            if word.dynamic {
                let cut = t.find(['$', '`']).unwrap_or(t.len());
                let prefix = &t[..cut];
                let base = if prefix.is_empty() {
                    PathBuf::from("/")
                } else {
                    lexical(&absolute(&expand_home(prefix, word.home, home), cwd), cwd)
                };
                Candidate::Unknown(base)
            } else if word.glob && t.contains(['*', '?', '[', '{']) {
                Candidate::Pattern(lexical(&abs, cwd))
            } else {
                Candidate::Path(abs)
            }
        })
        .collect()
}

/// Brace expansion's alternatives (`a{b,c{d,e}}f` → `abf`, `acdf`, `acef`), at most 256; a
/// sequence (`{1..3}`) is left for the matcher.
fn expand_braces(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let Some(open) = text.find('{') else {
        return vec![text.to_owned()];
    };
    // The matching `}` and the top-level commas inside.
    let mut depth = 0usize;
    let mut commas = Vec::new();
    let mut close = None;
    for (i, b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            b',' if depth == 1 => commas.push(i),
            _ => {}
        }
    }
    let (Some(close), false) = (close, commas.is_empty()) else {
        // No alternatives here: keep this brace, expand the rest.
        let (head, tail) = text.split_at(open + 1);
        return expand_braces(tail)
            .into_iter()
            .map(|t| format!("{head}{t}"))
            .collect();
    };
    let mut parts = Vec::new();
    let mut start = open + 1;
    for c in commas.iter().copied().chain(std::iter::once(close)) {
        parts.push(&text[start..c]);
        start = c + 1;
    }
    let (prefix, suffix) = (&text[..open], &text[close + 1..]);
    let mut out = Vec::new();
    for p in parts {
        for e in expand_braces(&format!("{prefix}{p}{suffix}")) {
            if out.len() >= 256 {
                return out;
            }
            out.push(e);
        }
    }
    out
}

fn expand_home(text: &str, is_home: bool, home: Option<&Path>) -> PathBuf {
    if is_home && let Some(h) = home {
        let rest = text.trim_start_matches('~').trim_start_matches('/');
        return h.join(rest);
    }
    PathBuf::from(text)
}

/// A glob or brace word as a matcher: `*`, `?`, `[...]` within one component, `{a,b}`
/// alternation; a `{1..3}` sequence is taken as `*`.
fn matcher(pattern: &Path) -> Option<GlobMatcher> {
    let mut text = pattern.to_string_lossy().into_owned();
    while let Some(start) = text.find('{') {
        let Some(len) = text[start..].find('}') else {
            break;
        };
        let inner = &text[start + 1..start + len];
        if inner.contains("..") && !inner.contains(',') {
            text.replace_range(start..=start + len, "*");
        } else {
            break;
        }
    }
    GlobBuilder::new(&text)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// Why the argument's candidates reach a path the policy refuses for `op`, if they do.
/// `recursive`: the command reads directories recursively.
pub(crate) fn refusal(
    policy: &PathPolicy,
    cwd_real: &Path,
    cands: &[Candidate],
    op: Op,
    recursive: bool,
) -> Option<(String, Option<String>)> {
    let denied = || policy.denied_paths(op);
    if denied().next().is_none() && !(policy.reads_limited() && op == Op::Read) {
        return None; // nothing bounds this operation's paths
    }
    for c in cands {
        match c {
            Candidate::Path(p) => {
                // Below the cwd (resolved once), only the rest of the path is walked.
                let (base, rest) = match p.strip_prefix(policy.cwd()) {
                    Ok(rest) => (cwd_real, rest),
                    Err(_) => (Path::new("/"), p.as_path()),
                };
                let (real, exists) = agent_core::paths::resolve_beneath_existing(base, rest)
                    .unwrap_or_else(|_| (lexical(p, policy.cwd()), true));
                if let Some(v) = policy.denied(&real, op) {
                    return Some((format!("names {}: {}", real.display(), v.reason), v.rule));
                }
                if recursive && let Some(d) = denied().find(|d| d.starts_with(&real)) {
                    return Some((
                        format!(
                            "reads {} recursively, which holds the denied path {}",
                            real.display(),
                            d.display()
                        ),
                        Some("deniedPaths (recursion)".into()),
                    ));
                }
                if policy.reads_limited()
                    && op == Op::Read
                    && looks_like_path(p, policy.cwd(), exists)
                {
                    let v = policy.check_resolved(&real, op);
                    if !v.allowed {
                        return Some((format!("reads {}: {}", real.display(), v.reason), v.rule));
                    }
                }
            }
            Candidate::Pattern(p) => {
                let Some(m) = matcher(p) else {
                    return Some((
                        format!("the pattern {} cannot be checked", p.display()),
                        None,
                    ));
                };
                for d in denied() {
                    // The pattern matches the denied path, or one of its directories (which a
                    // recursive reader would enter, and any reader could name with more text).
                    let hit = d.ancestors().find(|a| m.is_match(a));
                    if let Some(a) = hit
                        && (a == d || recursive)
                    {
                        return Some((
                            format!(
                                "the pattern {} can match {}, which is denied",
                                p.display(),
                                d.display()
                            ),
                            Some("deniedPaths (glob)".into()),
                        ));
                    }
                }
                if policy.reads_limited() && op == Op::Read {
                    let dir = literal_dir(p);
                    let v = policy.check_resolved(&dir, op);
                    if !v.allowed {
                        return Some((
                            format!(
                                "the pattern {} reads outside the allowed paths: {}",
                                p.display(),
                                v.reason
                            ),
                            v.rule,
                        ));
                    }
                }
            }
            Candidate::Unknown(prefix) => {
                if let Some(d) = denied().find(|d| d.starts_with(prefix)) {
                    return Some((
                        format!(
                            "a path only known at run time (from {}) could be the denied path {}",
                            prefix.display(),
                            d.display()
                        ),
                        Some("deniedPaths (run-time value)".into()),
                    ));
                }
                if policy.reads_limited() && op == Op::Read {
                    let v = policy.check_resolved(prefix, op);
                    if !v.allowed {
                        return Some((
                            format!(
                                "a path only known at run time (from {}) could be outside the allowed paths",
                                prefix.display()
                            ),
                            v.rule,
                        ));
                    }
                }
            }
        }
    }
    None
}

/// The directory a pattern expands in: its components before the first glob character.
fn literal_dir(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components().skip(1) {
        let s = c.as_os_str().to_string_lossy();
        if s.contains(['*', '?', '[', '{']) {
            break;
        }
        out.push(c);
    }
    lexical(&out, Path::new("/"))
}

/// Whether a static argument is a path the command may open: it exists, or it is written as
/// a path (`/`, `./`, `../`, `~`). A plain word that names nothing (`status`, a pattern) is
/// not checked against the read grants.
fn looks_like_path(p: &Path, cwd: &Path, exists: bool) -> bool {
    let rel = p.strip_prefix(cwd).unwrap_or(p);
    exists || rel.components().count() > 1 || !p.starts_with(cwd)
}

/// Whether the command (name first, after wrappers) reads directories recursively.
pub(crate) fn is_recursive(words: &[Word]) -> bool {
    let Some(name) = words
        .first()
        .map(|w| agent_core::shell::wrappers::basename(&w.text))
    else {
        return false;
    };
    RECURSIVE_BY_DEFAULT.contains(&name)
        || words[1..].iter().any(|w| {
            let t = w.text.as_str();
            RECURSIVE_FLAGS.contains(&t)
                || (t.starts_with('-') && !t.starts_with("--") && t[1..].contains(['r', 'R']))
        })
}

/// Whether the command's arguments are text only.
pub(crate) fn text_only(name: &str) -> bool {
    TEXT_ONLY.contains(&name)
}
