//! Glob patterns over absolute paths, as bash expands them: what a pattern *could* match
//! (compared with a path component by component, so files that do not exist yet count too:
//! [`Pattern::reach`]) and what it matches *now* (expanded against the file system, bounded by
//! [`ExpansionLimits`]: [`Pattern::expand`]; the caller resolves each match through its symlinks).
//!
//! The permission engine (is every file a read-only command's glob names inside the working
//! directories?) and the sandbox's command checker (can a glob reach a denied path?) both use
//! it, each with its own limits. Both need a pattern never to be taken to match less than it
//! can, so the matcher over-approximates bash:
//! - `*`, `?` and `[...]` match within one component; a bracket expression matches as bash
//!   does in the C locale (`!`/`^`, ranges, `[:class:]`), and whatever depends on the locale
//!   (a class, range, `[.x.]` or `[=x=]` against a character outside ASCII, an unknown class)
//!   is taken to match; it also matches its own text (`'[a]'*`, quoted, names `[a]x`: the
//!   unquoted text no longer tells the two apart);
//! - an extglob group (`@(a|b)`, `!(x)`, ...) or a `{1..9}` sequence left by brace expansion
//!   is taken as any text;
//! - a name matches when it matches with its case (and the pattern's) ignored
//!   (`shopt -s nocaseglob`) or not, and a name outside ASCII when it matches character by
//!   character (a UTF-8 locale) or byte by byte (the C locale);
//! - `*` matches a leading dot (`shopt -s dotglob`), and a component that starts with a
//!   literal `.` also matches `.` and `..` (`.*/k` can climb out of the directory);
//! - a `**` component matches any number of directories when compared with a path
//!   (`shopt -s globstar`), and is expanded that way only when the caller says the script
//!   turns `globstar` on (otherwise bash reads it as `*`);
//! - every match of a component before the last is kept, directory or not, and a literal
//!   component is kept whether it exists or not (bash would drop what does not exist; the
//!   caller checks more, never less).
//!
//! | pattern (with `/w/secret/` compared) | [`Pattern::reach`] | why |
//! |--------------------------------------|--------------------|-----|
//! | `/w/s*/k`, `/w/*/k`, `/w/?ecret/k`   | at or under        | a parent component matches `secret` |
//! | `/w/**/k`                            | at or under        | `**` spans any directories |
//! | `/w/s*`, `/w/*`                      | at or under        | the path itself |
//! | `/*`                                 | above              | only a recursive reader goes on to `/w/secret` |
//! | `/w/x*/k`                            | none               | |

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Components of a pattern compared with a path or expanded; a longer pattern is not
/// expanded ([`ExpandError::TooLong`]) and is taken to reach any path.
pub const MAX_COMPONENTS: usize = 128;

/// How much one expansion may do before it is refused as too large to check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExpansionLimits {
    /// The most paths it may match.
    pub matches: usize,
    /// The most directory entries it may read.
    pub entries: usize,
}

/// Occurs when a pattern cannot be expanded within its [`ExpansionLimits`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    /// More matches or directory entries than the limits allow.
    #[error(
        "it matches more paths than can be checked (over {} matches or {} directory entries); name the files, or use a narrower pattern",
        .0.matches,
        .0.entries
    )]
    TooMany(ExpansionLimits),
    /// More than [`MAX_COMPONENTS`] components.
    #[error("it is too long to check ({MAX_COMPONENTS} components at most)")]
    TooLong,
}

/// Whether a text has glob syntax (`*`, `?`, `[`) or braces.
pub fn is_pattern(text: &str) -> bool {
    text.contains(['*', '?', '[', '{'])
}

/// One element of a bracket expression.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Item {
    /// This character.
    Char(char),
    /// `a-z`.
    Range(char, char),
    /// `[:name:]`.
    Class(String),
    /// `[.x.]` or `[=x=]`: what it matches depends on the locale.
    Locale,
}

