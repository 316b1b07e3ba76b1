//! Output caps (document 002), so a tool never floods the model's context: file reads of at most
//! 50 KB per call with line-based `offset` / `limit` pagination, lines cut at 2,000
//! characters, listings of at most 100 entries, and command output of at most 10 KB inline with
//! the full text spilled to a file the agent can page through (deleted after a configurable
//! time). Cuts always fall on UTF-8 character boundaries.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputCaps {
    /// Bytes of file content returned by one read.
    pub file_read_bytes: usize,
    /// Characters kept of one line.
    pub line_chars: usize,
    /// Entries of one listing (directory, glob, grep).
    pub listing_entries: usize,
    /// Bytes of command output returned inline.
    pub command_inline_bytes: usize,
    /// Where full command outputs are spilled.
    pub spill_dir: PathBuf,
    /// How long spilled files are kept.
    pub spill_ttl: Duration,
}

impl Default for OutputCaps {
    fn default() -> Self {
        Self {
            file_read_bytes: 50 * 1024,
            line_chars: 2_000,
            listing_entries: 100,
            command_inline_bytes: 10 * 1024,
            spill_dir: std::env::temp_dir().join("agent-output"),
            spill_ttl: Duration::from_secs(600),
        }
    }
}

/// The largest index `<= n` that is a character boundary of `s`.
pub fn floor_boundary(s: &str, n: usize) -> usize {
    if n >= s.len() {
        return s.len();
    }
    let mut i = n;
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// One page of a file read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilePage {
    /// The lines, each cut at the line cap, joined with `\n`.
    pub text: String,
    /// The first line returned (0-based).
    pub offset: usize,
    /// How many lines were returned.
    pub lines: usize,
    /// Lines in the whole file.
    pub total_lines: usize,
    /// How many returned lines were cut.
    pub cut_lines: usize,
    /// Where the next page starts, when there is more.
    pub next_offset: Option<usize>,
}

/// Line `line` cut at `max` characters, with a marker saying how long it was.
pub fn cut_line(line: &str, max: usize) -> (String, bool) {
    match line.char_indices().nth(max) {
        None => (line.to_owned(), false),
        Some((i, _)) => (
            format!(
                "{}… [line cut: {} characters]",
                &line[..i],
                line.chars().count()
            ),
            true,
        ),
    }
}

impl OutputCaps {
    /// The page of `content` that starts at line `offset` (0-based) and holds at most `limit`
    /// lines and [`Self::file_read_bytes`] bytes; always at least one (cut) line when any is
    /// left.
    pub fn read_page(&self, content: &str, offset: usize, limit: Option<usize>) -> FilePage {
        let total_lines = content.lines().count();
        let mut text = String::new();
        let mut lines = 0usize;
        let mut cut_lines = 0usize;
        for line in content.lines().skip(offset) {
            if limit.is_some_and(|l| lines >= l) {
                break;
            }
            let (line, cut) = cut_line(line, self.line_chars);
            let extra = line.len() + usize::from(lines > 0);
            if lines > 0 && text.len() + extra > self.file_read_bytes {
                break;
            }
            if lines > 0 {
                text.push('\n');
            }
            if line.len() > self.file_read_bytes {
                let end = floor_boundary(&line, self.file_read_bytes);
                text.push_str(&line[..end]);
            } else {
                text.push_str(&line);
            }
            lines += 1;
            cut_lines += usize::from(cut);
        }
        let next = offset + lines;
        FilePage {
            text,
            offset,
            lines,
            total_lines,
            cut_lines,
            next_offset: (next < total_lines).then_some(next),
        }
    }

    /// At most [`Self::listing_entries`] entries, and how many were left out.
    pub fn cap_listing<T>(&self, mut entries: Vec<T>) -> (Vec<T>, usize) {
        let omitted = entries.len().saturating_sub(self.listing_entries);
        entries.truncate(self.listing_entries);
        (entries, omitted)
    }

    /// Command output: inline when it fits; otherwise its first part, and the whole text saved
    /// to a spill file (0600) whose path is named in the inline text. Spill files older than
    /// [`Self::spill_ttl`] are deleted first.
    pub fn command_output(&self, output: &str) -> CappedOutput {
        if output.len() <= self.command_inline_bytes {
            return CappedOutput {
                inline: output.to_owned(),
                spilled: None,
                total_bytes: output.len(),
            };
        }
        let _ = self.cleanup_spills();
        let end = floor_boundary(output, self.command_inline_bytes);
        let head = &output[..end];
        match self.spill(output) {
            Ok(path) => CappedOutput {
                inline: format!(
                    "{head}\n[output cut: {} bytes in all; the full output is in {} (read it page by page with offset/limit)]",
                    output.len(),
                    path.display()
                ),
                spilled: Some(path),
                total_bytes: output.len(),
            },
            Err(e) => CappedOutput {
                inline: format!(
                    "{head}\n[output cut: {} bytes in all; the rest could not be saved: {e}]",
                    output.len()
                ),
                spilled: None,
                total_bytes: output.len(),
            },
        }
    }

