//! The lite applets: hand-written, std-only `echo`, `true`, `false`, `pwd`, `basename` and
//! `dirname`, for the small `coreutils-lite` module.
//!
//! These are the commands an agent runs most and that do almost nothing, so the cost of a call
//! is the module's start-up. The multicall `coreutils` module pays for its size and for uutils'
//! clap and localisation set-up on every call; this module pulls in neither (its binary only
//! calls [`run_lite`], so LTO drops every uutils crate), which makes `echo hi` several times
//! cheaper. The behaviour follows GNU coreutils 9.1 in the C locale, flag for flag; `--help` and
//! `--version` print this crate's own short texts. The multicall keeps dispatching the same names
//! to uutils (the host oracle runs the corpus through both binaries).
//!
//! Dispatch works like the multicall's: the basename of argv\[0\] must be an exact entry of
//! [`LITE_APPLETS`], or argv\[0\] is `coreutils-lite` (`.wasm`) and argv\[1\] names the applet;
//! anything else prints `coreutils-lite: unknown command NAME` and exits 127.

use std::ffi::OsString;
use std::io::Write;

use crate::util::{self, HasArg, Item, LongOpt, long};

/// Every applet name the lite module accepts, sorted. Each is also in [`crate::APPLETS`].
pub const LITE_APPLETS: &[&str] = &["basename", "dirname", "echo", "false", "pwd", "true"];

/// A lite applet: gets the arguments after argv\[0\], returns the exit status.
type Applet = fn(&[OsString]) -> i32;

/// The allowlist: an exact match on the applet name, nothing else.
fn lookup_lite(name: &str) -> Option<Applet> {
    let applet: Applet = match name {
        "basename" => basename_main,
        "dirname" => dirname_main,
        "echo" => echo_main,
        "false" => |_| 1,
        "pwd" => pwd_main,
        "true" => |_| 0,
        _ => return None,
    };
    Some(applet)
}

/// Whether `name` is an applet of the lite module.
pub fn is_lite_applet(name: &str) -> bool {
    lookup_lite(name).is_some()
}

/// Runs the lite module with the full argv (argv\[0\] included) and returns the exit status.
///
/// Only `pwd` enters `$PWD` first (as the multicall does for every applet): the others never
/// look at the file system, so they skip that system call.
pub fn run_lite(args: Vec<OsString>) -> i32 {
    let mut args = args.into_iter();
    let Some(arg0) = args.next() else {
        let _ = writeln!(std::io::stderr(), "coreutils-lite: missing command name");
        return crate::EXIT_UNKNOWN_COMMAND;
    };
    let mut name = crate::basename(&arg0);
    if matches!(name.as_str(), "coreutils-lite" | "coreutils-lite.wasm") {
        let Some(applet) = args.next() else {
            let _ = writeln!(
                std::io::stderr(),
                "coreutils-lite: missing command name\nUsage: coreutils-lite COMMAND [ARG]...\n\
                 Commands: {}",
                LITE_APPLETS.join(" ")
            );
            return 1;
        };
        if applet == "--list" {
            let mut list = LITE_APPLETS.join("\n");
            list.push('\n');
            return emit("coreutils-lite", list.as_bytes());
        }
        name = crate::basename(&applet);
    }
    let Some(applet) = lookup_lite(&name) else {
        let _ = writeln!(std::io::stderr(), "coreutils-lite: unknown command {name}");
        return crate::EXIT_UNKNOWN_COMMAND;
    };
    if name == "pwd"
        && let Err(code) = crate::enter_pwd()
    {
        return code;
    }
    let rest: Vec<OsString> = args.collect();
    applet(&rest)
}

/// Writes `out` to stdout in one go and flushes; a failure is GNU's `NAME: write error`, exit 1.
fn emit(applet: &str, out: &[u8]) -> i32 {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(out).and_then(|()| stdout.flush()) {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "{applet}: write error: {}",
                util::io_msg(&e)
            );
            1
        }
    }
}