/// A bracket expression (`[a-z]`, `[!x]`, `[[:digit:]]`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Bracket {
    negated: bool,
    items: Vec<Item>,
    /// Its text, brackets included: quoted (`'[a]'*`), it is these characters, and the
    /// unquoted text no longer tells which, so it matches them too.
    literal: Vec<char>,
}

impl Bracket {
    /// Parses the text between `[` (after `!`/`^`) and the closing `]`; `literal` is the whole
    /// expression as written.
    fn parse(inner: &[char], negated: bool, literal: &[char]) -> Self {
        let mut items = Vec::new();
        let mut i = 0;
        while let Some(&c) = inner.get(i) {
            if c == '['
                && let Some(&kind @ (':' | '.' | '=')) = inner.get(i + 1)
                && let Some(end) = (i + 2..inner.len().saturating_sub(1))
                    .find(|&j| inner[j] == kind && inner[j + 1] == ']')
            {
                items.push(if kind == ':' {
                    Item::Class(inner[i + 2..end].iter().collect())
                } else {
                    Item::Locale
                });
                i = end + 2;
                continue;
            }
            if inner.get(i + 1) == Some(&'-')
                && let Some(&hi) = inner.get(i + 2)
            {
                items.push(Item::Range(c, hi));
                i += 3;
                continue;
            }
            items.push(Item::Char(c));
            i += 1;
        }
        Self {
            negated,
            items,
            literal: literal.to_vec(),
        }
    }

    /// Whether the expression can match `c`: as written, or with case ignored, or because
    /// what it matches outside ASCII depends on the locale.
    fn matches(&self, c: char) -> bool {
        let locale = self.items.iter().any(|item| match item {
            Item::Locale => true,
            Item::Class(name) => !c.is_ascii() || class(name, c).is_none(),
            Item::Range(lo, hi) => !c.is_ascii() || !lo.is_ascii() || !hi.is_ascii(),
            Item::Char(_) => false,
        });
        let hit = |fold: bool| {
            let c = if fold { c.to_ascii_lowercase() } else { c };
            self.items.iter().any(|item| match item {
                Item::Char(x) if fold => x.to_ascii_lowercase() == c,
                Item::Char(x) => *x == c,
                Item::Range(lo, hi) if fold => {
                    (lo.to_ascii_lowercase()..=hi.to_ascii_lowercase()).contains(&c)
                        || (*lo..=*hi).contains(&c.to_ascii_uppercase())
                }
                Item::Range(lo, hi) => (*lo..=*hi).contains(&c),
                Item::Class(name) if fold && matches!(name.as_str(), "upper" | "lower") => {
                    c.is_ascii_alphabetic()
                }
                Item::Class(name) => class(name, c).unwrap_or(true),
                Item::Locale => true,
            })
        };
        locale || hit(false) != self.negated || hit(true) != self.negated
    }
}

/// Whether the ASCII character `c` is in the class `name` (`None`: a class this matcher does
/// not know).
fn class(name: &str, c: char) -> Option<bool> {
    Some(match name {
        "alpha" => c.is_ascii_alphabetic(),
        "digit" => c.is_ascii_digit(),
        "alnum" => c.is_ascii_alphanumeric(),
        "upper" => c.is_ascii_uppercase(),
        "lower" => c.is_ascii_lowercase(),
        "space" => c.is_ascii_whitespace() || c == '\u{b}',
        "punct" => c.is_ascii_punctuation(),
        "xdigit" => c.is_ascii_hexdigit(),
        "blank" => c == ' ' || c == '\t',
        "cntrl" => c.is_ascii_control(),
        "graph" => c.is_ascii_graphic(),
        "print" => c.is_ascii_graphic() || c == ' ',
        "word" => c.is_ascii_alphanumeric() || c == '_',
        _ => return None,
    })
}

/// One element of a component pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    /// This character (also matched with ASCII case ignored).
    Char(char),
    /// Any one character (`?`).
    One,
    /// One character the bracket expression matches.
    Bracket(Bracket),
    /// Any text, including none (`*`, an extglob group, a `{a..b}` sequence).
    Any,
}

