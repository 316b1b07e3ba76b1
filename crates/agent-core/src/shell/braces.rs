//! Brace expansion, as bash 5.2 does it before every other expansion: on a word's source text,
//! an unquoted `{` with its matching `}` holding a top-level `,` (`file{,.bak}`,
//! `src/{a,b}/mod.rs`) or a sequence (`{1..5}`, `{a..e}`, `{01..10}`, `{10..1..3}`) makes one
//! word per item, with the text before and after, left to right, nested braces included.
//! Quotes, backslashes and `${..}` protect their braces; `{a}`, `{}` and an invalid sequence
//! (`{1..b}`) stay as written. One source word may make at most the caller's limit of words,
//! through at most [`MAX_GROUPS`] groups.
//!
//! One expander serves both sides: the WASI shell expands the words it runs with [`expand`],
//! and the permission checks read a command's words as bash will pass them
//! ([`expand_words`]): `cat {.,/}/etc/x` reads `./etc/x` and `//etc/x`, `git log
//! {--output=F,}` is `git log --output=F`, so every alternative is checked, never the
//! braces as one literal path.

use super::Word;

/// The most brace groups one source word may expand, one inside or after another (each is a
/// level of recursion).
pub const MAX_GROUPS: usize = 64;

/// The most words a command may have after brace expansion for the permission checks to read
/// them one by one (a checker's bound, far below what a command line takes: past it the
/// command is judged unknown and never auto-approved).
pub const MAX_CHECKED_WORDS: usize = 1024;

/// Occurs when a word's braces make more words, or nest more groups, than allowed.
#[derive(Debug, PartialEq, Eq)]
pub struct TooMany;

/// The words `raw` (a word's source text) makes: itself alone when it has no brace expansion,
/// at most `limit` words.
///
/// # Errors
/// [`TooMany`] past `limit` words or [`MAX_GROUPS`] groups.
pub fn expand(raw: &str, limit: usize) -> Result<Vec<String>, TooMany> {
    let mut out = Vec::new();
    expand_into(raw, &mut out, 0, limit)?;
    Ok(out)
}

/// The words bash passes for `words` after brace expansion: a word with a brace expansion
/// becomes one word per alternative, each analysed afresh (so `{~,x}/a` has a home-directory
/// word, as bash expands braces before tildes), and an alternative that is empty and unquoted
/// disappears (`{x,}` is one word). Words without braces are kept as they are.
///
/// # Errors
/// [`TooMany`] when the words would be more than [`MAX_CHECKED_WORDS`].
pub fn expand_words(words: &[Word]) -> Result<std::borrow::Cow<'_, [Word]>, TooMany> {
    if !words.iter().any(has_braces) {
        return Ok(std::borrow::Cow::Borrowed(words));
    }
    let mut out = Vec::with_capacity(words.len());
    for w in words {
        if !has_braces(w) {
            out.push(w.clone());
            continue;
        }
        let budget = MAX_CHECKED_WORDS.saturating_sub(out.len());
        for raw in expand(&w.raw, budget)? {
            if !raw.is_empty() {
                out.push(super::words::analyze(&super::tree::Word::parse(&raw, None)).word);
            }
        }
    }
    if out.len() > MAX_CHECKED_WORDS {
        return Err(TooMany);
    }
    Ok(std::borrow::Cow::Owned(out))
}

/// Whether the word may hold a brace expansion (the parse flags braces as globs).
fn has_braces(w: &Word) -> bool {
    w.glob && w.raw.contains('{')
}

fn expand_into(
    raw: &str,
    out: &mut Vec<String>,
    depth: usize,
    limit: usize,
) -> Result<(), TooMany> {
    if depth > MAX_GROUPS {
        return Err(TooMany);
    }
    let Some((open, close, items)) = first_expansion(raw, limit)? else {
        if out.len() >= limit {
            return Err(TooMany);
        }
        out.push(raw.to_owned());
        return Ok(());
    };
    let (before, after) = (&raw[..open], &raw[close + 1..]);
    for item in items {
        expand_into(&format!("{before}{item}{after}"), out, depth + 1, limit)?;
    }
    Ok(())
}

/// The first `{..}` that expands: its offsets and its items.
fn first_expansion(
    raw: &str,
    limit: usize,
) -> Result<Option<(usize, usize, Vec<String>)>, TooMany> {
    let b = raw.as_bytes();
    let mut found = Ok(None);
    walk(b, 0, |open, c| {
        if c != b'{' {
            return false;
        }
        let Some(close) = matching(b, open) else {
            return false;
        };
        let body = &raw[open + 1..close];
        found = match sequence(body, limit) {
            Ok(Some(items)) => Ok(Some((open, close, items))),
            Ok(None) => {
                let items = split_commas(body);
                if items.len() < 2 {
                    return false;
                }
                Ok(Some((open, close, items)))
            }
            Err(e) => Err(e),
        };
        true
    });
    found
}

