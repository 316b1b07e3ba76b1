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

use std::ffi::OsString;
use std::fs;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

use crate::fnmatch::fnmatch;
use crate::posix_re::{self, Syntax};
use crate::util::{self, HasArg, Item, LongOpt, long};

/// Pattern dialect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dialect {
    Basic,
    Extended,
    Fixed,
    Perl,
}

/// How binary files are handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Binary {
    /// Report "binary file matches".
    Report,
    /// `-a`: treat as text.
    Text,
    /// `-I`: treat as not matching.
    Skip,
}

/// Parsed options.
#[derive(Debug)]
struct Config {
    patterns: Vec<Vec<u8>>,
    dialect: Dialect,
    ignore_case: bool,
    invert: bool,
    line_number: bool,
    byte_offset: bool,
    count: bool,
    files_with: bool,
    files_without: bool,
    quiet: bool,
    no_messages: bool,
    recursive: bool,
    deref: bool,
    word: bool,
    line: bool,
    only: bool,
    with_filename: Option<bool>,
    max_count: Option<u64>,
    before: usize,
    after: usize,
    binary: Binary,
    label: Vec<u8>,
    include: Vec<Vec<u8>>,
    exclude: Vec<Vec<u8>>,
    exclude_dir: Vec<Vec<u8>>,
    files: Vec<OsString>,
}

const SHORTS: &str = "0123456789A:B:C:D:EFGHILPRUVabce:f:hilm:noqrsuvwxy";

const LONGS: &[LongOpt] = &[
    long("after-context", HasArg::Required, "A"),
    long("before-context", HasArg::Required, "B"),
    long("context", HasArg::Required, "C"),
    long("basic-regexp", HasArg::No, "G"),
    long("extended-regexp", HasArg::No, "E"),
    long("fixed-strings", HasArg::No, "F"),
    long("fixed-regexp", HasArg::No, "F"),
    long("perl-regexp", HasArg::No, "P"),
    long("regexp", HasArg::Required, "e"),
    long("file", HasArg::Required, "f"),
    long("ignore-case", HasArg::No, "i"),
    long("no-ignore-case", HasArg::No, "no-ignore-case"),
    long("word-regexp", HasArg::No, "w"),
    long("line-regexp", HasArg::No, "x"),
    long("no-messages", HasArg::No, "s"),
    long("invert-match", HasArg::No, "v"),
    long("version", HasArg::No, "V"),
    long("help", HasArg::No, "help"),
    long("max-count", HasArg::Required, "m"),
    long("line-number", HasArg::No, "n"),
    long("byte-offset", HasArg::No, "b"),
    long("no-line-number", HasArg::No, "no-line-number"),
    long("line-buffered", HasArg::No, "line-buffered"),
    long("with-filename", HasArg::No, "H"),
    long("no-filename", HasArg::No, "h"),
    long("label", HasArg::Required, "label"),
    long("only-matching", HasArg::No, "o"),
    long("quiet", HasArg::No, "q"),
    long("silent", HasArg::No, "q"),
    long("binary-files", HasArg::Required, "binary-files"),
    long("text", HasArg::No, "a"),
    long("directories", HasArg::Required, "d"),
    long("devices", HasArg::Required, "D"),
    long("recursive", HasArg::No, "r"),
    long("dereference-recursive", HasArg::No, "R"),
    long("include", HasArg::Required, "include"),
    long("exclude", HasArg::Required, "exclude"),
    long("exclude-dir", HasArg::Required, "exclude-dir"),
    long("files-without-match", HasArg::No, "L"),
    long("files-with-matches", HasArg::No, "l"),
    long("count", HasArg::No, "c"),
    long("color", HasArg::Optional, "color"),
    long("colour", HasArg::Optional, "color"),
];

const USAGE: &str = "Usage: grep [OPTION]... PATTERNS [FILE]...";

const HELP: &str = "Usage: grep [OPTION]... PATTERNS [FILE]...
Search for PATTERNS in each FILE.
Example: grep -i 'hello world' menu.h main.c
PATTERNS can contain multiple patterns separated by newlines.

