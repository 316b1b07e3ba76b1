//! `sed`: this project's own stream editor (uutils has none), GNU-compatible for the common
//! scripts, with C-locale (byte) semantics.
//!
//! Options: `-n`, `-e SCRIPT` (repeatable), `-f FILE`, `-E`/`-r`, `-i[SUFFIX]`, `-s`, `-z`,
//! `-l N`, `-u` and `--posix` (accepted, no effect), `--sandbox`, and the long forms. The script
//! is the first operand when there is no `-e`/`-f`; pieces are joined with newlines.
//!
//! Commands: `{ }`, `s///` (flags `g`, `p`, `N`, `i`/`I`, `m`/`M`, `w FILE`; replacement with
//! `&`, `\1`..`\9`, `\n`, `\L \U \l \u \E`), `y///`, `p P d D n N q Q = l z F`, `a i c` (both the
//! `a\` + newline form and the GNU one-line `a text`), `h H g G x`, `: b t T`, `r R w W`, `#`
//! comments. Addresses: `N`, `$`, `/re/` and `\%re%` (flags `I`, `M`), `first~step`, ranges
//! `a1,a2` with `a2` one of `N`, `$`, `/re/`, `+N`, `~N`, and `0,/re/`, each optionally negated by
//! `!`. Regular expressions are BRE (ERE with `-E`) translated by [`crate::posix_re`]; `.` matches
//! a newline in the pattern space, as in GNU sed, and the GNU escapes `\n \t \dNNN \oNNN \xHH
//! \cX` work in patterns and replacements. Back-references inside a pattern are not
//! supported (the `regex` crate has none); in replacements they are.
//!
//! Exit status: 0; 1 for an invalid script or usage; 2 when an input file could not be read; 4
//! for an I/O error; `q`/`Q` with an exit code return it.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use regex::bytes::Regex;

use crate::posix_re::{self, Syntax};
use crate::util::{self, HasArg, Item, LongOpt, long};

/// A script error, with the position it was found at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    /// Byte offset (1-based, like GNU's "char N").
    pub pos: usize,
    /// What is wrong.
    pub msg: String,
}

type PResult<T> = Result<T, ScriptError>;

/// A first address.
#[derive(Debug, Clone)]
enum Addr {
    Line(u64),
    Last,
    /// A regex index into [`Program::regexes`], or `None` for "the last regex used".
    Re(Option<usize>),
    Step(u64, u64),
    /// `0` in `0,/re/`.
    Zero,
}

/// A second (range end) address.
#[derive(Debug, Clone)]
enum Addr2 {
    Line(u64),
    Last,
    Re(Option<usize>),
    Plus(u64),
    Tilde(u64),
}

/// Case conversion in a replacement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Upper,
    Lower,
    OneUpper,
    OneLower,
    End,
}

/// A piece of an `s` replacement.
#[derive(Debug, Clone)]
enum Repl {
    Lit(Vec<u8>),
    Group(usize),
    Case(Case),
}

/// An `s` command.
#[derive(Debug, Clone)]
struct Subst {
    re: Option<usize>,
    repl: Vec<Repl>,
    global: bool,
    nth: usize,
    print: bool,
    write: Option<usize>,
}

/// A command of the program.
#[derive(Debug, Clone)]
enum Cmd {
    /// `{`: index of the matching `}`.
    Block(usize),
    EndBlock,
    Subst(Box<Subst>),
    Translit(Box<[u8; 256]>),
    Print,
    PrintFirst,
    Delete,
    DeleteFirst,
    Next,
    NextAppend,
    Quit(i32),
    QuitSilent(i32),
    LineNo,
    Append(Vec<u8>),
    Insert(Vec<u8>),
    Change(Vec<u8>),
    List(Option<usize>),
    Hold,
    HoldAppend,
    Get,
    GetAppend,
    Exchange,
    /// Branches carry the target command index (the program's length for "end of script").
    Branch(usize),
    BranchIfSub(usize),
    BranchIfNotSub(usize),
    Label,
    ReadFile(Vec<u8>),
    ReadLine(Vec<u8>),
    WriteFile(usize),
    WriteFirst(usize),
    Zap,
    FileName,
}

/// One command with its address.
#[derive(Debug, Clone)]
struct Command {
    a1: Option<Addr>,
    a2: Option<Addr2>,
    negate: bool,
    cmd: Cmd,
}

/// A parsed script.
#[derive(Debug, Default)]
struct Program {
    cmds: Vec<Command>,
    regexes: Vec<Regex>,
    /// Output files of `w`, `W` and `s///w`, by name.
    wfiles: Vec<Vec<u8>>,
    /// `#n` on the first line.
    quiet: bool,
}

/// Parser state.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    syntax: Syntax,
    sandbox: bool,
    prog: Program,
    /// Open `{` command indices.
    blocks: Vec<usize>,
    /// Branches to resolve: (command index, label).
    branches: Vec<(usize, Vec<u8>)>,
    labels: HashMap<Vec<u8>, usize>,
}

fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