/// Calls `visit` with each byte of `b` from `start` that no quote, backslash or `${..}`
/// protects, until it returns true; the index it stopped at. (The WASI shell finds the end of
/// a `${NAME<op>..}` with it too.)
pub fn walk(b: &[u8], start: usize, mut visit: impl FnMut(usize, u8) -> bool) -> Option<usize> {
    let mut j = start;
    while j < b.len() {
        j = match b[j] {
            b'\\' => j + 2,
            b'\'' => skip_single(b, j),
            b'"' => skip_double(b, j),
            b'$' if b.get(j + 1) == Some(&b'{') => skip_parameter(b, j + 1),
            c if visit(j, c) => return Some(j),
            _ => j + 1,
        };
    }
    None
}

/// The index after the `'..'` starting at `i`.
fn skip_single(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < b.len() && b[j] != b'\'' {
        j += 1;
    }
    j + 1
}

/// The index after the `".."` starting at `i`.
fn skip_double(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < b.len() && b[j] != b'"' {
        j += if b[j] == b'\\' { 2 } else { 1 };
    }
    j + 1
}

/// The index after the `{..}` of a `${..}` whose `{` is at `i` (the end of `b` when it never
/// closes).
fn skip_parameter(b: &[u8], i: usize) -> usize {
    let mut depth = 0usize;
    let end = walk(b, i, |_, c| {
        match c {
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            _ => return false,
        }
        depth == 0
    });
    end.map_or(b.len(), |j| j + 1)
}

/// The `}` matching the `{` at `open`, quotes and `${..}` respected.
fn matching(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    walk(b, open, |_, c| {
        match c {
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            _ => return false,
        }
        depth == 0
    })
}

/// The body split at its top-level commas (one item when there is none).
fn split_commas(body: &str) -> Vec<String> {
    let b = body.as_bytes();
    let mut commas = Vec::new();
    let mut depth = 0usize;
    walk(b, 0, |j, c| {
        match c {
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => commas.push(j),
            _ => {}
        }
        false
    });
    let mut items = Vec::with_capacity(commas.len() + 1);
    let mut start = 0;
    for comma in commas {
        items.push(body[start..comma].to_owned());
        start = comma + 1;
    }
    items.push(body[start.min(body.len())..].to_owned());
    items
}