/// A usage error: the message, GNU's `Try 'NAME --help'` line, exit 1.
fn usage_error(applet: &str, msg: &str) -> i32 {
    let _ = writeln!(
        std::io::stderr(),
        "{applet}: {msg}\nTry '{applet} --help' for more information."
    );
    1
}

/// The `--version` line of a lite applet.
fn version(applet: &str) -> String {
    format!("{applet} (guest-coreutils) {}\n", env!("CARGO_PKG_VERSION"))
}

/// Whether `POSIXLY_CORRECT` is set (it changes `echo` and `pwd`, as in GNU).
fn posixly_correct() -> bool {
    std::env::var_os("POSIXLY_CORRECT").is_some()
}

// ---------------------------------------------------------------------------------------------
// echo

/// `echo [-neE]... [STRING]...`.
fn echo_main(args: &[OsString]) -> i32 {
    emit("echo", &echo(args, posixly_correct()))
}

/// The output of GNU `echo` for `args` (argv\[1\] on). Leading arguments made only of the letters
/// `n`, `e`, `E` after a `-` are options (the last of `-e`/`-E` wins); the first other argument,
/// `-` and `--` included, starts the text. With `POSIXLY_CORRECT` set, options are recognised
/// only when the first argument is `-n`, and escapes are always interpreted.
fn echo(args: &[OsString], posix: bool) -> Vec<u8> {
    let args: Vec<&[u8]> = args.iter().map(|a| util::os_bytes(a)).collect();
    let allow_options = !posix || args.first().is_some_and(|a| *a == b"-n");
    if allow_options && let [only] = args.as_slice() {
        if *only == b"--help" {
            return b"Usage: echo [SHORT-OPTION]... [STRING]...\n  or:  echo LONG-OPTION\n\
                Echo the STRING(s) to standard output.\n\n\
                \x20 -n             do not output the trailing newline\n\
                \x20 -e             enable interpretation of backslash escapes\n\
                \x20 -E             disable interpretation of backslash escapes (default)\n\
                \x20     --help     display this help and exit\n\
                \x20     --version  output version information and exit\n\n\
                With -e: \\\\ \\a \\b \\c (produce no further output) \\e \\f \\n \\r \\t \\v \
                \\0NNN (octal) \\xHH (hex).\n"
                .to_vec();
        }
        if *only == b"--version" {
            return version("echo").into_bytes();
        }
    }
    let mut escapes = false;
    let mut newline = true;
    let mut first_text = 0;
    if allow_options {
        for arg in &args {
            let Some(flags) = arg.strip_prefix(b"-") else {
                break;
            };
            if flags.is_empty() || !flags.iter().all(|c| matches!(c, b'n' | b'e' | b'E')) {
                break;
            }
            for c in flags {
                match c {
                    b'e' => escapes = true,
                    b'E' => escapes = false,
                    _ => newline = false,
                }
            }
            first_text += 1;
        }
    }
    let mut out = Vec::new();
    for (k, arg) in args.iter().skip(first_text).enumerate() {
        if k > 0 {
            out.push(b' ');
        }
        if escapes || posix {
            if unescape(arg, &mut out).is_break() {
                return out;
            }
        } else {
            out.extend_from_slice(arg);
        }
    }
    if newline {
        out.push(b'\n');
    }
    out
}