Pattern selection and interpretation:
  -E, --extended-regexp     PATTERNS are extended regular expressions
  -F, --fixed-strings       PATTERNS are strings
  -G, --basic-regexp        PATTERNS are basic regular expressions
  -P, --perl-regexp         PATTERNS use the Rust regex crate's syntax
  -e, --regexp=PATTERNS     use PATTERNS for matching
  -f, --file=FILE           take PATTERNS from FILE
  -i, --ignore-case         ignore case distinctions in patterns and data
  -w, --word-regexp         match only whole words
  -x, --line-regexp         match only whole lines

Miscellaneous:
  -s, --no-messages         suppress error messages
  -v, --invert-match        select non-matching lines
  -V, --version             display version information and exit
      --help                display this help text and exit

Output control:
  -m, --max-count=NUM       stop after NUM selected lines
  -n, --line-number         print line number with output lines
  -b, --byte-offset         print the byte offset with output lines
  -H, --with-filename       print file name with output lines
  -h, --no-filename         suppress the file name prefix on output
      --label=LABEL         use LABEL as the standard input file name prefix
  -o, --only-matching       show only nonempty parts of lines that match
  -q, --quiet, --silent     suppress all normal output
  -a, --text                equivalent to --binary-files=text
  -I                        equivalent to --binary-files=without-match
  -r, --recursive           search directories recursively (entries sorted by name)
  -R, --dereference-recursive  likewise, but follow all symlinks
      --include=GLOB        search only files that match GLOB
      --exclude=GLOB        skip files that match GLOB
      --exclude-dir=GLOB    skip directories that match GLOB
  -L, --files-without-match  print only names of FILEs with no selected lines
  -l, --files-with-matches  print only names of FILEs with selected lines
  -c, --count               print only a count of selected lines per FILE

Context control:
  -B, --before-context=NUM  print NUM lines of leading context
  -A, --after-context=NUM   print NUM lines of trailing context
  -C, --context=NUM         print NUM lines of output context
  -NUM                      same as --context=NUM

Exit status is 0 if any line is selected, 1 otherwise;
if any error occurs and -q is not given, the exit status is 2.
";

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

fn usage_error(err: &mut dyn Write, msg: &str) -> i32 {
    let _ = writeln!(
        err,
        "grep: {msg}\n{USAGE}\nTry 'grep --help' for more information."
    );
    2
}

fn parse_num(v: &Option<OsString>, what: &str) -> Result<u64, String> {
    let s = v
        .as_ref()
        .map(|v| v.to_string_lossy().into_owned())
        .unwrap_or_default();
    s.trim()
        .parse::<u64>()
        .map_err(|_| format!("invalid {what} argument"))
}

