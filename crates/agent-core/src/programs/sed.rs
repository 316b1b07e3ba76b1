//! GNU sed 4.9: its options and its scripts, as sed itself reads them.
//!
//! A sed script can write files (`w FILE`, `W FILE`, the `w FILE` flag of `s`), read them
//! (`r FILE`, `R FILE`) and run commands (`e`, the `e` flag of `s`), and `-i` writes a backup
//! next to (or, with a `/` or `*` in its suffix, away from) every file it edits. The script is
//! the value of every `-e` / `--expression` (joined by newlines, in order), or, without one,
//! the first operand; `-f FILE` reads it from a file, which cannot be checked.
//!
//! [`parse_script`] follows GNU sed's own compiler (`compile.c`: `compile_program`,
//! `match_slash`, `snarf_char_class`, `read_filename`, `read_label`, `read_text`): a regular
//! expression ends at the first unescaped delimiter outside a bracket expression (`s/[/]/x/`
//! is one command); a file name runs to the end of the line, `;` included; a label ends at a
//! blank, `;`, `}` or `#`; the text of `a`, `i`, `c` and `e` runs to an unescaped newline.
//! Anything it does not read exactly as sed would is an error, which callers treat as a
//! script that cannot be checked. `--posix` changes how sed reads brackets, so it is one too.
//!
//! Two readers use it: [`super::effects`] finds what any sed call writes, reads and runs
//! (whatever approved it), and `accept_edits.rs` decides, by allowlist, whether `acceptEdits`
//! may run the call as an edit inside the working directories.

use super::getopt::{Arg, OptTable, parse_args};
use crate::shell::Word;
use std::sync::OnceLock;

/// Every option of GNU sed 4.9, for reading any call.
const ALL_OPTIONS: &str = "n|--quiet|--silent --debug e=|--expression= f=P|--file=P \
    --follow-symlinks i?|--in-place? l=|--line-length= --posix E|r|--regexp-extended \
    s|--separate --sandbox u|--unbuffered z|--null-data b|--binary --help --version";

/// The options `acceptEdits` runs sed with: not `-f` (a script it cannot read), `--posix`
/// (another reading of brackets) or `--follow-symlinks` (`-i` would write where a link leads).
const EDIT_OPTIONS: &str = "n|--quiet|--silent --debug e=|--expression= i?|--in-place? \
    l=|--line-length= E|r|--regexp-extended s|--separate --sandbox u|--unbuffered \
    z|--null-data";

fn table(all: bool) -> &'static OptTable {
    static ALL: OnceLock<OptTable> = OnceLock::new();
    static EDIT: OnceLock<OptTable> = OnceLock::new();
    if all {
        ALL.get_or_init(|| OptTable::parse(ALL_OPTIONS, false))
    } else {
        EDIT.get_or_init(|| OptTable::parse(EDIT_OPTIONS, false))
    }
}

/// One command of a sed script, as far as the checks care.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `s/RE/REPLACEMENT/FLAGS`: whether the `e` flag runs the result, and the `w` flag's file.
    Substitute {
        /// The `e` flag: the pattern space is run as a command.
        execute: bool,
        /// The `w FILE` flag.
        write: Option<String>,
    },
    /// `w FILE` / `W FILE`.
    Write(String),
    /// `r FILE` / `R FILE`.
    Read(String),
    /// `e [COMMAND]`.
    Execute,
    /// Any other command (`p`, `d`, `y`, `a`, `b`, `{`, ...): none touches a file or a program.
    Other(char),
}

/// A sed call read as sed reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Call {
    /// The commands of its script.
    pub commands: Vec<Command>,
    /// The files it edits or reads (its operands after the script).
    pub files: Vec<Word>,
    /// `-i` / `--in-place`, with its suffix (empty: no backup).
    pub in_place: Option<String>,
}

impl Call {
    /// The backup `-i SUFFIX` makes of `file` ([`backup_name`]).
    pub fn backup_of(&self, file: &Word) -> Option<Word> {
        let suffix = self.in_place.as_deref().filter(|s| !s.is_empty())?;
        Some(Word {
            text: backup_name(&file.text, suffix),
            ..file.clone()
        })
    }

    /// Whether a command of the script runs a program (`e`, `s///e`).
    pub fn runs(&self) -> Option<&Command> {
        self.commands.iter().find(|c| {
            matches!(
                c,
                Command::Execute | Command::Substitute { execute: true, .. }
            )
        })
    }

    /// The files the script writes (`w`, `W`, `s///w`).
    pub fn writes(&self) -> impl Iterator<Item = &str> {
        self.commands.iter().filter_map(|c| match c {
            Command::Write(f) | Command::Substitute { write: Some(f), .. } => Some(f.as_str()),
            _ => None,
        })
    }

