//! Session ids: validated once, so every path built from one stays beneath the store root.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The longest session id accepted, in bytes.
pub const MAX_SESSION_ID_LEN: usize = 128;

/// A validated session id: non-empty, at most [`MAX_SESSION_ID_LEN`] bytes, no `/`, `\`, `..`,
/// NUL or other control character, and no leading `.` (names starting with a dot are the
/// store's own: trash, temporary files).
///
/// ```
/// use agent_sessions::store::SessionId;
///
/// assert!(SessionId::parse("my-session").is_ok());
/// assert!(SessionId::parse("../etc").is_err());
/// assert!(SessionId::parse(".hidden").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct SessionId(String);

/// Why a text is not a valid session id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid session id {shown}: {why}; ids are 1-128 characters without `/`, `\\`, `..`, control characters or a leading `.`"
)]
pub struct InvalidSessionId {
    shown: String,
    why: &'static str,
}

impl SessionId {
    /// Validates `text` as a session id.
    ///
    /// # Errors
    /// When the text breaks one of the rules above; the error names the rule.
    pub fn parse(text: &str) -> Result<Self, InvalidSessionId> {
        let why = if text.is_empty() {
            Some("it is empty")
        } else if text.len() > MAX_SESSION_ID_LEN {
            Some("it is longer than 128 bytes")
        } else if text.contains('/') {
            Some("it contains `/`")
        } else if text.contains('\\') {
            Some("it contains `\\`")
        } else if text.contains("..") {
            Some("it contains `..`")
        } else if text.contains('\0') {
            Some("it contains NUL")
        } else if text.chars().any(char::is_control) {
            Some("it contains a control character")
        } else if text.starts_with('.') {
            Some("it starts with `.`")
        } else {
            None
        };
        match why {
            Some(why) => Err(InvalidSessionId {
                shown: shown(text),
                why,
            }),
            None => Ok(Self(text.to_owned())),
        }
    }

    /// A new random id (a UUID v7, so ids sort by creation time).
    pub fn generate() -> Self {
        Self(uuid::Uuid::now_v7().to_string())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The id quoted for an error message, cut to a readable length.
fn shown(text: &str) -> String {
    let cut: String = text.chars().take(40).collect();
    let mut s = format!("{cut:?}");
    if cut.len() < text.len() {
        s.push('…');
    }
    s
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for SessionId {
    type Err = InvalidSessionId;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl<'de> Deserialize<'de> for SessionId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl AsRef<str> for SessionId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_ids_are_refused_with_the_rule_they_break() {
        let long = "a".repeat(129);
        let cases: &[(&str, &str)] = &[
            ("", "empty"),
            (&long, "longer than 128"),
            ("a/b", "`/`"),
            ("/abs", "`/`"),
            ("a\\b", "`\\`"),
            ("..", "`..`"),
            ("a..b", "`..`"),
            ("a\0b", "NUL"),
            ("a\nb", "control"),
            ("\u{7f}", "control"),
            (".hidden", "starts with `.`"),
            (".", "starts with `.`"),
        ];
        for (id, want) in cases {
            let err = SessionId::parse(id).unwrap_err().to_string();
            assert!(err.contains(want), "{id:?}: {err}");
        }
    }

    #[test]
    fn good_ids_are_kept_verbatim() {
        let max = "b".repeat(128);
        for id in ["a", "my-session", "0190-abc_DEF", "a.b", "x y", "ünï", &max] {
            assert_eq!(SessionId::parse(id).unwrap().as_str(), id);
        }
        let g = SessionId::generate();
        assert!(SessionId::parse(g.as_str()).is_ok());
    }

    #[test]
    fn long_ids_are_cut_in_messages() {
        let err = SessionId::parse(&"/".repeat(500)).unwrap_err().to_string();
        assert!(err.len() < 300, "{err}");
    }
}