/// The value of an ASCII hex digit.
fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Appends `s` with `echo -e`'s escapes interpreted; `Break` at `\c` (no further output at all).
/// Octal `\0NNN` takes up to three digits after the `0` and `\NNN` (first digit 1-7) up to three
/// in all, both modulo 256; `\xHH` one or two hex digits. An unknown escape, `\x` without a hex
/// digit and a trailing `\` stay as they are.
fn unescape(s: &[u8], out: &mut Vec<u8>) -> std::ops::ControlFlow<()> {
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        i += 1;
        let Some(&e) = s.get(i).filter(|_| c == b'\\') else {
            out.push(c);
            continue;
        };
        i += 1;
        let byte = match e {
            b'\\' => b'\\',
            b'a' => 0x07,
            b'b' => 0x08,
            b'c' => return std::ops::ControlFlow::Break(()),
            b'e' => 0x1b,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'v' => 0x0b,
            b'x' => match s.get(i).and_then(|&h| hex_digit(h)) {
                Some(high) => {
                    i += 1;
                    match s.get(i).and_then(|&h| hex_digit(h)) {
                        Some(low) => {
                            i += 1;
                            high * 16 + low
                        }
                        None => high,
                    }
                }
                None => {
                    out.push(b'\\');
                    b'x'
                }
            },
            b'0'..=b'7' => {
                let (mut value, mut more) = if e == b'0' { (0u8, 3) } else { (e - b'0', 2) };
                while more > 0
                    && let Some(&d) = s.get(i).filter(|d| (b'0'..=b'7').contains(*d))
                {
                    value = value.wrapping_mul(8).wrapping_add(d - b'0');
                    i += 1;
                    more -= 1;
                }
                value
            }
            other => {
                out.push(b'\\');
                other
            }
        };
        out.push(byte);
    }
    std::ops::ControlFlow::Continue(())
}

// ---------------------------------------------------------------------------------------------
// basename

/// The long options of `basename`.
const BASENAME_LONGS: &[LongOpt] = &[
    long("multiple", HasArg::No, "a"),
    long("suffix", HasArg::Required, "s"),
    long("zero", HasArg::No, "z"),
    long("help", HasArg::No, "help"),
    long("version", HasArg::No, "version"),
];

/// `basename NAME [SUFFIX]` or `basename -a|-s SUFFIX [-z] NAME...`; options end at the first
/// operand (GNU's `+as:z`).
fn basename_main(args: &[OsString]) -> i32 {
    let items = match util::getopt(args, "as:z", BASENAME_LONGS, false) {
        Ok(items) => items,
        Err(m) => return usage_error("basename", &m),
    };
    let mut multiple = false;
    let mut suffix: Option<OsString> = None;
    let mut zero = false;
    let mut names = Vec::new();
    for item in items {
        match item {
            Item::Operand(o) => names.push(o),
            Item::Opt { key: "help", .. } => {
                return emit(
                    "basename",
                    b"Usage: basename NAME [SUFFIX]\n  or:  basename OPTION... NAME...\n\
                      Print NAME with any leading directory components removed.\n\
                      If specified, also remove a trailing SUFFIX.\n\n\
                      \x20 -a, --multiple       support multiple arguments and treat each as a NAME\n\
                      \x20 -s, --suffix=SUFFIX  remove a trailing SUFFIX; implies -a\n\
                      \x20 -z, --zero           end each output line with NUL, not newline\n",
                );
            }
            Item::Opt { key: "version", .. } => {
                return emit("basename", version("basename").as_bytes());
            }
            Item::Opt { key: "s", val, .. } => {
                suffix = val;
                multiple = true;
            }
            Item::Opt { key: "a", .. } => multiple = true,
            Item::Opt { key: "z", .. } => zero = true,
            Item::Opt { .. } => {}
        }
    }
    let Some(first) = names.first() else {
        return usage_error("basename", "missing operand");
    };
    if !multiple && let Some(extra) = names.get(2) {
        let msg = format!("extra operand '{}'", extra.to_string_lossy());
        return usage_error("basename", &msg);
    }
    let end = if zero { b'\0' } else { b'\n' };
    let mut out = Vec::new();
    if multiple {
        let suffix = suffix.as_deref().map(util::os_bytes);
        for name in &names {
            out.extend_from_slice(base_name(util::os_bytes(name), suffix));
            out.push(end);
        }
    } else {
        let suffix = names.get(1).map(|s| util::os_bytes(s));
        out.extend_from_slice(base_name(util::os_bytes(first), suffix));
        out.push(end);
    }
    emit("basename", &out)
}

