//! Searching one input and writing what it selected: lines with their prefixes (name, line
//! number, byte offset), context lines and `--` separators, `-o` parts, counts and file names.

use std::io;

use super::Grep;
use super::options::Binary;

impl Grep<'_> {
    fn prefix(&mut self, name: &[u8], lineno: usize, offset: usize, sep: u8) -> io::Result<()> {
        if self.with_filename {
            self.out.write_all(name)?;
            self.out.write_all(&[sep])?;
        }
        if self.c.line_number {
            write!(self.out, "{lineno}")?;
            self.out.write_all(&[sep])?;
        }
        if self.c.byte_offset {
            write!(self.out, "{offset}")?;
            self.out.write_all(&[sep])?;
        }
        Ok(())
    }

    /// Searches one input; `name` is its display name.
    pub(super) fn search(&mut self, data: &[u8], name: &[u8]) -> io::Result<()> {
        let binary = self.c.binary != Binary::Text && data.contains(&0);
        if binary && self.c.binary == Binary::Skip {
            if self.c.files_without {
                self.out.write_all(name)?;
                self.out.write_all(b"\n")?;
            }
            return Ok(());
        }
        let body = data.strip_suffix(b"\n").unwrap_or(data);
        let lines: Vec<&[u8]> = if data.is_empty() {
            Vec::new()
        } else {
            body.split(|&b| b == b'\n').collect()
        };
        // Byte offset of each line's start (for `-b`).
        let mut offsets = Vec::with_capacity(lines.len());
        let mut off = 0usize;
        for l in &lines {
            offsets.push(off);
            off += l.len() + 1;
        }
        let listing = self.c.files_with || self.c.files_without;
        let print_lines = !self.c.quiet && !listing && !self.c.count;
        let max = self.c.max_count.unwrap_or(u64::MAX);
        let mut count: u64 = 0;
        // Index of the last line printed (for context and separators), and lines of trailing
        // context still owed.
        let mut last_printed: Option<usize> = None;
        let mut after_left = 0usize;
        let context = self.c.before > 0 || self.c.after > 0;
        let mut i = 0;
        while i < lines.len() {
            if count >= max {
                // Trailing context after the last allowed match: GNU prints the following
                // lines as context whether they match or not.
                if print_lines && !binary && after_left > 0 {
                    self.prefix(name, i + 1, offsets[i], b'-')?;
                    self.out.write_all(lines[i])?;
                    self.out.write_all(b"\n")?;
                    after_left -= 1;
                    i += 1;
                    continue;
                }
                break;
            }
            let line = lines[i];
            let selected = self.m.is_match(line) != self.c.invert;
            if selected {
                count += 1;
                self.selected_any = true;
                if self.c.quiet {
                    return Err(io::Error::from(io::ErrorKind::Interrupted));
                }
                if listing {
                    break;
                }
                if binary && print_lines {
                    self.out.flush()?;
                    let _ = writeln!(
                        self.err,
                        "grep: {}: binary file matches",
                        String::from_utf8_lossy(name)
                    );
                    break;
                }
                if print_lines {
                    // Leading context.
                    let from = i.saturating_sub(self.c.before);
                    let from = match last_printed {
                        Some(lp) => from.max(lp + 1),
                        None => from,
                    };
                    let gap = match last_printed {
                        Some(lp) => from > lp + 1,
                        None => self.emitted,
                    };
                    if context && gap {
                        self.out.write_all(b"--\n")?;
                    }
                    for (k, ctx) in lines.iter().enumerate().take(i).skip(from) {
                        self.prefix(name, k + 1, offsets[k], b'-')?;
                        self.out.write_all(ctx)?;
                        self.out.write_all(b"\n")?;
                    }
                    self.print_selected(name, i, offsets[i], line)?;
                    last_printed = Some(i);
                    self.emitted = true;
                    after_left = self.c.after;
                }
            } else if print_lines && after_left > 0 {
                self.prefix(name, i + 1, offsets[i], b'-')?;
                self.out.write_all(line)?;
                self.out.write_all(b"\n")?;
                last_printed = Some(i);
                after_left -= 1;
            }
            i += 1;
        }
        if self.c.count {
            if self.with_filename {
                self.out.write_all(name)?;
                self.out.write_all(b":")?;
            }
            writeln!(self.out, "{count}")?;
        }
        if (self.c.files_with && count > 0) || (self.c.files_without && count == 0) {
            self.out.write_all(name)?;
            self.out.write_all(b"\n")?;
        }
        Ok(())
    }

    fn print_selected(
        &mut self,
        name: &[u8],
        i: usize,
        offset: usize,
        line: &[u8],
    ) -> io::Result<()> {
        if !self.c.only {
            self.prefix(name, i + 1, offset, b':')?;
            self.out.write_all(line)?;
            return self.out.write_all(b"\n");
        }
        if self.c.invert {
            return Ok(());
        }
        let Some(re) = self.m.re.clone() else {
            return Ok(());
        };
        for m in re.find_iter(line) {
            if m.is_empty() {
                continue;
            }
            self.prefix(name, i + 1, offset + m.start(), b':')?;
            self.out.write_all(m.as_bytes())?;
            self.out.write_all(b"\n")?;
        }
        Ok(())
    }
}
