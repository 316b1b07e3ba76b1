//! `Bash(...)` specifiers: exact strings, `*` wildcards, word boundaries and the legacy `:*`.
//!
//! | pattern | matches |
//! |---|---|
//! | `npm run build` | exactly `npm run build` |
//! | `npm run *` | `npm run` followed by a space and anything, or `npm run` alone (word boundary) |
//! | `ls*` | anything starting with `ls`: `ls -la` and `lsof` |
//! | `git * main`, `* --version` | `*` matches any sequence, spaces included |
//! | `npm run test:*` | legacy form of `npm run test *`; not `npm run test:unit` |
//!
//! Patterns are normalised like commands are: quotes are removed and runs of whitespace become
//! one space, so `Bash(git commit -m "a b")` matches the command `git commit -m 'a b'`.

use regex::Regex;

/// A compiled `Bash(...)` specifier.
#[derive(Clone, Debug)]
pub enum BashPattern {
    /// `Bash(*)`: every command.
    Any,
    /// No `*`: the whole command text.
    Exact(String),
    /// A literal prefix, with or without a word boundary after it.
    Prefix {
        /// The literal text before the `*`.
        prefix: String,
        /// Whether the prefix must be followed by a space or the end (`git diff *`).
        boundary: bool,
    },
    /// Any other placement of `*`.
    Wildcard {
        /// The normalised pattern.
        pattern: String,
        /// The compiled form.
        regex: Regex,
    },
}

impl BashPattern {
    /// Compiles a specifier.
    ///
    /// # Errors
    /// An empty specifier.
    pub fn parse(content: &str) -> Result<Self, String> {
        let norm = normalize(content);
        if norm.is_empty() {
            return Err("empty command pattern; write `Bash` to match every command".into());
        }
        if norm == "*" {
            return Ok(Self::Any);
        }
        // Legacy `prefix:*` (only at the very end) is the word-boundary form `prefix *`.
        let norm = match norm.strip_suffix(":*") {
            Some(base) if !base.is_empty() => format!("{} *", base.trim_end()),
            _ => norm,
        };
        let stars = norm.matches('*').count();
        if stars == 0 {
            return Ok(Self::Exact(norm));
        }
        if stars == 1 {
            if let Some(prefix) = norm.strip_suffix(" *") {
                return Ok(Self::Prefix {
                    prefix: prefix.to_owned(),
                    boundary: true,
                });
            }
            if let Some(prefix) = norm.strip_suffix('*') {
                return Ok(Self::Prefix {
                    prefix: prefix.to_owned(),
                    boundary: false,
                });
            }
        }
        let mut re = String::from("(?s)^");
        let (body, boundary) = match norm.strip_suffix(" *") {
            Some(body) => (body, true),
            None => (norm.as_str(), false),
        };
        for (i, part) in body.split('*').enumerate() {
            if i > 0 {
                re.push_str(".*");
            }
            re.push_str(&regex::escape(part));
        }
        if boundary {
            re.push_str("(?: .*)?");
        }
        re.push('$');
        let regex = Regex::new(&re).map_err(|e| format!("cannot compile pattern: {e}"))?;
        Ok(Self::Wildcard {
            pattern: norm,
            regex,
        })
    }

    /// Whether the command text (words joined by single spaces) matches.
    pub fn matches(&self, text: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Exact(s) => text == s,
            Self::Prefix { prefix, boundary } => {
                if *boundary {
                    text == prefix
                        || (text.starts_with(prefix.as_str())
                            && text.as_bytes().get(prefix.len()) == Some(&b' '))
                } else {
                    text.starts_with(prefix.as_str())
                }
            }
            Self::Wildcard { regex, .. } => regex.is_match(text),
        }
    }

    /// Whether only the exact-string form can match (used for exec wrappers).
    pub fn is_exact(&self) -> bool {
        matches!(self, Self::Exact(_))
    }

    /// The first word every match must start with, when the pattern fixes one; used to index
    /// rules so that a command is tested only against rules for its own name.
    pub fn first_word(&self) -> Option<&str> {
        let text = match self {
            Self::Any | Self::Wildcard { .. } => return None,
            Self::Exact(s) => s.as_str(),
            Self::Prefix { prefix, boundary } => {
                let (word, rest) = prefix.split_once(' ').unwrap_or((prefix.as_str(), ""));
                // `ls*` fixes no whole word (it also matches `lsof`).
                if rest.is_empty() && !boundary {
                    return None;
                }
                return Some(word);
            }
        };
        text.split(' ').next()
    }
}

/// Removes shell quoting and collapses whitespace, as command texts are.
pub(crate) fn normalize(content: &str) -> String {
    let unquoted = brush_parser::unquote_str(content.trim());
    unquoted.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! matches {
        ($pat:expr, $text:expr) => {
            assert!(
                BashPattern::parse($pat).unwrap().matches($text),
                "{} should match {:?}",
                $pat,
                $text
            )
        };
    }
    macro_rules! nmatches {
        ($pat:expr, $text:expr) => {
            assert!(
                !BashPattern::parse($pat).unwrap().matches($text),
                "{} should not match {:?}",
                $pat,
                $text
            )
        };
    }

    #[test]
    fn forms() {
        matches!("npm run build", "npm run build");
        nmatches!("npm run build", "npm run build --prod");
        matches!("npm run *", "npm run build");
        matches!("npm run *", "npm run");
        nmatches!("npm run *", "npm runner");
        matches!("ls*", "ls -la");
        matches!("ls*", "lsof");
        matches!("git * main", "git push origin main");
        nmatches!("git * main", "git push origin main2");
        matches!("* --version", "node --version");
        matches!("* install", "npm install");
        nmatches!("* install", "npm install x");
        matches!("ls:*", "ls -la");
        matches!("ls:*", "ls");
        nmatches!("ls:*", "lsof");
        matches!("npm run test:*", "npm run test");
        matches!("npm run test:*", "npm run test --watch");
        nmatches!("npm run test:*", "npm run test:unit");
        matches!("git:* push", "git:x push");
        nmatches!("git:* push", "git push");
        matches!("*", "anything at all");
        matches!("git  commit -m \"a b\"", "git commit -m a b");
        matches!("echo *", "echo a\nb");
        matches!("a * b *", "a x b");
        matches!("a * b *", "a x b y");
    }

    #[test]
    fn first_words() {
        let fw = |p: &str| {
            BashPattern::parse(p)
                .unwrap()
                .first_word()
                .map(str::to_owned)
        };
        assert_eq!(fw("git diff *").as_deref(), Some("git"));
        assert_eq!(fw("git *").as_deref(), Some("git"));
        assert_eq!(fw("npm run build").as_deref(), Some("npm"));
        assert_eq!(fw("ls*"), None);
        assert_eq!(fw("* install"), None);
        assert_eq!(fw("git * main"), None);
    }

    #[test]
    fn empty_is_an_error() {
        assert!(BashPattern::parse("  ").is_err());
    }
}
