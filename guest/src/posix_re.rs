//! POSIX regular expressions (BRE and ERE, with the common GNU extensions) translated to the
//! syntax of the `regex` crate, for `grep` and `sed`.
//!
//! The translation works on bytes and targets a `regex::bytes::Regex` built with Unicode mode off,
//! which gives the C locale's semantics: `.` and bracket expressions match single bytes, classes
//! such as `[[:alpha:]]` and `\w` are ASCII. Every literal byte that is not an ASCII letter or digit
//! is emitted as a `\xHH` escape, so no character of the input can take on a meaning of the
//! `regex` crate's own syntax (for instance `&&` or a nested `[` inside a class).
//!
//! Supported: `.`, `[...]` (ranges, `^` negation, a leading `]`, `[:class:]`, `[=c=]`, `[.c.]`),
//! `*`, anchors `^` and `$` (in BRE only where POSIX makes them anchors), groups, alternation and
//! intervals (`\(\)`, `\|`, `\{m,n\}` in BRE; `()`, `|`, `{m,n}` in ERE), the GNU BRE escapes
//! `\+` and `\?`, and `\<`, `\>`, `\b`, `\B`, `\w`, `\W`, `\s`, `\S`, `` \` ``, `\'`. In `sed` mode the
//! escapes `\n`, `\t`, `\r`, `\f`, `\v`, `\a` stand for the control characters.
//!
//! Not supported: back-references (`\1` in a pattern) are an error, since the `regex` crate has
//! none. The `regex` crate picks the leftmost-first match rather than POSIX's leftmost-longest;
//! the two differ only for alternations whose earlier branch is a prefix of a later one.

use std::fmt::Write as _;

/// Which POSIX dialect a pattern is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// Basic regular expressions (`grep`, `grep -G`, `sed`).
    Basic,
    /// Extended regular expressions (`grep -E`, `sed -E`).
    Extended,
}

/// A pattern that cannot be translated, with a GNU-like message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(msg: &str) -> Result<T, Error> {
    Err(Error(msg.to_owned()))
}

/// Pushes one literal byte, escaped unless it is an ASCII letter or digit.
pub fn push_literal(out: &mut String, b: u8) {
    if b.is_ascii_alphanumeric() {
        out.push(char::from(b));
    } else {
        let _ = write!(out, "\\x{b:02X}");
    }
}

/// Escapes a fixed string (`grep -F`) for the `regex` crate.
pub fn escape_fixed(pat: &[u8]) -> String {
    let mut out = String::with_capacity(pat.len() * 2);
    for &b in pat {
        push_literal(&mut out, b);
    }
    out
}

const CLASSES: &[&str] = &[
    "alpha", "digit", "alnum", "upper", "lower", "space", "blank", "punct", "print", "graph",
    "cntrl", "xdigit",
];

/// The translator's state while it walks one pattern.
struct Translator<'a> {
    pat: &'a [u8],
    i: usize,
    syntax: Syntax,
    sed: bool,
    out: String,
    /// Where the last atom starts in `out` (a repetition applies to it); `None` when there is
    /// no atom to repeat (start of pattern, after `(`, `|` or an anchor).
    atom: Option<usize>,
    /// Whether the last thing emitted was a repetition operator.
    repeated: bool,
    /// Output positions of the open groups.
    groups: Vec<usize>,
    /// Number of capturing groups opened so far.
    ngroups: usize,
}

/// Translates a POSIX pattern. `sed` selects sed's escapes (`\n` and friends).
pub fn translate(pat: &[u8], syntax: Syntax, sed: bool) -> Result<String, Error> {
    let mut t = Translator {
        pat,
        i: 0,
        syntax,
        sed,
        out: String::with_capacity(pat.len() * 2 + 8),
        atom: None,
        repeated: false,
        groups: Vec::new(),
        ngroups: 0,
    };
    t.run()?;
    Ok(t.out)
}

/// Counts the capturing groups of a POSIX pattern (for checking `\N` in a sed replacement).
pub fn count_groups(pat: &[u8], syntax: Syntax) -> Result<usize, Error> {
    let mut t = Translator {
        pat,
        i: 0,
        syntax,
        sed: true,
        out: String::new(),
        atom: None,
        repeated: false,
        groups: Vec::new(),
        ngroups: 0,
    };
    t.run()?;
    Ok(t.ngroups)
}

