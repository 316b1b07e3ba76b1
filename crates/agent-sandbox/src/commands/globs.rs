//! Glob patterns in command arguments: what a pattern *could* match (compared with the denied
//! paths component by component, so files that do not exist yet count too) and what it
//! matches *now* (expanded against the file system, bounded, every match then resolved
//! through its symlinks by the caller).
//!
//! Both sides over-approximate bash, so a pattern is never taken to match less than it can:
//! - `*`, `?`, `[...]` and extglob groups (`@(a|b)`, `!(x)`, ...) match within one component;
//!   a bracket expression is taken as any one character and a group (or a `{1..9}` sequence)
//!   as any text;
//! - matching ignores ASCII case (`shopt -s nocaseglob`), and `*` matches a leading dot
//!   (`shopt -s dotglob`);
//! - a `**` component matches any number of directories when compared with the denied paths
//!   (`shopt -s globstar`), and is expanded that way only when the script runs `shopt` with
//!   `globstar` (otherwise bash reads it as `*`);
//! - a component that starts with a literal `.` also matches `.` and `..` (`.*/k` can climb
//!   out of the directory).
//!
//! | pattern (with `/w/secret/` denied) | could reach | why |
//! |------------------------------------|-------------|-----|
//! | `/w/s*/k`, `/w/*/k`, `/w/?ecret/k`  | under       | a parent component matches `secret` |
//! | `/w/**/k`                           | under       | `**` spans any directories |
//! | `/w/s*`                             | exact       | the denied path itself |
//! | `/w/*`                              | exact       | |
//! | `/*`                                | ancestor    | only a recursive reader goes on to `/w/secret` |
//! | `/w/x*/k`                           | no          | |

use std::path::{Component, Path, PathBuf};

/// Directory entries read while expanding one pattern before it is refused as too large to
/// check.
pub(crate) const MAX_ENTRIES: usize = 16_384;
/// Matches of one pattern before it is refused as too large to check.
pub(crate) const MAX_MATCHES: usize = 4_096;
/// Components of a pattern compared with a denied path; a longer pattern is not compared
/// (it is refused as uncheckable).
const MAX_COMPONENTS: usize = 128;

/// Whether a text has glob syntax (`*`, `?`, `[`) or braces.
pub(crate) fn is_pattern(text: &str) -> bool {
    text.contains(['*', '?', '[', '{'])
}

/// One element of a component pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    /// This character (compared without ASCII case).
    Char(char),
    /// Any one character (`?`, a bracket expression).
    One,
    /// Any text, including none (`*`, an extglob group, a `{a..b}` sequence).
    Any,
}

/// One path component of a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    /// `**`: any number of components.
    Deep,
    /// Matches one component.
    Name(Vec<Token>),
}

impl Part {
    fn parse(text: &str) -> Self {
        if text == "**" {
            return Self::Deep;
        }
        let chars: Vec<char> = text.chars().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while let Some(&c) = chars.get(i) {
            match c {
                '*' | '?' | '+' | '@' | '!' if chars.get(i + 1) == Some(&'(') => {
                    // An extglob group: any text up to its balanced `)`.
                    match closing(&chars, i + 1, '(', ')') {
                        Some(end) => {
                            out.push(Token::Any);
                            i = end + 1;
                        }
                        None => {
                            out.push(Token::Char(c));
                            i += 1;
                        }
                    }
                }
                '*' => {
                    out.push(Token::Any);
                    i += 1;
                }
                '?' => {
                    out.push(Token::One);
                    i += 1;
                }
                '[' => match bracket_end(&chars, i) {
                    Some(end) => {
                        out.push(Token::One);
                        i = end + 1;
                    }
                    None => {
                        out.push(Token::Char('['));
                        i += 1;
                    }
                },
                '{' => match closing(&chars, i, '{', '}') {
                    // What brace expansion left: a sequence (`{1..9}`), taken as any text.
                    Some(end) if chars[i + 1..end].windows(2).any(|w| w == ['.', '.']) => {
                        out.push(Token::Any);
                        i = end + 1;
                    }
                    _ => {
                        out.push(Token::Char('{'));
                        i += 1;
                    }
                },
                c => {
                    out.push(Token::Char(c));
                    i += 1;
                }
            }
        }
        Self::Name(out)
    }

