//! The paths a command's arguments can name, judged against the path policy: what the shell
//! expands (globs and braces, compared with the denied paths and expanded against the file
//! system; tilde forms; variables, whose value is unknown), what options carry attached
//! (`-f/x/secret`, `--file=/x/secret`), and what a recursive reader reaches (a directory that
//! holds a denied path, and the links below it when it follows them).
//!
//! Every path is judged after its symlinks are resolved (those of the components that exist),
//! a glob's matches included.
//!
//! | argument (with `/x/secret/` denied, `/x/l -> /x/secret`) | verdict | why |
//! |----------------------------------------------------------|---------|-----|
//! | `cat /x/secre?`, `cat /x/*`                               | deny    | the glob can match `/x/secret` |
//! | `cat /x/s*/k`, `cat /x/*/k`, `cat /x/[s]ecret/k`          | deny    | a parent component can match it |
//! | `cat /x/l/k`, `cat /x/l*/k`                               | deny    | the link (and the glob's match) resolves into it |
//! | `cat {/x/secret,y}`                                       | deny    | one brace alternative is it |
//! | `grep -f/x/secret k`                                      | deny    | an attached option value |
//! | `cat ~+/secret` (cwd `/x`)                                | deny    | `~+` is the working directory |
//! | `p=/x/secret; cat $p`, `cat /x/$p`                        | deny    | a value only known at run time could be any path |
//! | `grep -r k /x`, `find /x`                                 | deny    | recursion into a directory holding it |
//! | `ls /x`                                                   | allow   | not recursive |

use std::path::{Path, PathBuf};

use agent_core::glob::{ExpandError, ExpansionLimits, Pattern, Reach, is_pattern};
use agent_core::shell::Word;

use super::recursion::{self, Recursion};
use crate::paths::{Op, PathPolicy, absolute, lexical, resolve};

/// How far the checker expands one glob before it refuses the command as too large to check.
pub(crate) const GLOB_LIMITS: ExpansionLimits = ExpansionLimits {
    matches: 4_096,
    entries: 16_384,
};

/// Programs whose arguments are text, never opened.
const TEXT_ONLY: &[&str] = &["echo", "printf", "true", "false", ":"];

/// Where a command's relative paths and tilde forms resolve.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Base<'a> {
    /// The working directory (absolute, as bash's `$PWD` spells it), or `None` when it is only
    /// known at run time (`cd "$d"`).
    pub cwd: Option<&'a Path>,
    /// The home directory, if known.
    pub home: Option<&'a Path>,
}

/// One argument's path candidates.
pub(crate) enum Candidate {
    /// A static path (absolute, unnormalised; tilde forms expanded).
    Path(PathBuf),
    /// A glob or brace pattern (absolute, unnormalised).
    Pattern(PathBuf),
    /// A value only known at run time (what it is, for the reason: the word as written in
    /// backquotes): it could be any path.
    Unknown(String),
}

/// The path candidates of an argument word: the word itself, the value of `--opt=value`, the
/// attached value of a short option (`-f/path`, from the first `/`), and `key=value` forms.
pub(crate) fn candidates(word: &Word, base: Base<'_>) -> Vec<Candidate> {
    let text = word.text.as_str();
    // Each piece, and whether bash expands a tilde at its start: at the start of the word, and
    // after `name=` (bash does so in any word shaped like an assignment).
    let mut pieces: Vec<(&str, bool)> = Vec::new();
    if let Some(body) = text.strip_prefix("--") {
        if let Some((_, v)) = body.split_once('=') {
            pieces.push((v, false));
        }
    } else if text.len() > 1 && text.starts_with('-') {
        // A cluster of short options whose last one takes the rest of the word as its value:
        // where the letters end is the program's business, so every split is a candidate
        // (`-fx/secret` is `-f x/secret` or `-f -x /secret`, ...), up to the first `/`.
        let end = text.find('/').map_or(text.len(), |i| i + 1);
        for (at, _) in text.char_indices().skip(1).take_while(|(i, _)| *i < end) {
            pieces.push((&text[at..], false));
        }
    } else {
        pieces.push((text, true));
        if let Some((k, v)) = text.split_once('=') {
            pieces.push((v, is_identifier(k)));
        }
    }
    // A parameter, command or arithmetic expansion anywhere in the word.
    let runtime = word.dynamic && word.raw.contains(['$', '`']);
    let mut out = Vec::new();
    for (i, (piece, tilde)) in pieces.into_iter().enumerate() {
        if runtime {
            out.push(Candidate::Unknown(format!("`{}`", word.raw)));
            break;
        }
        let alternatives = if word.glob && piece.contains('{') {
            expand_braces(piece)
        } else {
            vec![piece.to_owned()]
        };
        for alt in alternatives.iter().filter(|a| !a.is_empty()) {
            let whole_word = i == 0 && tilde;
            for t in spellings(alt, word, whole_word, tilde) {
                let c = candidate(t, word, base);
                if let Candidate::Pattern(p) = &c {
                    // Matching nothing, the pattern is passed on as it is written.
                    out.push(Candidate::Path(p.clone()));
                }
                out.push(c);
            }
        }
    }
    out
}