    fn spill(&self, output: &str) -> std::io::Result<PathBuf> {
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
        b.create(&self.spill_dir)?;
        let path = self
            .spill_dir
            .join(format!("output-{}.txt", uuid::Uuid::new_v4()));
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
        o.open(&path)?.write_all(output.as_bytes())?;
        Ok(path)
    }

    /// Deletes spill files older than [`Self::spill_ttl`]; returns how many.
    ///
    /// # Errors
    /// When the spill directory cannot be listed (a missing directory is not an error).
    pub fn cleanup_spills(&self) -> std::io::Result<usize> {
        cleanup(&self.spill_dir, self.spill_ttl, SystemTime::now())
    }
}

fn cleanup(dir: &Path, ttl: Duration, now: SystemTime) -> std::io::Result<usize> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with("output-") && name.ends_with(".txt")) {
            continue;
        }
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age >= ttl);
        if old && std::fs::remove_file(e.path()).is_ok() {
            removed += 1;
        }
    }
    Ok(removed)
}

/// Command output after the cap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CappedOutput {
    /// What the model sees.
    pub inline: String,
    /// The file with everything, when the output was cut.
    pub spilled: Option<PathBuf>,
    /// The output's full size.
    pub total_bytes: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(dir: &Path) -> OutputCaps {
        OutputCaps {
            spill_dir: dir.join("spill"),
            ..OutputCaps::default()
        }
    }

    #[test]
    fn file_pages_respect_bytes_lines_and_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let c = caps(dir.path());
        let content: String = (0..5000).map(|i| format!("line {i:05} ééé\n")).collect();
        let p = c.read_page(&content, 0, None);
        assert!(p.text.len() <= 50 * 1024);
        assert_eq!(p.next_offset, Some(p.lines));
        assert_eq!(p.total_lines, 5000);
        let p2 = c.read_page(&content, p.lines, Some(10));
        assert_eq!(p2.lines, 10);
        assert!(p2.text.starts_with(&format!("line {:05}", p.lines)));
        let end = c.read_page(&content, 4995, None);
        assert_eq!((end.lines, end.next_offset), (5, None));
        assert_eq!(c.read_page(&content, 9999, None).lines, 0);
    }

    #[test]
    fn long_lines_are_cut_on_character_boundaries() {
        let dir = tempfile::tempdir().unwrap();
        let c = caps(dir.path());
        let line = "é".repeat(3000);
        let p = c.read_page(&line, 0, None);
        assert_eq!(p.cut_lines, 1);
        assert!(p.text.starts_with(&"é".repeat(2000)));
        assert!(p.text.ends_with("[line cut: 3000 characters]"));
        let huge = "x".repeat(200_000);
        let tiny = OutputCaps {
            line_chars: 1_000_000,
            ..c
        };
        assert_eq!(tiny.read_page(&huge, 0, None).text.len(), 50 * 1024);
    }

    #[test]
    fn listings_and_command_output() {
        let dir = tempfile::tempdir().unwrap();
        let c = caps(dir.path());
        let (kept, omitted) = c.cap_listing((0..250).collect::<Vec<_>>());
        assert_eq!((kept.len(), omitted), (100, 150));
        let small = c.command_output("ok\n");
        assert_eq!((small.inline.as_str(), small.spilled), ("ok\n", None));
        let big = "€".repeat(10_000);
        let out = c.command_output(&big);
        let path = out.spilled.clone().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), big);
        assert!(out.inline.contains("[output cut: 30000 bytes in all"));
        assert!(out.inline.split('\n').next().unwrap().len() <= 10 * 1024);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // Expired spills are removed; fresh ones stay.
        assert_eq!(
            cleanup(&c.spill_dir, Duration::from_secs(600), SystemTime::now()).unwrap(),
            0
        );
        let later = SystemTime::now() + Duration::from_secs(601);
        assert_eq!(
            cleanup(&c.spill_dir, Duration::from_secs(600), later).unwrap(),
            1
        );
        assert!(!path.exists());
    }

    #[test]
    fn floor_boundary_never_splits_a_character() {
        let s = "aé€😀";
        for n in 0..=s.len() + 2 {
            let b = floor_boundary(s, n);
            assert!(s.is_char_boundary(b) && b <= n);
        }
    }
}
