//! Shell glob matching with the semantics of POSIX `fnmatch(3)` without flags, as `find -name`,
//! `find -path` and `grep --include` use it: `*` matches any bytes (including `/` and a leading
//! `.`), `?` one byte, `[...]` a bracket expression (`!` or `^` negates, ranges, `[:class:]`), and
//! `\` quotes the next byte. An unterminated `[` is an ordinary character. Works on bytes.

/// Whether `name` matches the glob `pat`; `fold` compares ASCII letters case-insensitively.
pub fn fnmatch(pat: &[u8], name: &[u8], fold: bool) -> bool {
    let eq = |a: u8, b: u8| {
        if fold {
            a.eq_ignore_ascii_case(&b)
        } else {
            a == b
        }
    };
    let (mut p, mut n) = (0usize, 0usize);
    // Where to resume after the last `*`: (pattern index after the star, name index).
    let mut star: Option<(usize, usize)> = None;
    loop {
        if p < pat.len() {
            let step = match pat[p] {
                b'*' => {
                    star = Some((p + 1, n));
                    p += 1;
                    continue;
                }
                b'?' if n < name.len() => Some(p + 1),
                b'[' if n < name.len() => match bracket(pat, p + 1, name[n], fold) {
                    Some((true, next)) => Some(next),
                    Some((false, _)) => None,
                    None => eq(b'[', name[n]).then_some(p + 1),
                },
                b'\\' if p + 1 < pat.len() && n < name.len() => {
                    eq(pat[p + 1], name[n]).then_some(p + 2)
                }
                c if n < name.len() => eq(c, name[n]).then_some(p + 1),
                _ => None,
            };
            if let Some(next) = step {
                p = next;
                n += 1;
                continue;
            }
        } else if n == name.len() {
            return true;
        }
        // Mismatch: let the last star swallow one more byte.
        match star {
            Some((sp, sn)) if sn < name.len() => {
                star = Some((sp, sn + 1));
                p = sp;
                n = sn + 1;
            }
            _ => return false,
        }
    }
}

/// Matches byte `c` against the bracket expression starting at `pat[start]` (just past `[`).
/// Returns whether it matched and the index past the closing `]`, or `None` when the bracket is
/// not terminated (then `[` is literal).
fn bracket(pat: &[u8], start: usize, c: u8, fold: bool) -> Option<(bool, usize)> {
    let mut i = start;
    let negate = matches!(pat.get(i), Some(b'!' | b'^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    let lc = c.to_ascii_lowercase();
    let uc = c.to_ascii_uppercase();
    loop {
        let &b = pat.get(i)?;
        if b == b']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if b == b'[' && pat.get(i + 1) == Some(&b':') {
            let body = i + 2;
            let end = (body..pat.len().saturating_sub(1))
                .find(|&k| pat[k] == b':' && pat[k + 1] == b']')?;
            let class = &pat[body..end];
            let test = |x: u8| class_matches(class, x);
            if test(c) || (fold && (test(lc) || test(uc))) {
                matched = true;
            }
            i = end + 2;
            continue;
        }
        let mut lo = b;
        i += 1;
        if b == b'\\' {
            lo = *pat.get(i)?;
            i += 1;
        }
        if pat.get(i) == Some(&b'-') && pat.get(i + 1).is_some_and(|&h| h != b']') {
            let mut hi = pat[i + 1];
            i += 2;
            if hi == b'\\' {
                hi = *pat.get(i)?;
                i += 1;
            }
            let within = |x: u8| lo <= x && x <= hi;
            if within(c) || (fold && (within(lc) || within(uc))) {
                matched = true;
            }
        } else if lo == c || (fold && lo.eq_ignore_ascii_case(&c)) {
            matched = true;
        }
    }
}

fn class_matches(class: &[u8], c: u8) -> bool {
    match class {
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
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::fnmatch;

    fn m(p: &str, n: &str) -> bool {
        fnmatch(p.as_bytes(), n.as_bytes(), false)
    }

    #[test]
    fn stars_and_questions() {
        assert!(m("*.txt", "a.txt"));
        assert!(m("*.txt", ".txt"));
        assert!(m("*", ".hidden"));
        assert!(!m("*.txt", "a.txt.bak"));
        assert!(m("a*b*c", "aXXbYYc"));
        assert!(m("a*b*c", "abcbc"));
        assert!(!m("a*b*c", "abcb"));
        assert!(m("?", "x"));
        assert!(!m("?", ""));
        assert!(m("", ""));
        assert!(!m("", "a"));
        assert!(m("**", ""));
        assert!(m("./a/*", "./a/b/c"));
    }

    #[test]
    fn brackets() {
        assert!(m("[abc]", "b"));
        assert!(!m("[!abc]", "b"));
        assert!(m("[^abc]", "d"));
        assert!(m("[a-c]x", "cx"));
        assert!(m("[]]", "]"));
        assert!(m("[!]]", "a"));
        assert!(m("[[:digit:]]*", "1abc"));
        assert!(m("[", "["));
        assert!(m("a[", "a["));
        assert!(m(r"\*", "*"));
        assert!(!m(r"\*", "a"));
    }

    #[test]
    fn fold() {
        assert!(fnmatch(b"*.TXT", b"a.txt", true));
        assert!(fnmatch(b"[A-C]", b"b", true));
        assert!(!fnmatch(b"*.TXT", b"a.txt", false));
    }
}