/// Parses the arguments (without the program name).
fn parse(args: &[OsString], err: &mut dyn Write) -> Result<Config, i32> {
    let items = match util::getopt(args, SHORTS, LONGS, true) {
        Ok(i) => i,
        Err(m) => return Err(usage_error(err, &m)),
    };
    let mut c = Config {
        patterns: Vec::new(),
        dialect: Dialect::Basic,
        ignore_case: false,
        invert: false,
        line_number: false,
        byte_offset: false,
        count: false,
        files_with: false,
        files_without: false,
        quiet: false,
        no_messages: false,
        recursive: false,
        deref: false,
        word: false,
        line: false,
        only: false,
        with_filename: None,
        max_count: None,
        before: 0,
        after: 0,
        binary: Binary::Report,
        label: b"(standard input)".to_vec(),
        include: Vec::new(),
        exclude: Vec::new(),
        exclude_dir: Vec::new(),
        files: Vec::new(),
    };
    let mut have_patterns = false;
    let mut dialect_set: Option<Dialect> = None;
    let mut operands = Vec::new();
    let (mut ctx_before, mut ctx_after, mut ctx_both) = (None, None, None);
    // `-NUM` digits accumulate within one argument.
    let mut digits: Option<(usize, u64)> = None;
    for item in items {
        let (key, val, at) = match item {
            Item::Operand(o) => {
                operands.push(o);
                continue;
            }
            Item::Opt { key, val, at } => (key, val, at),
        };
        if let Some(d) = key
            .bytes()
            .next()
            .filter(|b| b.is_ascii_digit() && key.len() == 1)
        {
            let n = u64::from(d - b'0');
            let v = match digits {
                Some((arg, prev)) if arg == at => prev.saturating_mul(10).saturating_add(n),
                _ => n,
            };
            digits = Some((at, v));
            ctx_both = Some(v);
            continue;
        }
        let bad = |e: String, err: &mut dyn Write| {
            let _ = writeln!(err, "grep: {e}");
            2
        };
        match key {
            "A" => ctx_after = Some(parse_num(&val, "context length").map_err(|e| bad(e, err))?),
            "B" => ctx_before = Some(parse_num(&val, "context length").map_err(|e| bad(e, err))?),
            "C" => ctx_both = Some(parse_num(&val, "context length").map_err(|e| bad(e, err))?),
            "m" => c.max_count = Some(parse_num(&val, "max count").map_err(|e| bad(e, err))?),
            "E" | "F" | "G" | "P" => {
                let d = match key {
                    "E" => Dialect::Extended,
                    "F" => Dialect::Fixed,
                    "G" => Dialect::Basic,
                    _ => Dialect::Perl,
                };
                // Like GNU: naming two different matchers is an error, the same one twice is not.
                if dialect_set.is_some_and(|prev| prev != d) {
                    return Err(bad("conflicting matchers specified".into(), err));
                }
                dialect_set = Some(d);
                c.dialect = d;
            }
            "e" => {
                have_patterns = true;
                let v = val.unwrap_or_default();
                c.patterns.extend(
                    util::os_bytes(&v)
                        .split(|&b| b == b'\n')
                        .map(<[u8]>::to_vec),
                );
            }
            "f" => {
                have_patterns = true;
                let v = val.unwrap_or_default();
                let data = if v == "-" {
                    let mut d = Vec::new();
                    io::stdin().read_to_end(&mut d).map(|_| d)
                } else {
                    fs::read(&v)
                };
                match data {
                    // An empty file gives no pattern at all (nothing matches).
                    Ok(d) if d.is_empty() => {}
                    Ok(d) => {
                        let body = d.strip_suffix(b"\n").unwrap_or(&d);
                        c.patterns
                            .extend(body.split(|&b| b == b'\n').map(<[u8]>::to_vec));
                    }
                    Err(e) => {
                        let _ =
                            writeln!(err, "grep: {}: {}", v.to_string_lossy(), util::io_msg(&e));
                        return Err(2);
                    }
                }
            }
            "i" | "y" => c.ignore_case = true,
            "no-ignore-case" => c.ignore_case = false,
            "w" => c.word = true,
            "x" => c.line = true,
            "s" => c.no_messages = true,
            "v" => c.invert = true,
            "n" => c.line_number = true,
            "b" => c.byte_offset = true,
            "no-line-number" => c.line_number = false,
            "H" => c.with_filename = Some(true),
            "h" => c.with_filename = Some(false),
            "label" => c.label = util::os_bytes(&val.unwrap_or_default()).to_vec(),
            "o" => c.only = true,
            "q" => c.quiet = true,
            "a" => c.binary = Binary::Text,
            "I" => c.binary = Binary::Skip,
            "binary-files" => {
                c.binary = match val.as_ref().and_then(|v| v.to_str()) {
                    Some("binary") => Binary::Report,
                    Some("text") => Binary::Text,
                    Some("without-match") => Binary::Skip,
                    _ => return Err(bad("invalid argument for --binary-files".into(), err)),
                }
            }
            "d" => match val.as_ref().and_then(|v| v.to_str()) {
                Some("recurse") => c.recursive = true,
                Some("read" | "skip") => {}
                _ => return Err(bad("invalid argument for --directories".into(), err)),
            },
            "r" => c.recursive = true,
            "R" => {
                c.recursive = true;
                c.deref = true;
            }
            "include" => c
                .include
                .push(util::os_bytes(&val.unwrap_or_default()).to_vec()),
            "exclude" => c
                .exclude
                .push(util::os_bytes(&val.unwrap_or_default()).to_vec()),
            "exclude-dir" => c
                .exclude_dir
                .push(util::os_bytes(&val.unwrap_or_default()).to_vec()),
            "L" => {
                c.files_without = true;
                c.files_with = false;
            }
            "l" => {
                c.files_with = true;
                c.files_without = false;
            }
            "c" => c.count = true,
            "V" => {
                let _ = writeln!(
                    io::stdout(),
                    "grep (guest-coreutils) {}",
                    env!("CARGO_PKG_VERSION")
                );
                return Err(0);
            }
            "help" => {
                let _ = write!(io::stdout(), "{HELP}");
                return Err(0);
            }
            // Accepted and ignored: colour, buffering, binary/CRLF handling, devices, NUL output.
            _ => {}
        }
    }
    if let Some(n) = ctx_both {
        c.before = usize::try_from(n).unwrap_or(usize::MAX);
        c.after = c.before;
    }
    if let Some(n) = ctx_before {
        c.before = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(n) = ctx_after {
        c.after = usize::try_from(n).unwrap_or(usize::MAX);
    }
    let mut operands = operands.into_iter();
    if !have_patterns {
        let Some(p) = operands.next() else {
            return Err(usage_error(err, "no pattern given"));
        };
        c.patterns.extend(
            util::os_bytes(&p)
                .split(|&b| b == b'\n')
                .map(<[u8]>::to_vec),
        );
    }
    c.files = operands.collect();
    Ok(c)
}

/// The compiled matcher; `None` when there is no pattern (nothing matches).
struct Matcher {
    re: Option<regex::bytes::Regex>,
}

impl Matcher {
    fn new(c: &Config) -> Result<Self, String> {
        if c.patterns.is_empty() {
            return Ok(Self { re: None });
        }
        let mut parts = Vec::with_capacity(c.patterns.len());
        for p in &c.patterns {
            let t = match c.dialect {
                Dialect::Basic => posix_re::translate(p, Syntax::Basic, false),
                Dialect::Extended => posix_re::translate(p, Syntax::Extended, false),
                Dialect::Fixed => Ok(posix_re::escape_fixed(p)),
                Dialect::Perl => String::from_utf8(p.clone())
                    .map_err(|_| posix_re::Error("pattern is not valid UTF-8".into())),
            };
            parts.push(format!("(?:{})", t.map_err(|e| e.0)?));
        }
        let mut all = parts.join("|");
        if c.line {
            all = format!("^(?:{all})$");
        } else if c.word {
            all = format!(r"\b{{start-half}}(?:{all})\b{{end-half}}");
        }
        let re = posix_re::compile(&all, c.ignore_case, false, false).map_err(|e| e.0)?;
        Ok(Self { re: Some(re) })
    }

    fn is_match(&self, line: &[u8]) -> bool {
        self.re.as_ref().is_some_and(|r| r.is_match(line))
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
    let c = match parse(args, err) {
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

    fn prefix(&mut self, name: &[u8], lineno: usize, offset: usize, sep: u8) -> io::Result<()> {
        if self.with_filename {
            self.out.write_all(name)?;
            self.out.write_all(&[sep])?;
        }
        if self.c.line_number {
            write!(self.out, "{lineno}")?;
            self.out.write_all(&[sep])?;
        }
        if self.c.byte_offset {
            write!(self.out, "{offset}")?;
            self.out.write_all(&[sep])?;
        }
        Ok(())
    }

    /// Searches one input; `name` is its display name.
    fn search(&mut self, data: &[u8], name: &[u8]) -> io::Result<()> {
        let binary = self.c.binary != Binary::Text && data.contains(&0);
        if binary && self.c.binary == Binary::Skip {
            if self.c.files_without {
                self.out.write_all(name)?;
                self.out.write_all(b"\n")?;
            }
            return Ok(());
        }
        let body = data.strip_suffix(b"\n").unwrap_or(data);
        let lines: Vec<&[u8]> = if data.is_empty() {
            Vec::new()
        } else {
            body.split(|&b| b == b'\n').collect()
        };
        // Byte offset of each line's start (for `-b`).
        let mut offsets = Vec::with_capacity(lines.len());
        let mut off = 0usize;
        for l in &lines {
            offsets.push(off);
            off += l.len() + 1;
        }
        let listing = self.c.files_with || self.c.files_without;
        let print_lines = !self.c.quiet && !listing && !self.c.count;
        let max = self.c.max_count.unwrap_or(u64::MAX);
        let mut count: u64 = 0;
        // Index of the last line printed (for context and separators), and lines of trailing
        // context still owed.
        let mut last_printed: Option<usize> = None;
        let mut after_left = 0usize;
        let context = self.c.before > 0 || self.c.after > 0;
        let mut i = 0;
        while i < lines.len() {
            if count >= max {
                // Trailing context after the last allowed match: GNU prints the following
                // lines as context whether they match or not.
                if print_lines && !binary && after_left > 0 {
                    self.prefix(name, i + 1, offsets[i], b'-')?;
                    self.out.write_all(lines[i])?;
                    self.out.write_all(b"\n")?;
                    after_left -= 1;
                    i += 1;
                    continue;
                }
                break;
            }
            let line = lines[i];
            let selected = self.m.is_match(line) != self.c.invert;
            if selected {
                count += 1;
                self.selected_any = true;
                if self.c.quiet {
                    return Err(io::Error::from(io::ErrorKind::Interrupted));
                }
                if listing {
                    break;
                }
                if binary && print_lines {
                    self.out.flush()?;
                    let _ = writeln!(
                        self.err,
                        "grep: {}: binary file matches",
                        String::from_utf8_lossy(name)
                    );
                    break;
                }
                if print_lines {
                    // Leading context.
                    let from = i.saturating_sub(self.c.before);
                    let from = match last_printed {
                        Some(lp) => from.max(lp + 1),
                        None => from,
                    };
                    let gap = match last_printed {
                        Some(lp) => from > lp + 1,
                        None => self.emitted,
                    };
                    if context && gap {
                        self.out.write_all(b"--\n")?;
                    }
                    for (k, ctx) in lines.iter().enumerate().take(i).skip(from) {
                        self.prefix(name, k + 1, offsets[k], b'-')?;
                        self.out.write_all(ctx)?;
                        self.out.write_all(b"\n")?;
                    }
                    self.print_selected(name, i, offsets[i], line)?;
                    last_printed = Some(i);
                    self.emitted = true;
                    after_left = self.c.after;
                }
            } else if print_lines && after_left > 0 {
                self.prefix(name, i + 1, offsets[i], b'-')?;
                self.out.write_all(line)?;
                self.out.write_all(b"\n")?;
                last_printed = Some(i);
                after_left -= 1;
            }
            i += 1;
        }
        if self.c.count {
            if self.with_filename {
                self.out.write_all(name)?;
                self.out.write_all(b":")?;
            }
            writeln!(self.out, "{count}")?;
        }
        if (self.c.files_with && count > 0) || (self.c.files_without && count == 0) {
            self.out.write_all(name)?;
            self.out.write_all(b"\n")?;
        }
        Ok(())
    }

    fn print_selected(
        &mut self,
        name: &[u8],
        i: usize,
        offset: usize,
        line: &[u8],
    ) -> io::Result<()> {
        if !self.c.only {
            self.prefix(name, i + 1, offset, b':')?;
            self.out.write_all(line)?;
            return self.out.write_all(b"\n");
        }
        if self.c.invert {
            return Ok(());
        }
        let Some(re) = self.m.re.clone() else {
            return Ok(());
        };
        for m in re.find_iter(line) {
            if m.is_empty() {
                continue;
            }
            self.prefix(name, i + 1, offset + m.start(), b':')?;
            self.out.write_all(m.as_bytes())?;
            self.out.write_all(b"\n")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