    /// The files the script reads (`r`, `R`).
    pub fn reads(&self) -> impl Iterator<Item = &str> {
        self.commands.iter().filter_map(|c| match c {
            Command::Read(f) => Some(f.as_str()),
            _ => None,
        })
    }
}

/// The name of the backup GNU sed 4.9 makes of `file` (as the command line names it) with
/// `-i SUFFIX` (`get_backup_file_name`): each `*` of the suffix is replaced by the file's name
/// as given, directories included (`-i'bak/*'` backs `d/f` up as `bak/d/f`, `-i'old_*'` as
/// `old_d/f`), so a suffix with a `/` or `*` names a path of its own, from the working
/// directory; without a `*`, the suffix is appended (`d/f.bak`).
pub fn backup_name(file: &str, suffix: &str) -> String {
    if suffix.contains('*') {
        suffix.replace('*', file)
    } else {
        format!("{file}{suffix}")
    }
}

/// Reads a sed call (`args`: the words after `sed`) with every option sed has.
///
/// # Errors
/// Why the call cannot be checked: an option sed would not read as listed, a script read from
/// a file or only known at run time, `--posix`, or a script that does not parse.
pub fn read(args: &[Word]) -> Result<Call, String> {
    read_with(table(true), args)
}

/// The files a sed call edits or reads, when `acceptEdits` may run it: only the options of
/// its list, a script of commands that neither write other files, read them nor run
/// programs, and a `-i` suffix that keeps the backup next to the file (no `/`, no `*`).
///
/// # Errors
/// Why the call is not an in-place edit of its own files.
pub(crate) fn accept_edits(args: &[Word]) -> Result<Vec<Word>, String> {
    let call = read_with(table(false), args)?;
    if let Some(c) = call.commands.iter().find(|c| !is_harmless(c)) {
        return Err(format!("its script {}", describe(c)));
    }
    if let Some(suffix) = call.in_place.as_deref()
        && suffix.contains(['/', '*'])
    {
        return Err(format!(
            "`-i{suffix}` puts the backup elsewhere than next to the file"
        ));
    }
    Ok(call.files)
}

fn is_harmless(c: &Command) -> bool {
    match c {
        Command::Substitute { execute, write } => !execute && write.is_none(),
        Command::Other(_) => true,
        Command::Write(_) | Command::Read(_) | Command::Execute => false,
    }
}

/// What a command does, for a reason.
pub fn describe(c: &Command) -> String {
    match c {
        Command::Substitute { execute: true, .. } => {
            "runs the result of `s///e` as a command".to_owned()
        }
        Command::Substitute { write: Some(f), .. } => format!("writes `{f}` (`s///w`)"),
        Command::Write(f) => format!("writes `{f}`"),
        Command::Read(f) => format!("reads `{f}`"),
        Command::Execute => "runs a command (`e`)".to_owned(),
        Command::Substitute { .. } | Command::Other(_) => "only edits text".to_owned(),
    }
}

fn read_with(table: &OptTable, args: &[Word]) -> Result<Call, String> {
    let parsed = parse_args(table, args).map_err(|e| format!("`sed`: {e}"))?;
    let mut scripts = Vec::new();
    let mut operands = Vec::new();
    let mut call = Call::default();
    let mut exits = false;
    for a in parsed {
        match a {
            Arg::Opt(o, v) if o.long.contains(&"expression") => scripts.extend(v),
            Arg::Opt(o, _) if o.long.contains(&"file") => {
                return Err(
                    "`sed -f` reads its script from a file, which cannot be checked".into(),
                );
            }
            Arg::Opt(o, _) if o.long.contains(&"posix") => {
                return Err("`sed --posix` reads brackets in its script another way".into());
            }
            Arg::Opt(o, v) if o.long.contains(&"in-place") => {
                call.in_place = Some(v.map(|w| w.text).unwrap_or_default());
            }
            // sed prints its help or version and exits before it runs a script; one that is
            // given is still read, and checked like any other.
            Arg::Opt(o, _) if o.long.iter().any(|l| matches!(*l, "help" | "version")) => {
                exits = true;
            }
            Arg::Opt(..) => {}
            Arg::Operand(w) => operands.push(w.clone()),
        }
    }
    if exits && scripts.is_empty() && operands.is_empty() {
        return Ok(Call::default());
    }
    let mut operands = operands.into_iter();
    if scripts.is_empty() {
        scripts.push(
            operands
                .next()
                .ok_or_else(|| "`sed` without a script".to_owned())?,
        );
    }
    if let Some(w) = scripts.iter().find(|w| !w.is_static()) {
        return Err(format!(
            "the sed script `{}` is only known at run time",
            w.raw
        ));
    }
    let text: Vec<&str> = scripts.iter().map(|w| w.text.as_str()).collect();
    call.commands = parse_script(&text.join("\n"))?;
    call.files = operands.collect();
    Ok(call)
}

