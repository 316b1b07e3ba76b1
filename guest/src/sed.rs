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

mod exec;
mod input;
mod parse;
mod replace;
mod script;

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::posix_re::Syntax;
use crate::util::{self, HasArg, Item, LongOpt, long};

use exec::Exec;
use input::Input;

/// A script error, with the position it was found at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    /// Byte offset (1-based, like GNU's "char N").
    pub pos: usize,
    /// What is wrong.
    pub msg: String,
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

/// What the command line asks for: the options, the script (its `-e`/`-f` pieces joined by
/// newlines, or the first operand) and the input files.
struct Invocation {
    opts: Options,
    script: Vec<u8>,
    files: Vec<OsString>,
}

/// Runs sed with the arguments after the program name. Returns the exit status.
pub fn run(
    args: &[OsString],
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let Invocation {
        opts,
        script,
        mut files,
    } = match invocation(args, stdin, out, err) {
        Ok(invocation) => invocation,
        Err(status) => return status,
    };
    let syntax = if opts.syntax_ere {
        Syntax::Extended
    } else {
        Syntax::Basic
    };
    let prog = match parse::parse_script(&script, syntax, opts.sandbox) {
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
    let mut exec = Exec::new(&prog, &opts);
    if let Err(message) = exec.open_wfiles() {
        let _ = writeln!(err, "sed: {message}");
        return 4;
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
    exec.flush_wfiles();
    match result {
        Ok(Some(code)) => code,
        Ok(None) => status,
        Err(e) => {
            let _ = writeln!(err, "sed: {}", util::io_msg(&e));
            4
        }
    }
}

/// Reads the command line; `Err` is the exit status when sed stops there (a usage error, or
/// `--help` / `--version` written to `out`).
fn invocation(
    args: &[OsString],
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Invocation, i32> {
    let items = match util::getopt(args, SHORTS, LONGS, true) {
        Ok(i) => i,
        Err(m) => {
            let _ = writeln!(err, "sed: {m}\n{USAGE}");
            return Err(1);
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
        match key {
            "n" => opts.quiet = true,
            "s" => opts.separate = true,
            "r" | "E" => opts.syntax_ere = true,
            "z" => opts.null_data = true,
            "sandbox" => opts.sandbox = true,
            "e" => add_piece(&mut script, util::os_bytes(&val.unwrap_or_default())),
            "f" => {
                let v = val.unwrap_or_default();
                match script_file(&v, stdin) {
                    Ok(d) => add_piece(&mut script, &d),
                    Err(e) => {
                        let _ = writeln!(
                            err,
                            "sed: couldn't open file {}: {}",
                            v.to_string_lossy(),
                            util::io_msg(&e)
                        );
                        return Err(1);
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
                        return Err(1);
                    }
                }
            }
            "help" => {
                let _ = write!(out, "{USAGE}");
                return Err(0);
            }
            "version" => {
                let _ = writeln!(out, "sed (guest-coreutils) {}", env!("CARGO_PKG_VERSION"));
                return Err(0);
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
                return Err(1);
            }
        },
    };
    Ok(Invocation {
        opts,
        script,
        files: operands.collect(),
    })
}

/// Adds a `-e` or `-f` piece to the script, after a newline.
fn add_piece(script: &mut Option<Vec<u8>>, piece: &[u8]) {
    let s = script.get_or_insert_with(Vec::new);
    if !s.is_empty() {
        s.push(b'\n');
    }
    s.extend_from_slice(piece);
}

/// The text of `-f FILE` (`-` is standard input), without its final newline.
fn script_file(name: &OsString, stdin: &mut dyn Read) -> io::Result<Vec<u8>> {
    let mut data = if name == "-" {
        let mut d = Vec::new();
        stdin.read_to_end(&mut d).map(|_| d)
    } else {
        fs::read(name)
    }?;
    if data.last() == Some(&b'\n') {
        data.pop();
    }
    Ok(data)
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
