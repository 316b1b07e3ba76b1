//! `find`: this project's own implementation of the common GNU findutils `find` (uutils
//! findutils has no WASI build in a released version).
//!
//! Starting points are the arguments before the first one that begins with `-` or is `(` or `!`
//! (default `.`). Expression: tests `-name -iname -path -ipath -wholename -iwholename -regex
//! -iregex -type -empty -newer -size -mtime -mmin -true -false`, actions `-print -print0 -printf
//! -prune -quit -delete`, options `-maxdepth -mindepth -depth -regextype -xdev -mount -noleaf
//! -follow`, operators `( ) ! -not -a -and -o -or ,` with GNU precedence (`!` binds tightest, then
//! `-a` (also implicit), then `-o`, then `,`). When the expression has no action other than
//! `-prune`, `-print` is applied to everything it matches. `-exec`, `-execdir`, `-ok` and `-okdir`
//! are rejected: a WASI guest cannot start other programs (the agent's shell runs `find ...
//! -exec` itself, with this find listing the files: crates/agent-wasi/src/shell/find_exec.rs).
//!
//! Order: a directory is listed before its entries (after them with `-depth` or `-delete`), and
//! the entries of a directory are visited **sorted by name** (bytewise). GNU find uses the
//! directory's own order, which depends on the file system, so the output matches GNU's only up
//! to that order. Symbolic links are not followed (`-P`) unless `-L`/`-follow` is given; `-H`
//! follows those on the command line.
//!
//! Exit status: 0, or 1 when any error occurred (a missing starting point, an unreadable
//! directory, a bad expression).

use std::ffi::OsString;
use std::fs::{self, Metadata};
use std::io::{self, BufWriter, Write};
use std::time::SystemTime;

use crate::fnmatch::fnmatch;
use crate::posix_re::{self, Syntax};
use crate::util;

/// A file type letter of `-type`.
fn type_letter(m: &Metadata) -> u8 {
    let ft = m.file_type();
    if ft.is_symlink() {
        b'l'
    } else if ft.is_dir() {
        b'd'
    } else if ft.is_file() {
        b'f'
    } else {
        other_type_letter(&ft)
    }
}

#[cfg(unix)]
fn other_type_letter(ft: &fs::FileType) -> u8 {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_block_device() {
        b'b'
    } else if ft.is_char_device() {
        b'c'
    } else if ft.is_fifo() {
        b'p'
    } else if ft.is_socket() {
        b's'
    } else {
        b'U'
    }
}

/// On WASI the standard library's device/socket tests are unstable: such files report `U`.
#[cfg(not(unix))]
fn other_type_letter(_ft: &fs::FileType) -> u8 {
    b'U'
}

/// A numeric comparison of `-size`, `-mtime`, `-mmin`: `+N`, `-N` or `N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    More(u64),
    Less(u64),
    Exactly(u64),
}

impl Cmp {
    fn parse(s: &str) -> Option<Self> {
        let (ctor, digits): (fn(u64) -> Cmp, &str) = if let Some(d) = s.strip_prefix('+') {
            (Cmp::More, d)
        } else if let Some(d) = s.strip_prefix('-') {
            (Cmp::Less, d)
        } else {
            (Cmp::Exactly, s)
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(ctor(digits.parse().ok()?))
    }

    fn test(self, v: u64) -> bool {
        match self {
            Cmp::More(n) => v > n,
            Cmp::Less(n) => v < n,
            Cmp::Exactly(n) => v == n,
        }
    }
}

/// One node of the expression.
#[derive(Debug)]
enum Expr {
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Comma(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    True,
    False,
    Name(Vec<u8>, bool),
    Path(Vec<u8>, bool),
    Regex(regex::bytes::Regex),
    Type(Vec<u8>),
    Empty,
    Newer(SystemTime),
    /// Size comparison in units of the given byte count.
    Size(Cmp, u64),
    /// Age comparison in units of the given number of seconds.
    Age(Cmp, u64),
    Print,
    Print0,
    Printf(Vec<u8>),
    Prune,
    Quit,
    Delete,
}

/// Global options collected while parsing.
#[derive(Debug, Clone, Copy)]
struct Globals {
    maxdepth: usize,
    mindepth: usize,
    depth_first: bool,
    follow: Follow,
}

/// Which symbolic links are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Follow {
    Never,
    CommandLine,
    Always,
}

/// Expression parser over the argument tokens.
struct Parser<'a> {
    toks: &'a [OsString],
    i: usize,
    g: Globals,
    has_action: bool,
    regextype: Syntax,
    regex_emacs: bool,
}

