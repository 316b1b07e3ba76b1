//! Sed's input: the lines of one or several files (`-` is standard input) as one stream, with
//! one line of look-ahead so that `$` knows the last line.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};

use crate::util;

/// Input lines across one or several files, with one line of look-ahead for `$`.
pub(super) struct Input<'a> {
    files: Vec<OsString>,
    next_file: usize,
    reader: Option<Box<dyn BufRead + 'a>>,
    stdin: Option<&'a mut dyn Read>,
    /// The look-ahead line (without its delimiter) and whether it had one.
    ahead: Option<(Vec<u8>, bool)>,
    delim: u8,
    /// Name of the file the last returned line came from (for `F`).
    pub(super) current_name: Vec<u8>,
    ahead_name: Vec<u8>,
    /// Set when a file could not be read.
    pub(super) failed: bool,
}

impl<'a> Input<'a> {
    /// The lines of `files` (`-` reads `stdin`, once), split at `delim`.
    pub(super) fn new(files: Vec<OsString>, stdin: Option<&'a mut dyn Read>, delim: u8) -> Self {
        Input {
            files,
            next_file: 0,
            reader: None,
            stdin,
            ahead: None,
            delim,
            current_name: b"-".to_vec(),
            ahead_name: b"-".to_vec(),
            failed: false,
        }
    }

    /// Fills the look-ahead; reports unreadable files to `err`.
    fn fill(&mut self, err: &mut dyn Write) {
        if self.ahead.is_some() {
            return;
        }
        loop {
            if let Some(r) = self.reader.as_mut() {
                let mut buf = Vec::new();
                match r.read_until(self.delim, &mut buf) {
                    Ok(0) => self.reader = None,
                    Ok(_) => {
                        let had = buf.last() == Some(&self.delim);
                        if had {
                            buf.pop();
                        }
                        self.ahead = Some((buf, had));
                        return;
                    }
                    Err(e) => {
                        let _ = writeln!(
                            err,
                            "sed: read error on {}: {}",
                            String::from_utf8_lossy(&self.ahead_name),
                            util::io_msg(&e)
                        );
                        self.failed = true;
                        self.reader = None;
                    }
                }
                continue;
            }
            let Some(f) = self.files.get(self.next_file).cloned() else {
                return;
            };
            self.next_file += 1;
            self.ahead_name = util::os_bytes(&f).to_vec();
            if f == "-" {
                if let Some(s) = self.stdin.take() {
                    self.reader = Some(Box::new(BufReader::new(s)));
                }
                continue;
            }
            match File::open(&f).and_then(|file| {
                if file.metadata()?.is_dir() {
                    Err(io::Error::from(io::ErrorKind::IsADirectory))
                } else {
                    Ok(file)
                }
            }) {
                Ok(file) => self.reader = Some(Box::new(BufReader::new(file))),
                Err(e) => {
                    if e.kind() == io::ErrorKind::IsADirectory {
                        let _ = writeln!(
                            err,
                            "sed: couldn't edit {}: not a regular file",
                            f.to_string_lossy()
                        );
                        self.failed = true;
                        continue;
                    }
                    let _ = writeln!(
                        err,
                        "sed: can't read {}: {}",
                        f.to_string_lossy(),
                        util::io_msg(&e)
                    );
                    self.failed = true;
                }
            }
        }
    }

    /// The next line (without its delimiter) and whether it had one; `None` at the end.
    pub(super) fn next_line(&mut self, err: &mut dyn Write) -> Option<(Vec<u8>, bool)> {
        self.fill(err);
        let line = self.ahead.take();
        if line.is_some() {
            self.current_name = self.ahead_name.clone();
        }
        line
    }

    /// Whether the line last returned was the last one.
    pub(super) fn is_last(&mut self, err: &mut dyn Write) -> bool {
        self.fill(err);
        self.ahead.is_none()
    }
}
