//! Output caps: `additionalContext`, `systemMessage` and plain stdout that reach the model or the
//! user are capped at 10,000 characters; a longer text is saved whole to a file (mode 0600 in a
//! 0700 directory) and replaced by a preview plus the file's path.

use std::io::Write;
use std::path::PathBuf;

/// The default cap, in characters (claude-code.md §5.5).
pub(crate) const MAX_HOOK_TEXT_CHARS: usize = 10_000;
/// Characters of a capped text kept as its preview.
pub(crate) const PREVIEW_CHARS: usize = 2_000;

/// Where capped text goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookOutputCaps {
    /// The cap in characters.
    pub max_chars: usize,
    /// The directory full texts are saved in (created on first use).
    pub dir: PathBuf,
}

impl Default for HookOutputCaps {
    fn default() -> Self {
        Self {
            max_chars: MAX_HOOK_TEXT_CHARS,
            dir: std::env::temp_dir().join("agent-hook-output"),
        }
    }
}

impl HookOutputCaps {
    /// `text` if it fits, otherwise a preview and the path of a file with all of it.
    pub fn apply(&self, text: String) -> String {
        if text.len() <= self.max_chars || text.chars().nth(self.max_chars).is_none() {
            return text;
        }
        let total = text.chars().count();
        let preview_end = text
            .char_indices()
            .nth(PREVIEW_CHARS.min(self.max_chars / 2))
            .map_or(text.len(), |(i, _)| i);
        let preview = &text[..preview_end];
        match self.save(&text) {
            Ok(path) => format!(
                "{preview}\n[hook output truncated: {total} characters; the full text is in {}]",
                path.display()
            ),
            Err(e) => format!(
                "{preview}\n[hook output truncated: {total} characters; the rest could not be saved: {e}]"
            ),
        }
    }

    fn save(&self, text: &str) -> std::io::Result<PathBuf> {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&self.dir)?;
        let path = self
            .dir
            .join(format!("hook-output-{}.txt", uuid::Uuid::new_v4()));
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        let mut f = opts.open(&path)?;
        f.write_all(text.as_bytes())?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_unchanged_and_long_text_is_saved() {
        let dir = tempfile::tempdir().unwrap();
        let caps = HookOutputCaps {
            max_chars: 10,
            dir: dir.path().join("out"),
        };
        assert_eq!(caps.apply("ten chars!".into()), "ten chars!");
        let long = "é".repeat(25);
        let capped = caps.apply(long.clone());
        assert!(capped.starts_with("ééééé\n[hook output truncated: 25 characters"));
        let path = capped
            .rsplit("is in ")
            .next()
            .unwrap()
            .trim_end_matches(']');
        assert_eq!(std::fs::read_to_string(path).unwrap(), long);
    }
}