type PResult<T> = Result<T, String>;

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.toks
            .get(self.i)
            .map(|t| t.to_str().unwrap_or("\u{fffd}"))
    }

    fn arg(&mut self, pred: &str) -> PResult<OsString> {
        let Some(a) = self.toks.get(self.i) else {
            return Err(format!("missing argument to `{pred}'"));
        };
        self.i += 1;
        Ok(a.clone())
    }

    fn parse(&mut self) -> PResult<Expr> {
        let e = self.comma()?;
        if let Some(t) = self.peek() {
            if t == ")" {
                return Err("invalid expression; you have too many ')'".into());
            }
            return Err(format!("paths must precede expression: `{t}'"));
        }
        Ok(e)
    }

    fn comma(&mut self) -> PResult<Expr> {
        let mut left = self.or()?;
        while self.peek() == Some(",") {
            self.i += 1;
            let right = self.or()?;
            left = Expr::Comma(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn or(&mut self) -> PResult<Expr> {
        let mut left = self.and()?;
        while matches!(self.peek(), Some("-o" | "-or")) {
            self.i += 1;
            if matches!(
                self.peek(),
                None | Some(")" | "," | "-o" | "-or" | "-a" | "-and")
            ) {
                return Err("invalid expression; you have used a binary operator '-o' with nothing after it.".into());
            }
            let right = self.and()?;
            left = Expr::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> PResult<Expr> {
        let mut left = self.unary()?;
        loop {
            match self.peek() {
                Some("-a" | "-and") => {
                    self.i += 1;
                    if matches!(
                        self.peek(),
                        None | Some(")" | "," | "-o" | "-or" | "-a" | "-and")
                    ) {
                        return Err("invalid expression; you have used a binary operator '-a' with nothing after it.".into());
                    }
                }
                Some(")" | "," | "-o" | "-or") | None => return Ok(left),
                Some(_) => {}
            }
            let right = self.unary()?;
            left = Expr::And(Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> PResult<Expr> {
        match self.peek() {
            Some("!" | "-not") => {
                self.i += 1;
                if matches!(
                    self.peek(),
                    None | Some(")" | "," | "-o" | "-or" | "-a" | "-and")
                ) {
                    return Err("invalid expression; '!' with nothing after it".into());
                }
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            Some("(") => {
                self.i += 1;
                if self.peek() == Some(")") {
                    return Err("invalid expression; empty parentheses are not allowed.".into());
                }
                let e = self.comma()?;
                if self.peek() != Some(")") {
                    return Err("invalid expression; I was expecting to find a ')' somewhere but did not see one.".into());
                }
                self.i += 1;
                Ok(e)
            }
            Some(_) => self.primary(),
            None => Err("invalid expression".into()),
        }
    }

    fn number(&mut self, pred: &str) -> PResult<usize> {
        let a = self.arg(pred)?;
        a.to_str()
            .and_then(|s| s.parse::<usize>().ok())
            .ok_or_else(|| {
                format!(
                    "Expected a positive decimal integer argument to {pred}, but got `{}'",
                    a.to_string_lossy()
                )
            })
    }

    fn primary(&mut self) -> PResult<Expr> {
        let tok = self.peek().unwrap_or_default().to_owned();
        self.i += 1;
        let e = match tok.as_str() {
            "-name" | "-iname" => {
                let p = self.arg(&tok)?;
                Expr::Name(util::os_bytes(&p).to_vec(), tok == "-iname")
            }
            "-path" | "-wholename" | "-ipath" | "-iwholename" => {
                let p = self.arg(&tok)?;
                Expr::Path(util::os_bytes(&p).to_vec(), tok.starts_with("-i"))
            }
            "-regex" | "-iregex" => {
                let p = self.arg(&tok)?;
                let pat = util::os_bytes(&p);
                let pat = if self.regex_emacs {
                    emacs_to_bre(pat)
                } else {
                    pat.to_vec()
                };
                let t = posix_re::translate(&pat, self.regextype, false).map_err(|e| e.0)?;
                let re = posix_re::compile(&format!("^(?:{t})$"), tok == "-iregex", false, true)
                    .map_err(|e| e.0)?;
                Expr::Regex(re)
            }
            "-regextype" => {
                let t = self.arg(&tok)?;
                match t.to_str() {
                    Some("emacs" | "findutils-default") => {
                        self.regextype = Syntax::Basic;
                        self.regex_emacs = true;
                    }
                    Some("posix-basic" | "ed" | "sed" | "grep") => {
                        self.regextype = Syntax::Basic;
                        self.regex_emacs = false;
                    }
                    Some("posix-extended" | "egrep" | "posix-egrep" | "awk" | "posix-awk") => {
                        self.regextype = Syntax::Extended;
                        self.regex_emacs = false;
                    }
                    _ => {
                        return Err(format!(
                            "Unknown regular expression type `{}'",
                            t.to_string_lossy()
                        ));
                    }
                }
                Expr::True
            }
            "-type" => {
                let t = self.arg(&tok)?;
                let letters: Vec<u8> = util::os_bytes(&t)
                    .split(|&b| b == b',')
                    .map(|s| match s {
                        [c @ (b'f' | b'd' | b'l' | b'b' | b'c' | b'p' | b's' | b'D')] => Ok(*c),
                        _ => Err(format!(
                            "Unknown argument to -type: {}",
                            String::from_utf8_lossy(s)
                        )),
                    })
                    .collect::<PResult<_>>()?;
                Expr::Type(letters)
            }
            "-empty" => Expr::Empty,
            "-true" => Expr::True,
            "-false" => Expr::False,
            "-newer" => {
                let f = self.arg(&tok)?;
                let m = fs::metadata(&f)
                    .and_then(|m| m.modified())
                    .map_err(|e| format!("'{}': {}", f.to_string_lossy(), util::io_msg(&e)))?;
                Expr::Newer(m)
            }
            "-size" => {
                let a = self.arg(&tok)?;
                let s = a.to_string_lossy().into_owned();
                let (num, unit) = match s.as_bytes().last() {
                    Some(b'c') => (&s[..s.len() - 1], 1),
                    Some(b'w') => (&s[..s.len() - 1], 2),
                    Some(b'b') => (&s[..s.len() - 1], 512),
                    Some(b'k') => (&s[..s.len() - 1], 1024),
                    Some(b'M') => (&s[..s.len() - 1], 1 << 20),
                    Some(b'G') => (&s[..s.len() - 1], 1 << 30),
                    _ => (s.as_str(), 512),
                };
                let cmp = Cmp::parse(num).ok_or_else(|| format!("invalid -size argument `{s}'"))?;
                Expr::Size(cmp, unit)
            }
            "-mtime" | "-mmin" => {
                let a = self.arg(&tok)?;
                let s = a.to_string_lossy().into_owned();
                let cmp =
                    Cmp::parse(&s).ok_or_else(|| format!("invalid argument `{s}' to `{tok}'"))?;
                Expr::Age(cmp, if tok == "-mtime" { 86_400 } else { 60 })
            }
            "-maxdepth" => {
                self.g.maxdepth = self.number(&tok)?;
                Expr::True
            }
            "-mindepth" => {
                self.g.mindepth = self.number(&tok)?;
                Expr::True
            }
            "-depth" | "-d" => {
                self.g.depth_first = true;
                Expr::True
            }
            "-follow" => {
                self.g.follow = Follow::Always;
                Expr::True
            }
            "-xdev"
            | "-mount"
            | "-noleaf"
            | "-ignore_readdir_race"
            | "-noignore_readdir_race"
            | "-nowarn"
            | "-warn" => Expr::True,
            "-print" => {
                self.has_action = true;
                Expr::Print
            }
            "-print0" => {
                self.has_action = true;
                Expr::Print0
            }
            "-printf" => {
                self.has_action = true;
                let f = self.arg(&tok)?;
                Expr::Printf(util::os_bytes(&f).to_vec())
            }
            "-prune" => Expr::Prune,
            "-quit" => {
                self.has_action = true;
                Expr::Quit
            }
            "-delete" => {
                self.has_action = true;
                self.g.depth_first = true;
                Expr::Delete
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                return Err(format!(
                    "{tok} is not supported in this environment: running other commands is not possible"
                ));
            }
            _ => {
                if tok.starts_with('-') {
                    return Err(format!("unknown predicate `{tok}'"));
                }
                return Err(format!("paths must precede expression: `{tok}'"));
            }
        };
        Ok(e)
    }
}

/// Emacs regex syntax (find's default) to POSIX BRE: `+` and `?` are operators unescaped and
/// literal when escaped; `\{`, `\}` are literal braces... everything else is BRE-like.
fn emacs_to_bre(p: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(p.len() + 4);
    let mut i = 0;
    let mut in_bracket = false;
    while i < p.len() {
        let c = p[i];
        if in_bracket {
            out.push(c);
            if c == b']' {
                in_bracket = false;
            }
            i += 1;
            continue;
        }
        match c {
            b'[' => {
                in_bracket = true;
                out.push(c);
                i += 1;
                // A leading `^` and `]` belong to the bracket.
                if p.get(i) == Some(&b'^') {
                    out.push(b'^');
                    i += 1;
                }
                if p.get(i) == Some(&b']') {
                    out.push(b']');
                    i += 1;
                }
                continue;
            }
            b'+' | b'?' => {
                out.push(b'\\');
                out.push(c);
            }
            b'\\' if i + 1 < p.len() => {
                let d = p[i + 1];
                match d {
                    b'+' | b'?' => out.push(d),
                    b'{' | b'}' => {
                        out.push(b'\\');
                        out.push(d);
                    }
                    _ => {
                        out.push(b'\\');
                        out.push(d);
                    }
                }
                i += 2;
                continue;
            }
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

/// One visited file.
struct Entry<'a> {
    /// The path as printed.
    path: &'a [u8],
    /// The starting point it was found under.
    start: &'a [u8],
    depth: usize,
    meta: &'a Metadata,
}

impl Entry<'_> {
    /// The base name used by `-name` (trailing slashes removed; `/` stays `/`).
    fn name(&self) -> &[u8] {
        let mut p = self.path;
        while p.len() > 1 && p.ends_with(b"/") {
            p = &p[..p.len() - 1];
        }
        if p == b"/" {
            return p;
        }
        match p.iter().rposition(|&b| b == b'/') {
            Some(k) => &p[k + 1..],
            None => p,
        }
    }

    fn dirname(&self) -> &[u8] {
        let p = self.path;
        match p.iter().rposition(|&b| b == b'/') {
            Some(0) => b"/",
            Some(k) => &p[..k],
            None => b".",
        }
    }
}

/// The walker and evaluator.
struct Find<'o> {
    g: Globals,
    expr: Expr,
    default_print: bool,
    out: &'o mut dyn Write,
    err: &'o mut dyn Write,
    now: SystemTime,
    failed: bool,
    quit: bool,
    /// Set by `-prune` for the entry being evaluated.
    pruned: bool,
}

impl Find<'_> {
    fn error(&mut self, path: &[u8], e: &io::Error) {
        self.failed = true;
        let _ = writeln!(
            self.err,
            "find: '{}': {}",
            String::from_utf8_lossy(path),
            util::io_msg(e)
        );
    }

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

    fn visit(&mut self, path: &[u8], start: &[u8], depth: usize) -> io::Result<()> {
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

/// Expands a `-printf` format for one entry.
fn printf(f: &[u8], en: &Entry<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < f.len() {
        let c = f[i];
        i += 1;
        match c {
            b'\\' if i < f.len() => {
                let d = f[i];
                i += 1;
                match d {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'a' => out.push(0x07),
                    b'b' => out.push(0x08),
                    b'f' => out.push(0x0c),
                    b'v' => out.push(0x0b),
                    b'0'..=b'7' => {
                        let mut v = u32::from(d - b'0');
                        let mut k = 0;
                        while k < 2 && i < f.len() && (b'0'..=b'7').contains(&f[i]) {
                            v = v * 8 + u32::from(f[i] - b'0');
                            i += 1;
                            k += 1;
                        }
                        out.push(u8::try_from(v & 0xff).unwrap_or(0));
                    }
                    b'\\' => out.push(b'\\'),
                    b'c' => return out,
                    _ => {
                        out.push(b'\\');
                        out.push(d);
                    }
                }
            }
            b'%' if i < f.len() => {
                let d = f[i];
                i += 1;
                match d {
                    b'%' => out.push(b'%'),
                    b'p' => out.extend_from_slice(en.path),
                    b'f' => out.extend_from_slice(en.name()),
                    b'h' => out.extend_from_slice(en.dirname()),
                    b'H' => out.extend_from_slice(en.start),
                    b'P' => {
                        let rest = en.path.strip_prefix(en.start).unwrap_or(en.path);
                        let rest = rest.strip_prefix(b"/").unwrap_or(rest);
                        out.extend_from_slice(rest);
                    }
                    b'd' => out.extend_from_slice(en.depth.to_string().as_bytes()),
                    b's' => out.extend_from_slice(en.meta.len().to_string().as_bytes()),
                    b'y' => out.push(type_letter(en.meta)),
                    _ => {
                        out.push(b'%');
                        out.push(d);
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// Entry point: `args[0]` is the program name.
pub fn main(args: Vec<OsString>) -> i32 {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let status = run(&args[1.min(args.len())..], &mut out, &mut io::stderr());
    match out.flush() {
        Ok(()) => status,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => status,
        Err(e) => {
            let _ = writeln!(io::stderr(), "find: write error: {}", util::io_msg(&e));
            1
        }
    }
}

/// Runs find with the arguments after the program name. Returns the exit status.
pub fn run(args: &[OsString], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut i = 0;
    let mut follow = Follow::Never;
    while let Some(a) = args.get(i) {
        match a.to_str() {
            Some("-P") => follow = Follow::Never,
            Some("-L") => follow = Follow::Always,
            Some("-H") => follow = Follow::CommandLine,
            Some("--help") => {
                let _ = writeln!(
                    out,
                    "Usage: find [-H] [-L] [-P] [starting-point...] [expression]"
                );
                return 0;
            }
            Some("--version") => {
                let _ = writeln!(out, "find (guest-coreutils) {}", env!("CARGO_PKG_VERSION"));
                return 0;
            }
            Some("--") => {
                i += 1;
                break;
            }
            _ => break,
        }
        i += 1;
    }
    let mut paths: Vec<Vec<u8>> = Vec::new();
    while let Some(a) = args.get(i) {
        let b = util::os_bytes(a);
        if (b.first() == Some(&b'-') && b.len() > 1) || b == b"(" || b == b"!" {
            break;
        }
        paths.push(b.to_vec());
        i += 1;
    }
    if paths.is_empty() {
        paths.push(b".".to_vec());
    }
    let mut p = Parser {
        toks: &args[i..],
        i: 0,
        g: Globals {
            maxdepth: usize::MAX,
            mindepth: 0,
            depth_first: false,
            follow,
        },
        has_action: false,
        regextype: Syntax::Basic,
        regex_emacs: true,
    };
    let expr = if args.len() > i {
        match p.parse() {
            Ok(e) => e,
            Err(m) => {
                let _ = writeln!(err, "find: {m}");
                return 1;
            }
        }
    } else {
        Expr::True
    };
    let mut f = Find {
        g: p.g,
        expr,
        default_print: !p.has_action,
        out,
        err,
        now: SystemTime::now(),
        failed: false,
        quit: false,
        pruned: false,
    };
    for path in &paths {
        if path.is_empty() {
            f.error(path, &io::Error::from(io::ErrorKind::NotFound));
            continue;
        }
        if let Err(e) = f.visit(path, path, 0) {
            let _ = writeln!(f.err, "find: write error: {}", util::io_msg(&e));
            return 1;
        }
        if f.quit {
            break;
        }
    }
    i32::from(f.failed)
}

#[cfg(test)]
mod tests;
