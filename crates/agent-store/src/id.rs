//! Session ids: validated once, so every path built from one stays beneath the store root.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The longest session id accepted, in bytes.
pub const MAX_SESSION_ID_LEN: usize = 128;

/// A validated session id: non-empty, at most [`MAX_SESSION_ID_LEN`] bytes, no `/`, `\`, `..`,
/// NUL or other control character, no leading `.` (names starting with a dot are the store's
/// own: trash, temporary files), no whitespace at either end (so no whitespace-only id), no
/// whitespace inside other than the plain space U+0020, and no invisible character (Unicode's
/// `Default_Ignorable_Code_Point`: zero-width spaces and joiners, bidi controls, BOM, soft
/// hyphen, variation selectors, ...): no two ids differ only by something a reader cannot see.
///
/// ```
/// use agent_store::SessionId;
///
/// assert!(SessionId::parse("my-session").is_ok());
/// assert!(SessionId::parse("my session").is_ok());
/// assert!(SessionId::parse("../etc").is_err());
/// assert!(SessionId::parse(".hidden").is_err());
/// assert!(SessionId::parse(" ").is_err());
/// assert!(SessionId::parse("id ").is_err());
/// assert!(SessionId::parse("a\u{200b}b").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct SessionId(String);

/// Why a text is not a valid session id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid session id {shown}: {why}; ids are 1-128 characters without `/`, `\\`, `..`, control or invisible characters, whitespace at either end or other than inner spaces, or a leading `.`"
)]
pub struct InvalidSessionId {
    shown: String,
    why: String,
}

impl InvalidSessionId {
    /// The rule the text breaks (`it contains `/``, ...).
    pub fn rule(&self) -> &str {
        &self.why
    }
}

impl SessionId {
    /// Validates `text` as a session id.
    ///
    /// # Errors
    /// When the text breaks one of the rules above; the error names the rule.
    pub fn parse(text: &str) -> Result<Self, InvalidSessionId> {
        let why = if text.is_empty() {
            Some("it is empty".to_owned())
        } else if text.len() > MAX_SESSION_ID_LEN {
            Some("it is longer than 128 bytes".to_owned())
        } else if text.contains('/') {
            Some("it contains `/`".to_owned())
        } else if text.contains('\\') {
            Some("it contains `\\`".to_owned())
        } else if text.contains("..") {
            Some("it contains `..`".to_owned())
        } else if text.contains('\0') {
            Some("it contains NUL".to_owned())
        } else if let Some(c) = text.chars().find(|c| c.is_control()) {
            Some(format!(
                "it contains a control character ({})",
                code_point(c)
            ))
        } else if text.starts_with('.') {
            Some("it starts with `.`".to_owned())
        } else if text.trim().is_empty() {
            Some("it is only whitespace".to_owned())
        } else if let Some(c) = text
            .chars()
            .next()
            .filter(|c| c.is_whitespace())
            .or_else(|| text.chars().next_back().filter(|c| c.is_whitespace()))
        {
            Some(format!(
                "it starts or ends with whitespace ({})",
                code_point(c)
            ))
        } else if let Some(c) = text.chars().find(|c| c.is_whitespace() && *c != ' ') {
            Some(format!(
                "it contains whitespace other than a space ({})",
                code_point(c)
            ))
        } else {
            text.chars()
                .find(|c| is_default_ignorable(*c))
                .map(|c| format!("it contains an invisible character ({})", code_point(c)))
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

/// `U+200B` for messages.
fn code_point(c: char) -> String {
    format!("U+{:04X}", u32::from(c))
}

/// Unicode's `Default_Ignorable_Code_Point` property (DerivedCoreProperties.txt, Unicode 16):
/// characters that render as nothing. Std has no table of it; the ranges are stable.
fn is_default_ignorable(c: char) -> bool {
    matches!(
        u32::from(c),
        0x00AD
            | 0x034F
            | 0x061C
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0xFFF0..=0xFFF8
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
    )
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
            (" ", "only whitespace"),
            ("   ", "only whitespace"),
            ("\u{a0}", "only whitespace"),
            ("\u{3000}", "only whitespace"),
            (" a", "starts or ends with whitespace (U+0020)"),
            ("a ", "starts or ends with whitespace (U+0020)"),
            ("\u{2003}a", "starts or ends with whitespace (U+2003)"),
            ("a\u{a0}", "starts or ends with whitespace (U+00A0)"),
            ("\t", "control character (U+0009)"),
            ("a\rb", "control character"),
            ("a\u{85}b", "control character"),
            ("a\u{a0}b", "whitespace other than a space (U+00A0)"),
            ("a\u{2028}b", "whitespace other than a space (U+2028)"),
            ("a\u{3000}b", "whitespace other than a space (U+3000)"),
            ("a\u{200b}b", "invisible character (U+200B)"),
            ("\u{200b}", "invisible character (U+200B)"),
            ("a\u{200d}", "invisible character (U+200D)"),
            ("\u{feff}id", "invisible character (U+FEFF)"),
            ("a\u{ad}b", "invisible character (U+00AD)"),
            ("a\u{202e}b", "invisible character (U+202E)"),
            ("a\u{2066}b", "invisible character (U+2066)"),
            ("a\u{3164}", "invisible character (U+3164)"),
            ("a\u{fe0f}", "invisible character (U+FE0F)"),
            ("a\u{e0041}", "invisible character (U+E0041)"),
        ];
        for (id, want) in cases {
            let err = SessionId::parse(id).unwrap_err().to_string();
            assert!(err.contains(want), "{id:?}: {err}");
        }
    }

    #[test]
    fn good_ids_are_kept_verbatim() {
        let max = "b".repeat(128);
        for id in [
            "a",
            "my-session",
            "0190-abc_DEF",
            "a.b",
            "x y",
            "x  y",
            "ünï",
            "日本語",
            &max,
        ] {
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
