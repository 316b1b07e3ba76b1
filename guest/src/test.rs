//! `test EXPRESSION` and `[ EXPRESSION ]`. This project's own code: uutils' `test` answers the
//! permission tests from mode bits, which a WASI guest never has (wasi-libc reports only the
//! file type), so in the workspace every file was "not writable" and every directory "not
//! searchable".
//!
//! The grammar and messages are GNU coreutils 9's `test`: POSIX's rules by argument count
//! (0: false; 1: non-empty; 2: `! A`, `-X A`; 3: `A OP B`, `! A B`, `( A )`, `A -a B`; 4:
//! `! A B C`, `( A B )`), then the full grammar (`!`, `( .. )`, `-a` binding tighter than
//! `-o`) for longer expressions. Status 0 true, 1 false, 2 for an error (`test: missing
//! argument after 'x'`, `test: 'x': unary operator expected`, `test: invalid integer 'x'`,
//! `[: missing ']'`, ...).
//!
//! File tests on WASI, which has no owners or permission bits: `-r` is whether the file opens
//! for reading (a directory: whether it can be listed); `-w` whether a file opens for writing
//! without being created or truncated (a directory: always, the workspace is writable); `-x` is
//! true for a directory (searchable) and false for a file (nothing executes files here); `-O`
//! and `-G` are true for any existing file (the workspace is the agent's); `-u`, `-g`, `-k`,
//! `-b`, `-c`, `-p`, `-S` and `-t` are false. On a unix host (the oracle tests) they are GNU's:
//! `faccessat` with the effective ids, and the mode bits.

use std::cmp::Ordering;
use std::ffi::OsString;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// The exit status for a syntax error or a bad integer.
pub const EXIT_ERROR: i32 = 2;

/// A test error: the message after `test: `.
struct Syntax(String);

/// Quotes an argument as GNU's messages do in the C locale.
fn quote(s: &str) -> String {
    format!("'{s}'")
}

/// Entry point: `args[0]` is the program name (`test` or `[`).
pub fn main(args: Vec<OsString>) -> i32 {
    let name = args
        .first()
        .map(crate::basename)
        .unwrap_or_else(|| "test".to_owned());
    let words: Vec<String> = args
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut out = io::stdout();
    let mut err = io::stderr();
    run(&name, words, &mut out, &mut err)
}

/// Runs `test` (or `[` when `name` is `[`) on `words`; the exit status.
pub fn run(name: &str, mut words: Vec<String>, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let program = if name == "[" { "[" } else { "test" };
    if program == "[" {
        if let [only] = words.as_slice() {
            let text = match only.as_str() {
                "--help" => Some(
                    "Usage: test EXPRESSION\n  or:  test\n  or:  [ EXPRESSION ]\n  or:  [ ]\n  or:  [ OPTION\nExit with the status determined by EXPRESSION (see docs/guest-coreutils.md).\n",
                ),
                "--version" => Some("[ (agent guest core-utils)\n"),
                _ => None,
            };
            if let Some(text) = text {
                return if out.write_all(text.as_bytes()).is_ok() {
                    0
                } else {
                    EXIT_ERROR
                };
            }
        }
        if words.last().map(String::as_str) != Some("]") {
            let _ = writeln!(err, "[: missing {}", quote("]"));
            return EXIT_ERROR;
        }
        words.pop();
    }
    let mut parser = Parser {
        words: &words,
        pos: 0,
    };
    match parser.evaluate() {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(Syntax(message)) => {
            let _ = writeln!(err, "{program}: {message}");
            EXIT_ERROR
        }
    }
}

/// GNU test's recursive-descent parser over the words.
struct Parser<'a> {
    words: &'a [String],
    pos: usize,
}

/// The binary operators.
fn is_binary(word: &str) -> bool {
    matches!(
        word,
        "=" | "=="
            | "!="
            | "<"
            | ">"
            | "-nt"
            | "-ot"
            | "-ef"
            | "-eq"
            | "-ne"
            | "-lt"
            | "-le"
            | "-gt"
            | "-ge"
    )
}

/// The unary operators (the letter after `-`).
fn is_unary(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() == 2 && b[0] == b'-' && b"bcdefghkLnNOGprsStuwxz".contains(&b[1])
}

/// `-X`: a dash and one more character.
fn is_switch(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next() == Some('-') && chars.next().is_some() && chars.next().is_none()
}

