//! Pathname expansion (`*`, `?`, `[...]`) against the workspace, as bash does with `LC_ALL=C`:
//! bytes compared as bytes, results sorted bytewise, a leading `.` matched only by a literal
//! `.`, `.` and `..` never listed, and a pattern that matches nothing left as it is.
//!
//! Directories are listed through the workspace handle: a pattern whose `..` segments climb
//! above the root matches nothing, and a symlink that leads out of the workspace is not
//! descended into. An absolute pattern starts at the guest's `/`: with the workspace mounted at
//! `/home/me/proj`, `/home/me/proj/*.txt` lists the workspace's root, and a pattern character
//! above the mount (`/home/*/proj`) matches nothing, since nothing outside may be listed.

use super::workspace::{GuestPath, Workspace};

/// The most paths one pattern may expand to (100,000): far more than a command line needs,
/// few enough that `*/*/*/*` in a large tree cannot exhaust memory.
pub(crate) const MAX_GLOB_MATCHES: usize = 100_000;

/// A pattern matched more than [`MAX_GLOB_MATCHES`] paths.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooManyMatches;

/// One byte of an expanded word and whether it may act as a glob character (it came from
/// unquoted text or an unquoted expansion).
pub(crate) fn is_pattern(bytes: &[u8], active: &[bool]) -> bool {
    bytes
        .iter()
        .zip(active)
        .any(|(b, a)| *a && matches!(b, b'*' | b'?' | b'['))
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Byte(u8),
    Any,
    Star,
    Class {
        negated: bool,
        set: Box<[bool; 256]>,
    },
}

/// Compiles one path component. `None` when it has no glob character (a literal name).
fn compile(bytes: &[u8], active: &[bool]) -> Option<Vec<Tok>> {
    if !is_pattern(bytes, active) {
        return None;
    }
    let mut toks = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let on = active.get(i).copied().unwrap_or(false);
        match b {
            b'*' if on => {
                if toks.last() != Some(&Tok::Star) {
                    toks.push(Tok::Star);
                }
                i += 1;
            }
            b'?' if on => {
                toks.push(Tok::Any);
                i += 1;
            }
            b'[' if on => match bracket(bytes, active, i + 1) {
                Some((negated, set, next)) => {
                    toks.push(Tok::Class { negated, set });
                    i = next;
                }
                None => {
                    toks.push(Tok::Byte(b'['));
                    i += 1;
                }
            },
            b'\\' if on && i + 1 < bytes.len() => {
                toks.push(Tok::Byte(bytes[i + 1]));
                i += 2;
            }
            _ => {
                toks.push(Tok::Byte(b));
                i += 1;
            }
        }
    }
    Some(toks)
}

/// Parses a bracket expression whose body starts at `start` (just after `[`): the negation,
/// the set, and the index after the closing `]`. `None` when it is not closed.
fn bracket(bytes: &[u8], active: &[bool], start: usize) -> Option<(bool, Box<[bool; 256]>, usize)> {
    let on = |i: usize| active.get(i).copied().unwrap_or(false);
    let mut set = Box::new([false; 256]);
    let mut j = start;
    let negated = on(j) && matches!(bytes.get(j), Some(b'!' | b'^'));
    if negated {
        j += 1;
    }
    let mut first = true;
    loop {
        let b = *bytes.get(j)?;
        if b == b']' && on(j) && !first {
            return Some((negated, set, j + 1));
        }
        first = false;
        if b == b'[' && on(j) && bytes.get(j + 1) == Some(&b':') {
            let rest = &bytes[j + 2..];
            if let Some(end) = rest.windows(2).position(|w| w == b":]") {
                let name = &rest[..end];
                for c in 0..=255u8 {
                    if in_class(name, c) {
                        set[usize::from(c)] = true;
                    }
                }
                j += 2 + end + 2;
                continue;
            }
        }
        let (lo, width) = if b == b'\\' && on(j) && j + 1 < bytes.len() {
            (bytes[j + 1], 2)
        } else {
            (b, 1)
        };
        j += width;
        let is_range = bytes.get(j) == Some(&b'-')
            && bytes.get(j + 1).is_some_and(|&n| !(n == b']' && on(j + 1)));
        if is_range {
            let hi = bytes[j + 1];
            for c in lo..=hi {
                set[usize::from(c)] = true;
            }
            j += 2;
        } else {
            set[usize::from(lo)] = true;
        }
    }
}

