//! Matchers as claude-code.md §5.2: `*`, empty or absent match everything; a matcher made only
//! of letters, digits, `_`, `-`, spaces, `,` and `|` is an exact name or a list of exact names;
//! anything else is an unanchored regular expression, compiled once.
//!
//! | matcher            | matches                      | does not match  |
//! |--------------------|------------------------------|-----------------|
//! | `Bash`             | `Bash`                       | `BashOutput`    |
//! | `Edit\|Write`      | `Edit`, `Write`              | `MultiEdit`     |
//! | `Edit.*`           | `Edit`, `NotebookEdit`       | `Write`         |
//! | `mcp__memory__.*`  | `mcp__memory__create`        | `mcp__other__x` |
//! | `mcp__memory`      | (exact: no tool has the name) | `mcp__memory__x` |

use regex::Regex;

/// A compiled matcher.
#[derive(Clone, Debug)]
pub enum Matcher {
    /// Matches every value (and events without a matcher field).
    All,
    /// One of these exact names.
    Exact(Vec<String>),
    /// An unanchored regular expression.
    Regex(Regex),
}

impl Matcher {
    /// Compiles a matcher.
    ///
    /// # Errors
    /// A message when a regular expression does not compile (for example JavaScript-only
    /// syntax such as look-around, which this engine does not support).
    pub fn new(text: Option<&str>) -> Result<Self, String> {
        let Some(text) = text else {
            return Ok(Self::All);
        };
        let t = text.trim();
        if t.is_empty() || t == "*" {
            return Ok(Self::All);
        }
        let exact = t
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|'));
        if exact {
            return Ok(Self::Exact(
                t.split(['|', ','])
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ));
        }
        Regex::new(text)
            .map(Self::Regex)
            .map_err(|e| format!("matcher {text:?} is not a valid regular expression: {e}"))
    }

    /// Whether `value` matches; `None` (the event has no matcher field, or the input lacks it)
    /// matches only [`Matcher::All`].
    pub fn matches(&self, value: Option<&str>) -> bool {
        match (self, value) {
            (Self::All, _) => true,
            (_, None) => false,
            (Self::Exact(names), Some(v)) => names.iter().any(|n| n == v),
            (Self::Regex(re), Some(v)) => re.is_match(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_from_section_5_2() {
        let cases: &[(Option<&str>, &str, bool)] = &[
            (None, "Anything", true),
            (Some(""), "Bash", true),
            (Some("*"), "Bash", true),
            (Some("Bash"), "Bash", true),
            (Some("Bash"), "BashOutput", false),
            (Some("bash"), "Bash", false),
            (Some("Edit|Write"), "Write", true),
            (Some("Edit | Write"), "Edit", true),
            (Some("Edit,Write"), "Write", true),
            (Some("Edit|Write"), "MultiEdit", false),
            (Some("Edit.*"), "NotebookEdit", true),
            (Some("Edit.*"), "Write", false),
            (Some("mcp__memory__.*"), "mcp__memory__create", true),
            (Some("mcp__memory"), "mcp__memory__create", false),
            (Some("^Bash$"), "Bash", true),
            (Some("Notebook.*|Write"), "Write", true),
        ];
        for (m, v, want) in cases {
            assert_eq!(
                Matcher::new(*m).unwrap().matches(Some(v)),
                *want,
                "{m:?} vs {v}"
            );
        }
        assert!(Matcher::new(Some("(?<=a)b")).is_err());
        assert!(!Matcher::new(Some("Bash")).unwrap().matches(None));
        assert!(Matcher::new(None).unwrap().matches(None));
    }
}