    /// Whether the component matches the name `name`.
    fn matches(&self, name: &str) -> bool {
        match self {
            Self::Deep => true,
            Self::Name(tokens) => {
                if matches!(name, "." | "..") && tokens.first() != Some(&Token::Char('.')) {
                    return false; // bash never matches `.` and `..` without a leading dot
                }
                wildcard(tokens, &name.chars().collect::<Vec<_>>())
            }
        }
    }

    /// Whether the component can match a name other than its own literal text.
    fn is_glob(&self) -> bool {
        match self {
            Self::Deep => true,
            Self::Name(t) => t.iter().any(|t| !matches!(t, Token::Char(_))),
        }
    }

    fn starts_with_dot(&self) -> bool {
        matches!(self, Self::Name(t) if t.first() == Some(&Token::Char('.')))
    }
}

/// The index of the `close` that balances the `open` at `at`.
fn closing(chars: &[char], at: usize, open: char, close: char) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &c) in chars.iter().enumerate().skip(at) {
        if c == open {
            depth += 1;
        } else if c == close {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// The index of the `]` closing the bracket expression opened at `at` (a `]` right after the
/// `[`, `[!` or `[^` is a member; `[:class:]` is skipped whole).
fn bracket_end(chars: &[char], at: usize) -> Option<usize> {
    let mut i = at + 1;
    if matches!(chars.get(i), Some('!' | '^')) {
        i += 1;
    }
    if chars.get(i) == Some(&']') {
        i += 1;
    }
    while let Some(&c) = chars.get(i) {
        if c == '[' && matches!(chars.get(i + 1), Some(':' | '.' | '=')) {
            let kind = chars[i + 1];
            let end = (i + 2..chars.len().saturating_sub(1))
                .find(|&j| chars[j] == kind && chars[j + 1] == ']')?;
            i = end + 2;
            continue;
        }
        if c == ']' {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Whether `tokens` match all of `name` (ASCII case ignored).
fn wildcard(tokens: &[Token], name: &[char]) -> bool {
    // reach[j]: the tokens so far can match the first j characters.
    let mut reach = vec![false; name.len() + 1];
    reach[0] = true;
    for t in tokens {
        let mut next = vec![false; name.len() + 1];
        for j in 0..=name.len() {
            if !reach[j] {
                continue;
            }
            match t {
                Token::Any => next[j..].iter_mut().for_each(|r| *r = true),
                Token::One => {
                    if j < name.len() {
                        next[j + 1] = true;
                    }
                }
                Token::Char(c) => {
                    if name.get(j).is_some_and(|n| n.eq_ignore_ascii_case(c)) {
                        next[j + 1] = true;
                    }
                }
            }
        }
        reach = next;
    }
    reach[name.len()]
}

/// A glob pattern over absolute paths.
#[derive(Clone, Debug)]
pub(crate) struct Pattern {
    /// The components after the root, as written (`..` kept).
    parts: Vec<Part>,
}

/// How a pattern can relate to a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reach {
    /// It can match the path or a path below it.
    AtOrUnder,
    /// It can match a directory above the path (a recursive reader then reaches it).
    Above,
}

/// Occurs when a pattern cannot be expanded within the bounds.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExpandError {
    /// More entries or matches than [`MAX_ENTRIES`] / [`MAX_MATCHES`].
    #[error(
        "it matches more paths than can be checked (over {MAX_MATCHES} matches or {MAX_ENTRIES} directory entries); name the files, or use a narrower pattern"
    )]
    TooMany,
    /// A component is too long to compare, or the pattern has too many components.
    #[error("it is too long to check ({MAX_COMPONENTS} components at most)")]
    TooLong,
}

impl Pattern {
    /// Parses an absolute pattern (a relative one is taken from `/`).
    pub(crate) fn new(path: &Path) -> Self {
        let parts = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(Part::parse(&n.to_string_lossy())),
                Component::ParentDir => Some(Part::Name(vec![Token::Char('.'), Token::Char('.')])),
                _ => None,
            })
            .collect();
        Self { parts }
    }

    /// Whether the pattern can match `target` (absolute, normalised) or a path below it, or a
    /// directory above it. The pattern is compared as written: give it normalised
    /// (`lexical`) so that `..` components are applied.
    pub(crate) fn reach(&self, target: &Path) -> Option<Reach> {
        let names: Vec<String> = target
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        let (n, m) = (self.parts.len(), names.len());
        if n > MAX_COMPONENTS || m > MAX_COMPONENTS {
            return Some(Reach::AtOrUnder); // too long to compare: taken as a match
        }
        // at[i][j]: the first i parts can match the first j names.
        let mut at = vec![vec![false; m + 1]; n + 1];
        at[0][0] = true;
        for i in 0..=n {
            for j in 0..=m {
                if !at[i][j] || i == n {
                    continue;
                }
                match &self.parts[i] {
                    Part::Deep => {
                        for k in at[i + 1][j..].iter_mut() {
                            *k = true;
                        }
                    }
                    p => {
                        if j < m && p.matches(&names[j]) {
                            at[i + 1][j + 1] = true;
                        }
                    }
                }
            }
        }
        if (0..=n).any(|i| at[i][m]) {
            return Some(Reach::AtOrUnder);
        }
        (0..m).any(|j| at[n][j]).then_some(Reach::Above)
    }

    /// The directory the pattern expands in: its components before the first glob one.
    pub(crate) fn literal_dir(&self, original: &Path) -> PathBuf {
        let mut out = PathBuf::from("/");
        let mut parts = self.parts.iter();
        for c in original.components() {
            match c {
                Component::Normal(_) | Component::ParentDir => {
                    if parts.next().is_none_or(Part::is_glob) {
                        break;
                    }
                    out.push(c);
                }
                _ => {}
            }
        }
        out
    }

    /// The paths the pattern matches now: every existing entry a glob component matches,
    /// literal components kept whether they exist or not (the caller resolves and checks
    /// each). `..` components stay in the results, to be resolved in the kernel's order.
    /// `globstar`: whether `**` spans directories (`shopt -s globstar`); otherwise it is `*`.
    ///
    /// # Errors
    /// [`ExpandError`] past the bounds.
    pub(crate) fn expand(&self, globstar: bool) -> Result<Vec<PathBuf>, ExpandError> {
        self.expand_listing(globstar).map(|(matches, _)| matches)
    }

    /// [`Self::expand`], also returning the directories whose entries were listed (those bash
    /// reads to expand the pattern).
    ///
    /// # Errors
    /// [`ExpandError`] past the bounds.
    pub(crate) fn expand_listing(
        &self,
        globstar: bool,
    ) -> Result<(Vec<PathBuf>, Vec<PathBuf>), ExpandError> {
        if self.parts.len() > MAX_COMPONENTS {
            return Err(ExpandError::TooLong);
        }
        let star = Part::Name(vec![Token::Any]);
        let mut entries = 0usize;
        let mut listed = Vec::new();
        let mut current = vec![PathBuf::from("/")];
        for (i, part) in self.parts.iter().enumerate() {
            let part = if *part == Part::Deep && !globstar {
                &star
            } else {
                part
            };
            // Before the last component, bash only goes on through directories.
            let last = i + 1 == self.parts.len();
            let mut next = Vec::new();
            for dir in &current {
                match part {
                    Part::Name(_) if !part.is_glob() => {
                        next.push(dir.join(literal_text(part)));
                    }
                    Part::Deep => {
                        // The directory itself and every directory below it.
                        let mut todo = vec![dir.clone()];
                        let mut seen = Vec::new();
                        while let Some(d) = todo.pop() {
                            if let Ok(real) = std::fs::canonicalize(&d) {
                                if seen.contains(&real) {
                                    continue;
                                }
                                seen.push(real);
                            }
                            listed.push(d.clone());
                            for name in list(&d, &mut entries)? {
                                let p = d.join(&name);
                                if p.is_dir() {
                                    todo.push(p);
                                }
                            }
                            next.push(d);
                            if next.len() > MAX_MATCHES {
                                return Err(ExpandError::TooMany);
                            }
                        }
                    }
                    Part::Name(_) => {
                        listed.push(dir.clone());
                        let mut names = list(dir, &mut entries)?;
                        if part.starts_with_dot() {
                            names.extend([".".into(), "..".into()]);
                        }
                        for name in names {
                            let p = dir.join(&name);
                            if part.matches(&name.to_string_lossy()) && (last || p.is_dir()) {
                                next.push(p);
                            }
                        }
                    }
                }
                if next.len() > MAX_MATCHES {
                    return Err(ExpandError::TooMany);
                }
            }
            current = next;
        }
        Ok((current, listed))
    }
}

