//! The execution cycle: each input line goes through the script's commands (addresses
//! selected, ranges tracked), with the hold space, the queued `a`/`r`/`R` text, and the output
//! files of `w`.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, BufWriter, Write};

use regex::bytes::Regex;

use crate::util;

use super::Options;
use super::input::Input;
use super::replace::Subst;
use super::script::{Addr, Addr2, Cmd, Program};

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

/// What a command tells the cycle to do next.
enum Step {
    /// Go on with the next command.
    Next,
    /// Go on at this command index (a branch taken).
    Jump(usize),
    /// The cycle ends.
    End(Flow),
}

/// The runtime state.
pub(super) struct Exec<'p> {
    prog: &'p Program,
    opts: &'p Options,
    ranges: Vec<RangeState>,
    hold: Vec<u8>,
    pub(super) line_no: u64,
    last_re: Option<usize>,
    /// Set by a successful `s` since the last line was read or `t` taken.
    replaced: bool,
    /// Text queued by `a`, `r`, `R` for the end of the cycle.
    append: Vec<Vec<u8>>,
    /// The last output lacked its newline (the input's last line had none).
    pub(super) missing_newline: bool,
    wfiles: Vec<Option<BufWriter<File>>>,
    /// Readers for `R`.
    rfiles: HashMap<Vec<u8>, BufReader<File>>,
    /// Whether the current line had its delimiter.
    chomped: bool,
}

