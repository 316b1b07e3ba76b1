//! Brace expansion, as bash 5.2 does it before every other expansion: on a word's source text,
//! an unquoted `{` with its matching `}` holding a top-level `,` (`file{,.bak}`,
//! `src/{a,b}/mod.rs`) or a sequence (`{1..5}`, `{a..e}`, `{01..10}`, `{10..1..3}`) makes one
//! word per item, with the text before and after, left to right, nested braces included.
//! Quotes, backslashes and `${..}` protect their braces; `{a}`, `{}` and an invalid sequence
//! (`{1..b}`) stay as written (the word compiler then refuses the ones that look like brace
//! expansion). One source word may make at most [`MAX_WORDS`] words, through at most 64
//! groups.
//!
//! The permission checker (agent-core) treats a word with brace expansion as unknown before
//! run time, so `{rm,-rf,x}` is asked about, never matched as a harmless name.

/// The most words one source word may expand to (the most arguments a command line takes).
pub(crate) const MAX_WORDS: usize = super::expand::MAX_ARGS;

/// The most brace groups one source word may expand, one inside or after another (each is a
/// level of recursion).
const MAX_GROUPS: usize = 64;

/// Why a word could not be brace-expanded.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooMany;

/// The words `raw` makes (itself alone when it has no brace expansion).
pub(crate) fn expand(raw: &str) -> Result<Vec<String>, TooMany> {
    let mut out = Vec::new();
    expand_into(raw, &mut out, 0)?;
    Ok(out)
}

fn expand_into(raw: &str, out: &mut Vec<String>, depth: usize) -> Result<(), TooMany> {
    if depth > MAX_GROUPS {
        return Err(TooMany);
    }
    let Some((open, close, items)) = first_expansion(raw)? else {
        if out.len() >= MAX_WORDS {
            return Err(TooMany);
        }
        out.push(raw.to_owned());
        return Ok(());
    };
    let (before, after) = (&raw[..open], &raw[close + 1..]);
    for item in items {
        expand_into(&format!("{before}{item}{after}"), out, depth + 1)?;
    }
    Ok(())
}

/// The first `{..}` that expands: its offsets and its items.
fn first_expansion(raw: &str) -> Result<Option<(usize, usize, Vec<String>)>, TooMany> {
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
        found = match sequence(body) {
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
/// protects, until it returns true; the index it stopped at. (word.rs finds the end of a
/// `${NAME<op>..}` with it too.)
pub(super) fn walk(
    b: &[u8],
    start: usize,
    mut visit: impl FnMut(usize, u8) -> bool,
) -> Option<usize> {
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
fn sequence(body: &str) -> Result<Option<Vec<String>>, TooMany> {
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
        if count > MAX_WORDS as u64 {
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
}
