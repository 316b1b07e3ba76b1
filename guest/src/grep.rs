//! `grep`: this project's own implementation (uutils has no grep), GNU-compatible for the common
//! flags, with C-locale (byte) semantics.
//!
//! Patterns are POSIX BRE by default (`-G`), ERE with `-E`, fixed strings with `-F`, and the
//! `regex` crate's own (Perl-like) syntax with `-P`; BRE and ERE are translated by
//! [`crate::posix_re`]. Flags: `-i -y -v -n -b -c -l -L -q -s -r -R -w -x -o -h -H -a -I -e PAT
//! -f FILE -m NUM -A NUM -B NUM -C NUM -NUM`, `--include`, `--exclude`, `--exclude-dir`,
//! `--label`, `--color` (accepted, no colour is ever written), `--` and their long forms.
//!
//! Exit status: 0 when a line was selected, 1 when none was, 2 on an error (unless `-q` and a line
//! was selected). Standard input is read when there is no file operand (or for `-`); `-r` without
//! an operand searches `.` and prints names without the `./` prefix, like GNU. Recursion visits
//! directory entries sorted by name (GNU uses the unsorted directory order). A file containing a
//! NUL byte is binary: instead of its lines, `grep: NAME: binary file matches` goes to stderr.

mod matcher;
mod options;
mod output;

use std::ffi::OsString;
use std::fs;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

use crate::fnmatch::fnmatch;
use crate::util;

use matcher::Matcher;
use options::Config;

/// Entry point: `args[0]` is the program name.
pub fn main(args: Vec<OsString>) -> i32 {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let status = run(
        &args[1.min(args.len())..],
        &mut stdin.lock(),
        &mut out,
        &mut io::stderr(),
    );
    match out.flush() {
        Ok(()) => status,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => status,
        Err(e) => {
            let _ = writeln!(io::stderr(), "grep: write error: {}", util::io_msg(&e));
            2
        }
    }
}

/// The state of one grep run.
struct Grep<'a> {
    c: Config,
    m: Matcher,
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
    with_filename: bool,
    selected_any: bool,
    error: bool,
    /// Whether any line group was printed yet (for the `--` context separator across files).
    emitted: bool,
}

/// Runs grep with the arguments after the program name. Returns the exit status.
pub fn run(
    args: &[OsString],
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let c = match options::parse(args, err) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let m = match Matcher::new(&c) {
        Ok(m) => m,
        Err(e) => {
            let _ = writeln!(err, "grep: {e}");
            return 2;
        }
    };
    let mut files = c.files.clone();
    let mut strip_dot = false;
    if files.is_empty() {
        if c.recursive {
            files.push(OsString::from("."));
            strip_dot = true;
        } else {
            files.push(OsString::from("-"));
        }
    }
    let with_filename = c
        .with_filename
        .unwrap_or(files.len() > 1 || (c.recursive && !is_single_regular_file(&files)));
    let mut g = Grep {
        c,
        m,
        out,
        err,
        with_filename,
        selected_any: false,
        error: false,
        emitted: false,
    };
    for f in &files {
        let done = g.operand(f, strip_dot, stdin);
        if let Err(e) = done {
            if e.kind() == io::ErrorKind::Interrupted {
                // `-q` found a line.
                break;
            }
            let _ = writeln!(g.err, "grep: write error: {}", util::io_msg(&e));
            return 2;
        }
        if g.c.quiet && g.selected_any {
            break;
        }
    }
    if g.c.quiet && g.selected_any {
        0
    } else if g.error {
        2
    } else if g.selected_any {
        0
    } else {
        1
    }
}

fn is_single_regular_file(files: &[OsString]) -> bool {
    match files {
        [one] => one != "-" && fs::metadata(one).is_ok_and(|m| !m.is_dir()),
        _ => false,
    }
}

impl Grep<'_> {
    fn warn(&mut self, name: &[u8], msg: &str) {
        self.error = true;
        if !self.c.no_messages {
            let _ = writeln!(self.err, "grep: {}: {msg}", String::from_utf8_lossy(name));
        }
    }

    fn operand(&mut self, f: &OsString, strip_dot: bool, stdin: &mut dyn Read) -> io::Result<()> {
        if f == "-" {
            let mut data = Vec::new();
            if let Err(e) = stdin.read_to_end(&mut data) {
                let label = self.c.label.clone();
                self.warn(&label, &util::io_msg(&e));
                return Ok(());
            }
            let label = self.c.label.clone();
            return self.search(&data, &label);
        }
        let name = util::os_bytes(f).to_vec();
        let meta = match fs::metadata(f) {
            Ok(m) => m,
            Err(e) => {
                if !self.excluded_file(&name, true) {
                    self.warn(&name, &util::io_msg(&e));
                }
                return Ok(());
            }
        };
        if meta.is_dir() {
            if self.c.recursive {
                let shown = if strip_dot { Vec::new() } else { name };
                return self.walk(Path::new(f), &shown);
            }
            self.warn(&name, "Is a directory");
            return Ok(());
        }
        if self.excluded_file(&name, true) {
            return Ok(());
        }
        self.file(Path::new(f), &name)
    }

    /// Whether `--include`/`--exclude` rule a file out (matched against its basename, and for a
    /// command-line name also against the whole name).
    fn excluded_file(&self, name: &[u8], command_line: bool) -> bool {
        let base = name.rsplit(|&b| b == b'/').next().unwrap_or(name);
        let hit =
            |g: &Vec<u8>| fnmatch(g, base, false) || (command_line && fnmatch(g, name, false));
        if self.c.exclude.iter().any(hit) {
            return true;
        }
        !self.c.include.is_empty() && !self.c.include.iter().any(hit)
    }

    fn walk(&mut self, dir: &Path, shown: &[u8]) -> io::Result<()> {
        let rd = match fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) => {
                let n = if shown.is_empty() {
                    b".".to_vec()
                } else {
                    shown.to_vec()
                };
                self.warn(&n, &util::io_msg(&e));
                return Ok(());
            }
        };
        let mut entries: Vec<fs::DirEntry> = rd.filter_map(Result::ok).collect();
        entries.sort_by_key(fs::DirEntry::file_name);
        for e in entries {
            let fname = e.file_name();
            let fb = util::os_bytes(&fname);
            let mut child = shown.to_vec();
            if !child.is_empty() && !child.ends_with(b"/") {
                child.push(b'/');
            }
            child.extend_from_slice(fb);
            let path = e.path();
            let Ok(mut ft) = e.file_type() else {
                continue;
            };
            if ft.is_symlink() {
                if !self.c.deref {
                    continue;
                }
                match fs::metadata(&path) {
                    Ok(m) => ft = m.file_type(),
                    Err(err) => {
                        self.warn(&child, &util::io_msg(&err));
                        continue;
                    }
                }
            }
            if ft.is_dir() {
                if self.c.exclude_dir.iter().any(|g| fnmatch(g, fb, false)) {
                    continue;
                }
                self.walk(&path, &child)?;
            } else if ft.is_file() {
                if self.excluded_file(&child, false) {
                    continue;
                }
                self.file(&path, &child)?;
            }
            if self.c.quiet && self.selected_any {
                return Err(io::Error::from(io::ErrorKind::Interrupted));
            }
        }
        Ok(())
    }

    fn file(&mut self, path: &Path, name: &[u8]) -> io::Result<()> {
        match fs::read(path) {
            Ok(data) => self.search(&data, name),
            Err(e) => {
                self.warn(name, &util::io_msg(&e));
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests;