/// Reads a sed script as GNU sed compiles it (see the module documentation).
///
/// # Errors
/// Where the script does not parse, or is read differently by sed.
pub fn parse_script(script: &str) -> Result<Vec<Command>, String> {
    let mut p = Reader {
        chars: script.chars().collect(),
        at: 0,
    };
    let mut out = Vec::new();
    let mut depth = 0usize;
    loop {
        while p
            .peek()
            .is_some_and(|c| c == ';' || c.is_ascii_whitespace())
        {
            p.at += 1;
        }
        if p.peek().is_none() {
            break;
        }
        let addressed = p.address()?;
        if addressed {
            p.blanks();
            if p.peek() == Some(',') {
                p.at += 1;
                p.blanks();
                if !p.address()? {
                    return Err(p.error("an address after `,`"));
                }
            }
        }
        p.blanks();
        if p.peek() == Some('!') {
            p.at += 1;
            p.blanks();
        }
        let Some(c) = p.next() else {
            return Err(p.error("a command"));
        };
        match c {
            '#' => while p.next().is_some_and(|c| c != '\n') {},
            'v' | ':' | 'b' | 't' | 'T' => {
                p.label();
                out.push(Command::Other(c));
            }
            '{' => {
                depth += 1;
                out.push(Command::Other(c));
            }
            '}' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| p.error("no `}` without its `{`"))?;
                p.end_of_command()?;
                out.push(Command::Other(c));
            }
            'e' => {
                p.blanks();
                if p.peek().is_some_and(|c| c != '\n') {
                    p.text();
                }
                out.push(Command::Execute);
            }
            'a' | 'i' | 'c' => {
                p.blanks();
                if p.peek().is_none() {
                    return Err(p.error("text after `a`, `i` or `c`"));
                }
                p.text();
                out.push(Command::Other(c));
            }
            'q' | 'Q' | 'l' | 'L' => {
                p.blanks();
                p.digits();
                p.end_of_command()?;
                out.push(Command::Other(c));
            }
            '=' | 'd' | 'D' | 'F' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'z' | 'x' => {
                p.end_of_command()?;
                out.push(Command::Other(c));
            }
            'r' | 'R' => out.push(Command::Read(p.file_name()?)),
            'w' | 'W' => out.push(Command::Write(p.file_name()?)),
            's' => out.push(p.substitute()?),
            'y' => {
                let delim = p.delimiter()?;
                p.delimited(delim, false)?;
                p.delimited(delim, false)?;
                p.end_of_command()?;
                out.push(Command::Other(c));
            }
            other => return Err(p.error(&format!("a command, not `{other}`"))),
        }
    }
    if depth > 0 {
        return Err("the script leaves a `{` open".into());
    }
    Ok(out)
}

/// A cursor over a script.
struct Reader {
    chars: Vec<char>,
    at: usize,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    fn error(&self, expected: &str) -> String {
        format!(
            "the sed script cannot be read: expected {expected} at character {}",
            self.at + 1
        )
    }