/// GNU `basename` of one name: the last `/`-separated component (trailing slashes ignored; `/`
/// for a name made only of slashes, empty for an empty name), without `suffix` when the
/// component ends in it and is longer than it.
fn base_name<'a>(name: &'a [u8], suffix: Option<&[u8]>) -> &'a [u8] {
    let Some(last) = name.iter().rposition(|&c| c != b'/') else {
        // Empty, or only slashes (the root: no suffix is removed from it).
        return &name[..name.len().min(1)];
    };
    let trimmed = &name[..=last];
    let base = match trimmed.iter().rposition(|&c| c == b'/') {
        Some(slash) => &trimmed[slash + 1..],
        None => trimmed,
    };
    match suffix {
        Some(suf) if base.len() > suf.len() && base.ends_with(suf) => {
            &base[..base.len() - suf.len()]
        }
        _ => base,
    }
}

// ---------------------------------------------------------------------------------------------
// dirname

/// The long options of `dirname`.
const DIRNAME_LONGS: &[LongOpt] = &[
    long("zero", HasArg::No, "z"),
    long("help", HasArg::No, "help"),
    long("version", HasArg::No, "version"),
];

/// `dirname [-z] NAME...` (options may follow names, as with GNU's permuting getopt).
fn dirname_main(args: &[OsString]) -> i32 {
    let items = match util::getopt(args, "z", DIRNAME_LONGS, true) {
        Ok(items) => items,
        Err(m) => return usage_error("dirname", &m),
    };
    let mut zero = false;
    let mut names = Vec::new();
    for item in items {
        match item {
            Item::Operand(o) => names.push(o),
            Item::Opt { key: "help", .. } => {
                return emit(
                    "dirname",
                    b"Usage: dirname [OPTION] NAME...\n\
                      Output each NAME with its last non-slash component and trailing slashes\n\
                      removed; if NAME contains no /'s, output '.' (meaning the current directory).\n\n\
                      \x20 -z, --zero     end each output line with NUL, not newline\n",
                );
            }
            Item::Opt { key: "version", .. } => {
                return emit("dirname", version("dirname").as_bytes());
            }
            Item::Opt { key: "z", .. } => zero = true,
            Item::Opt { .. } => {}
        }
    }
    if names.is_empty() {
        return usage_error("dirname", "missing operand");
    }
    let end = if zero { b'\0' } else { b'\n' };
    let mut out = Vec::new();
    for name in &names {
        out.extend_from_slice(dir_name(util::os_bytes(name)));
        out.push(end);
    }
    emit("dirname", &out)
}

/// GNU `dirname` of one name: everything before the last component, without the slashes that
/// separate them (a leading `/` is kept); `.` when that is empty.
fn dir_name(name: &[u8]) -> &[u8] {
    let root = usize::from(name.first() == Some(&b'/'));
    // Where the last component starts (gnulib's last_component).
    let mut base = name.iter().position(|&c| c != b'/').unwrap_or(name.len());
    let mut after_slash = false;
    for (k, &c) in name.iter().enumerate().skip(base) {
        if c == b'/' {
            after_slash = true;
        } else if after_slash {
            base = k;
            after_slash = false;
        }
    }
    let mut len = base;
    while len > root && name[len - 1] == b'/' {
        len -= 1;
    }
    if len == 0 { b"." } else { &name[..len] }
}

// ---------------------------------------------------------------------------------------------
// pwd

/// The long options of `pwd`.
const PWD_LONGS: &[LongOpt] = &[
    long("logical", HasArg::No, "L"),
    long("physical", HasArg::No, "P"),
    long("help", HasArg::No, "help"),
    long("version", HasArg::No, "version"),
];

