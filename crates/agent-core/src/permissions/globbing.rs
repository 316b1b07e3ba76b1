//! Expanding a glob operand against the file system, so that every file it names is checked.
//!
//! `cat sec*` reads whatever `sec*` matches when bash runs it: a symlink `secret → /etc/x`
//! makes it a read of `/etc/x`, although the text `sec*` names a place inside the working
//! directory. So a glob that a read-only command reads is expanded when the call is decided,
//! from the directory the command runs in, and each match is resolved (symlinks followed) and
//! checked like a path written out. The expansion matches a superset of what bash would:
//! hidden files are included (as with `shopt -s dotglob`), `.*` also yields `.` and `..` (as
//! older bash does), and a component that bash would not find on disk is kept. It is bounded
//! ([`MAX_GLOB_MATCHES`] paths, [`MAX_GLOB_ENTRIES`] directory entries read); a larger one, or
//! one whose meaning the unquoted text cannot tell (a quoted `[` next to an unquoted glob,
//! brace expansion, extended globs), is refused, never guessed.

use std::path::{Path, PathBuf};

use crate::shell::Word;

/// The most paths one glob may expand to before it is refused (a shell command line with more
/// is rarely what a read-only command was meant to be given).
pub(crate) const MAX_GLOB_MATCHES: usize = 1_000;

/// The most directory entries one expansion may read before it is refused, so that a decision
/// stays quick on a large tree (`*/*/*`).
pub(crate) const MAX_GLOB_ENTRIES: usize = 10_000;

/// Why a glob was not expanded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum NotExpanded {
    /// More than [`MAX_GLOB_MATCHES`] matches or [`MAX_GLOB_ENTRIES`] entries.
    TooLarge,
    /// The unquoted text cannot tell which characters are pattern characters, or the word
    /// holds brace expansion or an extended glob.
    Ambiguous,
}

/// Every path the glob `word` may name, from `base` (the directory the command runs in) with
/// `home` for a leading `~`: absolute, not resolved (the caller resolves each). When nothing
/// matches, bash passes the word on as it is, so the literal path is always included.
pub(crate) fn expand(word: &Word, base: &Path, home: &Path) -> Result<Vec<PathBuf>, NotExpanded> {
    let text = word.text.as_str();
    let quoted = word.raw.contains(['\'', '"', '\\']);
    if (text.contains('{') && text.contains('}'))
        || text.contains('(')
        || (quoted && text.contains('['))
    {
        return Err(NotExpanded::Ambiguous);
    }
    let absolute = if word.home && (text == "~" || text.starts_with("~/")) {
        home.join(text.trim_start_matches('~').trim_start_matches('/'))
    } else {
        base.join(text)
    };
    let mut found: Vec<PathBuf> = vec![PathBuf::from("/")];
    let mut entries_read = 0usize;
    for component in absolute.components().skip(1) {
        let part = component.as_os_str().to_string_lossy();
        if !part.contains(['*', '?', '[']) {
            for p in &mut found {
                p.push(component);
            }
            continue;
        }
        let mut next = Vec::new();
        for dir in &found {
            let Ok(read) = std::fs::read_dir(dir) else {
                continue;
            };
            let names = read
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .chain([".".to_owned(), "..".to_owned()]);
            for name in names {
                entries_read += 1;
                if entries_read > MAX_GLOB_ENTRIES {
                    return Err(NotExpanded::TooLarge);
                }
                let dots = name == "." || name == "..";
                if dots && !part.starts_with('.') {
                    continue;
                }
                if matches(part.as_bytes(), name.as_bytes()) {
                    next.push(dir.join(&name));
                    if next.len() > MAX_GLOB_MATCHES {
                        return Err(NotExpanded::TooLarge);
                    }
                }
            }
        }
        found = next;
    }
    found.push(absolute);
    Ok(found)
}

/// Whether `name` matches the pattern `pat` (`*`, `?`, `[…]` with `!`/`^`, ranges and
/// `[:class:]`), as bash's `fnmatch` does for one path component.
fn matches(pat: &[u8], name: &[u8]) -> bool {
    // Iterative matching with one backtrack point for the last `*`.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pat.get(p) {
            Some(b'*') => {
                star = Some((p, n));
                p += 1;
                continue;
            }
            Some(b'?') => {
                p += 1;
                n += 1;
                continue;
            }
            Some(b'[') => {
                if let Some((hit, len)) = bracket(&pat[p..], name[n]) {
                    if hit {
                        p += len;
                        n += 1;
                        continue;
                    }
                } else if name[n] == b'[' {
                    // No closing `]`: a literal `[`.
                    p += 1;
                    n += 1;
                    continue;
                }
            }
            Some(&c) if c == name[n] => {
                p += 1;
                n += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, sn)) => {
                p = sp + 1;
                n = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    pat[p..].iter().all(|&c| c == b'*')
}