/// The POSIX character classes in the C locale.
fn in_class(name: &[u8], c: u8) -> bool {
    match name {
        b"alpha" => c.is_ascii_alphabetic(),
        b"digit" => c.is_ascii_digit(),
        b"alnum" => c.is_ascii_alphanumeric(),
        b"upper" => c.is_ascii_uppercase(),
        b"lower" => c.is_ascii_lowercase(),
        b"space" => matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c),
        b"blank" => matches!(c, b' ' | b'\t'),
        b"punct" => c.is_ascii_punctuation(),
        b"print" => (0x20..0x7f).contains(&c),
        b"graph" => c.is_ascii_graphic(),
        b"cntrl" => c.is_ascii_control(),
        b"xdigit" => c.is_ascii_hexdigit(),
        b"word" => c.is_ascii_alphanumeric() || c == b'_',
        _ => false,
    }
}

/// Whether `name` matches the compiled component `toks`.
fn matches(toks: &[Tok], name: &[u8]) -> bool {
    let mut unlimited = u64::MAX;
    matches_within(toks, name, &mut unlimited).unwrap_or(false)
}

/// [`matches`], taking one unit of `budget` per step; `None` when it runs out first.
fn matches_within(toks: &[Tok], name: &[u8], budget: &mut u64) -> Option<bool> {
    let (mut p, mut s) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while s < name.len() {
        *budget = budget.checked_sub(1)?;
        let step = match toks.get(p) {
            Some(Tok::Star) => {
                backtrack = Some((p, s));
                p += 1;
                continue;
            }
            Some(Tok::Any) => true,
            Some(Tok::Byte(b)) => *b == name[s],
            Some(Tok::Class { negated, set }) => set[usize::from(name[s])] != *negated,
            None => false,
        };
        if step {
            p += 1;
            s += 1;
        } else if let Some((star, from)) = backtrack {
            p = star + 1;
            s = from + 1;
            backtrack = Some((star, from + 1));
        } else {
            return Some(false);
        }
    }
    Some(toks[p..].iter().all(|t| *t == Tok::Star))
}

/// A `case`-style pattern compiled once for many subjects (the `${NAME#..}` and
/// `${NAME/../..}` operators try every substring), its matching paid from a shared budget.
pub(crate) struct Compiled {
    toks: Option<Vec<Tok>>,
    literal: Vec<u8>,
}

impl Compiled {
    /// Compiles `bytes` with its `active` mask.
    pub fn new(bytes: &[u8], active: &[bool]) -> Self {
        Self {
            toks: compile(bytes, active),
            literal: bytes.to_vec(),
        }
    }

    /// The pattern's bytes when it has no pattern character.
    pub fn literal(&self) -> Option<&[u8]> {
        self.toks.is_none().then_some(self.literal.as_slice())
    }

    /// Whether it matches the whole of `subject`; `None` when `budget` runs out.
    pub fn matches(&self, subject: &[u8], budget: &mut u64) -> Option<bool> {
        match &self.toks {
            Some(toks) => matches_within(toks, subject, budget),
            None => {
                *budget = budget.checked_sub(1)?;
                Some(self.literal == subject)
            }
        }
    }
}

/// Whether `subject` matches the `case` pattern `bytes` (with its `active` mask): the whole
/// string, `*` and `?` matching `/` and a leading `.` too, as bash's pattern matching does.
pub(crate) fn pattern_matches(bytes: &[u8], active: &[bool], subject: &[u8]) -> bool {
    match compile(bytes, active) {
        Some(toks) => matches(&toks, subject),
        None => bytes == subject,
    }
}

/// Where a pattern's walk is: a directory of the workspace, or (for an absolute pattern with the
/// workspace mounted below `/`) one of the mount's ancestors, by its depth from `/`. An
/// ancestor holds nothing the script may list: the walk goes on only through the segment that
/// leads to the mount.
#[derive(Clone, Debug)]
enum Place {
    Inside(GuestPath),
    Above(usize),
}