/// `pwd [-L|-P]`: natively as GNU (`-P` by default, `-L` with `POSIXLY_CORRECT`; `-L` prints
/// `$PWD` when it is absolute, has no `.`/`..` component and is the current directory). On WASI
/// there is no physical path to resolve to: both print the logical directory, `$PWD` (which the
/// dispatcher has just entered) or else the directory WASI tracks.
fn pwd_main(args: &[OsString]) -> i32 {
    let items = match util::getopt(args, "LP", PWD_LONGS, true) {
        Ok(items) => items,
        Err(m) => return usage_error("pwd", &m),
    };
    let mut logical = posixly_correct();
    let mut ignored = false;
    for item in items {
        match item {
            Item::Operand(_) => ignored = true,
            Item::Opt { key: "help", .. } => {
                return emit(
                    "pwd",
                    b"Usage: pwd [OPTION]...\nPrint the full filename of the current working directory.\n\n\
                      \x20 -L, --logical   use PWD from environment, even if it contains symlinks\n\
                      \x20 -P, --physical  avoid all symlinks (the default; on WASI the same as -L)\n",
                );
            }
            Item::Opt { key: "version", .. } => {
                return emit("pwd", version("pwd").as_bytes());
            }
            Item::Opt { key: "L", .. } => logical = true,
            Item::Opt { key: "P", .. } => logical = false,
            Item::Opt { .. } => {}
        }
    }
    if ignored {
        let _ = writeln!(std::io::stderr(), "pwd: ignoring non-option arguments");
    }
    let dir = match (logical || cfg!(target_os = "wasi"))
        .then(logical_cwd)
        .flatten()
    {
        Some(d) => d,
        None => match std::env::current_dir() {
            Ok(d) => d.into_os_string(),
            Err(e) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "pwd: couldn't get current directory: {}",
                    util::io_msg(&e)
                );
                return 1;
            }
        },
    };
    let mut out = util::os_bytes(&dir).to_vec();
    out.push(b'\n');
    emit("pwd", &out)
}

/// `$PWD` if it is a usable logical name of the current directory (GNU's `logical_getcwd`).
fn logical_cwd() -> Option<OsString> {
    let wd = std::env::var_os("PWD")?;
    let bytes = util::os_bytes(&wd);
    if bytes.first() != Some(&b'/')
        || bytes
            .split(|&c| c == b'/')
            .any(|part| part == b"." || part == b"..")
    {
        return None;
    }
    is_current_dir(&wd).then_some(wd)
}