impl Parser<'_> {
    fn fail<T>(&self, msg: &str) -> PResult<T> {
        Err(ScriptError {
            pos: self.i,
            msg: msg.to_owned(),
        })
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(is_space) {
            self.i += 1;
        }
    }

    fn number(&mut self) -> Option<u64> {
        let start = self.i;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.i += 1;
        }
        if start == self.i {
            return None;
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).ok()?;
        Some(text.parse().unwrap_or(u64::MAX))
    }

    /// Reads up to the unescaped delimiter `delim`, aware of bracket expressions when `regex`.
    /// `\delim` becomes `delim`, `\n` stays as written (the regex translator knows it) unless
    /// `regex` is false, in which case the raw text (with escapes) is returned for the caller.
    fn delimited(&mut self, delim: u8, regex: bool) -> PResult<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return self.fail("unterminated address regex");
            };
            if c == delim {
                self.i += 1;
                return Ok(out);
            }
            if c == b'\\' {
                let Some(d) = self.s.get(self.i + 1).copied() else {
                    return self.fail("unterminated address regex");
                };
                self.i += 2;
                if d == delim {
                    out.push(d);
                } else if d == b'\n' && !regex {
                    // Backslash-newline in a replacement: a newline.
                    out.extend_from_slice(b"\\\n");
                } else {
                    out.push(b'\\');
                    out.push(d);
                }
                continue;
            }
            if c == b'\n' && regex {
                return self.fail("unterminated address regex");
            }
            if c == b'[' && regex {
                // Copy a whole bracket expression: the delimiter does not end it.
                if let Some(end) = bracket_end(self.s, self.i + 1) {
                    out.extend_from_slice(&self.s[self.i..end]);
                    self.i = end;
                    continue;
                }
            }
            out.push(c);
            self.i += 1;
        }
    }

    fn compile_regex(&mut self, pat: &[u8], icase: bool, multi: bool) -> PResult<Option<usize>> {
        if pat.is_empty() {
            return Ok(None);
        }
        let t = match posix_re::translate(pat, self.syntax, true) {
            Ok(t) => t,
            Err(e) => return self.fail(&e.0),
        };
        match posix_re::compile(&t, icase, multi, true) {
            Ok(r) => {
                self.prog.regexes.push(r);
                Ok(Some(self.prog.regexes.len() - 1))
            }
            Err(e) => self.fail(&e.0),
        }
    }

    /// Parses `/re/flags` or `\%re%flags` (the opening delimiter not yet consumed).
    fn regex_addr(&mut self) -> PResult<Option<usize>> {
        let delim = if self.peek() == Some(b'\\') {
            self.i += 1;
            match self.peek() {
                Some(d) if d != b'\n' && d != b'\\' => d,
                _ => return self.fail("unexpected `,'"),
            }
        } else {
            b'/'
        };
        self.i += 1;
        let pat = self.delimited(delim, true)?;
        let (mut icase, mut multi) = (false, false);
        loop {
            match self.peek() {
                Some(b'I') => icase = true,
                Some(b'M') => multi = true,
                _ => break,
            }
            self.i += 1;
        }
        self.compile_regex(&pat, icase, multi)
    }

    fn addr1(&mut self) -> PResult<Option<Addr>> {
        match self.peek() {
            Some(b'0'..=b'9') => {
                let n = self.number().unwrap_or(0);
                if self.peek() == Some(b'~') {
                    self.i += 1;
                    let step = self.number().unwrap_or(0);
                    return Ok(Some(Addr::Step(n, step)));
                }
                if n == 0 {
                    return Ok(Some(Addr::Zero));
                }
                Ok(Some(Addr::Line(n)))
            }
            Some(b'$') => {
                self.i += 1;
                Ok(Some(Addr::Last))
            }
            Some(b'/' | b'\\') => Ok(Some(Addr::Re(self.regex_addr()?))),
            _ => Ok(None),
        }
    }

    fn addr2(&mut self) -> PResult<Addr2> {
        self.skip_spaces();
        match self.peek() {
            Some(b'0'..=b'9') => Ok(Addr2::Line(self.number().unwrap_or(0))),
            Some(b'$') => {
                self.i += 1;
                Ok(Addr2::Last)
            }
            Some(b'+') => {
                self.i += 1;
                match self.number() {
                    Some(n) => Ok(Addr2::Plus(n)),
                    None => self.fail("expected newer version of sed"),
                }
            }
            Some(b'~') => {
                self.i += 1;
                match self.number() {
                    Some(n) => Ok(Addr2::Tilde(n)),
                    None => self.fail("expected newer version of sed"),
                }
            }
            Some(b'/' | b'\\') => Ok(Addr2::Re(self.regex_addr()?)),
            _ => self.fail("unexpected `,'"),
        }
    }

    /// Text of `a`, `i`, `c`.
    fn text(&mut self) -> PResult<Vec<u8>> {
        self.skip_spaces();
        if self.peek() == Some(b'\\') {
            self.i += 1;
            if self.peek() == Some(b'\n') {
                self.i += 1;
            }
        } else if self.peek().is_none() {
            return self.fail("expected \\ after `a', `c' or `i'");
        }
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'\\' => match self.peek() {
                    Some(d) => {
                        self.i += 1;
                        out.push(d);
                    }
                    None => break,
                },
                b'\n' => break,
                _ => out.push(c),
            }
        }
        Ok(out)
    }

    /// A label or file name: a file name is the rest of the line; a label (`is_label`) also ends
    /// at `;` or a blank, as in GNU sed 4.9.
    fn word(&mut self, is_label: bool) -> Vec<u8> {
        self.skip_spaces();
        let start = self.i;
        while let Some(c) = self.peek() {
            if c == b'\n' || (is_label && (c == b';' || is_space(c))) {
                break;
            }
            self.i += 1;
        }
        let mut w = self.s[start..self.i].to_vec();
        if is_label {
            while w.last().is_some_and(|&b| is_space(b)) {
                w.pop();
            }
        }
        w
    }

    fn wfile(&mut self, name: Vec<u8>) -> PResult<usize> {
        if self.sandbox {
            return self.fail("e/r/w commands disabled in sandbox mode");
        }
        if name.is_empty() {
            return self.fail("missing filename in r/R/w/W commands");
        }
        if let Some(k) = self.prog.wfiles.iter().position(|w| *w == name) {
            return Ok(k);
        }
        self.prog.wfiles.push(name);
        Ok(self.prog.wfiles.len() - 1)
    }

    fn subst(&mut self) -> PResult<Cmd> {
        let Some(delim) = self.peek().filter(|&d| d != b'\n' && d != b'\\') else {
            return self.fail("unterminated `s' command");
        };
        self.i += 1;
        let pat = self
            .delimited(delim, true)
            .or_else(|_| self.fail("unterminated `s' command"))?;
        let raw_repl = self
            .delimited(delim, false)
            .or_else(|_| self.fail("unterminated `s' command"))?;
        let mut s = Subst {
            re: None,
            repl: Vec::new(),
            global: false,
            nth: 1,
            print: false,
            write: None,
        };
        let (mut icase, mut multi) = (false, false);
        let mut nth_seen = false;
        loop {
            match self.peek() {
                Some(b'g') => s.global = true,
                Some(b'p') => s.print = true,
                Some(b'i' | b'I') => icase = true,
                Some(b'm' | b'M') => multi = true,
                Some(b'e') => return self.fail("the `e' command is not supported"),
                Some(b'0'..=b'9') => {
                    if nth_seen {
                        return self.fail("multiple number options to `s' command");
                    }
                    nth_seen = true;
                    let n = self.number().unwrap_or(0);
                    if n == 0 {
                        return self.fail("number option to `s' command may not be zero");
                    }
                    s.nth = usize::try_from(n).unwrap_or(usize::MAX);
                    continue;
                }
                Some(b'w') => {
                    self.i += 1;
                    let name = self.word(false);
                    s.write = Some(self.wfile(name)?);
                    break;
                }
                _ => break,
            }
            self.i += 1;
        }
        let groups = if pat.is_empty() {
            9
        } else {
            match posix_re::count_groups(&pat, self.syntax) {
                Ok(n) => n,
                Err(e) => return self.fail(&e.0),
            }
        };
        s.re = self.compile_regex(&pat, icase, multi)?;
        s.repl = self.replacement(&raw_repl, groups)?;
        Ok(Cmd::Subst(Box::new(s)))
    }

    fn replacement(&self, raw: &[u8], groups: usize) -> PResult<Vec<Repl>> {
        let mut parts = Vec::new();
        let mut lit = Vec::new();
        let mut k = 0;
        let flush = |lit: &mut Vec<u8>, parts: &mut Vec<Repl>| {
            if !lit.is_empty() {
                parts.push(Repl::Lit(std::mem::take(lit)));
            }
        };
        while k < raw.len() {
            let c = raw[k];
            k += 1;
            match c {
                b'&' => {
                    flush(&mut lit, &mut parts);
                    parts.push(Repl::Group(0));
                }
                b'\\' if k < raw.len() => {
                    let d = raw[k];
                    k += 1;
                    match d {
                        b'0'..=b'9' => {
                            let g = usize::from(d - b'0');
                            if g > groups {
                                return self.fail(&format!(
                                    "invalid reference \\{g} on `s' command's RHS"
                                ));
                            }
                            flush(&mut lit, &mut parts);
                            parts.push(Repl::Group(g));
                        }
                        b'n' => lit.push(b'\n'),
                        b't' => lit.push(b'\t'),
                        b'r' => lit.push(b'\r'),
                        b'f' => lit.push(0x0c),
                        b'v' => lit.push(0x0b),
                        b'a' => lit.push(0x07),
                        b'd' | b'o' | b'x' | b'c' => match posix_re::numeric_escape(raw, k - 1) {
                            Some((byte, used)) => {
                                lit.push(byte);
                                k += used;
                            }
                            None => lit.push(d),
                        },
                        b'L' | b'U' | b'l' | b'u' | b'E' => {
                            flush(&mut lit, &mut parts);
                            parts.push(Repl::Case(match d {
                                b'L' => Case::Lower,
                                b'U' => Case::Upper,
                                b'l' => Case::OneLower,
                                b'u' => Case::OneUpper,
                                _ => Case::End,
                            }));
                        }
                        _ => lit.push(d),
                    }
                }
                _ => lit.push(c),
            }
        }
        flush(&mut lit, &mut parts);
        Ok(parts)
    }

    fn translit(&mut self) -> PResult<Cmd> {
        let Some(delim) = self.peek().filter(|&d| d != b'\n' && d != b'\\') else {
            return self.fail("unterminated `y' command");
        };
        self.i += 1;
        let unescape = |p: &Self, raw: Vec<u8>| -> PResult<Vec<u8>> {
            let mut out = Vec::new();
            let mut k = 0;
            while k < raw.len() {
                if raw[k] == b'\\' && k + 1 < raw.len() {
                    match raw[k + 1] {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'\\' => out.push(b'\\'),
                        b'\n' => out.push(b'\n'),
                        _ => return p.fail("unknown option to `y'"),
                    }
                    k += 2;
                } else {
                    out.push(raw[k]);
                    k += 1;
                }
            }
            Ok(out)
        };
        let src = self
            .delimited(delim, false)
            .or_else(|_| self.fail("unterminated `y' command"))?;
        let dst = self
            .delimited(delim, false)
            .or_else(|_| self.fail("unterminated `y' command"))?;
        let src = unescape(self, src)?;
        let dst = unescape(self, dst)?;
        if src.len() != dst.len() {
            return self.fail("strings for `y' command are different lengths");
        }
        let mut map = Box::new([0u8; 256]);
        for (k, m) in map.iter_mut().enumerate() {
            *m = u8::try_from(k).unwrap_or(0);
        }
        for (a, b) in src.iter().zip(&dst) {
            map[usize::from(*a)] = *b;
        }
        Ok(Cmd::Translit(map))
    }

    /// After a command: only spaces, then `;`, newline, `}`, `#` or the end.
    fn end_of_command(&mut self) -> PResult<()> {
        self.skip_spaces();
        match self.peek() {
            None | Some(b'}' | b'#' | b'\n') => Ok(()),
            Some(b';') => {
                self.i += 1;
                Ok(())
            }
            Some(_) => self.fail("extra characters after command"),
        }
    }

    fn parse(mut self) -> PResult<Program> {
        if self.s.starts_with(b"#n\n") || self.s == b"#n" {
            self.prog.quiet = true;
        }
        loop {
            while self
                .peek()
                .is_some_and(|b| is_space(b) || b == b'\n' || b == b';')
            {
                self.i += 1;
            }
            let Some(c) = self.peek() else {
                break;
            };
            if c == b'#' {
                while self.peek().is_some_and(|b| b != b'\n') {
                    self.i += 1;
                }
                continue;
            }
            let a1 = self.addr1()?;
            let mut a2 = None;
            if a1.is_some() && self.peek() == Some(b',') {
                self.i += 1;
                a2 = Some(self.addr2()?);
            }
            if matches!(a1, Some(Addr::Zero)) && !matches!(a2, Some(Addr2::Re(_))) {
                return self.fail("invalid usage of line address 0");
            }
            self.skip_spaces();
            let mut negate = false;
            if self.peek() == Some(b'!') {
                negate = true;
                self.i += 1;
                self.skip_spaces();
                if self.peek() == Some(b'!') {
                    return self.fail("multiple `!'s");
                }
            }
            let Some(c) = self.peek() else {
                return self.fail("missing command");
            };
            self.i += 1;
            let has_addr = a1.is_some();
            let idx = self.prog.cmds.len();
            let cmd = match c {
                b'{' => {
                    self.blocks.push(idx);
                    Cmd::Block(0)
                }
                b'}' => {
                    if has_addr || negate {
                        return self.fail("} doesn't want any addresses");
                    }
                    let Some(open) = self.blocks.pop() else {
                        return self.fail("unexpected `}'");
                    };
                    self.prog.cmds[open].cmd = Cmd::Block(idx);
                    Cmd::EndBlock
                }
                b's' => self.subst()?,
                b'y' => self.translit()?,
                b'p' => Cmd::Print,
                b'P' => Cmd::PrintFirst,
                b'd' => Cmd::Delete,
                b'D' => Cmd::DeleteFirst,
                b'n' => Cmd::Next,
                b'N' => Cmd::NextAppend,
                b'q' | b'Q' => {
                    if a2.is_some() {
                        return self.fail("command only uses one address");
                    }
                    self.skip_spaces();
                    let code = self
                        .number()
                        .map_or(0, |n| i32::try_from(n).unwrap_or(i32::MAX));
                    if c == b'q' {
                        Cmd::Quit(code)
                    } else {
                        Cmd::QuitSilent(code)
                    }
                }
                b'=' => Cmd::LineNo,
                b'l' => {
                    self.skip_spaces();
                    Cmd::List(
                        self.number()
                            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
                    )
                }
                b'a' => Cmd::Append(self.text()?),
                b'i' => Cmd::Insert(self.text()?),
                b'c' => Cmd::Change(self.text()?),
                b'h' => Cmd::Hold,
                b'H' => Cmd::HoldAppend,
                b'g' => Cmd::Get,
                b'G' => Cmd::GetAppend,
                b'x' => Cmd::Exchange,
                b'z' => Cmd::Zap,
                b'F' => Cmd::FileName,
                b':' => {
                    if has_addr {
                        return self.fail(": doesn't want any addresses");
                    }
                    let label = self.word(true);
                    if label.is_empty() {
                        return self.fail("\":\" lacks a label");
                    }
                    self.labels.insert(label, idx);
                    Cmd::Label
                }
                b'b' | b't' | b'T' => {
                    let label = self.word(true);
                    self.branches.push((idx, label));
                    match c {
                        b'b' => Cmd::Branch(0),
                        b't' => Cmd::BranchIfSub(0),
                        _ => Cmd::BranchIfNotSub(0),
                    }
                }
                b'r' | b'R' => {
                    if self.sandbox {
                        return self.fail("e/r/w commands disabled in sandbox mode");
                    }
                    let name = self.word(false);
                    if name.is_empty() {
                        return self.fail("missing filename in r/R/w/W commands");
                    }
                    if c == b'r' {
                        Cmd::ReadFile(name)
                    } else {
                        Cmd::ReadLine(name)
                    }
                }
                b'w' | b'W' => {
                    let name = self.word(false);
                    let k = self.wfile(name)?;
                    if c == b'w' {
                        Cmd::WriteFile(k)
                    } else {
                        Cmd::WriteFirst(k)
                    }
                }
                b'v' => {
                    let _ = self.word(true);
                    Cmd::Label
                }
                b'e' => return self.fail("the `e' command is not supported"),
                _ => {
                    self.i -= 1;
                    return self.fail(&format!("unknown command: `{}'", char::from(c)));
                }
            };
            self.prog.cmds.push(Command {
                a1,
                a2,
                negate,
                cmd,
            });
            if !matches!(
                c,
                b'{' | b'}' | b'a' | b'i' | b'c' | b':' | b'b' | b't' | b'T'
            ) || c == b'}'
            {
                self.end_of_command()?;
            }
        }
        if !self.blocks.is_empty() {
            return self.fail("unmatched `{'");
        }
        let end = self.prog.cmds.len();
        for (idx, label) in std::mem::take(&mut self.branches) {
            let target = if label.is_empty() {
                end
            } else {
                match self.labels.get(&label) {
                    Some(&t) => t,
                    None => {
                        return Err(ScriptError {
                            pos: 0,
                            msg: format!(
                                "can't find label for jump to `{}'",
                                String::from_utf8_lossy(&label)
                            ),
                        });
                    }
                }
            };
            if let Some(cmd) = self.prog.cmds.get_mut(idx) {
                cmd.cmd = match cmd.cmd {
                    Cmd::Branch(_) => Cmd::Branch(target),
                    Cmd::BranchIfSub(_) => Cmd::BranchIfSub(target),
                    _ => Cmd::BranchIfNotSub(target),
                };
            }
        }
        Ok(self.prog)
    }
}