/// The tokens of a component's text.
fn tokens(chars: &[char]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        match c {
            '*' | '?' | '+' | '@' | '!' if chars.get(i + 1) == Some(&'(') => {
                // An extglob group: any text up to its balanced `)`.
                match closing(chars, i + 1, '(', ')') {
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
            '[' => match bracket_end(chars, i) {
                Some((start, end)) => {
                    let negated = start > i + 1;
                    out.push(Token::Bracket(Bracket::parse(
                        &chars[start..end],
                        negated,
                        &chars[i..=end],
                    )));
                    i = end + 1;
                }
                None => {
                    out.push(Token::Char('['));
                    i += 1;
                }
            },
            '{' => match closing(chars, i, '{', '}') {
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
    out
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

/// Where the members of the bracket expression opened at `at` start (after `[`, `[!` or `[^`)
/// and the index of its closing `]` (a `]` first among the members is one; `[:class:]`,
/// `[.x.]` and `[=x=]` are read whole).
fn bracket_end(chars: &[char], at: usize) -> Option<(usize, usize)> {
    let mut i = at + 1;
    if matches!(chars.get(i), Some('!' | '^')) {
        i += 1;
    }
    let start = i;
    if chars.get(i) == Some(&']') {
        i += 1;
    }
    while let Some(&c) = chars.get(i) {
        if c == '['
            && let Some(&kind @ (':' | '.' | '=')) = chars.get(i + 1)
            && let Some(end) = (i + 2..chars.len().saturating_sub(1))
                .find(|&j| chars[j] == kind && chars[j + 1] == ']')
        {
            i = end + 2;
            continue;
        }
        if c == ']' {
            return Some((start, i));
        }
        i += 1;
    }
    None
}

/// Whether `tokens` can match all of `name`.
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
                Token::Any => {
                    next[j..].iter_mut().for_each(|r| *r = true);
                    break;
                }
                Token::One => {
                    if j < name.len() {
                        next[j + 1] = true;
                    }
                }
                Token::Bracket(b) => {
                    if name.get(j).is_some_and(|&c| b.matches(c)) {
                        next[j + 1] = true;
                    }
                    let end = j + b.literal.len();
                    if name.get(j..end).is_some_and(|t| {
                        t.iter()
                            .zip(&b.literal)
                            .all(|(n, l)| n.eq_ignore_ascii_case(l))
                    }) {
                        next[end] = true;
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

/// One path component of a pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    /// `**`: any number of components.
    Deep,
    /// Matches one component: its tokens by character, and (for a text outside ASCII) by
    /// byte, each byte taken as one character.
    Name {
        chars: Vec<Token>,
        bytes: Option<Vec<Token>>,
        text: String,
    },
}

/// A text's bytes, one character each (for matching as the C locale does).
fn bytewise(text: &str) -> Vec<char> {
    text.bytes().map(char::from).collect()
}

impl Part {
    fn parse(text: &str) -> Self {
        if text == "**" {
            return Self::Deep;
        }
        let chars: Vec<char> = text.chars().collect();
        Self::Name {
            chars: tokens(&chars),
            bytes: (!text.is_ascii()).then(|| tokens(&bytewise(text))),
            text: text.to_owned(),
        }
    }

    /// Whether the component can match the name `name`.
    fn matches(&self, name: &str) -> bool {
        let Self::Name { chars, bytes, .. } = self else {
            return true;
        };
        if matches!(name, "." | "..") && !self.starts_with_dot() {
            return false; // bash never matches `.` and `..` without a leading dot
        }
        if wildcard(chars, &name.chars().collect::<Vec<_>>()) {
            return true;
        }
        if name.is_ascii() && bytes.is_none() {
            return false;
        }
        let by_byte = match bytes {
            Some(b) => b,
            None => chars,
        };
        wildcard(by_byte, &bytewise(name))
    }

    /// Whether the component can match a name other than its own literal text.
    fn is_glob(&self) -> bool {
        match self {
            Self::Deep => true,
            Self::Name { chars, .. } => chars.iter().any(|t| !matches!(t, Token::Char(_))),
        }
    }

    fn starts_with_dot(&self) -> bool {
        matches!(self, Self::Name { chars, .. } if chars.first() == Some(&Token::Char('.')))
    }
}

/// A glob pattern over absolute paths.
#[derive(Clone, Debug)]
pub struct Pattern {
    /// The components after the root, as written (`..` kept).
    parts: Vec<Part>,
}

/// How a pattern can relate to a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// It can match the path or a path below it.
    AtOrUnder,
    /// It can match a directory above the path (a recursive reader then reaches it).
    Above,
}

/// What an expansion found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expansion {
    /// The paths the pattern matches now (unresolved; `..` components kept).
    pub matches: Vec<PathBuf>,
    /// The directories whose entries bash lists to expand it.
    pub listed: Vec<PathBuf>,
}

impl Pattern {
    /// Parses an absolute pattern (a relative one is taken from `/`).
    pub fn new(path: &Path) -> Self {
        let parts = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(Part::parse(&n.to_string_lossy())),
                Component::ParentDir => Some(Part::parse("..")),
                _ => None,
            })
            .collect();
        Self { parts }
    }

    /// Whether the pattern can match `target` (absolute, normalised) or a path below it, or a
    /// directory above it. The pattern is compared as written: give it normalised so that `..`
    /// components are applied.
    pub fn reach(&self, target: &Path) -> Option<Reach> {
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
        for i in 0..n {
            for j in 0..=m {
                if !at[i][j] {
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

    /// The directory the pattern expands in: `original`'s components before the first glob
    /// one.
    pub fn literal_dir(&self, original: &Path) -> PathBuf {
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

    /// The paths the pattern matches now, and the directories listed to find them: every
    /// existing entry a glob component matches, literal components kept whether they exist or
    /// not (the caller resolves and checks each). `..` components stay in the results, to be
    /// resolved in the kernel's order. `globstar`: whether `**` spans directories
    /// (`shopt -s globstar`); otherwise it is `*`.
    ///
    /// # Errors
    /// [`ExpandError`] past `limits` or [`MAX_COMPONENTS`].
    pub fn expand(
        &self,
        globstar: bool,
        limits: ExpansionLimits,
    ) -> Result<Expansion, ExpandError> {
        if self.parts.len() > MAX_COMPONENTS {
            return Err(ExpandError::TooLong);
        }
        let too_many = || ExpandError::TooMany(limits);
        let star = Part::parse("*");
        let mut entries = 0usize;
        let mut listed = Vec::new();
        let mut current = vec![PathBuf::from("/")];
        let mut list = |dir: &Path, listed: &mut Vec<PathBuf>| -> Result<_, ExpandError> {
            if dir.is_dir() {
                listed.push(dir.to_path_buf());
            }
            let names = entry_names(dir);
            entries += names.len();
            if entries > limits.entries {
                return Err(too_many());
            }
            Ok(names)
        };
        for part in &self.parts {
            let part = if *part == Part::Deep && !globstar {
                &star
            } else {
                part
            };
            let mut next = Vec::new();
            for dir in &current {
                match part {
                    Part::Name { text, .. } if !part.is_glob() => next.push(dir.join(text)),
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
                            for name in list(&d, &mut listed)? {
                                let p = d.join(&name);
                                if p.is_dir() {
                                    todo.push(p);
                                }
                            }
                            next.push(d);
                            if next.len() > limits.matches {
                                return Err(too_many());
                            }
                        }
                    }
                    Part::Name { .. } => {
                        let mut names = list(dir, &mut listed)?;
                        if part.starts_with_dot() {
                            names.extend([".".into(), "..".into()]);
                        }
                        for name in names {
                            if part.matches(&name.to_string_lossy()) {
                                next.push(dir.join(&name));
                            }
                        }
                    }
                }
                if next.len() > limits.matches {
                    return Err(too_many());
                }
            }
            current = next;
        }
        Ok(Expansion {
            matches: current,
            listed,
        })
    }
}

/// The entry names of a directory (none when it cannot be read: bash matches nothing there).
fn entry_names(dir: &Path) -> Vec<OsString> {
    std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