/// The literal text of a component without glob syntax.
fn literal_text(part: &Part) -> String {
    match part {
        Part::Deep => "**".to_owned(),
        Part::Name(t) => t
            .iter()
            .map(|t| match t {
                Token::Char(c) => *c,
                Token::One | Token::Any => '?',
            })
            .collect(),
    }
}

/// The entry names of a directory (none when it cannot be read: bash matches nothing there).
fn list(dir: &Path, entries: &mut usize) -> Result<Vec<std::ffi::OsString>, ExpandError> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        *entries += 1;
        if *entries > MAX_ENTRIES {
            return Err(ExpandError::TooMany);
        }
        out.push(e.file_name());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(p: &str, t: &str) -> Option<Reach> {
        Pattern::new(Path::new(p)).reach(Path::new(t))
    }

    #[test]
    fn a_parent_component_that_matches_reaches_below_a_denied_directory() {
        for p in [
            "/w/s*/k",
            "/w/*/k",
            "/w/?ecret/k",
            "/w/[s]ecret/k",
            "/w/[!x]ecret/k",
            "/w/[[:alpha:]]ecret/k",
            "/w/@(secret|x)/k",
            "/w/!(x)/k",
            "/w/sec{1..3}/k",
            "/w/**/k",
            "/**/k",
            "/w/SECRET/k",
            "/w/s*",
            "/w/*",
        ] {
            assert_eq!(reach(p, "/w/secret"), Some(Reach::AtOrUnder), "{p}");
        }
        assert_eq!(reach("/*", "/w/secret"), Some(Reach::Above));
        assert_eq!(reach("/w/x*/k", "/w/secret"), None);
        assert_eq!(reach("/w/s?/k", "/w/secret"), None);
        assert_eq!(reach("/v/*/k", "/w/secret"), None);
    }

    #[test]
    fn dots_are_matched_only_by_a_leading_dot() {
        let p = Part::parse("*");
        assert!(!p.matches(".."));
        assert!(p.matches(".env"));
        assert!(Part::parse(".*").matches(".."));
        assert!(Part::parse(".?").matches(".."));
    }

    #[test]
    fn expansion_finds_links_and_dot_dot() {
        let dir = tempfile::tempdir().unwrap();
        let d = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(d.join("a/sub")).unwrap();
        std::fs::write(d.join("a/f1"), "").unwrap();
        std::fs::write(d.join("a/f2"), "").unwrap();
        let got = Pattern::new(&d.join("a/f*")).expand(true).unwrap();
        assert_eq!(got.len(), 2);
        let got = Pattern::new(&d.join("a/sub/.*/f1")).expand(true).unwrap();
        assert!(got.contains(&d.join("a/sub/../f1")), "{got:?}");
        let got = Pattern::new(&d.join("**/f1")).expand(true).unwrap();
        assert!(got.contains(&d.join("a/f1")), "{got:?}");
        std::fs::write(d.join("a/sub/f3"), "").unwrap();
        let deep = Pattern::new(&d.join("**/f3"));
        assert!(deep.expand(true).unwrap().contains(&d.join("a/sub/f3")));
        assert!(!deep.expand(false).unwrap().contains(&d.join("a/sub/f3")));
    }
}