/// What one piece of text can stand for after tilde expansion: the text itself, the text with
/// its tilde prefix replaced, or `None` when the prefix is only known at run time.
fn spellings(text: &str, word: &Word, whole_word: bool, tilde: bool) -> Vec<Spelling> {
    let expands = if whole_word {
        // The parse flags the word: `~`/`$HOME` as home, any other tilde prefix as dynamic.
        word.home || (word.dynamic && word.raw.starts_with('~'))
    } else {
        tilde && text.starts_with('~')
    };
    if !expands || !text.starts_with('~') {
        return vec![if word.dynamic && !whole_word && text.contains('~') {
            Spelling::Unknown
        } else {
            Spelling::Text(text.to_owned())
        }];
    }
    let (prefix, rest) = text.split_once('/').unwrap_or((text, ""));
    let expanded = match prefix {
        "~" => Spelling::Home(rest.to_owned()),
        "~+" => Spelling::Cwd(rest.to_owned()),
        // `~-` ($OLDPWD), `~user`, `~N` / `~+N` / `~-N` (the directory stack).
        _ => Spelling::Unknown,
    };
    if whole_word {
        vec![expanded]
    } else {
        // After `name=` the program may also see the text as it is.
        vec![expanded, Spelling::Text(text.to_owned())]
    }
}

/// One spelling of a piece (see [`spellings`]).
enum Spelling {
    /// The text as it stands.
    Text(String),
    /// Below the home directory.
    Home(String),
    /// Below the working directory (`~+`).
    Cwd(String),
    /// Only known at run time.
    Unknown,
}