/// Expands the pattern `bytes` (with its `active` mask) from the directory `cwd`. `Ok(None)`
/// when nothing matches (the caller keeps the word as written). An absolute pattern is read
/// from the guest's `/`: it matches only below the workspace's mount.
pub(crate) fn expand(
    ws: &Workspace,
    cwd: &GuestPath,
    bytes: &[u8],
    active: &[bool],
) -> Result<Option<Vec<String>>, TooManyMatches> {
    let absolute = bytes.first() == Some(&b'/');
    let root = GuestPath::root(cwd.mount());
    let mount = cwd.mount().segments();
    let start = if !absolute {
        (Place::Inside(cwd.clone()), Vec::new())
    } else if mount.is_empty() {
        (Place::Inside(root.clone()), Vec::from(&b"/"[..]))
    } else {
        (Place::Above(0), Vec::from(&b"/"[..]))
    };
    // A step through the mount's ancestors: the next segment of the way, `.` or `..`.
    let above = |depth: usize, name: &str| -> Option<Place> {
        let depth = match name {
            "." => depth,
            ".." => depth.checked_sub(1)?,
            n if mount.get(depth).is_some_and(|m| m == n) => depth + 1,
            _ => return None,
        };
        Some(if depth == mount.len() {
            Place::Inside(root.clone())
        } else {
            Place::Above(depth)
        })
    };
    let mut entries: Vec<(Option<Place>, Vec<u8>)> = vec![(Some(start.0), start.1)];
    let body = if absolute { 1 } else { 0 };
    let mut components = Vec::new();
    let mut from = body;
    for (i, b) in bytes.iter().enumerate().skip(body) {
        if *b == b'/' {
            components.push((from, i));
            from = i + 1;
        }
    }
    components.push((from, bytes.len()));
    let last = components.len() - 1;
    for (k, &(lo, hi)) in components.iter().enumerate() {
        let comp = &bytes[lo..hi];
        let is_last = k == last;
        let separator = if k == 0 { &b""[..] } else { &b"/"[..] };
        let mut next = Vec::new();
        for (place, shown) in entries {
            let mut shown = shown;
            shown.extend_from_slice(separator);
            if comp.is_empty() {
                // `a//b` or a trailing `/`: the path so far must be a directory (a mount's
                // ancestor is one).
                let is_dir = match &place {
                    Some(Place::Inside(p)) => ws.is_dir(p).unwrap_or(false),
                    Some(Place::Above(_)) => true,
                    None => false,
                };
                if is_dir || !is_last {
                    next.push((place, shown));
                }
                continue;
            }
            match compile(comp, &active[lo..hi]) {
                None => {
                    shown.extend_from_slice(comp);
                    // A literal segment: resolved lexically, as `GuestPath::resolve` does: `..`
                    // above the root ends the walk, except in an absolute pattern, which may
                    // leave the mount and come back (`/ws/../ws/*`).
                    let name = String::from_utf8_lossy(comp);
                    let place = place.and_then(|place| match place {
                        Place::Inside(p) => match name.as_ref() {
                            "." => Some(Place::Inside(p)),
                            ".." if absolute && p.is_root() && !mount.is_empty() => {
                                Some(Place::Above(mount.len() - 1))
                            }
                            ".." => p.parent().ok().map(Place::Inside),
                            n => Some(Place::Inside(p.join(n))),
                        },
                        Place::Above(depth) => above(depth, &name),
                    });
                    let Some(place) = place else { continue };
                    if is_last
                        && let Place::Inside(p) = &place
                        && !ws.exists(p)
                    {
                        continue;
                    }
                    next.push((Some(place), shown));
                }
                Some(toks) => {
                    // Outside the workspace nothing is listed.
                    let Some(Place::Inside(dir)) = place else {
                        continue;
                    };
                    let mut names = ws.names(&dir);
                    names.sort_unstable();
                    for name in names {
                        let n = name.as_bytes();
                        if n.first() == Some(&b'.') && toks.first() != Some(&Tok::Byte(b'.')) {
                            continue;
                        }
                        if !matches(&toks, n) {
                            continue;
                        }
                        let child = dir.join(&name);
                        if !is_last && !ws.is_dir(&child).unwrap_or(false) {
                            continue;
                        }
                        let mut s = shown.clone();
                        s.extend_from_slice(n);
                        next.push((Some(Place::Inside(child)), s));
                        if next.len() > MAX_GLOB_MATCHES {
                            return Err(TooManyMatches);
                        }
                    }
                }
            }
        }
        entries = next;
    }
    if entries.is_empty() {
        return Ok(None);
    }
    let mut out: Vec<Vec<u8>> = entries.into_iter().map(|(_, shown)| shown).collect();
    out.sort_unstable();
    Ok(Some(
        out.into_iter()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::workspace::Mount;

    fn pat(p: &str) -> Vec<Tok> {
        compile(p.as_bytes(), &vec![true; p.len()]).unwrap()
    }

    #[test]
    fn matching() {
        for (p, name, want) in [
            ("*", "abc", true),
            ("*.txt", "a.txt", true),
            ("*.txt", "a.txt.bak", false),
            ("a*b*c", "aXbYbc", true),
            ("a*b*c", "aXbYb", false),
            ("?", "a", true),
            ("?", "ab", false),
            ("[ab]*", "b1", true),
            ("[!ab]*", "b1", false),
            ("[^ab]*", "c1", true),
            ("[a-c]", "b", true),
            ("[a-c]", "d", false),
            ("[]a]", "]", true),
            ("[a-]", "-", true),
            ("[[:digit:]]x", "7x", true),
            ("[[:upper:]]*", "abc", false),
            ("[", "[", true),
            ("a[", "a[", true),
            ("**", "", true),
        ] {
            let toks = compile(p.as_bytes(), &vec![true; p.len()]);
            let got = toks.is_some_and(|t| matches(&t, name.as_bytes()));
            assert_eq!(got, want, "{p} vs {name}");
        }
        assert_eq!(
            pat("a**b"),
            vec![Tok::Byte(b'a'), Tok::Star, Tok::Byte(b'b')]
        );
    }

    #[test]
    fn quoted_glob_characters_are_literal() {
        assert!(compile(b"*", &[false]).is_none());
        let toks = compile(b"a*?", &[true, false, true]).unwrap();
        assert!(matches(&toks, b"a*x"));
        assert!(!matches(&toks, b"abx"));
    }

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in ["a", "a-b", "sub", "sub/deep"] {
            std::fs::create_dir(root.join(d)).unwrap();
        }
        for f in [
            "a/x",
            "a-b/x",
            "b.txt",
            "c.txt",
            ".hidden",
            "sub/s.txt",
            "sub/deep/d.txt",
        ] {
            std::fs::write(root.join(f), f).unwrap();
        }
        dir
    }

    fn glob(ws: &Workspace, cwd: &str, p: &str) -> Option<Vec<String>> {
        glob_at(ws, "/", cwd, p)
    }

    fn glob_at(ws: &Workspace, mount: &str, cwd: &str, p: &str) -> Option<Vec<String>> {
        let root = GuestPath::root(&Mount::new(mount).unwrap());
        let cwd = GuestPath::resolve(&root, cwd).unwrap();
        expand(ws, &cwd, p.as_bytes(), &vec![true; p.len()]).unwrap()
    }

    #[test]
    fn absolute_patterns_with_a_mount() {
        let dir = tree();
        let ws = Workspace::open(dir.path()).unwrap();
        let v = |s: &[&str]| Some(s.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>());
        let m = "/abs/ws";
        assert_eq!(
            glob_at(&ws, m, m, "/abs/ws/*.txt"),
            v(&["/abs/ws/b.txt", "/abs/ws/c.txt"])
        );
        assert_eq!(
            glob_at(&ws, m, "/abs/ws/sub", "/abs/ws/sub/*/*.txt"),
            v(&["/abs/ws/sub/deep/d.txt"])
        );
        assert_eq!(
            glob_at(&ws, m, m, "/abs//ws/./a*/"),
            v(&["/abs//ws/./a-b/", "/abs//ws/./a/"])
        );
        // Out of the mount and back, as paths resolve.
        assert_eq!(
            glob_at(&ws, m, m, "/abs/ws/../ws/b*"),
            v(&["/abs/ws/../ws/b.txt"])
        );
        // Relative patterns are as at `/`.
        assert_eq!(
            glob_at(&ws, m, "/abs/ws/sub", "../*.txt"),
            v(&["../b.txt", "../c.txt"])
        );
        assert_eq!(glob_at(&ws, m, m, "../*"), None);
        // Nothing outside is listed: the guest's `/`, an ancestor, a sibling of the mount.
        for outside in [
            "/*",
            "/abs/*",
            "/*/ws/*.txt",
            "/abs/w*/b.txt",
            "/abs/other/*",
            "/*.txt",
        ] {
            assert_eq!(glob_at(&ws, m, m, outside), None, "{outside}");
        }
    }

    #[test]
    fn expansion_against_a_tree() {
        let dir = tree();
        let ws = Workspace::open(dir.path()).unwrap();
        let v = |s: &[&str]| Some(s.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>());
        assert_eq!(glob(&ws, "/", "*.txt"), v(&["b.txt", "c.txt"]));
        assert_eq!(
            glob(&ws, "/", "*"),
            v(&["a", "a-b", "b.txt", "c.txt", "sub"])
        );
        assert_eq!(glob(&ws, "/", ".*"), v(&[".hidden"]));
        assert_eq!(glob(&ws, "/", "*/x"), v(&["a-b/x", "a/x"]));
        assert_eq!(glob(&ws, "/", "*/"), v(&["a-b/", "a/", "sub/"]));
        assert_eq!(glob(&ws, "/", "sub/*/*.txt"), v(&["sub/deep/d.txt"]));
        assert_eq!(glob(&ws, "/sub", "../*.txt"), v(&["../b.txt", "../c.txt"]));
        assert_eq!(glob(&ws, "/sub", "/*.txt"), v(&["/b.txt", "/c.txt"]));
        assert_eq!(glob(&ws, "/sub", "./*.txt"), v(&["./s.txt"]));
        assert_eq!(glob(&ws, "/", "*.none"), None);
        assert_eq!(glob(&ws, "/", "../*"), None);
        assert_eq!(glob(&ws, "/", "nodir/*"), None);
    }
}