/// Index just past the `]` closing a bracket expression whose body starts at `from`, if any.
fn bracket_end(s: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    if s.get(i) == Some(&b'^') {
        i += 1;
    }
    if s.get(i) == Some(&b']') {
        i += 1;
    }
    while i < s.len() {
        match s[i] {
            b'\n' => return None,
            b']' => return Some(i + 1),
            b'[' if matches!(s.get(i + 1), Some(b':' | b'=' | b'.')) => {
                let kind = s[i + 1];
                let close = (i + 2..s.len().saturating_sub(1))
                    .find(|&k| s[k] == kind && s[k + 1] == b']')?;
                i = close + 2;
            }
            _ => i += 1,
        }
    }
    None
}

/// Parses a script with the given regex dialect.
fn parse_script(script: &[u8], syntax: Syntax, sandbox: bool) -> PResult<Program> {
    Parser {
        s: script,
        i: 0,
        syntax,
        sandbox,
        prog: Program::default(),
        blocks: Vec::new(),
        branches: Vec::new(),
        labels: HashMap::new(),
    }
    .parse()
}

/// Input lines across one or several files, with one line of look-ahead for `$`.
struct Input<'a> {
    files: Vec<OsString>,
    next_file: usize,
    reader: Option<Box<dyn BufRead + 'a>>,
    stdin: Option<&'a mut dyn Read>,
    /// The look-ahead line (without its delimiter) and whether it had one.
    ahead: Option<(Vec<u8>, bool)>,
    delim: u8,
    /// Name of the file the last returned line came from (for `F`).
    current_name: Vec<u8>,
    ahead_name: Vec<u8>,
    /// Set when a file could not be read.
    failed: bool,
}