/// `X..Y[..STEP]` with integers or single letters; `None` when the body is not one.
fn sequence(body: &str, limit: usize) -> Result<Option<Vec<String>>, TooMany> {
    let parts: Vec<&str> = body.split("..").collect();
    let (from, to, step) = match parts.as_slice() {
        [from, to] => (*from, *to, None),
        [from, to, step] => (*from, *to, Some(*step)),
        _ => return Ok(None),
    };
    let step = match step {
        None => 1,
        Some(s) => match s.parse::<i64>() {
            Ok(n) => n.unsigned_abs().max(1),
            Err(_) => return Ok(None),
        },
    };
    if let (Ok(a), Ok(z)) = (from.parse::<i64>(), to.parse::<i64>()) {
        // Zero-padded when either end is written with a leading zero.
        let padded = |s: &str| {
            let digits = s.trim_start_matches('-');
            digits.len() > 1 && digits.starts_with('0')
        };
        let width = if padded(from) || padded(to) {
            from.len().max(to.len())
        } else {
            0
        };
        let count = a.abs_diff(z) / step + 1;
        if count > limit as u64 {
            return Err(TooMany);
        }
        let mut items = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
        let mut n = i128::from(a);
        let (end, delta) = (i128::from(z), i128::from(step));
        while (a <= z && n <= end) || (a > z && n >= end) {
            items.push(if width > 0 {
                if n < 0 {
                    format!("-{:0w$}", -n, w = width - 1)
                } else {
                    format!("{n:0width$}")
                }
            } else {
                n.to_string()
            });
            n += if a <= z { delta } else { -delta };
        }
        return Ok(Some(items));
    }
    let letter = |s: &str| {
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_ascii_alphabetic() => Some(c as u8),
            _ => None,
        }
    };
    if let (Some(a), Some(z)) = (letter(from), letter(to)) {
        let step = usize::try_from(step).unwrap_or(usize::MAX);
        let items: Vec<String> = if a <= z {
            (a..=z)
                .step_by(step)
                .map(|c| char::from(c).to_string())
                .collect()
        } else {
            (z..=a)
                .rev()
                .step_by(step)
                .map(|c| char::from(c).to_string())
                .collect()
        };
        return Ok(Some(items));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The WASI shell's limit, the most arguments a command line takes.
    const LIMIT: usize = 100_000;

    fn expand(raw: &str) -> Result<Vec<String>, TooMany> {
        super::expand(raw, LIMIT)
    }

    fn words(raw: &str) -> Vec<String> {
        expand(raw).unwrap()
    }

    #[test]
    fn lists_and_nesting() {
        assert_eq!(words("a{b,c}d"), ["abd", "acd"]);
        assert_eq!(words("file{,.bak}"), ["file", "file.bak"]);
        assert_eq!(
            words("src/{a,b}/{x,y}"),
            ["src/a/x", "src/a/y", "src/b/x", "src/b/y"]
        );
        assert_eq!(words("{a,{b,c}}"), ["a", "b", "c"]);
        assert_eq!(words("{a}"), ["{a}"]);
        assert_eq!(words("{}"), ["{}"]);
        assert_eq!(words("x{,}"), ["x", "x"]);
    }

    #[test]
    fn sequences() {
        assert_eq!(words("{1..3}"), ["1", "2", "3"]);
        assert_eq!(words("{3..1}"), ["3", "2", "1"]);
        assert_eq!(words("{01..03}"), ["01", "02", "03"]);
        assert_eq!(words("{1..10..4}"), ["1", "5", "9"]);
        assert_eq!(words("{a..c}"), ["a", "b", "c"]);
        assert_eq!(words("{e..a..2}"), ["e", "c", "a"]);
        assert_eq!(words("{-2..1}"), ["-2", "-1", "0", "1"]);
        assert_eq!(words("{1..b}"), ["{1..b}"]);
        assert_eq!(expand("{1..1000000}"), Err(TooMany));
        assert_eq!(expand(&"{a,b}".repeat(5000)), Err(TooMany));
        assert_eq!(expand(&"{a}".repeat(5000)).map(|w| w.len()), Ok(1));
    }

    #[test]
    fn quotes_and_parameters_protect() {
        assert_eq!(words("'{a,b}'"), ["'{a,b}'"]);
        assert_eq!(words("\"{a,b}\"x{1,2}"), ["\"{a,b}\"x1", "\"{a,b}\"x2"]);
        assert_eq!(words("\\{a,b}"), ["\\{a,b}"]);
        assert_eq!(words("${x:-{a,b}}"), ["${x:-{a,b}}"]);
        assert_eq!(words("{'a,b',c}"), ["'a,b'", "c"]);
    }

    /// The words of `cmd` after brace expansion, as (value, dynamic, home) triples.
    fn command_words(cmd: &str) -> Vec<(String, bool, bool)> {
        let script = crate::shell::parse(cmd).unwrap();
        let words = expand_words(&script.commands[0].words).unwrap();
        words
            .iter()
            .map(|w| (w.text.clone(), w.dynamic, w.home))
            .collect()
    }

    fn texts(cmd: &str) -> Vec<String> {
        command_words(cmd).into_iter().map(|(t, _, _)| t).collect()
    }

    #[test]
    fn a_command_is_read_with_every_alternative_of_its_braces() {
        assert_eq!(texts("cat {.,/}/etc/x"), ["cat", "./etc/x", "//etc/x"]);
        assert_eq!(texts("git log {--output=F,}"), ["git", "log", "--output=F"]);
        assert_eq!(texts("grep -f {/etc/x,} y"), ["grep", "-f", "/etc/x", "y"]);
        assert_eq!(
            texts("git blame --contents={,/etc/x} y"),
            ["git", "blame", "--contents=", "--contents=/etc/x", "y"]
        );
        assert_eq!(texts("x {,} \"\"{,}"), ["x", "", ""]);
        assert_eq!(texts("ls '{a,b}' \\{c,d}"), ["ls", "{a,b}", "{c,d}"]);
        // Braces expand before tildes and parameters, as in bash.
        assert_eq!(
            command_words("cat {~,x}/a \"$V\"{1,2}"),
            [
                ("cat".to_owned(), false, false),
                ("~/a".to_owned(), false, true),
                ("x/a".to_owned(), false, false),
                ("$V1".to_owned(), true, false),
                ("$V2".to_owned(), true, false),
            ]
        );
    }

    #[test]
    fn a_command_whose_braces_make_too_many_words_is_not_read() {
        let script = crate::shell::parse("echo {1..2000}").unwrap();
        assert_eq!(expand_words(&script.commands[0].words), Err(TooMany));
        let script = crate::shell::parse(&"x{a,b} ".repeat(600)).unwrap();
        assert_eq!(expand_words(&script.commands[0].words), Err(TooMany));
        let script = crate::shell::parse("echo {1..1000}").unwrap();
        assert_eq!(
            expand_words(&script.commands[0].words).map(|w| w.len()),
            Ok(1001)
        );
    }
}