impl<'a> Parser<'a> {
    fn word(&self, at: usize) -> Option<&'a str> {
        self.words.get(at).map(String::as_str)
    }

    fn argc(&self) -> usize {
        self.words.len()
    }

    /// GNU's `beyond`: the expression ended too soon.
    fn beyond(&self) -> Syntax {
        Syntax(format!(
            "missing argument after {}",
            quote(self.words.last().map_or("", String::as_str))
        ))
    }

    /// Steps over a word; with `need_more`, running out is an error.
    fn advance(&mut self, need_more: bool) -> Result<(), Syntax> {
        self.pos += 1;
        if need_more && self.pos >= self.argc() {
            return Err(self.beyond());
        }
        Ok(())
    }

    fn evaluate(&mut self) -> Result<bool, Syntax> {
        if self.argc() == 0 {
            return Ok(false);
        }
        let value = self.posix(self.argc())?;
        if let Some(extra) = self.word(self.pos) {
            return Err(Syntax(format!("extra argument {}", quote(extra))));
        }
        Ok(value)
    }

    /// POSIX's rules for `n` arguments from here, the full grammar beyond four.
    fn posix(&mut self, n: usize) -> Result<bool, Syntax> {
        match n {
            1 => self.one(),
            2 => self.two(),
            3 => self.three(),
            4 if self.word(self.pos) == Some("!") => {
                self.advance(true)?;
                Ok(!self.three()?)
            }
            4 if self.word(self.pos) == Some("(") && self.word(self.pos + 3) == Some(")") => {
                self.advance(false)?;
                let value = self.two()?;
                self.advance(false)?;
                Ok(value)
            }
            _ => self.expr(),
        }
    }

    fn one(&mut self) -> Result<bool, Syntax> {
        let value = self.word(self.pos).is_some_and(|w| !w.is_empty());
        self.pos += 1;
        Ok(value)
    }

    fn two(&mut self) -> Result<bool, Syntax> {
        let word = self.word(self.pos).unwrap_or_default();
        if word == "!" {
            self.advance(true)?;
            Ok(!self.one()?)
        } else if is_switch(word) {
            if is_unary(word) {
                self.unary()
            } else {
                Err(Syntax(format!("{}: unary operator expected", quote(word))))
            }
        } else {
            Err(self.beyond())
        }
    }

    fn three(&mut self) -> Result<bool, Syntax> {
        let first = self.word(self.pos).unwrap_or_default();
        let second = self.word(self.pos + 1).unwrap_or_default();
        if is_binary(second) {
            self.binary(false)
        } else if first == "!" {
            self.advance(true)?;
            Ok(!self.two()?)
        } else if first == "(" && self.word(self.pos + 2) == Some(")") {
            self.advance(false)?;
            let value = self.one()?;
            self.advance(false)?;
            Ok(value)
        } else if second == "-a" || second == "-o" {
            self.expr()
        } else {
            Err(Syntax(format!(
                "{}: binary operator expected",
                quote(second)
            )))
        }
    }

    fn expr(&mut self) -> Result<bool, Syntax> {
        if self.pos >= self.argc() {
            return Err(self.beyond());
        }
        self.or()
    }

    fn or(&mut self) -> Result<bool, Syntax> {
        let mut value = self.and()?;
        while self.word(self.pos) == Some("-o") {
            self.advance(true)?;
            // GNU evaluates every operand (their errors count), then combines.
            value |= self.and()?;
        }
        Ok(value)
    }

    fn and(&mut self) -> Result<bool, Syntax> {
        let mut value = self.term()?;
        while self.word(self.pos) == Some("-a") {
            self.advance(true)?;
            value &= self.term()?;
        }
        Ok(value)
    }

    fn term(&mut self) -> Result<bool, Syntax> {
        if self.pos >= self.argc() {
            return Err(self.beyond());
        }
        let mut invert = false;
        while self.word(self.pos) == Some("!") {
            self.advance(true)?;
            invert = !invert;
        }
        let word = self.word(self.pos).unwrap_or_default();
        let left = self.argc() - self.pos;
        let value = if word == "(" {
            self.advance(true)?;
            let mut n = 1;
            while self.pos + n < self.argc() && self.word(self.pos + n) != Some(")") {
                if n == 4 {
                    n = self.argc() - self.pos;
                    break;
                }
                n += 1;
            }
            let value = self.posix(n)?;
            match self.word(self.pos) {
                None => return Err(Syntax(format!("{} expected", quote(")")))),
                Some(")") => {}
                Some(other) => {
                    return Err(Syntax(format!(
                        "{} expected, found {}",
                        quote(")"),
                        quote(other)
                    )));
                }
            }
            self.advance(false)?;
            value
        } else if left >= 4 && word == "-l" && is_binary(self.word(self.pos + 2).unwrap_or("")) {
            self.binary(true)?
        } else if left >= 3 && is_binary(self.word(self.pos + 1).unwrap_or("")) {
            self.binary(false)?
        } else if is_switch(word) {
            if is_unary(word) {
                self.unary()?
            } else {
                return Err(Syntax(format!("{}: unary operator expected", quote(word))));
            }
        } else {
            self.pos += 1;
            !word.is_empty()
        };
        Ok(invert ^ value)
    }

    /// `A OP B` at `pos` (`-l A OP B` with `left_is_length`).
    fn binary(&mut self, left_is_length: bool) -> Result<bool, Syntax> {
        if left_is_length {
            self.advance(false)?;
        }
        let op_at = self.pos + 1;
        let op = self.word(op_at).unwrap_or_default().to_owned();
        let mut right_at = op_at + 1;
        let right_is_length =
            self.word(right_at) == Some("-l") && self.word(right_at + 1).is_some();
        if right_is_length {
            self.pos += 1;
            right_at += 1;
        }
        let left = self.word(op_at - 1).unwrap_or_default().to_owned();
        let right = self.word(right_at).unwrap_or_default().to_owned();
        self.pos = right_at + 1;
        let number = |text: &str, is_length: bool| -> Result<Integer, Syntax> {
            if is_length {
                Ok(Integer::of(text.chars().count()))
            } else {
                Integer::parse(text)
                    .ok_or_else(|| Syntax(format!("invalid integer {}", quote(text))))
            }
        };
        let order = |ord: fn(Ordering) -> bool| -> Result<bool, Syntax> {
            let l = number(&left, left_is_length)?;
            let r = number(&right, right_is_length)?;
            Ok(ord(l.cmp(&r)))
        };
        match op.as_str() {
            "-eq" => order(Ordering::is_eq),
            "-ne" => order(Ordering::is_ne),
            "-lt" => order(Ordering::is_lt),
            "-le" => order(Ordering::is_le),
            "-gt" => order(Ordering::is_gt),
            "-ge" => order(Ordering::is_ge),
            "-nt" | "-ot" | "-ef" if left_is_length || right_is_length => {
                Err(Syntax(format!("{op} does not accept -l")))
            }
            "=" | "==" => Ok(left == right),
            "!=" => Ok(left != right),
            "<" => Ok(left.as_bytes() < right.as_bytes()),
            ">" => Ok(left.as_bytes() > right.as_bytes()),
            "-nt" | "-ot" => {
                let l = modified(&left);
                let r = modified(&right);
                Ok(match (op.as_str(), l, r) {
                    ("-nt", Some(l), r) => r.is_none_or(|r| l > r),
                    ("-ot", l, Some(r)) => l.is_none_or(|l| l < r),
                    _ => false,
                })
            }
            "-ef" => Ok(files::same_file(&left, &right)),
            _ => Err(Syntax(format!("{}: binary operator expected", quote(&op)))),
        }
    }

    /// `-X ARG` at `pos`.
    fn unary(&mut self) -> Result<bool, Syntax> {
        let op = self.word(self.pos).unwrap_or_default().to_owned();
        self.advance(true)?;
        let arg = self.word(self.pos).unwrap_or_default().to_owned();
        self.pos += 1;
        let path = Path::new(&arg);
        let meta = || fs::metadata(path);
        Ok(match op.as_bytes()[1] {
            b'z' => arg.is_empty(),
            b'n' => !arg.is_empty(),
            b'e' => meta().is_ok(),
            b'f' => meta().is_ok_and(|m| m.is_file()),
            b'd' => meta().is_ok_and(|m| m.is_dir()),
            b's' => meta().is_ok_and(|m| m.len() > 0),
            b'h' | b'L' => fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()),
            b'N' => meta().is_ok_and(|m| match (m.accessed(), m.modified()) {
                (Ok(read), Ok(written)) => written > read,
                _ => false,
            }),
            b't' => {
                Integer::parse(&arg)
                    .ok_or_else(|| Syntax(format!("invalid integer {}", quote(&arg))))?;
                files::is_terminal(&arg)
            }
            b'r' => files::access(path, files::Access::Read),
            b'w' => files::access(path, files::Access::Write),
            b'x' => files::access(path, files::Access::Execute),
            letter => files::mode_test(path, letter),
        })
    }
}