impl<'a> Input<'a> {
    fn new(files: Vec<OsString>, stdin: Option<&'a mut dyn Read>, delim: u8) -> Self {
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

    fn next_line(&mut self, err: &mut dyn Write) -> Option<(Vec<u8>, bool)> {
        self.fill(err);
        let line = self.ahead.take();
        if line.is_some() {
            self.current_name = self.ahead_name.clone();
        }
        line
    }

    fn is_last(&mut self, err: &mut dyn Write) -> bool {
        self.fill(err);
        self.ahead.is_none()
    }
}

/// Options from the command line.
#[derive(Debug, Default)]
struct Options {
    quiet: bool,
    syntax_ere: bool,
    in_place: Option<Vec<u8>>,
    separate: bool,
    null_data: bool,
    line_len: usize,
    sandbox: bool,
}

/// Per-command range state.
#[derive(Debug, Clone, Copy, Default)]
struct RangeState {
    active: bool,
    /// Last line of a `+N` range.
    end: u64,
}

/// Why a cycle ended.
enum Flow {
    /// Normal end: autoprint.
    EndCycle,
    /// `d`-like: no autoprint.
    Delete,
    /// `D` with a newline: restart without reading.
    Restart,
    /// Quit after autoprint (`q`, or `n`/`N` at the end of input).
    Quit(i32),
    /// Quit at once (`Q`).
    QuitSilent(i32),
}

/// The runtime state.
struct Exec<'p> {
    prog: &'p Program,
    opts: &'p Options,
    ranges: Vec<RangeState>,
    hold: Vec<u8>,
    line_no: u64,
    last_re: Option<usize>,
    /// Set by a successful `s` since the last line was read or `t` taken.
    replaced: bool,
    /// Text queued by `a`, `r`, `R` for the end of the cycle.
    append: Vec<Vec<u8>>,
    /// The last output lacked its newline (the input's last line had none).
    missing_newline: bool,
    wfiles: Vec<Option<BufWriter<File>>>,
    /// Readers for `R`.
    rfiles: HashMap<Vec<u8>, BufReader<File>>,
    /// Whether the current line had its delimiter.
    chomped: bool,
}