    /// Spaces and tabs (sed's `in_nonblank`).
    fn blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.at += 1;
        }
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
    }

    /// One address, if one starts here.
    fn address(&mut self) -> Result<bool, String> {
        match self.peek() {
            Some('/') => {
                self.at += 1;
                self.delimited('/', true)?;
            }
            Some('\\') => {
                self.at += 1;
                let delim = self.delimiter()?;
                self.delimited(delim, true)?;
            }
            Some(c) if c.is_ascii_digit() => {
                self.digits();
                self.blanks();
                if self.peek() == Some('~') {
                    self.at += 1;
                    self.blanks();
                    self.digits();
                }
                return Ok(true);
            }
            Some('+' | '~') => {
                self.at += 1;
                self.blanks();
                self.digits();
                return Ok(true);
            }
            Some('$') => {
                self.at += 1;
                return Ok(true);
            }
            _ => return Ok(false),
        }
        // The flags of a regular-expression address.
        loop {
            self.blanks();
            match self.peek() {
                Some('I' | 'M') => self.at += 1,
                _ => return Ok(true),
            }
        }
    }

    /// The delimiter of `s`, `y` or `\cREGEXc`: any character but a newline or a backslash.
    fn delimiter(&mut self) -> Result<char, String> {
        match self.next() {
            Some(c) if c != '\n' && c != '\\' => Ok(c),
            _ => Err(self.error("a delimiter")),
        }
    }

    /// Up to the unescaped `delim` that closes a part (sed's `match_slash`); in a regular
    /// expression a bracket expression is read whole, so `[/]` does not close it.
    fn delimited(&mut self, delim: char, regex: bool) -> Result<(), String> {
        loop {
            match self.next() {
                None | Some('\n') => return Err(self.error(&format!("a closing `{delim}`"))),
                Some(c) if c == delim => return Ok(()),
                Some('\\') => {
                    if self.next().is_none() {
                        return Err(self.error("a character after `\\`"));
                    }
                }
                Some('[') if regex => {
                    if self.bracket() != Some(']') {
                        return Err(self.error("the `]` of a bracket expression"));
                    }
                }
                Some(_) => {}
            }
        }
    }

    /// A bracket expression after its `[` (sed's `snarf_char_class`): the character it ends
    /// at, `]` when it closes.
    fn bracket(&mut self) -> Option<char> {
        let mut ch = self.next();
        if ch == Some('^') {
            ch = self.next();
        }
        if ch == Some(']') {
            ch = self.next();
        }
        // 0: outside [. .] [: :] [= =]; 1: after `[`; 2: inside one; 3: after its closing
        // `.`, `:` or `=`.
        let mut state = 0u8;
        let mut delim = '\0';
        loop {
            match ch {
                None | Some('\n') => return ch,
                Some(c @ ('.' | ':' | '=')) if state == 1 => {
                    delim = c;
                    state = 2;
                    ch = self.next();
                    continue;
                }
                Some(c @ ('.' | ':' | '=')) if state == 2 && c == delim => {
                    state = 3;
                    ch = self.next();
                    continue;
                }
                Some('[') => {
                    if state == 0 {
                        state = 1;
                    }
                    ch = self.next();
                    continue;
                }
                Some(']') if state <= 1 => return ch,
                Some(']') if state == 3 => state = 0,
                Some(_) => {}
            }
            state &= !1;
            ch = self.next();
        }
    }

    /// A label (`:`, `b`, `t`, `T`, `v`): up to a blank, `;`, `}`, `#` or a newline.
    fn label(&mut self) {
        self.blanks();
        while self
            .peek()
            .is_some_and(|c| !matches!(c, '\n' | ' ' | '\t' | ';' | '}' | '#'))
        {
            self.at += 1;
        }
    }

    /// The text of `a`, `i`, `c` or `e`: up to an unescaped newline.
    fn text(&mut self) {
        while let Some(c) = self.next() {
            match c {
                '\n' => return,
                '\\' => {
                    self.next();
                }
                _ => {}
            }
        }
    }

    /// A file name (`r`, `R`, `w`, `W`, the `w` flag): the rest of the line.
    fn file_name(&mut self) -> Result<String, String> {
        self.blanks();
        let mut name = String::new();
        while let Some(c) = self.next() {
            if c == '\n' {
                break;
            }
            name.push(c);
        }
        if name.is_empty() {
            return Err(self.error("a file name"));
        }
        Ok(name)
    }

    /// After a command: blanks, then the end of the script or line, `;`, `}` or `#`.
    fn end_of_command(&mut self) -> Result<(), String> {
        self.blanks();
        match self.peek() {
            None | Some('}' | '#') => Ok(()),
            Some('\n' | ';') => {
                self.at += 1;
                Ok(())
            }
            Some(_) => Err(self.error("the end of the command")),
        }
    }

    /// `s` after its name: delimiter, regular expression, replacement, flags.
    fn substitute(&mut self) -> Result<Command, String> {
        let delim = self.delimiter()?;
        self.delimited(delim, true)?;
        self.delimited(delim, false)?;
        let mut execute = false;
        loop {
            self.blanks();
            match self.next() {
                Some('i' | 'I' | 'm' | 'M' | 'p' | 'g') => {}
                Some('e') => execute = true,
                Some(c) if c.is_ascii_digit() => self.digits(),
                Some('w') => {
                    let file = self.file_name()?;
                    return Ok(Command::Substitute {
                        execute,
                        write: Some(file),
                    });
                }
                Some('}' | '#') => {
                    self.at -= 1;
                    break;
                }
                None | Some('\n' | ';') => break,
                Some(_) => return Err(self.error("a flag of `s`")),
            }
        }
        Ok(Command::Substitute {
            execute,
            write: None,
        })
    }
}

#[cfg(test)]
mod tests;