fn candidate(s: Spelling, word: &Word, base: Base<'_>) -> Candidate {
    let unknown = || Candidate::Unknown(format!("`{}`", word.raw));
    let path = match s {
        Spelling::Unknown => return unknown(),
        Spelling::Home(rest) => match base.home {
            Some(h) => h.join(rest),
            None => return unknown(),
        },
        Spelling::Cwd(rest) => match base.cwd {
            Some(c) => c.join(rest),
            None => return unknown(),
        },
        Spelling::Text(t) => {
            let p = PathBuf::from(t);
            match (p.is_absolute(), base.cwd) {
                (true, _) => p,
                (false, Some(c)) => absolute(&p, c),
                (false, None) => return unknown(),
            }
        }
    };
    if word.glob && is_pattern(&path.to_string_lossy()) {
        Candidate::Pattern(path)
    } else {
        Candidate::Path(path)
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
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

/// A refusal: the reason (after the command) and the rule.
pub(crate) type Refusal = (String, Option<String>);

/// How a command reads what its arguments name.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reading {
    /// How it reads the directories it is given.
    pub recursion: Recursion,
    /// Whether `**` spans directories (the script runs `shopt` with `globstar`).
    pub globstar: bool,
}

/// Why the argument's candidates reach a path the policy refuses for `op`, if they do.
/// `cwd_real`: the working directory with its symlinks resolved (`None` when unknown).
pub(crate) fn refusal(
    policy: &PathPolicy,
    cwd_real: Option<&Path>,
    cands: &[Candidate],
    op: Op,
    reading: Reading,
) -> Option<Refusal> {
    let recursion = reading.recursion;
    let mut denied = policy.denied_paths(op).peekable();
    if denied.peek().is_none() && !(policy.reads_limited() && op == Op::Read) {
        return None; // nothing bounds this operation's paths
    }
    for c in cands {
        let found = match c {
            Candidate::Path(p) => path_refusal(policy, cwd_real, p, op, recursion),
            Candidate::Pattern(p) => pattern_refusal(policy, p, op, reading),
            Candidate::Unknown(what) => unknown_refusal(policy, what, op),
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

fn path_refusal(
    policy: &PathPolicy,
    cwd_real: Option<&Path>,
    p: &Path,
    op: Op,
    recursion: Recursion,
) -> Option<Refusal> {
    // Below the cwd (resolved once), only the rest of the path is walked.
    let (base, rest) = match (cwd_real, p.strip_prefix(policy.cwd())) {
        (Some(real), Ok(rest)) => (real, rest),
        _ => (Path::new("/"), p),
    };
    // A path that cannot be resolved (a loop, a file used as a directory) cannot be opened
    // either; it is judged as written.
    let (real, exists) = agent_core::paths::resolve_beneath_existing(base, rest)
        .unwrap_or_else(|_| (lexical(p, policy.cwd()), true));
    if let Some(why) = resolved_refusal(policy, &real, op, recursion) {
        return Some(why);
    }
    if policy.reads_limited() && op == Op::Read && looks_like_path(p, policy.cwd(), exists) {
        let v = policy.check_resolved(&real, op);
        if !v.allowed {
            return Some((format!("reads {}: {}", real.display(), v.reason), v.rule));
        }
    }
    None
}

/// The checks on a resolved path a command names: denied, holding a denied path (recursive
/// readers), and links leading to refused paths (readers that follow them).
fn resolved_refusal(
    policy: &PathPolicy,
    real: &Path,
    op: Op,
    recursion: Recursion,
) -> Option<Refusal> {
    if let Some(v) = policy.denied(real, op) {
        return Some((format!("names {}: {}", real.display(), v.reason), v.rule));
    }
    if recursion.is_recursive()
        && let Some(d) = policy.denied_paths(op).find(|d| d.starts_with(real))
    {
        return Some((
            format!(
                "reads {} recursively, which holds the denied path {}",
                real.display(),
                d.display()
            ),
            Some("deniedPaths (recursion)".into()),
        ));
    }
    if recursion == Recursion::FollowingLinks {
        return recursion::links_refusal(policy, real, op);
    }
    None
}

fn pattern_refusal(
    policy: &PathPolicy,
    written: &Path,
    op: Op,
    reading: Reading,
) -> Option<Refusal> {
    let recursion = reading.recursion;
    let shown = written.display();
    // What it could match, files yet to be created included: as written (normalised), and
    // with the directory it expands in resolved through its links.
    let pattern = Pattern::new(written);
    let literal = pattern.literal_dir(written);
    let rest = written
        .strip_prefix(&literal)
        .map_or_else(|_| PathBuf::new(), Path::to_path_buf);
    let literal_real = resolve(&lexical(&literal, Path::new("/"))).ok();
    let mut forms = vec![Pattern::new(&lexical(written, Path::new("/")))];
    if let Some(r) = &literal_real {
        forms.push(Pattern::new(&lexical(&r.join(&rest), Path::new("/"))));
    }
    for d in policy.denied_paths(op) {
        let reach = forms
            .iter()
            .filter_map(|f| f.reach(d))
            .min_by_key(|r| *r != Reach::AtOrUnder);
        if reach == Some(Reach::AtOrUnder) || (reach.is_some() && recursion.is_recursive()) {
            return Some((
                format!(
                    "the pattern {shown} can match {}, which is denied, or a path below it",
                    d.display()
                ),
                Some("deniedPaths (glob)".into()),
            ));
        }
    }
    if policy.reads_limited() && op == Op::Read {
        let dir = literal_real.unwrap_or_else(|| lexical(&literal, Path::new("/")));
        let v = policy.check_resolved(&dir, op);
        if !v.allowed {
            return Some((
                format!(
                    "the pattern {shown} reads outside the allowed paths: {}",
                    v.reason
                ),
                v.rule,
            ));
        }
    }
    // What it matches now, each match resolved through its links.
    let matches = match pattern.expand(reading.globstar, GLOB_LIMITS) {
        Ok(found) => found.matches,
        Err(e @ (ExpandError::TooMany(_) | ExpandError::TooLong)) => {
            return Some((
                format!("the pattern {shown} cannot be checked: {e}"),
                Some("built-in: glob".into()),
            ));
        }
    };
    for m in matches {
        // A match that cannot be resolved (a loop, a file used as a directory) cannot be
        // opened either.
        let Ok(real) = resolve(&m) else { continue };
        if let Some((why, rule)) = resolved_refusal(policy, &real, op, recursion) {
            return Some((
                format!("(the pattern {shown} matches {}) {why}", m.display()),
                rule,
            ));
        }
        if policy.reads_limited() && op == Op::Read {
            let v = policy.check_resolved(&real, op);
            if !v.allowed {
                return Some((
                    format!(
                        "the pattern {shown} matches {}, which reads {}: {}",
                        m.display(),
                        real.display(),
                        v.reason
                    ),
                    v.rule,
                ));
            }
        }
    }
    None
}

fn unknown_refusal(policy: &PathPolicy, what: &str, op: Op) -> Option<Refusal> {
    // A run-time value can hold `/`, `..` or a whole path, so whatever text precedes it, it
    // could name any path.
    if let Some(d) = policy.denied_paths(op).next() {
        return Some((
            format!(
                "reads {what}, only known at run time, which could name any path, such as the denied {}",
                d.display()
            ),
            Some("deniedPaths (run-time value)".into()),
        ));
    }
    (policy.reads_limited() && op == Op::Read).then(|| {
        (
            format!(
                "reads {what}, only known at run time, which could name a path outside the allowed paths"
            ),
            Some("built-in: run-time value".into()),
        )
    })
}

/// Why bash's own expansion of the patterns among `cands` would list a directory the policy
/// refuses to read, if it would: a command that only prints its arguments (`echo secret/*`)
/// still shows the names inside.
pub(crate) fn listing_refusal(
    policy: &PathPolicy,
    cands: &[Candidate],
    globstar: bool,
) -> Option<Refusal> {
    for c in cands {
        let Candidate::Pattern(written) = c else {
            continue;
        };
        let listed = match Pattern::new(written).expand(globstar, GLOB_LIMITS) {
            Ok(found) => found.listed,
            Err(e) => {
                return Some((
                    format!("the pattern {} cannot be checked: {e}", written.display()),
                    Some("built-in: glob".into()),
                ));
            }
        };
        for dir in listed {
            let Ok(real) = resolve(&dir) else { continue };
            let v = policy.check_resolved(&real, Op::Read);
            if !v.allowed && (policy.denied(&real, Op::Read).is_some() || policy.reads_limited()) {
                return Some((
                    format!(
                        "expands the pattern {} by listing {}: {}",
                        written.display(),
                        real.display(),
                        v.reason
                    ),
                    v.rule,
                ));
            }
        }
    }
    None
}

/// Whether a static argument is a path the command may open: it exists, or it is written as
/// a path (`/`, `./`, `../`, `~`). A plain word that names nothing (`status`, a pattern) is
/// not checked against the read grants.
fn looks_like_path(p: &Path, cwd: &Path, exists: bool) -> bool {
    let rel = p.strip_prefix(cwd).unwrap_or(p);
    exists || rel.components().count() > 1 || !p.starts_with(cwd)
}

/// Whether the command's arguments are text only.
pub(crate) fn text_only(name: &str) -> bool {
    TEXT_ONLY.contains(&name)
}