impl<'p> Exec<'p> {
    fn emit(&mut self, out: &mut dyn Write, data: &[u8], newline: bool) -> io::Result<()> {
        if self.missing_newline {
            out.write_all(&[self.delim()])?;
            self.missing_newline = false;
        }
        out.write_all(data)?;
        if newline {
            out.write_all(&[self.delim()])?;
        } else {
            self.missing_newline = true;
        }
        Ok(())
    }

    fn delim(&self) -> u8 {
        if self.opts.null_data { 0 } else { b'\n' }
    }

    fn regex(&mut self, r: Option<usize>) -> io::Result<&'p Regex> {
        let prog = self.prog;
        let idx = match r {
            Some(i) => {
                self.last_re = Some(i);
                i
            }
            None => self
                .last_re
                .ok_or_else(|| io::Error::other("no previous regular expression"))?,
        };
        prog.regexes
            .get(idx)
            .ok_or_else(|| io::Error::other("no previous regular expression"))
    }

    fn match_a1(&mut self, a: &Addr, ps: &[u8], last: bool) -> io::Result<bool> {
        Ok(match *a {
            Addr::Line(n) => self.line_no == n,
            Addr::Last => last,
            Addr::Re(r) => self.regex(r)?.is_match(ps),
            Addr::Step(first, step) => {
                if step == 0 {
                    self.line_no == first
                } else {
                    self.line_no >= first && (self.line_no - first).is_multiple_of(step)
                }
            }
            Addr::Zero => false,
        })
    }

    fn selected(&mut self, k: usize, ps: &[u8], last: bool) -> io::Result<bool> {
        let c = &self.prog.cmds[k];
        let hit = match (&c.a1, &c.a2) {
            (None, _) => true,
            (Some(a1), None) => self.match_a1(a1, ps, last)?,
            (Some(a1), Some(a2)) => {
                let st = self.ranges[k];
                if st.active {
                    let ends = match *a2 {
                        Addr2::Line(n) => self.line_no >= n,
                        Addr2::Plus(_) => self.line_no >= st.end,
                        Addr2::Tilde(m) => m == 0 || self.line_no.is_multiple_of(m),
                        Addr2::Last => last,
                        Addr2::Re(r) => self.regex(r)?.is_match(ps),
                    };
                    if ends {
                        self.ranges[k].active = false;
                    }
                    true
                } else if self.match_a1(a1, ps, last)? {
                    let ln = self.line_no;
                    let (active, end) = match *a2 {
                        Addr2::Line(n) => (n > ln, 0),
                        Addr2::Plus(m) => (m > 0, ln.saturating_add(m)),
                        Addr2::Tilde(m) => (m > 0 && !ln.is_multiple_of(m), 0),
                        Addr2::Last => (!last, 0),
                        Addr2::Re(_) => (true, 0),
                    };
                    self.ranges[k] = RangeState { active, end };
                    true
                } else {
                    false
                }
            }
        };
        Ok(hit != c.negate)
    }

    fn subst(&mut self, s: &Subst, ps: &mut Vec<u8>) -> io::Result<bool> {
        let re = self.regex(s.re)?;
        let mut out = Vec::with_capacity(ps.len() + 16);
        let mut pos = 0usize;
        let mut copied = 0usize;
        let mut count = 0usize;
        let mut prev_end: Option<usize> = None;
        let mut done = false;
        let mut locs = re.capture_locations();
        while pos <= ps.len() {
            let Some(m) = re.captures_read_at(&mut locs, ps, pos) else {
                break;
            };
            let (st, en) = (m.start(), m.end());
            if st == en && prev_end == Some(st) {
                // An empty match right after the previous match does not count.
                pos = st + 1;
                continue;
            }
            count += 1;
            if count >= s.nth {
                out.extend_from_slice(&ps[copied..st]);
                expand(&s.repl, ps, &locs, &mut out);
                copied = en;
                done = true;
                if !s.global {
                    break;
                }
            }
            prev_end = Some(en);
            pos = if en == st { en + 1 } else { en };
        }
        if done {
            out.extend_from_slice(&ps[copied..]);
            *ps = out;
        }
        Ok(done)
    }

    fn write_file(&mut self, k: usize, data: &[u8], out: &mut dyn Write) -> io::Result<()> {
        let name = &self.prog.wfiles[k];
        if name == b"/dev/stdout" {
            return self.emit(out, data, true);
        }
        if name == b"/dev/stderr" {
            let mut e = io::stderr();
            e.write_all(data)?;
            return e.write_all(&[self.delim()]);
        }
        let delim = self.delim();
        if let Some(Some(w)) = self.wfiles.get_mut(k) {
            w.write_all(data)?;
            w.write_all(&[delim])?;
        }
        Ok(())
    }

    fn flush_append(&mut self, out: &mut dyn Write) -> io::Result<()> {
        for text in std::mem::take(&mut self.append) {
            if self.missing_newline {
                out.write_all(&[self.delim()])?;
                self.missing_newline = false;
            }
            out.write_all(&text)?;
        }
        Ok(())
    }

    fn list(&mut self, ps: &[u8], width: usize, out: &mut dyn Write) -> io::Result<()> {
        let mut buf = Vec::new();
        let mut col = 0usize;
        for &b in ps {
            let esc: Vec<u8> = match b {
                b'\\' => b"\\\\".to_vec(),
                0x07 => b"\\a".to_vec(),
                0x08 => b"\\b".to_vec(),
                0x0c => b"\\f".to_vec(),
                b'\n' => b"\\n".to_vec(),
                b'\r' => b"\\r".to_vec(),
                b'\t' => b"\\t".to_vec(),
                0x0b => b"\\v".to_vec(),
                0x20..=0x7e => vec![b],
                _ => format!("\\{b:03o}").into_bytes(),
            };
            if width > 1 && col + esc.len() > width - 1 {
                buf.extend_from_slice(b"\\\n");
                col = 0;
            }
            col += esc.len();
            buf.extend_from_slice(&esc);
        }
        buf.extend_from_slice(b"$");
        self.emit(out, &buf, true)
    }

    /// Runs the script over one line (the pattern space). Returns how the cycle ended.
    fn cycle(
        &mut self,
        ps: &mut Vec<u8>,
        input: &mut Input<'_>,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> io::Result<Flow> {
        let prog = self.prog;
        let mut pc = 0usize;
        while pc < prog.cmds.len() {
            let last = input.is_last(err);
            if !self.selected(pc, ps, last)? {
                pc = match prog.cmds[pc].cmd {
                    Cmd::Block(end) => end + 1,
                    _ => pc + 1,
                };
                continue;
            }
            match &prog.cmds[pc].cmd {
                Cmd::Block(_) | Cmd::EndBlock | Cmd::Label => {}
                Cmd::Subst(s) => {
                    if self.subst(s, ps)? {
                        self.replaced = true;
                        if s.print {
                            let data = ps.clone();
                            self.emit(out, &data, true)?;
                        }
                        if let Some(w) = s.write {
                            let data = ps.clone();
                            self.write_file(w, &data, out)?;
                        }
                    }
                }
                Cmd::Translit(map) => {
                    for b in ps.iter_mut() {
                        *b = map[usize::from(*b)];
                    }
                }
                Cmd::Print => {
                    let data = ps.clone();
                    self.emit(out, &data, true)?;
                }
                Cmd::PrintFirst => {
                    let end = ps.iter().position(|&b| b == b'\n').unwrap_or(ps.len());
                    let data = ps[..end].to_vec();
                    self.emit(out, &data, true)?;
                }
                Cmd::Delete => return Ok(Flow::Delete),
                Cmd::DeleteFirst => match ps.iter().position(|&b| b == b'\n') {
                    None => return Ok(Flow::Delete),
                    Some(nl) => {
                        ps.drain(..=nl);
                        return Ok(Flow::Restart);
                    }
                },
                Cmd::Next => {
                    if input.is_last(err) {
                        return Ok(Flow::Quit(0));
                    }
                    if !self.quiet() {
                        let data = ps.clone();
                        self.emit(out, &data, self.chomped)?;
                    }
                    self.flush_append(out)?;
                    if let Some((line, had)) = input.next_line(err) {
                        *ps = line;
                        self.chomped = had;
                        self.line_no += 1;
                    }
                }
                Cmd::NextAppend => {
                    if input.is_last(err) {
                        return Ok(Flow::Quit(0));
                    }
                    self.flush_append(out)?;
                    if let Some((line, had)) = input.next_line(err) {
                        ps.push(b'\n');
                        ps.extend_from_slice(&line);
                        self.chomped = had;
                        self.line_no += 1;
                    }
                }
                Cmd::Quit(code) => return Ok(Flow::Quit(*code)),
                Cmd::QuitSilent(code) => return Ok(Flow::QuitSilent(*code)),
                Cmd::LineNo => {
                    let text = self.line_no.to_string().into_bytes();
                    if self.missing_newline {
                        out.write_all(b"\n")?;
                        self.missing_newline = false;
                    }
                    out.write_all(&text)?;
                    out.write_all(b"\n")?;
                }
                // `a\` with nothing after it (end of script) has no text at all, not an empty line.
                Cmd::Append(text) if text.is_empty() => {}
                Cmd::Insert(text) if text.is_empty() => {}
                Cmd::Append(text) => {
                    let mut t = text.clone();
                    t.push(b'\n');
                    self.append.push(t);
                }
                Cmd::Insert(text) => {
                    if self.missing_newline {
                        out.write_all(&[self.delim()])?;
                        self.missing_newline = false;
                    }
                    out.write_all(text)?;
                    out.write_all(b"\n")?;
                }
                Cmd::Change(text) => {
                    let c = &prog.cmds[pc];
                    let mid_range = c.a2.is_some() && !c.negate && self.ranges[pc].active;
                    if !mid_range && !text.is_empty() {
                        if self.missing_newline {
                            out.write_all(&[self.delim()])?;
                            self.missing_newline = false;
                        }
                        out.write_all(text)?;
                        out.write_all(b"\n")?;
                    }
                    return Ok(Flow::Delete);
                }
                Cmd::List(w) => {
                    let width = w.unwrap_or(self.opts.line_len);
                    let data = ps.clone();
                    self.list(&data, width, out)?;
                }
                Cmd::Hold => self.hold.clone_from(ps),
                Cmd::HoldAppend => {
                    self.hold.push(b'\n');
                    self.hold.extend_from_slice(ps);
                }
                Cmd::Get => ps.clone_from(&self.hold),
                Cmd::GetAppend => {
                    ps.push(b'\n');
                    ps.extend_from_slice(&self.hold);
                }
                Cmd::Exchange => std::mem::swap(ps, &mut self.hold),
                Cmd::Branch(t) => {
                    pc = *t;
                    continue;
                }
                Cmd::BranchIfSub(t) => {
                    if self.replaced {
                        self.replaced = false;
                        pc = *t;
                        continue;
                    }
                }
                Cmd::BranchIfNotSub(t) => {
                    if self.replaced {
                        self.replaced = false;
                    } else {
                        pc = *t;
                        continue;
                    }
                }
                Cmd::ReadFile(name) => {
                    let path = util::bytes_osstr(name);
                    if let Ok(data) = fs::read(path) {
                        self.append.push(data);
                    }
                }
                Cmd::ReadLine(name) => {
                    if !self.rfiles.contains_key(name)
                        && let Ok(f) = File::open(util::bytes_osstr(name))
                    {
                        self.rfiles.insert(name.clone(), BufReader::new(f));
                    }
                    if let Some(r) = self.rfiles.get_mut(name) {
                        let mut line = Vec::new();
                        if r.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
                            if line.last() != Some(&b'\n') {
                                line.push(b'\n');
                            }
                            self.append.push(line);
                        }
                    }
                }
                Cmd::WriteFile(k) => {
                    let data = ps.clone();
                    self.write_file(*k, &data, out)?;
                }
                Cmd::WriteFirst(k) => {
                    let end = ps.iter().position(|&b| b == b'\n').unwrap_or(ps.len());
                    let data = ps[..end].to_vec();
                    self.write_file(*k, &data, out)?;
                }
                Cmd::Zap => ps.clear(),
                Cmd::FileName => {
                    let name = input.current_name.clone();
                    if self.missing_newline {
                        out.write_all(b"\n")?;
                        self.missing_newline = false;
                    }
                    out.write_all(&name)?;
                    out.write_all(b"\n")?;
                }
            }
            pc += 1;
        }
        Ok(Flow::EndCycle)
    }

    fn quiet(&self) -> bool {
        self.opts.quiet || self.prog.quiet
    }

    /// Processes a whole input stream. Returns `Some(code)` when a `q`/`Q` ended everything.
    fn stream(
        &mut self,
        input: &mut Input<'_>,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> io::Result<Option<i32>> {
        let mut pending: Option<Vec<u8>> = None;
        loop {
            let mut ps = match pending.take() {
                Some(ps) => ps,
                None => {
                    let Some((line, had)) = input.next_line(err) else {
                        return Ok(None);
                    };
                    self.line_no += 1;
                    self.chomped = had;
                    self.replaced = false;
                    line
                }
            };
            let flow = self.cycle(&mut ps, input, out, err)?;
            match flow {
                Flow::EndCycle | Flow::Quit(_) => {
                    if !self.quiet() {
                        self.emit(out, &ps, self.chomped)?;
                    }
                    self.flush_append(out)?;
                    if let Flow::Quit(code) = flow {
                        return Ok(Some(code));
                    }
                }
                Flow::Delete => self.flush_append(out)?,
                Flow::Restart => {
                    self.flush_append(out)?;
                    pending = Some(ps);
                }
                Flow::QuitSilent(code) => return Ok(Some(code)),
            }
        }
    }
}

