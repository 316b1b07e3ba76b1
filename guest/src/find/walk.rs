//! The walk: each starting point and, below it, each directory's entries sorted by name, the
//! expression evaluated for each file (before its entries, or after them with `-depth`).

use std::ffi::OsString;
use std::fs;
use std::io::{self, Write};
use std::time::SystemTime;

use crate::fnmatch::fnmatch;
use crate::util;

use super::entry::{Entry, printf, type_letter};
use super::expr::Expr;
use super::{Follow, Globals};

/// The walker and evaluator.
pub(super) struct Find<'o> {
    pub(super) g: Globals,
    pub(super) expr: Expr,
    pub(super) default_print: bool,
    pub(super) out: &'o mut dyn Write,
    pub(super) err: &'o mut dyn Write,
    pub(super) now: SystemTime,
    pub(super) failed: bool,
    pub(super) quit: bool,
    /// Set by `-prune` for the entry being evaluated.
    pub(super) pruned: bool,
}

impl Find<'_> {
    /// Reports an error about `path`; the exit status becomes 1.
    pub(super) fn error(&mut self, path: &[u8], e: &io::Error) {
        self.failed = true;
        let _ = writeln!(
            self.err,
            "find: '{}': {}",
            String::from_utf8_lossy(path),
            util::io_msg(e)
        );
    }

    /// Evaluates `e` for one file (actions run as they are reached).
    fn eval(&mut self, e: &Expr, en: &Entry<'_>) -> io::Result<bool> {
        Ok(match e {
            Expr::And(a, b) => self.eval(a, en)? && self.eval(b, en)?,
            Expr::Or(a, b) => self.eval(a, en)? || self.eval(b, en)?,
            Expr::Comma(a, b) => {
                self.eval(a, en)?;
                self.eval(b, en)?
            }
            Expr::Not(a) => !self.eval(a, en)?,
            Expr::True => true,
            Expr::False => false,
            Expr::Name(p, fold) => fnmatch(p, en.name(), *fold),
            Expr::Path(p, fold) => fnmatch(p, en.path, *fold),
            Expr::Regex(re) => re.is_match(en.path),
            Expr::Type(letters) => letters.contains(&type_letter(en.meta)),
            Expr::Empty => {
                if en.meta.is_dir() {
                    fs::read_dir(util::bytes_osstr(en.path)).is_ok_and(|mut rd| rd.next().is_none())
                } else {
                    en.meta.is_file() && en.meta.len() == 0
                }
            }
            Expr::Newer(t) => en.meta.modified().is_ok_and(|m| m > *t),
            Expr::Size(cmp, unit) => {
                let units = en.meta.len().div_ceil(*unit);
                cmp.test(units)
            }
            Expr::Age(cmp, secs) => match en.meta.modified() {
                Ok(m) => {
                    let age = self.now.duration_since(m).map(|d| d.as_secs()).unwrap_or(0);
                    cmp.test(age / secs)
                }
                Err(_) => false,
            },
            Expr::Print => {
                self.out.write_all(en.path)?;
                self.out.write_all(b"\n")?;
                true
            }
            Expr::Print0 => {
                self.out.write_all(en.path)?;
                self.out.write_all(b"\0")?;
                true
            }
            Expr::Printf(f) => {
                let text = printf(f, en);
                self.out.write_all(&text)?;
                true
            }
            Expr::Prune => {
                self.pruned = true;
                true
            }
            Expr::Quit => {
                self.quit = true;
                true
            }
            Expr::Delete => {
                if en.path == b"." || en.path == b"./" {
                    return Ok(true);
                }
                let p = util::bytes_osstr(en.path);
                let r = if en.meta.is_dir() {
                    fs::remove_dir(p)
                } else {
                    fs::remove_file(p)
                };
                match r {
                    Ok(()) => true,
                    Err(e) => {
                        self.failed = true;
                        let _ = writeln!(
                            self.err,
                            "find: cannot delete '{}': {}",
                            String::from_utf8_lossy(en.path),
                            util::io_msg(&e)
                        );
                        false
                    }
                }
            }
        })
    }

    /// Evaluates the whole expression for one file, and prints it when there is no action.
    fn apply(&mut self, en: &Entry<'_>) -> io::Result<()> {
        let expr = std::mem::replace(&mut self.expr, Expr::True);
        let r = self.eval(&expr, en);
        self.expr = expr;
        if r? && self.default_print {
            self.out.write_all(en.path)?;
            self.out.write_all(b"\n")?;
        }
        Ok(())
    }

    /// Visits `path` (found under `start`, `depth` levels down) and, for a directory, its
    /// entries.
    pub(super) fn visit(&mut self, path: &[u8], start: &[u8], depth: usize) -> io::Result<()> {
        if self.quit {
            return Ok(());
        }
        let os = util::bytes_osstr(path);
        let follow = match self.g.follow {
            Follow::Always => true,
            Follow::CommandLine => depth == 0,
            Follow::Never => false,
        };
        let meta = if follow {
            fs::metadata(os).or_else(|_| fs::symlink_metadata(os))
        } else {
            fs::symlink_metadata(os)
        };
        let meta = match meta {
            Ok(m) => m,
            Err(e) => {
                self.error(path, &e);
                return Ok(());
            }
        };
        let entry = Entry {
            path,
            start,
            depth,
            meta: &meta,
        };
        self.pruned = false;
        let in_range = depth >= self.g.mindepth;
        if !self.g.depth_first && in_range {
            self.apply(&entry)?;
        }
        let descend =
            meta.is_dir() && depth < self.g.maxdepth && (self.g.depth_first || !self.pruned);
        if descend && !self.quit {
            match fs::read_dir(os) {
                Ok(rd) => {
                    let mut names: Vec<OsString> =
                        rd.filter_map(|e| e.ok().map(|e| e.file_name())).collect();
                    names.sort();
                    for n in names {
                        if self.quit {
                            break;
                        }
                        let mut child = path.to_vec();
                        if !child.ends_with(b"/") {
                            child.push(b'/');
                        }
                        child.extend_from_slice(util::os_bytes(&n));
                        self.visit(&child, start, depth + 1)?;
                    }
                }
                Err(e) => self.error(path, &e),
            }
        }
        if self.g.depth_first && in_range && !self.quit {
            self.apply(&entry)?;
        }
        Ok(())
    }
}
