//! The matcher: grep's patterns, in their dialect, compiled into one regular expression (with
//! `-w` / `-x` / `-i` applied).

use regex::bytes::Regex;

use crate::posix_re::{self, Syntax};

use super::options::{Config, Dialect};

/// The compiled matcher; `None` when there is no pattern (nothing matches).
pub(super) struct Matcher {
    pub(super) re: Option<Regex>,
}

impl Matcher {
    /// Compiles the patterns of `c`; the error is the message.
    pub(super) fn new(c: &Config) -> Result<Self, String> {
        if c.patterns.is_empty() {
            return Ok(Self { re: None });
        }
        let mut parts = Vec::with_capacity(c.patterns.len());
        for p in &c.patterns {
            let t = match c.dialect {
                Dialect::Basic => posix_re::translate(p, Syntax::Basic, false),
                Dialect::Extended => posix_re::translate(p, Syntax::Extended, false),
                Dialect::Fixed => Ok(posix_re::escape_fixed(p)),
                Dialect::Perl => String::from_utf8(p.clone())
                    .map_err(|_| posix_re::Error("pattern is not valid UTF-8".into())),
            };
            parts.push(format!("(?:{})", t.map_err(|e| e.0)?));
        }
        let mut all = parts.join("|");
        if c.line {
            all = format!("^(?:{all})$");
        } else if c.word {
            all = format!(r"\b{{start-half}}(?:{all})\b{{end-half}}");
        }
        let re = posix_re::compile(&all, c.ignore_case, false, false).map_err(|e| e.0)?;
        Ok(Self { re: Some(re) })
    }

    /// Whether `line` matches any pattern.
    pub(super) fn is_match(&self, line: &[u8]) -> bool {
        self.re.as_ref().is_some_and(|r| r.is_match(line))
    }
}