/// Expands a replacement for one match.
fn expand(repl: &[Repl], hay: &[u8], locs: &regex::bytes::CaptureLocations, out: &mut Vec<u8>) {
    let mut mode: Option<Case> = None;
    let mut one: Option<Case> = None;
    let push = |bytes: &[u8], out: &mut Vec<u8>, mode: Option<Case>, one: &mut Option<Case>| {
        for &b in bytes {
            let b = match one.take() {
                Some(Case::OneUpper) => b.to_ascii_uppercase(),
                Some(Case::OneLower) => b.to_ascii_lowercase(),
                _ => match mode {
                    Some(Case::Upper) => b.to_ascii_uppercase(),
                    Some(Case::Lower) => b.to_ascii_lowercase(),
                    _ => b,
                },
            };
            out.push(b);
        }
    };
    for part in repl {
        match part {
            Repl::Lit(l) => push(l, out, mode, &mut one),
            Repl::Group(g) => {
                if let Some((s, e)) = locs.get(*g) {
                    push(&hay[s..e], out, mode, &mut one);
                }
            }
            Repl::Case(c) => match c {
                Case::Upper | Case::Lower => {
                    mode = Some(*c);
                    one = None;
                }
                Case::End => {
                    mode = None;
                    one = None;
                }
                Case::OneUpper | Case::OneLower => one = Some(*c),
            },
        }
    }
}

