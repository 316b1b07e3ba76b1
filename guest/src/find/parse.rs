//! The expression parser: the arguments after the starting points → an [`Expr`], with GNU's
//! precedence (`!`, then `-a` (also implicit), then `-o`, then `,`), and the global options
//! (`-maxdepth`, `-depth`, ...) collected on the way.

use std::ffi::OsString;
use std::fs;

use crate::posix_re::{self, Syntax};
use crate::util;

use super::expr::{Cmp, Expr};
use super::{Follow, Globals};

/// Expression parser over the argument tokens.
struct Parser<'a> {
    toks: &'a [OsString],
    i: usize,
    g: Globals,
    has_action: bool,
    regextype: Syntax,
    regex_emacs: bool,
}

pub(super) type PResult<T> = Result<T, String>;

/// A parsed expression and what parsing it set.
pub(super) struct Parsed {
    /// The expression (`-true` when there is none).
    pub(super) expr: Expr,
    /// The global options, the symbolic-link mode of the command line included.
    pub(super) globals: Globals,
    /// Whether an action other than `-prune` appears (else `-print` is implied).
    pub(super) has_action: bool,
}

/// Parses the expression `toks` (possibly empty); `follow` is the mode of `-H`/`-L`/`-P`.
pub(super) fn parse_expression(toks: &[OsString], follow: Follow) -> PResult<Parsed> {
    let mut p = Parser {
        toks,
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
    let expr = if toks.is_empty() {
        Expr::True
    } else {
        p.parse()?
    };
    Ok(Parsed {
        expr,
        globals: p.g,
        has_action: p.has_action,
    })
}

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

    /// A test, option or action, with its arguments.
    fn primary(&mut self) -> PResult<Expr> {
        let tok = self.peek().unwrap_or_default().to_owned();
        self.i += 1;
        if let Some(e) = self.test(&tok)? {
            return Ok(e);
        }
        if let Some(e) = self.option(&tok)? {
            return Ok(e);
        }
        if let Some(e) = self.action(&tok)? {
            return Ok(e);
        }
        if matches!(tok.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            return Err(format!(
                "{tok} is not supported in this environment: running other commands is not possible"
            ));
        }
        if tok.starts_with('-') {
            return Err(format!("unknown predicate `{tok}'"));
        }
        Err(format!("paths must precede expression: `{tok}'"))
    }

    /// The tests: `-name`, `-path`, `-regex`, `-type`, `-size`, `-mtime`, ... (`None`: `tok`
    /// is not one).
    fn test(&mut self, tok: &str) -> PResult<Option<Expr>> {
        Ok(Some(match tok {
            "-name" | "-iname" => {
                let p = self.arg(tok)?;
                Expr::Name(util::os_bytes(&p).to_vec(), tok == "-iname")
            }
            "-path" | "-wholename" | "-ipath" | "-iwholename" => {
                let p = self.arg(tok)?;
                Expr::Path(util::os_bytes(&p).to_vec(), tok.starts_with("-i"))
            }
            "-regex" | "-iregex" => self.regex(tok)?,
            "-type" => self.file_type(tok)?,
            "-empty" => Expr::Empty,
            "-true" => Expr::True,
            "-false" => Expr::False,
            "-newer" => {
                let f = self.arg(tok)?;
                let m = fs::metadata(&f)
                    .and_then(|m| m.modified())
                    .map_err(|e| format!("'{}': {}", f.to_string_lossy(), util::io_msg(&e)))?;
                Expr::Newer(m)
            }
            "-size" => self.size(tok)?,
            "-mtime" | "-mmin" => {
                let a = self.arg(tok)?;
                let s = a.to_string_lossy().into_owned();
                let cmp =
                    Cmp::parse(&s).ok_or_else(|| format!("invalid argument `{s}' to `{tok}'"))?;
                Expr::Age(cmp, if tok == "-mtime" { 86_400 } else { 60 })
            }
            _ => return Ok(None),
        }))
    }

    /// `-regex` / `-iregex PATTERN`, in the dialect `-regextype` chose; it must match the
    /// whole path.
    fn regex(&mut self, tok: &str) -> PResult<Expr> {
        let p = self.arg(tok)?;
        let pat = util::os_bytes(&p);
        let pat = if self.regex_emacs {
            emacs_to_bre(pat)
        } else {
            pat.to_vec()
        };
        let t = posix_re::translate(&pat, self.regextype, false).map_err(|e| e.0)?;
        let re = posix_re::compile(&format!("^(?:{t})$"), tok == "-iregex", false, true)
            .map_err(|e| e.0)?;
        Ok(Expr::Regex(re))
    }

    /// `-type LETTERS`: one letter, or several separated by commas.
    fn file_type(&mut self, tok: &str) -> PResult<Expr> {
        let t = self.arg(tok)?;
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
        Ok(Expr::Type(letters))
    }

    /// `-size [+-]N[cwbkMG]` (the unit defaults to 512-byte blocks).
    fn size(&mut self, tok: &str) -> PResult<Expr> {
        let a = self.arg(tok)?;
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
        Ok(Expr::Size(cmp, unit))
    }

    /// The options, which hold wherever they are written and are always true: `-maxdepth`,
    /// `-depth`, `-regextype`, ... (`None`: `tok` is not one).
    fn option(&mut self, tok: &str) -> PResult<Option<Expr>> {
        match tok {
            "-regextype" => self.regextype(tok)?,
            "-maxdepth" => self.g.maxdepth = self.number(tok)?,
            "-mindepth" => self.g.mindepth = self.number(tok)?,
            "-depth" | "-d" => self.g.depth_first = true,
            "-follow" => self.g.follow = Follow::Always,
            "-xdev"
            | "-mount"
            | "-noleaf"
            | "-ignore_readdir_race"
            | "-noignore_readdir_race"
            | "-nowarn"
            | "-warn" => {}
            _ => return Ok(None),
        }
        Ok(Some(Expr::True))
    }

    /// `-regextype TYPE`: the dialect of the `-regex` tests after it.
    fn regextype(&mut self, tok: &str) -> PResult<()> {
        let t = self.arg(tok)?;
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
        Ok(())
    }

    /// The actions: `-print`, `-print0`, `-printf`, `-prune`, `-quit`, `-delete` (`None`:
    /// `tok` is not one). All but `-prune` turn off the implied `-print`.
    fn action(&mut self, tok: &str) -> PResult<Option<Expr>> {
        let e = match tok {
            "-print" => Expr::Print,
            "-print0" => Expr::Print0,
            "-printf" => {
                let f = self.arg(tok)?;
                Expr::Printf(util::os_bytes(&f).to_vec())
            }
            "-prune" => return Ok(Some(Expr::Prune)),
            "-quit" => Expr::Quit,
            "-delete" => {
                self.g.depth_first = true;
                Expr::Delete
            }
            _ => return Ok(None),
        };
        self.has_action = true;
        Ok(Some(e))
    }
}

/// Emacs regex syntax (find's default) to POSIX BRE: `+` and `?` are operators unescaped and
/// literal when escaped; `\{`, `\}` are literal braces... everything else is BRE-like.
pub(super) fn emacs_to_bre(p: &[u8]) -> Vec<u8> {
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
