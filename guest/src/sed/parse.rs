//! The script parser: sed's text → a [`Program`] of commands with their addresses, the regexes
//! compiled (through [`crate::posix_re`]) and the branch targets resolved.

use std::collections::HashMap;

use crate::posix_re::{self, Syntax};

use super::ScriptError;
use super::replace::{self, Subst};
use super::script::{Addr, Addr2, Cmd, Command, Program};

type PResult<T> = Result<T, ScriptError>;

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
        s.repl = replace::parse_replacement(&raw_repl, groups).or_else(|m| self.fail(&m))?;
        Ok(Cmd::Subst(Box::new(s)))
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

    /// Parses the whole script.
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
            self.command()?;
        }
        if !self.blocks.is_empty() {
            return self.fail("unmatched `{'");
        }
        self.resolve_branches()?;
        Ok(self.prog)
    }

    /// Parses one command with its addresses and `!`, and adds it to the program.
    fn command(&mut self) -> PResult<()> {
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
        let cmd = self.command_body(c, a1.is_some(), a2.is_some(), negate)?;
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
        Ok(())
    }

    /// Parses what follows the command letter `c` (already consumed); the command will be at
    /// the program's next index.
    fn command_body(
        &mut self,
        c: u8,
        has_addr: bool,
        has_addr2: bool,
        negate: bool,
    ) -> PResult<Cmd> {
        let idx = self.prog.cmds.len();
        Ok(match c {
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
            b'q' | b'Q' => self.quit(c, has_addr2)?,
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
            b'r' | b'R' | b'w' | b'W' => self.file_command(c)?,
            b'v' => {
                let _ = self.word(true);
                Cmd::Label
            }
            b'e' => return self.fail("the `e' command is not supported"),
            _ => {
                self.i -= 1;
                return self.fail(&format!("unknown command: `{}'", char::from(c)));
            }
        })
    }

    /// `q` / `Q` with their optional exit code.
    fn quit(&mut self, c: u8, has_addr2: bool) -> PResult<Cmd> {
        if has_addr2 {
            return self.fail("command only uses one address");
        }
        self.skip_spaces();
        let code = self
            .number()
            .map_or(0, |n| i32::try_from(n).unwrap_or(i32::MAX));
        Ok(if c == b'q' {
            Cmd::Quit(code)
        } else {
            Cmd::QuitSilent(code)
        })
    }

    /// `r`, `R`, `w`, `W` and their file name.
    fn file_command(&mut self, c: u8) -> PResult<Cmd> {
        if c == b'r' || c == b'R' {
            if self.sandbox {
                return self.fail("e/r/w commands disabled in sandbox mode");
            }
            let name = self.word(false);
            if name.is_empty() {
                return self.fail("missing filename in r/R/w/W commands");
            }
            return Ok(if c == b'r' {
                Cmd::ReadFile(name)
            } else {
                Cmd::ReadLine(name)
            });
        }
        let name = self.word(false);
        let k = self.wfile(name)?;
        Ok(if c == b'w' {
            Cmd::WriteFile(k)
        } else {
            Cmd::WriteFirst(k)
        })
    }

    /// Points each `b`, `t`, `T` at its label (or the end of the script when it has none).
    fn resolve_branches(&mut self) -> PResult<()> {
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
        Ok(())
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
pub(super) fn parse_script(script: &[u8], syntax: Syntax, sandbox: bool) -> PResult<Program> {
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