/// Whether `dir` is the current directory (same device and inode).
#[cfg(unix)]
fn is_current_dir(dir: &std::ffi::OsStr) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(dir), std::fs::metadata(".")) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// On WASI the dispatcher has just entered `$PWD` (or it is `/`, where WASI starts), and preview
/// 1 exposes no stable inode API to compare with.
#[cfg(not(unix))]
fn is_current_dir(_dir: &std::ffi::OsStr) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    fn echo_s(v: &[&str]) -> String {
        String::from_utf8(echo(&os(v), false)).unwrap()
    }

    #[test]
    fn lite_applets_sorted_dispatch_and_in_the_multicall() {
        let mut sorted = LITE_APPLETS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, LITE_APPLETS);
        for a in LITE_APPLETS {
            assert!(is_lite_applet(a), "{a}");
            assert!(crate::is_applet(a), "{a}");
        }
        for name in [
            "cat",
            "xecho",
            "echo2",
            "",
            "ECHO",
            "coreutils-lite",
            "[",
            "test",
        ] {
            assert!(!is_lite_applet(name), "{name}");
        }
    }

    #[test]
    fn unknown_and_true_false() {
        assert_eq!(run_lite(os(&["cat", "f"])), crate::EXIT_UNKNOWN_COMMAND);
        assert_eq!(
            run_lite(os(&["coreutils-lite", "ls"])),
            crate::EXIT_UNKNOWN_COMMAND
        );
        assert_eq!(run_lite(vec![]), crate::EXIT_UNKNOWN_COMMAND);
        assert_eq!(run_lite(os(&["coreutils-lite"])), 1);
        assert_eq!(run_lite(os(&["true", "--help"])), 0);
        assert_eq!(run_lite(os(&["/bin/false", "x"])), 1);
        assert_eq!(run_lite(os(&["coreutils-lite.wasm", "false"])), 1);
    }

    #[test]
    fn echo_options() {
        assert_eq!(echo_s(&[]), "\n");
        assert_eq!(echo_s(&["a", "b"]), "a b\n");
        assert_eq!(echo_s(&["-n", "a"]), "a");
        assert_eq!(echo_s(&["-n", "-e", "a\\tb"]), "a\tb");
        assert_eq!(echo_s(&["-neE", "a\\tb"]), "a\\tb");
        assert_eq!(echo_s(&["-Ee", "a\\tb"]), "a\tb\n");
        assert_eq!(echo_s(&["--", "x"]), "-- x\n");
        assert_eq!(echo_s(&["-", "x"]), "- x\n");
        assert_eq!(echo_s(&["-x", "-n"]), "-x -n\n");
        assert_eq!(echo_s(&["-nx", "y"]), "-nx y\n");
        assert_eq!(echo_s(&["x", "-n"]), "x -n\n");
        assert_eq!(echo_s(&["-n", "-n"]), "");
        assert_eq!(echo_s(&["--help", "x"]), "--help x\n");
        assert!(echo_s(&["--help"]).starts_with("Usage: echo"));
        assert!(echo_s(&["--version"]).starts_with("echo (guest-coreutils)"));
        assert_eq!(echo_s(&["-n", "--help"]), "--help");
    }

    #[test]
    fn echo_posixly_correct() {
        let f = |v: &[&str]| String::from_utf8(echo(&os(v), true)).unwrap();
        assert_eq!(f(&["-e", "a\\tb"]), "-e a\tb\n");
        assert_eq!(f(&["-n", "a\\tb", "-e"]), "a\tb -e");
        assert_eq!(f(&["--help"]), "--help\n");
    }

    #[test]
    fn echo_escapes() {
        let e = |s: &str| echo(&os(&["-ne", s]), false);
        assert_eq!(
            e("\\\\ \\a\\b\\e\\f\\n\\r\\t\\v"),
            b"\\ \x07\x08\x1b\x0c\n\r\t\x0b"
        );
        assert_eq!(e("a\\cb"), b"a");
        assert_eq!(echo(&os(&["-e", "a", "b\\c", "c"]), false), b"a b");
        assert_eq!(e("\\x41\\x4a2\\x4\\x\\xg"), b"AJ2\x04\\x\\xg");
        assert_eq!(e("\\0101\\101\\1010\\0\\08\\0777"), b"AAA0\0\x008\xff");
        assert_eq!(e("\\q\\"), b"\\q\\");
        assert_eq!(e("\\-"), b"\\-");
    }

    #[test]
    fn base_names() {
        let b = |n: &str, s: Option<&str>| {
            String::from_utf8(base_name(n.as_bytes(), s.map(str::as_bytes)).to_vec()).unwrap()
        };
        assert_eq!(b("/a/b.txt", Some(".txt")), "b");
        assert_eq!(b("a/b/c", None), "c");
        assert_eq!(b("a/b/", None), "b");
        assert_eq!(b("a//b//", None), "b");
        assert_eq!(b("/", None), "/");
        assert_eq!(b("///", Some("/")), "/");
        assert_eq!(b("", None), "");
        assert_eq!(b("x", None), "x");
        assert_eq!(b(".txt", Some(".txt")), ".txt");
        assert_eq!(b("a.txt/", Some(".txt")), "a");
        assert_eq!(b("a.txt", Some("")), "a.txt");
        assert_eq!(b("a.txt", Some("b.txt")), "a.txt");
    }

    #[test]
    fn dir_names() {
        let d = |n: &str| String::from_utf8(dir_name(n.as_bytes()).to_vec()).unwrap();
        assert_eq!(d("a/b/c"), "a/b");
        assert_eq!(d("/a"), "/");
        assert_eq!(d("a"), ".");
        assert_eq!(d(""), ".");
        assert_eq!(d("a/b/"), "a");
        assert_eq!(d("a/b//c//"), "a/b");
        assert_eq!(d("/"), "/");
        assert_eq!(d("///"), "/");
        assert_eq!(d("//a//b"), "//a");
        assert_eq!(d("a/"), ".");
        assert_eq!(d("/a/"), "/");
        assert_eq!(d("./x"), ".");
        assert_eq!(d("../x/y"), "../x");
    }
}