impl Translator<'_> {
    fn peek(&self, off: usize) -> Option<u8> {
        self.pat.get(self.i + off).copied()
    }

    fn start_atom(&mut self) {
        self.atom = Some(self.out.len());
        self.repeated = false;
    }

    fn literal(&mut self, b: u8) {
        self.start_atom();
        push_literal(&mut self.out, b);
    }

    fn raw_atom(&mut self, s: &str) {
        self.start_atom();
        self.out.push_str(s);
    }

    fn assertion(&mut self, s: &str) {
        self.out.push_str(s);
        self.atom = None;
        self.repeated = false;
    }

    /// Applies a repetition operator to the last atom; `false` when there is none.
    fn repeat(&mut self, op: &str) -> bool {
        let Some(start) = self.atom else {
            return false;
        };
        if self.repeated {
            self.out.insert_str(start, "(?:");
            self.out.push(')');
        }
        self.out.push_str(op);
        self.repeated = true;
        true
    }

    fn open_group(&mut self) {
        self.groups.push(self.out.len());
        self.ngroups += 1;
        self.out.push('(');
        self.atom = None;
        self.repeated = false;
    }

    fn close_group(&mut self) -> Result<bool, Error> {
        let Some(start) = self.groups.pop() else {
            return Ok(false);
        };
        self.out.push(')');
        self.atom = Some(start);
        self.repeated = false;
        Ok(true)
    }

    fn alternation(&mut self) {
        self.out.push('|');
        self.atom = None;
        self.repeated = false;
    }

    /// Whether a BRE `^` at the current position is an anchor (start of the pattern, or right
    /// after `\(` or `\|`).
    fn bre_caret_is_anchor(&self) -> bool {
        let before = &self.pat[..self.i];
        before.is_empty() || before.ends_with(b"\\(") || before.ends_with(b"\\|")
    }

    /// Whether a BRE `$` at the current position is an anchor (end of the pattern, or right
    /// before `\)` or `\|`).
    fn bre_dollar_is_anchor(&self) -> bool {
        let after = &self.pat[self.i + 1..];
        after.is_empty() || after.starts_with(b"\\)") || after.starts_with(b"\\|")
    }

    /// Parses an interval body after `{` (BRE: after `\{`). Returns the `regex` operator and the
    /// index just past the closing brace, or `None` when the text is not a valid interval.
    fn interval(&self, from: usize) -> Option<(String, usize)> {
        let p = self.pat;
        let mut j = from;
        let num = |j: &mut usize| -> Option<u32> {
            let s = *j;
            while *j < p.len() && p[*j].is_ascii_digit() {
                *j += 1;
            }
            if *j == s {
                None
            } else {
                std::str::from_utf8(&p[s..*j]).ok()?.parse().ok()
            }
        };
        let min = num(&mut j);
        let mut max = min;
        let mut open_ended = false;
        if p.get(j) == Some(&b',') {
            j += 1;
            max = num(&mut j);
            open_ended = max.is_none();
        }
        let close: &[u8] = match self.syntax {
            Syntax::Basic => b"\\}",
            Syntax::Extended => b"}",
        };
        if !p[j..].starts_with(close) {
            return None;
        }
        if min.is_none() && max.is_none() {
            return None;
        }
        let lo = min.unwrap_or(0);
        let op = if open_ended {
            format!("{{{lo},}}")
        } else {
            let hi = max.unwrap_or(lo);
            if hi < lo {
                return None;
            }
            if hi == lo {
                format!("{{{lo}}}")
            } else {
                format!("{{{lo},{hi}}}")
            }
        };
        Some((op, j + close.len()))
    }

    fn run(&mut self) -> Result<(), Error> {
        while self.i < self.pat.len() {
            let c = self.pat[self.i];
            match c {
                b'\\' => self.escape()?,
                b'[' => {
                    self.i += 1;
                    self.bracket()?;
                    continue;
                }
                b'.' => self.raw_atom("."),
                b'*' => {
                    // With nothing to repeat, `*` is literal in a BRE and ignored in an ERE
                    // (GNU warns "* at start of expression" and matches as if it were absent).
                    if !self.repeat("*") && self.syntax == Syntax::Basic {
                        self.literal(b'*');
                    }
                }
                b'^' => {
                    if self.syntax == Syntax::Extended || self.bre_caret_is_anchor() {
                        self.assertion("^");
                    } else {
                        self.literal(b'^');
                    }
                }
                b'$' => {
                    if self.syntax == Syntax::Extended || self.bre_dollar_is_anchor() {
                        self.assertion("$");
                    } else {
                        self.literal(b'$');
                    }
                }
                b'(' if self.syntax == Syntax::Extended => self.open_group(),
                b')' if self.syntax == Syntax::Extended => {
                    if !self.close_group()? {
                        self.literal(b')');
                    }
                }
                b'|' if self.syntax == Syntax::Extended => self.alternation(),
                b'+' | b'?' if self.syntax == Syntax::Extended => {
                    let op = if c == b'+' { "+" } else { "?" };
                    // Ignored when there is nothing to repeat, as GNU does.
                    self.repeat(op);
                }
                b'{' if self.syntax == Syntax::Extended => {
                    if self.atom.is_some()
                        && let Some((op, next)) = self.interval(self.i + 1)
                    {
                        self.repeat(&op);
                        self.i = next;
                        continue;
                    }
                    self.literal(b'{');
                }
                _ => self.literal(c),
            }
            self.i += 1;
        }
        if !self.groups.is_empty() {
            return err(match self.syntax {
                Syntax::Basic => "Unmatched ( or \\(",
                Syntax::Extended => "Unmatched ( or \\(",
            });
        }
        Ok(())
    }

    /// Handles a backslash at `self.i`.
    fn escape(&mut self) -> Result<(), Error> {
        let Some(d) = self.peek(1) else {
            return err("Trailing backslash");
        };
        // Leave `self.i` on the escaped byte; `run` steps past it.
        self.i += 1;
        let bre = self.syntax == Syntax::Basic;
        match d {
            b'(' if bre => self.open_group(),
            b')' if bre => {
                if !self.close_group()? {
                    return err("Unmatched ) or \\)");
                }
            }
            b'|' if bre => self.alternation(),
            b'+' | b'?' if bre => {
                let op = if d == b'+' { "+" } else { "?" };
                if !self.repeat(op) {
                    self.literal(d);
                }
            }
            b'{' if bre => {
                if self.atom.is_none() {
                    self.literal(b'{');
                } else {
                    let Some((op, next)) = self.interval(self.i + 1) else {
                        return err("Invalid content of \\{\\}");
                    };
                    self.repeat(&op);
                    // `run` adds one.
                    self.i = next - 1;
                }
            }
            b'}' if bre => return err("Unmatched \\{"),
            b'1'..=b'9' => return err("back-references are not supported"),
            b'<' => self.assertion("\\b{start}"),
            b'>' => self.assertion("\\b{end}"),
            b'b' => self.assertion("\\b"),
            b'B' => self.assertion("\\B"),
            b'`' => self.assertion("\\A"),
            b'\'' => self.assertion("\\z"),
            b'w' => self.raw_atom("[0-9A-Za-z_]"),
            b'W' => self.raw_atom("[^0-9A-Za-z_]"),
            b's' => self.raw_atom("[\\t\\n\\x0B\\x0C\\r ]"),
            b'S' => self.raw_atom("[^\\t\\n\\x0B\\x0C\\r ]"),
            b'n' if self.sed => self.literal(b'\n'),
            b't' if self.sed => self.literal(b'\t'),
            b'r' if self.sed => self.literal(b'\r'),
            b'f' if self.sed => self.literal(0x0c),
            b'v' if self.sed => self.literal(0x0b),
            b'a' if self.sed => self.literal(0x07),
            b'd' | b'o' | b'x' | b'c' if self.sed => {
                // GNU sed's `\dNNN`, `\oNNN`, `\xHH`, `\cX`.
                match numeric_escape(self.pat, self.i) {
                    Some((byte, used)) => {
                        self.literal(byte);
                        // `run` steps past the escape letter; skip its digits too.
                        self.i += used;
                    }
                    None => self.literal(d),
                }
            }
            _ => self.literal(d),
        }
        Ok(())
    }

    /// Parses a bracket expression; `self.i` is just past the `[`. Leaves `self.i` past the `]`.
    fn bracket(&mut self) -> Result<(), Error> {
        let p = self.pat;
        let mut i = self.i;
        let mut set = String::from("[");
        if p.get(i) == Some(&b'^') {
            set.push('^');
            i += 1;
        }
        let mut first = true;
        let mut items = 0usize;
        loop {
            let Some(&c) = p.get(i) else {
                return err("Unmatched [, [^, [:, [., or [=");
            };
            if c == b']' && !first {
                i += 1;
                break;
            }
            first = false;
            if c == b'['
                && let Some(&kind @ (b':' | b'=' | b'.')) = p.get(i + 1)
            {
                let body = i + 2;
                let end =
                    (body..p.len().saturating_sub(1)).find(|&k| p[k] == kind && p[k + 1] == b']');
                let Some(end) = end else {
                    return err("Unmatched [, [^, [:, [., or [=");
                };
                let name = &p[body..end];
                i = end + 2;
                if kind == b':' {
                    let Some(class) = CLASSES.iter().find(|c| c.as_bytes() == name) else {
                        return err("Invalid character class name");
                    };
                    let _ = write!(set, "[:{class}:]");
                } else if let [single] = name {
                    push_literal(&mut set, *single);
                } else {
                    return err("Invalid collation character");
                }
                items += 1;
                continue;
            }
            let mut lo = c;
            i += 1;
            if self.sed && c == b'\\' {
                let esc = match p.get(i) {
                    Some(b'n') => Some(b'\n'),
                    Some(b't') => Some(b'\t'),
                    Some(b'\\') => Some(b'\\'),
                    _ => None,
                };
                if let Some(e) = esc {
                    lo = e;
                    i += 1;
                }
            }
            if p.get(i) == Some(&b'-') && p.get(i + 1).is_some_and(|&h| h != b']') {
                let hi = p[i + 1];
                i += 2;
                if hi < lo {
                    return err("Invalid range end");
                }
                push_literal(&mut set, lo);
                set.push('-');
                push_literal(&mut set, hi);
            } else {
                push_literal(&mut set, lo);
            }
            items += 1;
        }
        debug_assert!(items > 0);
        set.push(']');
        self.raw_atom(&set);
        self.i = i;
        Ok(())
    }
}