/// A bracket expression at the start of `pat` tested against `c`: whether it matches, and
/// its length; `None` when it has no closing `]`. A character class the matcher does not
/// know matches any character (the safe side: more matches are checked).
fn bracket(pat: &[u8], c: u8) -> Option<(bool, usize)> {
    let mut i = 1;
    let negated = matches!(pat.get(i), Some(b'!' | b'^'));
    if negated {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    loop {
        let b = *pat.get(i)?;
        if b == b']' && !first {
            return Some((hit != negated, i + 1));
        }
        first = false;
        if b == b'['
            && pat.get(i + 1) == Some(&b':')
            && let Some(end) = pat[i + 2..].windows(2).position(|w| w == b":]")
        {
            let class = &pat[i + 2..i + 2 + end];
            hit |= in_class(class, c);
            i += end + 4;
            continue;
        }
        if pat.get(i + 1) == Some(&b'-')
            && let Some(&hi) = pat.get(i + 2)
            && hi != b']'
        {
            hit |= (b..=hi).contains(&c);
            i += 3;
            continue;
        }
        hit |= b == c;
        i += 1;
    }
}

fn in_class(class: &[u8], c: u8) -> bool {
    match class {
        b"alpha" => c.is_ascii_alphabetic(),
        b"digit" => c.is_ascii_digit(),
        b"alnum" => c.is_ascii_alphanumeric(),
        b"upper" => c.is_ascii_uppercase(),
        b"lower" => c.is_ascii_lowercase(),
        b"space" => c.is_ascii_whitespace(),
        b"punct" => c.is_ascii_punctuation(),
        b"xdigit" => c.is_ascii_hexdigit(),
        b"blank" => c == b' ' || c == b'\t',
        b"cntrl" => c.is_ascii_control(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_patterns_match_as_bash_does() {
        for (p, n) in [
            ("*", "abc"),
            ("sec*", "secret"),
            ("*.rs", "main.rs"),
            ("?", "a"),
            ("a*b*c", "aXbYc"),
            ("[abc]x", "bx"),
            ("[!abc]x", "dx"),
            ("[^abc]x", "dx"),
            ("[a-c]", "b"),
            ("[[:digit:]]*", "9lives"),
            ("[]]", "]"),
            ("[x", "[x"),
            (".*", ".env"),
            ("*", ".env"),
        ] {
            assert!(matches(p.as_bytes(), n.as_bytes()), "{p} ~ {n}");
        }
        for (p, n) in [
            ("sec*", "public"),
            ("*.rs", "main.rc"),
            ("?", "ab"),
            ("[abc]x", "dx"),
            ("[!abc]x", "ax"),
            ("[a-c]", "d"),
        ] {
            assert!(!matches(p.as_bytes(), n.as_bytes()), "{p} !~ {n}");
        }
    }

    #[test]
    fn a_glob_expands_to_the_files_it_names() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(root.join("src/a")).unwrap();
        std::fs::write(root.join("src/a/x.rs"), "").unwrap();
        std::fs::write(root.join("src/y.rs"), "").unwrap();
        std::fs::write(root.join(".env"), "").unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("secret")).unwrap();
        let w = |t: &str| Word {
            glob: true,
            ..Word::literal(t)
        };
        let mut got = expand(&w("sec*"), &root, &root).unwrap();
        got.sort();
        assert_eq!(got, [root.join("sec*"), root.join("secret")]);
        let got = expand(&w("src/*/*.rs"), &root, &root).unwrap();
        assert!(got.contains(&root.join("src/a/x.rs")), "{got:?}");
        let got = expand(&w("*"), &root, &root).unwrap();
        assert!(got.contains(&root.join(".env")), "{got:?}");
        assert!(!got.contains(&root.join("..")), "{got:?}");
        let got = expand(&w(".*"), &root, &root).unwrap();
        assert!(got.contains(&root.join("..")), "{got:?}");
        let home = Word {
            home: true,
            ..w("~/s*")
        };
        let got = expand(&home, Path::new("/nowhere"), &root).unwrap();
        assert!(got.contains(&root.join("secret")), "{got:?}");
        let quoted = Word {
            raw: "'[a]'*".into(),
            ..w("[a]*")
        };
        assert_eq!(expand(&quoted, &root, &root), Err(NotExpanded::Ambiguous));
        assert_eq!(
            expand(&w("{a,b}*"), &root, &root),
            Err(NotExpanded::Ambiguous)
        );
    }

    #[test]
    fn a_glob_too_large_to_check_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        for i in 0..=MAX_GLOB_MATCHES {
            std::fs::write(tmp.path().join(format!("f{i}")), "").unwrap();
        }
        let w = Word {
            glob: true,
            ..Word::literal("f*")
        };
        assert_eq!(
            expand(&w, tmp.path(), tmp.path()),
            Err(NotExpanded::TooLarge)
        );
    }
}