const SHORTS: &str = "nsrEe:f:i::l:uzb";

const LONGS: &[LongOpt] = &[
    long("quiet", HasArg::No, "n"),
    long("silent", HasArg::No, "n"),
    long("expression", HasArg::Required, "e"),
    long("file", HasArg::Required, "f"),
    long("regexp-extended", HasArg::No, "E"),
    long("in-place", HasArg::Optional, "i"),
    long("line-length", HasArg::Required, "l"),
    long("separate", HasArg::No, "s"),
    long("null-data", HasArg::No, "z"),
    long("zero-terminated", HasArg::No, "z"),
    long("unbuffered", HasArg::No, "u"),
    long("binary", HasArg::No, "b"),
    long("posix", HasArg::No, "posix"),
    long("debug", HasArg::No, "debug"),
    long("sandbox", HasArg::No, "sandbox"),
    long("follow-symlinks", HasArg::No, "follow-symlinks"),
    long("help", HasArg::No, "help"),
    long("version", HasArg::No, "version"),
];

const USAGE: &str = "Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...

  -n, --quiet, --silent
                 suppress automatic printing of pattern space
  -e script, --expression=script
                 add the script to the commands to be executed
  -f script-file, --file=script-file
                 add the contents of script-file to the commands to be executed
  -i[SUFFIX], --in-place[=SUFFIX]
                 edit files in place (makes backup if SUFFIX supplied)
  -l N, --line-length=N
                 specify the desired line-wrap length for the `l' command
  -E, -r, --regexp-extended
                 use extended regular expressions in the script
  -s, --separate
                 consider files as separate rather than as a single,
                 continuous long stream.
      --sandbox
                 operate in sandbox mode (disable e/r/w commands).
  -z, --null-data
                 separate lines by NUL characters
      --help     display this help and exit
      --version  output version information and exit
";

/// Entry point: `args[0]` is the program name.
pub fn main(args: Vec<OsString>) -> i32 {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut lock = stdin.lock();
    let status = run(
        &args[1.min(args.len())..],
        &mut lock,
        &mut out,
        &mut io::stderr(),
    );
    match out.flush() {
        Ok(()) => status,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => status,
        Err(e) => {
            let _ = writeln!(
                io::stderr(),
                "sed: couldn't flush stdout: {}",
                util::io_msg(&e)
            );
            4
        }
    }
}

/// Runs sed with the arguments after the program name. Returns the exit status.
pub fn run(
    args: &[OsString],
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let items = match util::getopt(args, SHORTS, LONGS, true) {
        Ok(i) => i,
        Err(m) => {
            let _ = writeln!(err, "sed: {m}\n{USAGE}");
            return 1;
        }
    };
    let mut opts = Options {
        line_len: 70,
        ..Options::default()
    };
    let mut script: Option<Vec<u8>> = None;
    let mut operands = Vec::new();
    for item in items {
        let (key, val) = match item {
            Item::Operand(o) => {
                operands.push(o);
                continue;
            }
            Item::Opt { key, val, .. } => (key, val),
        };
        let add = |script: &mut Option<Vec<u8>>, piece: &[u8]| {
            let s = script.get_or_insert_with(Vec::new);
            if !s.is_empty() {
                s.push(b'\n');
            }
            s.extend_from_slice(piece);
        };
        match key {
            "n" => opts.quiet = true,
            "s" => opts.separate = true,
            "r" | "E" => opts.syntax_ere = true,
            "z" => opts.null_data = true,
            "sandbox" => opts.sandbox = true,
            "e" => add(&mut script, util::os_bytes(&val.unwrap_or_default())),
            "f" => {
                let v = val.unwrap_or_default();
                let data = if v == "-" {
                    let mut d = Vec::new();
                    stdin.read_to_end(&mut d).map(|_| d)
                } else {
                    fs::read(&v)
                };
                match data {
                    Ok(mut d) => {
                        if d.last() == Some(&b'\n') {
                            d.pop();
                        }
                        add(&mut script, &d);
                    }
                    Err(e) => {
                        let _ = writeln!(
                            err,
                            "sed: couldn't open file {}: {}",
                            v.to_string_lossy(),
                            util::io_msg(&e)
                        );
                        return 1;
                    }
                }
            }
            "i" => {
                opts.in_place = Some(val.map(|v| util::os_bytes(&v).to_vec()).unwrap_or_default());
                opts.separate = true;
            }
            "l" => {
                let v = val.unwrap_or_default();
                match v.to_string_lossy().parse::<usize>() {
                    Ok(n) => opts.line_len = n,
                    Err(_) => {
                        let _ = writeln!(err, "sed: invalid line length: {}", v.to_string_lossy());
                        return 1;
                    }
                }
            }
            "help" => {
                let _ = write!(out, "{USAGE}");
                return 0;
            }
            "version" => {
                let _ = writeln!(out, "sed (guest-coreutils) {}", env!("CARGO_PKG_VERSION"));
                return 0;
            }
            _ => {}
        }
    }
    let mut operands = operands.into_iter();
    let script = match script {
        Some(s) => s,
        None => match operands.next() {
            Some(s) => util::os_bytes(&s).to_vec(),
            None => {
                let _ = write!(err, "{USAGE}");
                return 1;
            }
        },
    };
    let mut files: Vec<OsString> = operands.collect();
    let syntax = if opts.syntax_ere {
        Syntax::Extended
    } else {
        Syntax::Basic
    };
    let prog = match parse_script(&script, syntax, opts.sandbox) {
        Ok(p) => p,
        Err(e) => {
            let _ = writeln!(err, "sed: -e expression #1, char {}: {}", e.pos, e.msg);
            return 1;
        }
    };
    if files.is_empty() {
        if opts.in_place.is_some() {
            let _ = writeln!(err, "sed: no input files");
            return 4;
        }
        files.push(OsString::from("-"));
    }
    let mut exec = Exec {
        prog: &prog,
        opts: &opts,
        ranges: vec![RangeState::default(); prog.cmds.len()],
        hold: Vec::new(),
        line_no: 0,
        last_re: None,
        replaced: false,
        append: Vec::new(),
        missing_newline: false,
        wfiles: Vec::new(),
        rfiles: HashMap::new(),
        chomped: true,
    };
    for (k, cmd) in prog.cmds.iter().enumerate() {
        if matches!(cmd.a1, Some(Addr::Zero)) {
            exec.ranges[k].active = true;
        }
    }
    for name in &prog.wfiles {
        if name == b"/dev/stdout" || name == b"/dev/stderr" {
            exec.wfiles.push(None);
            continue;
        }
        match File::create(util::bytes_osstr(name)) {
            Ok(f) => exec.wfiles.push(Some(BufWriter::new(f))),
            Err(e) => {
                let _ = writeln!(
                    err,
                    "sed: couldn't open file {}: {}",
                    String::from_utf8_lossy(name),
                    util::io_msg(&e)
                );
                return 4;
            }
        }
    }
    let delim = if opts.null_data { 0 } else { b'\n' };
    let mut status = 0;
    let result = if let Some(suffix) = opts.in_place.clone() {
        in_place(&mut exec, &files, &suffix, delim, err, &mut status)
    } else if opts.separate {
        let mut stdin = Some(stdin);
        let mut res = Ok(None);
        for f in &files {
            let s = if f == "-" { stdin.take() } else { None };
            let mut input = Input::new(vec![f.clone()], s, delim);
            exec.line_no = 0;
            res = exec.stream(&mut input, out, err);
            if input.failed {
                status = 2;
            }
            if !matches!(res, Ok(None)) {
                break;
            }
        }
        res
    } else {
        let mut input = Input::new(files, Some(stdin), delim);
        let res = exec.stream(&mut input, out, err);
        if input.failed {
            status = 2;
        }
        res
    };
    for w in exec.wfiles.iter_mut().flatten() {
        let _ = w.flush();
    }
    match result {
        Ok(Some(code)) => code,
        Ok(None) => status,
        Err(e) => {
            let _ = writeln!(err, "sed: {}", util::io_msg(&e));
            4
        }
    }
}

/// `-i`: each file is edited through a temporary file in its directory, then renamed over it;
/// a non-empty suffix keeps a backup (`*` in the suffix stands for the file's base name).
fn in_place(
    exec: &mut Exec<'_>,
    files: &[OsString],
    suffix: &[u8],
    delim: u8,
    err: &mut dyn Write,
    status: &mut i32,
) -> io::Result<Option<i32>> {
    for f in files {
        let path = Path::new(f);
        match fs::metadata(path) {
            Ok(m) if m.is_file() => {}
            Ok(_) => {
                let _ = writeln!(
                    err,
                    "sed: couldn't edit {}: not a regular file",
                    f.to_string_lossy()
                );
                *status = 4;
                continue;
            }
            Err(e) => {
                let _ = writeln!(
                    err,
                    "sed: can't read {}: {}",
                    f.to_string_lossy(),
                    util::io_msg(&e)
                );
                *status = 2;
                continue;
            }
        }
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let base = path
            .file_name()
            .map(util::os_bytes)
            .unwrap_or_default()
            .to_vec();
        let mut tmp_name = b".sed".to_vec();
        tmp_name.extend_from_slice(&base);
        tmp_name.extend_from_slice(b".tmp");
        let tmp: PathBuf = dir.join(util::bytes_osstr(&tmp_name));
        let file = File::create(&tmp)?;
        let mut w = BufWriter::new(file);
        let mut input = Input::new(vec![f.clone()], None, delim);
        exec.line_no = 0;
        exec.missing_newline = false;
        let res = exec.stream(&mut input, &mut w, err);
        w.flush()?;
        drop(w);
        if !suffix.is_empty() {
            let backup = if suffix.contains(&b'*') {
                let mut b = Vec::new();
                for &c in suffix {
                    if c == b'*' {
                        b.extend_from_slice(&base);
                    } else {
                        b.push(c);
                    }
                }
                b
            } else {
                let mut b = base.clone();
                b.extend_from_slice(suffix);
                b
            };
            let backup_path = if backup.contains(&b'/') {
                PathBuf::from(util::bytes_osstr(&backup))
            } else {
                dir.join(util::bytes_osstr(&backup))
            };
            fs::rename(path, backup_path)?;
        }
        fs::rename(&tmp, path)?;
        match res {
            Ok(None) => {}
            other => return other,
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests;