/// The modification time of `path`, if it exists.
fn modified(path: &str) -> Option<std::time::SystemTime> {
    fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// An integer of any size, as GNU compares them: sign and digits without leading zeros.
#[derive(Debug, PartialEq, Eq)]
struct Integer {
    negative: bool,
    digits: String,
}

impl Integer {
    fn of(n: usize) -> Self {
        Self {
            negative: false,
            digits: n.to_string(),
        }
    }

    /// GNU's rule: blanks, an optional sign, at least one digit, blanks.
    fn parse(text: &str) -> Option<Self> {
        let t = text.trim_matches([' ', '\t']);
        let (negative, digits) = match t.as_bytes().first() {
            Some(b'-') => (true, &t[1..]),
            Some(b'+') => (false, &t[1..]),
            _ => (false, t),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let digits = digits.trim_start_matches('0');
        let digits = if digits.is_empty() { "0" } else { digits };
        Some(Self {
            negative: negative && digits != "0",
            digits: digits.to_owned(),
        })
    }
}

impl Ord for Integer {
    fn cmp(&self, other: &Self) -> Ordering {
        let magnitude = self
            .digits
            .len()
            .cmp(&other.digits.len())
            .then_with(|| self.digits.cmp(&other.digits));
        match (self.negative, other.negative) {
            (false, false) => magnitude,
            (true, true) => magnitude.reverse(),
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
        }
    }
}

impl PartialOrd for Integer {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The file tests that depend on the platform.
#[allow(
    unsafe_code,
    reason = "libc's faccessat, isatty, geteuid/getegid and wasi-libc's stat, each with its safety argument"
)]
mod files {
    use std::path::Path;

    /// What `-r`, `-w`, `-x` ask.
    #[derive(Clone, Copy)]
    pub enum Access {
        Read,
        Write,
        Execute,
    }

    /// Unix: GNU's `euidaccess`.
    #[cfg(unix)]
    pub fn access(path: &Path, what: Access) -> bool {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return false;
        };
        let mode = match what {
            Access::Read => libc::R_OK,
            Access::Write => libc::W_OK,
            Access::Execute => libc::X_OK,
        };
        // SAFETY: `c` is a valid NUL-terminated path that outlives the call.
        unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), mode, libc::AT_EACCESS) == 0 }
    }

    /// WASI: no permission bits; ask the workspace itself (see the module docs).
    #[cfg(not(unix))]
    pub fn access(path: &Path, what: Access) -> bool {
        let Ok(meta) = std::fs::metadata(path) else {
            return false;
        };
        match (what, meta.is_dir()) {
            (Access::Read, true) => std::fs::read_dir(path).is_ok(),
            (Access::Read, false) => std::fs::File::open(path).is_ok(),
            (Access::Write | Access::Execute, true) => true,
            (Access::Write, false) => std::fs::OpenOptions::new().write(true).open(path).is_ok(),
            (Access::Execute, false) => false,
        }
    }

    /// `-b -c -p -S -u -g -k -O -G` on unix: the mode bits and owners.
    #[cfg(unix)]
    pub fn mode_test(path: &Path, letter: u8) -> bool {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let Ok(m) = std::fs::metadata(path) else {
            return false;
        };
        let t = m.file_type();
        match letter {
            b'b' => t.is_block_device(),
            b'c' => t.is_char_device(),
            b'p' => t.is_fifo(),
            b'S' => t.is_socket(),
            b'u' => m.mode() & 0o4000 != 0,
            b'g' => m.mode() & 0o2000 != 0,
            b'k' => m.mode() & 0o1000 != 0,
            // SAFETY: these calls take no arguments and cannot fail.
            b'O' => m.uid() == unsafe { libc::geteuid() },
            b'G' => m.gid() == unsafe { libc::getegid() },
            _ => false,
        }
    }

    /// WASI: no devices, owners or mode bits; an existing file is the agent's.
    #[cfg(not(unix))]
    pub fn mode_test(path: &Path, letter: u8) -> bool {
        matches!(letter, b'O' | b'G') && std::fs::metadata(path).is_ok()
    }

    /// `-t FD`.
    #[cfg(unix)]
    pub fn is_terminal(fd: &str) -> bool {
        fd.trim_matches([' ', '\t'])
            .trim_start_matches('+')
            .parse::<i32>()
            // SAFETY: isatty only reads the descriptor number.
            .is_ok_and(|fd| unsafe { libc::isatty(fd) } == 1)
    }

    /// WASI: a guest has no terminal.
    #[cfg(not(unix))]
    pub fn is_terminal(_fd: &str) -> bool {
        false
    }

    /// `A -ef B`: the same device and inode.
    #[cfg(unix)]
    pub fn same_file(a: &str, b: &str) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }

    /// WASI: `std`'s inode accessors are unstable there; wasi-libc's `stat` has them.
    #[cfg(not(unix))]
    pub fn same_file(a: &str, b: &str) -> bool {
        fn stat(path: &str) -> Option<(u64, u64)> {
            let c = std::ffi::CString::new(path).ok()?;
            // SAFETY: `stat` is plain data; zero is a valid value for every field.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: `c` is NUL-terminated and `st` is a valid, writable `stat`.
            let ok = unsafe { libc::stat(c.as_ptr(), &raw mut st) } == 0;
            ok.then_some((st.st_dev, st.st_ino))
        }
        matches!((stat(a), stat(b)), (Some(x), Some(y)) if x == y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(name: &str, words: &[&str]) -> (i32, String) {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let code = run(
            name,
            words.iter().map(|w| (*w).to_owned()).collect(),
            &mut out,
            &mut err,
        );
        (code, String::from_utf8_lossy(&err).into_owned())
    }

    #[test]
    fn integers_of_any_size_compare() {
        let n = |s| Integer::parse(s).unwrap();
        assert!(n("99999999999999999999999") > n("1"));
        assert!(n("-5") < n("-4"));
        assert_eq!(n(" +007 "), n("7"));
        assert_eq!(n("-0"), n("0"));
        for bad in ["", "x", "1x", "--1", "1 2", "-"] {
            assert_eq!(Integer::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn gnu_messages_for_errors() {
        assert_eq!(
            status("test", &["a", "b"]),
            (2, "test: missing argument after 'b'\n".into())
        );
        assert_eq!(
            status("test", &["-Q", "a"]).1,
            "test: '-Q': unary operator expected\n"
        );
        assert_eq!(
            status("test", &["(", "a", "b", "c"]).1,
            "test: 'b': binary operator expected\n"
        );
        assert_eq!(
            status("test", &["a", "b", "c", "d", "e"]).1,
            "test: extra argument 'b'\n"
        );
        assert_eq!(
            status("test", &["1", "-eq", "x"]).1,
            "test: invalid integer 'x'\n"
        );
        assert_eq!(status("[", &["a"]), (2, "[: missing ']'\n".into()));
        assert_eq!(
            status("test", &["1", "-eq", "1", "-a"]).1,
            "test: missing argument after '-a'\n"
        );
    }

    #[test]
    fn the_argument_count_rules() {
        assert_eq!(status("test", &[]).0, 1);
        for one in ["!", "(", "-n", "-f", "--help"] {
            assert_eq!(status("test", &[one]).0, 0, "{one}");
        }
        assert_eq!(status("test", &[""]).0, 1);
        assert_eq!(status("test", &["", "-o", ""]).0, 1);
        assert_eq!(status("test", &["!", "a", "=", "b"]).0, 0);
        assert_eq!(status("test", &["(", "-n", "x", ")"]).0, 0);
        assert_eq!(status("test", &["-l", "abc", "-eq", "3"]).0, 0);
        assert_eq!(
            status("test", &["!", "(", "a", "=", "b", ")", "-a", "x"]).0,
            0
        );
        assert_eq!(status("[", &["(", "1", "-gt", "0", ")", "]"]).0, 0);
        assert_eq!(status("test", &["a", "<", "b"]).0, 0);
        assert_eq!(status("test", &["-z", "", "-o", "-n", ""]).0, 0);
        assert_eq!(status("test", &["-n", "", "-a", "x"]).0, 1);
    }
}