impl<'p> Exec<'p> {
    /// A run of `prog` with no line read yet (a `0,/re/` range starts active).
    pub(super) fn new(prog: &'p Program, opts: &'p Options) -> Self {
        let mut exec = Exec {
            prog,
            opts,
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
        exec
    }

    /// Creates (truncates) the output files of `w`, `W` and `s///w` before the first line, as
    /// GNU sed does; the error is the message for the first one that cannot be created.
    pub(super) fn open_wfiles(&mut self) -> Result<(), String> {
        for name in &self.prog.wfiles {
            if name == b"/dev/stdout" || name == b"/dev/stderr" {
                self.wfiles.push(None);
                continue;
            }
            match File::create(util::bytes_osstr(name)) {
                Ok(f) => self.wfiles.push(Some(BufWriter::new(f))),
                Err(e) => {
                    return Err(format!(
                        "couldn't open file {}: {}",
                        String::from_utf8_lossy(name),
                        util::io_msg(&e)
                    ));
                }
            }
        }
        Ok(())
    }

    /// Flushes the output files (errors ignored, as the output already went out).
    pub(super) fn flush_wfiles(&mut self) {
        for w in self.wfiles.iter_mut().flatten() {
            let _ = w.flush();
        }
    }

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

    /// Runs `s`: on a replacement, sets the `t` flag and prints / writes as its flags say.
    fn substitute(&mut self, s: &Subst, ps: &mut Vec<u8>, out: &mut dyn Write) -> io::Result<()> {
        let re = self.regex(s.re)?;
        if !s.apply(re, ps) {
            return Ok(());
        }
        self.replaced = true;
        if s.print {
            let data = ps.clone();
            self.emit(out, &data, true)?;
        }
        if let Some(w) = s.write {
            let data = ps.clone();
            self.write_file(w, &data, out)?;
        }
        Ok(())
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

    /// Writes `text` and a newline, after `fix` when the previous output lacked its newline
    /// (`i`, `c`, `=`, `F`).
    fn write_text_line(&mut self, out: &mut dyn Write, fix: u8, text: &[u8]) -> io::Result<()> {
        if self.missing_newline {
            out.write_all(&[fix])?;
            self.missing_newline = false;
        }
        out.write_all(text)?;
        out.write_all(b"\n")
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
            match self.execute(pc, ps, input, out, err)? {
                Step::Next => pc += 1,
                Step::Jump(target) => pc = target,
                Step::End(flow) => return Ok(flow),
            }
        }
        Ok(Flow::EndCycle)
    }

    /// Runs the command at `pc`, which its address selected, on the pattern space `ps`.
    fn execute(
        &mut self,
        pc: usize,
        ps: &mut Vec<u8>,
        input: &mut Input<'_>,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> io::Result<Step> {
        let prog = self.prog;
        match &prog.cmds[pc].cmd {
            Cmd::Block(_) | Cmd::EndBlock | Cmd::Label => {}
            Cmd::Subst(s) => self.substitute(s, ps, out)?,
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
            Cmd::Delete => return Ok(Step::End(Flow::Delete)),
            Cmd::DeleteFirst => match ps.iter().position(|&b| b == b'\n') {
                None => return Ok(Step::End(Flow::Delete)),
                Some(nl) => {
                    ps.drain(..=nl);
                    return Ok(Step::End(Flow::Restart));
                }
            },
            Cmd::Next => return self.read_next(false, ps, input, out, err),
            Cmd::NextAppend => return self.read_next(true, ps, input, out, err),
            Cmd::Quit(code) => return Ok(Step::End(Flow::Quit(*code))),
            Cmd::QuitSilent(code) => return Ok(Step::End(Flow::QuitSilent(*code))),
            Cmd::LineNo => {
                let text = self.line_no.to_string().into_bytes();
                self.write_text_line(out, b'\n', &text)?;
            }
            // `a\` with nothing after it (end of script) has no text at all, not an empty line.
            Cmd::Append(text) if text.is_empty() => {}
            Cmd::Insert(text) if text.is_empty() => {}
            Cmd::Append(text) => {
                let mut t = text.clone();
                t.push(b'\n');
                self.append.push(t);
            }
            Cmd::Insert(text) => self.write_text_line(out, self.delim(), text)?,
            Cmd::Change(text) => {
                let c = &prog.cmds[pc];
                let mid_range = c.a2.is_some() && !c.negate && self.ranges[pc].active;
                if !mid_range && !text.is_empty() {
                    self.write_text_line(out, self.delim(), text)?;
                }
                return Ok(Step::End(Flow::Delete));
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
            Cmd::Branch(t) => return Ok(Step::Jump(*t)),
            // `t` and `T` reset the flag whether they jump or not.
            Cmd::BranchIfSub(t) => {
                if std::mem::take(&mut self.replaced) {
                    return Ok(Step::Jump(*t));
                }
            }
            Cmd::BranchIfNotSub(t) => {
                if !std::mem::take(&mut self.replaced) {
                    return Ok(Step::Jump(*t));
                }
            }
            Cmd::ReadFile(name) => {
                if let Ok(data) = fs::read(util::bytes_osstr(name)) {
                    self.append.push(data);
                }
            }
            Cmd::ReadLine(name) => self.queue_line_of(name),
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
                self.write_text_line(out, b'\n', &name)?;
            }
        }
        Ok(Step::Next)
    }

    /// `n` (`append` false: prints the pattern space unless quiet, then replaces it with the
    /// next line) and `N` (`append`: adds the next line after a newline). At the end of input
    /// both quit, autoprinting.
    fn read_next(
        &mut self,
        append: bool,
        ps: &mut Vec<u8>,
        input: &mut Input<'_>,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> io::Result<Step> {
        if input.is_last(err) {
            return Ok(Step::End(Flow::Quit(0)));
        }
        if !append && !self.quiet() {
            let data = ps.clone();
            self.emit(out, &data, self.chomped)?;
        }
        self.flush_append(out)?;
        if let Some((line, had)) = input.next_line(err) {
            if append {
                ps.push(b'\n');
                ps.extend_from_slice(&line);
            } else {
                *ps = line;
            }
            self.chomped = had;
            self.line_no += 1;
        }
        Ok(Step::Next)
    }

    /// `R FILE`: queues the file's next line (files stay open across cycles).
    fn queue_line_of(&mut self, name: &[u8]) {
        if !self.rfiles.contains_key(name)
            && let Ok(f) = File::open(util::bytes_osstr(name))
        {
            self.rfiles.insert(name.to_vec(), BufReader::new(f));
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

    fn quiet(&self) -> bool {
        self.opts.quiet || self.prog.quiet
    }

    /// Processes a whole input stream. Returns `Some(code)` when a `q`/`Q` ended everything.
    pub(super) fn stream(
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