/// GNU sed's numeric escapes: `pat[at]` is the letter after the backslash (`d`, `o`, `x` or
/// `c`). Returns the byte and how many bytes after the letter it used, or `None` when the letter
/// is not followed by a valid value (then the letter stands for itself).
pub fn numeric_escape(pat: &[u8], at: usize) -> Option<(u8, usize)> {
    let letter = *pat.get(at)?;
    let rest = pat.get(at + 1..)?;
    let (radix, max) = match letter {
        b'd' => (10, 3),
        b'o' => (8, 3),
        b'x' => (16, 2),
        b'c' => {
            let c = *rest.first()?;
            return Some((c.to_ascii_uppercase() ^ 0x40, 1));
        }
        _ => return None,
    };
    let digits = rest
        .iter()
        .take(max)
        .take_while(|b| char::from(**b).is_digit(radix))
        .count();
    if digits == 0 {
        return None;
    }
    let text = std::str::from_utf8(&rest[..digits]).ok()?;
    let value = u32::from_str_radix(text, radix).ok()?;
    Some((u8::try_from(value & 0xff).ok()?, digits))
}

/// Compiles a translated pattern with C-locale (byte) semantics.
pub fn compile(
    translated: &str,
    ignore_case: bool,
    multi_line: bool,
    dot_nl: bool,
) -> Result<regex::bytes::Regex, Error> {
    regex::bytes::RegexBuilder::new(translated)
        .unicode(false)
        .case_insensitive(ignore_case)
        .multi_line(multi_line)
        .dot_matches_new_line(dot_nl)
        .size_limit(64 << 20)
        .build()
        .map_err(|e| Error(format!("invalid regular expression: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str, s: Syntax) -> regex::bytes::Regex {
        compile(
            &translate(p.as_bytes(), s, false).unwrap(),
            false,
            false,
            false,
        )
        .unwrap()
    }

    fn find<'h>(p: &str, s: Syntax, hay: &'h str) -> Option<&'h str> {
        re(p, s)
            .find(hay.as_bytes())
            .map(|m| &hay[m.start()..m.end()])
    }

    use Syntax::{Basic as B, Extended as E};

    #[test]
    fn bre_groups_and_intervals() {
        assert_eq!(find(r"\(ab\)\{2\}", B, "xababy"), Some("abab"));
        assert_eq!(find(r"a\{2,\}", B, "caaat"), Some("aaa"));
        assert_eq!(find(r"a\{,2\}b", B, "aaab"), Some("aab"));
        assert_eq!(find(r"x\|y", B, "--y"), Some("y"));
        assert_eq!(find(r"ab\+", B, "abbb"), Some("abbb"));
        assert_eq!(find(r"ab\?c", B, "ac"), Some("ac"));
    }

    #[test]
    fn bre_specials_are_literal() {
        assert_eq!(find("a+b", B, "a+b"), Some("a+b"));
        assert_eq!(find("a?", B, "a?"), Some("a?"));
        assert_eq!(find("(x)", B, "(x)"), Some("(x)"));
        assert_eq!(find("a|b", B, "a|b"), Some("a|b"));
        assert_eq!(find("a{2}", B, "a{2}"), Some("a{2}"));
        assert_eq!(find("*a", B, "x*a"), Some("*a"));
        assert_eq!(find(r"\(*a\)", B, "*a"), Some("*a"));
        assert_eq!(find("a^b", B, "a^b"), Some("a^b"));
        assert_eq!(find("a$b", B, "a$b"), Some("a$b"));
        assert_eq!(find("^a", B, "ba"), None);
        assert_eq!(find("a$", B, "ab"), None);
    }

    #[test]
    fn ere_basics() {
        assert_eq!(find("(ab)+", E, "ababx"), Some("abab"));
        assert_eq!(find("a{2}", E, "aaa"), Some("aa"));
        assert_eq!(find("a{", E, "a{"), Some("a{"));
        assert_eq!(find("a{x}", E, "a{x}"), Some("a{x}"));
        assert_eq!(find(r"\(a\)", E, "(a)"), Some("(a)"));
        assert_eq!(find("x|y", E, "y"), Some("y"));
        assert_eq!(find("*a", E, "*a"), Some("a"));
        assert_eq!(find("x|?a", E, "?a"), Some("a"));
        assert_eq!(find("a**", E, "aaa"), Some("aaa"));
        assert_eq!(find("a+?", E, "aaa"), Some("aaa"));
    }

    #[test]
    fn brackets() {
        assert_eq!(find("[]a]", B, "x]"), Some("]"));
        assert_eq!(find("[^]a]", B, "]ab"), Some("b"));
        assert_eq!(find(r"[\n]", B, r"\"), Some(r"\"));
        assert_eq!(find("[a-c]*", B, "abcd"), Some("abc"));
        assert_eq!(find("[[:digit:]]+", E, "ab123"), Some("123"));
        assert_eq!(find("[a-]", B, "-"), Some("-"));
        assert_eq!(find("[&&]", B, "&"), Some("&"));
        assert_eq!(find("[[]", B, "a[b"), Some("["));
        assert_eq!(find("[.]", B, "a.b"), Some("."));
        assert!(translate(b"[abc", B, false).is_err());
        assert!(translate(b"[[:nope:]]", B, false).is_err());
        assert!(translate(b"[z-a]", B, false).is_err());
    }

    #[test]
    fn gnu_escapes() {
        assert_eq!(find(r"\<is\>", B, "this is"), Some("is"));
        assert_eq!(find(r"\w\+", B, "  ab_1 "), Some("ab_1"));
        assert_eq!(find(r"\bx", B, "ax x"), Some("x"));
        assert!(translate(br"\(a\)\1", B, false).is_err());
        assert!(translate(br"a\", B, false).is_err());
        assert!(translate(br"\(a", B, false).is_err());
        assert!(translate(br"a\)", B, false).is_err());
    }

    #[test]
    fn sed_escapes() {
        let r = compile(&translate(br"a\nb", B, true).unwrap(), false, false, false).unwrap();
        assert!(r.is_match(b"a\nb"));
        let r = compile(&translate(br"[\n]", B, true).unwrap(), false, false, false).unwrap();
        assert!(r.is_match(b"\n"));
        let r = compile(
            &translate(br"\x41\d066\o103", B, true).unwrap(),
            false,
            false,
            false,
        )
        .unwrap();
        assert!(r.is_match(b"ABC"));
        assert_eq!(numeric_escape(b"cA", 0), Some((1, 1)));
        assert_eq!(numeric_escape(b"xZ", 0), None);
        assert_eq!(count_groups(br"\(a\)\(b\(c\)\)", B).unwrap(), 3);
        assert_eq!(count_groups(br"(a)", E).unwrap(), 1);
    }

    #[test]
    fn bytes_semantics() {
        let r = re(".", B);
        assert!(r.is_match(&[0xff]));
        assert_eq!(find("é", B, "café"), Some("é"));
    }
}
