//! Guest core-utils: the applet allowlist and the multicall dispatcher.
//!
//! The `coreutils` binary (compiled to `wasm32-wasip1`) picks the applet from the basename of
//! argv\[0\], or from argv\[1\] when argv\[0\] is `coreutils` (or `coreutils.wasm`). The name must be
//! an exact entry of [`APPLETS`]; anything else prints `coreutils: unknown command NAME` and exits
//! 127. There is deliberately no suffix or prefix matching (the upstream uutils multicall maps
//! unknown names ending in a known name to that utility, e.g. `chmod` to `od`).
//!
//! Most applets are the uutils `uu_*` crates; `cmp` is uutils diffutils' (its library's `cmp`
//! module); `grep`, `sed`, `find`, `env`, `test` / `[` and `fetch` are this crate's own code (see
//! [`grep`], [`sed`], [`find`], [`mod@env`], [`mod@test`], [`fetch`]).
//!
//! [`lite`] holds the std-only `echo`, `true`, `false`, `pwd`, `basename` and `dirname` of the
//! small second module, `coreutils-lite` (its own binary calls [`lite::run_lite`]); the bundle
//! runs those names from there, while this multicall keeps its uutils versions.

use std::ffi::OsString;
use std::io::Write;

pub mod env;
pub mod fetch;
pub mod find;
pub mod fnmatch;
pub mod grep;
pub mod lite;
pub mod posix_re;
pub mod sed;
pub mod test;
pub mod util;

/// The exit status for a name that is not in the allowlist (as a shell's "command not found").
pub const EXIT_UNKNOWN_COMMAND: i32 = 127;

/// Arguments handed to a uutils `uumain`.
type UuArgs = std::vec::IntoIter<OsString>;

/// How an applet runs.
#[derive(Clone, Copy)]
enum Runner {
    /// A uutils crate's `uumain`, with the name of its localisation bundle.
    Uu(fn(UuArgs) -> i32, &'static str),
    /// This crate's own code.
    Own(fn(Vec<OsString>) -> i32),
}

/// Every applet name the multicall accepts, sorted. This is the bundle manifest's command list.
pub const APPLETS: &[&str] = &[
    "[",
    "base32",
    "base64",
    "basename",
    "cat",
    "cksum",
    "cmp",
    "comm",
    "cp",
    "cut",
    "date",
    "dirname",
    "echo",
    "env",
    "expand",
    "expr",
    "factor",
    "false",
    "fetch",
    "find",
    "fmt",
    "fold",
    "grep",
    "head",
    "join",
    "ln",
    "ls",
    "md5sum",
    "mkdir",
    "mktemp",
    "mv",
    "nl",
    "nproc",
    "numfmt",
    "od",
    "paste",
    "printenv",
    "printf",
    "pwd",
    "readlink",
    "realpath",
    "rm",
    "rmdir",
    "sed",
    "seq",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "shuf",
    "sleep",
    "sort",
    "split",
    "tac",
    "tail",
    "tee",
    "test",
    "touch",
    "tr",
    "true",
    "truncate",
    "tsort",
    "unexpand",
    "uniq",
    "wc",
    "yes",
];

/// WASI preview 1 has no working directory of its own: the runner passes the shell's as `PWD`
/// (a guest path such as `/src`), and this enters it before any applet runs, so relative paths
/// resolve where the shell is. Only on WASI; a native build keeps the process's directory.
pub(crate) fn enter_pwd() -> Result<(), i32> {
    if !cfg!(target_os = "wasi") {
        return Ok(());
    }
    let Some(pwd) = std::env::var_os("PWD") else {
        return Ok(());
    };
    let path = std::path::Path::new(&pwd);
    if !path.is_absolute() || path == std::path::Path::new("/") {
        return Ok(());
    }
    std::env::set_current_dir(path).map_err(|e| {
        let _ = writeln!(
            std::io::stderr(),
            "coreutils: cannot enter the working directory {}: {e}",
            path.display()
        );
        1
    })
}

/// The allowlist: an exact match on the applet name, nothing else.
fn lookup(name: &str) -> Option<Runner> {
    use Runner::{Own, Uu};
    let runner = match name {
        "[" => Own(test::main),
        "base32" => Uu(uu_base32::uumain, "base32"),
        "base64" => Uu(uu_base64::uumain, "base64"),
        "basename" => Uu(uu_basename::uumain, "basename"),
        "cat" => Uu(uu_cat::uumain, "cat"),
        "cksum" => Uu(uu_cksum::uumain, "cksum"),
        "cmp" => Own(cmp_main),
        "comm" => Uu(uu_comm::uumain, "comm"),
        "cp" => Uu(uu_cp::uumain, "cp"),
        "cut" => Uu(uu_cut::uumain, "cut"),
        "date" => Uu(uu_date::uumain, "date"),
        "dirname" => Uu(uu_dirname::uumain, "dirname"),
        "echo" => Uu(uu_echo::uumain, "echo"),
        "env" => Own(env::main),
        "expand" => Uu(uu_expand::uumain, "expand"),
        "expr" => Uu(uu_expr::uumain, "expr"),
        "factor" => Uu(uu_factor::uumain, "factor"),
        "false" => Uu(uu_false::uumain, "false"),
        "fetch" => Own(fetch::main),
        "find" => Own(find::main),
        "fmt" => Uu(uu_fmt::uumain, "fmt"),
        "fold" => Uu(uu_fold::uumain, "fold"),
        "grep" => Own(grep::main),
        "head" => Uu(uu_head::uumain, "head"),
        "join" => Uu(uu_join::uumain, "join"),
        "ln" => Uu(uu_ln::uumain, "ln"),
        // The patched copy (vendor/README.md); crates.io's `uu_ls` is a dependency only for its
        // locale files.
        "ls" => Uu(uu_ls_wasi::uumain, "ls"),
        "md5sum" => Uu(uu_md5sum::uumain, "md5sum"),
        "mkdir" => Uu(uu_mkdir::uumain, "mkdir"),
        "mktemp" => Uu(uu_mktemp::uumain, "mktemp"),
        "mv" => Uu(uu_mv::uumain, "mv"),
        "nl" => Uu(uu_nl::uumain, "nl"),
        "nproc" => Uu(uu_nproc::uumain, "nproc"),
        "numfmt" => Uu(uu_numfmt::uumain, "numfmt"),
        "od" => Uu(uu_od::uumain, "od"),
        "paste" => Uu(uu_paste::uumain, "paste"),
        "printenv" => Uu(uu_printenv::uumain, "printenv"),
        "printf" => Uu(uu_printf::uumain, "printf"),
        "pwd" => Uu(uu_pwd::uumain, "pwd"),
        "readlink" => Uu(uu_readlink::uumain, "readlink"),
        "realpath" => Uu(uu_realpath::uumain, "realpath"),
        "rm" => Uu(uu_rm::uumain, "rm"),
        "rmdir" => Uu(uu_rmdir::uumain, "rmdir"),
        "sed" => Own(sed::main),
        "seq" => Uu(uu_seq::uumain, "seq"),
        "sha1sum" => Uu(uu_sha1sum::uumain, "sha1sum"),
        "sha256sum" => Uu(uu_sha256sum::uumain, "sha256sum"),
        "sha512sum" => Uu(uu_sha512sum::uumain, "sha512sum"),
        "shuf" => Uu(uu_shuf::uumain, "shuf"),
        "sleep" => Uu(uu_sleep::uumain, "sleep"),
        "sort" => Uu(uu_sort::uumain, "sort"),
        "split" => Uu(uu_split::uumain, "split"),
        "tac" => Uu(uu_tac::uumain, "tac"),
        "tail" => Uu(uu_tail::uumain, "tail"),
        "tee" => Uu(uu_tee::uumain, "tee"),
        "test" => Own(test::main),
        "touch" => Uu(uu_touch::uumain, "touch"),
        "tr" => Uu(uu_tr::uumain, "tr"),
        "true" => Uu(uu_true::uumain, "true"),
        "truncate" => Uu(uu_truncate::uumain, "truncate"),
        "tsort" => Uu(uu_tsort::uumain, "tsort"),
        "unexpand" => Uu(uu_unexpand::uumain, "unexpand"),
        "uniq" => Uu(uu_uniq::uumain, "uniq"),
        "wc" => Uu(uu_wc::uumain, "wc"),
        "yes" => Uu(uu_yes::uumain, "yes"),
        _ => return None,
    };
    Some(runner)
}

/// Whether `name` is an applet of the allowlist.
pub fn is_applet(name: &str) -> bool {
    lookup(name).is_some()
}

/// The names under which the binary acts as the multicall itself (applet in argv\[1\]).
fn is_multicall_name(name: &str) -> bool {
    matches!(name, "coreutils" | "coreutils.wasm")
}

/// The last `/`-separated component of argv\[0\], lossily decoded.
pub(crate) fn basename(arg0: &OsString) -> String {
    let s = arg0.to_string_lossy();
    let trimmed = s.trim_end_matches('/');
    match trimmed.rsplit_once('/') {
        Some((_, base)) => base.to_owned(),
        None => trimmed.to_owned(),
    }
}

/// Runs the multicall with the full argv (argv\[0\] included) and returns the exit status.
pub fn run(args: Vec<OsString>) -> i32 {
    if let Err(code) = enter_pwd() {
        return code;
    }
    let mut args = args.into_iter();
    let Some(arg0) = args.next() else {
        let _ = writeln!(std::io::stderr(), "coreutils: missing command name");
        return EXIT_UNKNOWN_COMMAND;
    };
    let mut name = basename(&arg0);
    let mut applet_arg0 = arg0;
    let mut multicall = false;
    if is_multicall_name(&name) {
        let Some(applet) = args.next() else {
            let _ = writeln!(
                std::io::stderr(),
                "coreutils: missing command name\nUsage: coreutils COMMAND [ARG]...\nCommands: {}",
                APPLETS.join(" ")
            );
            return 1;
        };
        if applet == "--list" {
            let mut out = std::io::stdout().lock();
            for a in APPLETS {
                if writeln!(out, "{a}").is_err() {
                    return 1;
                }
            }
            return 0;
        }
        name = basename(&applet);
        applet_arg0 = applet;
        multicall = true;
    }
    let Some(runner) = lookup(&name) else {
        let _ = writeln!(std::io::stderr(), "coreutils: unknown command {name}");
        return EXIT_UNKNOWN_COMMAND;
    };
    let mut argv: Vec<OsString> = std::iter::once(applet_arg0).chain(args).collect();
    if cfg!(target_os = "wasi") && name == "cp" {
        argv = cp_args_without_modes(argv);
    }
    if cfg!(target_os = "wasi") && name == "sort" {
        match sort_args_without_threads(argv) {
            Ok(a) => argv = a,
            Err(msg) => {
                let _ = writeln!(std::io::stderr(), "sort: {msg}");
                return 2;
            }
        }
    }
    if cfg!(target_os = "wasi") && name == "split" && split_runs_a_filter(&argv) {
        let _ = writeln!(
            std::io::stderr(),
            "split: --filter is not supported in this environment: running other commands is not possible"
        );
        return 1;
    }
    if cfg!(target_os = "wasi") && name == "tac" {
        tac_stdin_in_memory();
    }
    let status = match runner {
        Runner::Uu(uumain, bundle) => {
            if multicall {
                // uucore derives its utility name (for messages and `[`) from the process argv.
                uucore::set_utility_is_second_arg();
            }
            if let Err(e) = uucore::locale::setup_localization(bundle) {
                let _ = writeln!(std::io::stderr(), "{name}: cannot set up messages: {e}");
                return 1;
            }
            uumain(argv.into_iter())
        }
        Runner::Own(main) => main(argv),
    };
    let _ = std::io::stdout().flush();
    status
}

/// WASI preview 1 has no file modes: uutils `cp` fails with "Function not implemented" when it
/// must preserve the mode (`-p`, `-a`, `--preserve=mode`). On WASI the dispatcher adds
/// `--no-preserve=mode` after the other options (before `--` if there is one; uu_cp lets the
/// last of `--preserve`/`--no-preserve` win), so timestamps, links and the copy itself still
/// happen and the exit status is 0.
pub fn cp_args_without_modes(mut args: Vec<OsString>) -> Vec<OsString> {
    let flag = OsString::from("--no-preserve=mode");
    match args.iter().skip(1).position(|a| a == "--") {
        Some(k) => args.insert(k + 1, flag),
        None => args.push(flag),
    }
    args
}

/// uutils `split` 0.12 built for WASI ignores `--filter=COMMAND` (there are no processes to pipe
/// into) and writes the output files instead. On WASI the dispatcher refuses it, as `find -exec`
/// and `env COMMAND` are refused: this says whether `args` (argv\[0\] first) asks for a filter,
/// `--filter` or any abbreviation down to `--f` (the only long option of split starting with f),
/// before a `--`.
pub fn split_runs_a_filter(args: &[OsString]) -> bool {
    args.iter().skip(1).take_while(|a| *a != "--").any(|a| {
        let s = a.to_string_lossy();
        let name = s.split_once('=').map_or(&*s, |(n, _)| n);
        name.len() >= 3 && "--filter".starts_with(name)
    })
}

/// uutils `tac` 0.12 copies standard input to an unnamed temporary file and memory-maps it. On
/// wasm32-wasip1 std's `temp_dir()` panics (the module would trap) and there is no `mmap`; when
/// the temporary file cannot be created, tac reads standard input into memory instead. On WASI the
/// dispatcher therefore points tempfile's default directory (the one `tempfile::tempfile` uses) at
/// a path no file can be created in: it contains a NUL byte, so the open fails before any system
/// call. Files named as operands are read into memory anyway.
fn tac_stdin_in_memory() {
    let _ = tempfile::env::override_temp_dir(std::path::Path::new("\0"));
}

/// `cmp` is uutils diffutils' (its library's `cmp` module). That module's `main` takes the
/// process's own `ArgsOs`, with no variant over a given argument list (its parameters are private
/// fields), so this hands it `std::env::args_os()` with the multicall's shift (`coreutils cmp A B`
/// skips `coreutils`) after checking that those are the arguments dispatched (`args`). Exit status
/// as GNU cmp: 0 same, 1 different, 2 trouble.
fn cmp_main(args: Vec<OsString>) -> i32 {
    let skip = usize::from(
        std::env::args_os()
            .next()
            .is_some_and(|a0| is_multicall_name(&basename(&a0))),
    );
    if !std::env::args_os().skip(skip).eq(args) {
        let _ = writeln!(
            std::io::stderr(),
            "cmp: runs only with the process's own arguments"
        );
        return 2;
    }
    let mut process_args = std::env::args_os();
    if skip == 1 {
        process_args.next();
    }
    let code = diffutilslib::cmp::main(process_args.peekable());
    if code == std::process::ExitCode::SUCCESS {
        0
    } else if code == std::process::ExitCode::from(1) {
        1
    } else {
        2
    }
}

/// `uu_sort` 0.12 spawns a reader thread for `--check` and `--merge`, and wasm32-wasip1 has no
/// threads (the spawn panics, i.e. the module traps). On WASI the dispatcher therefore drops
/// `-m`/`--merge` (sorting already-sorted inputs gives the merged output; uu_sort's WASI sort
/// path is single-threaded) and refuses `-c`/`-C`/`--check` with an error (exit 2).
pub fn sort_args_without_threads(args: Vec<OsString>) -> Result<Vec<OsString>, String> {
    // Short options that take a value (the rest of the cluster, or the next argument).
    const SHORT_WITH_VALUE: &[u8] = b"ktoST";
    const LONG_WITH_VALUE: &[&str] = &[
        "key",
        "field-separator",
        "output",
        "buffer-size",
        "temporary-directory",
        "parallel",
        "batch-size",
        "compress-program",
        "files0-from",
        "random-source",
        "sort",
    ];
    const CHECK: &str = "--check and -c/-C are not supported in this environment (no threads)";
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    if let Some(a0) = it.next() {
        out.push(a0);
    }
    let mut options_done = false;
    while let Some(arg) = it.next() {
        let s = arg.to_string_lossy().into_owned();
        if options_done || s == "-" || !s.starts_with('-') {
            out.push(arg);
            continue;
        }
        if s == "--" {
            options_done = true;
            out.push(arg);
            continue;
        }
        if let Some(long) = s.strip_prefix("--") {
            let (name, has_value) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            if name.len() >= 2 && "merge".starts_with(name) {
                continue;
            }
            if name.len() >= 2 && "check".starts_with(name) {
                return Err(CHECK.to_owned());
            }
            let takes_value = LONG_WITH_VALUE
                .iter()
                .any(|l| l.starts_with(name) && name.len() >= 2);
            out.push(arg);
            if takes_value
                && !has_value
                && let Some(v) = it.next()
            {
                out.push(v);
            }
            continue;
        }
        // A cluster of short options: drop `m`, refuse `c`/`C`, stop at a value-taking letter.
        let bytes = util::os_bytes(&arg);
        let mut kept = vec![b'-'];
        let mut value_follows = false;
        for (k, &c) in bytes.iter().enumerate().skip(1) {
            if SHORT_WITH_VALUE.contains(&c) {
                kept.extend_from_slice(&bytes[k..]);
                value_follows = k + 1 == bytes.len();
                break;
            }
            match c {
                b'm' => {}
                b'c' | b'C' => return Err(CHECK.to_owned()),
                _ => kept.push(c),
            }
        }
        if kept.len() == bytes.len() {
            out.push(arg);
        } else if kept.len() > 1 {
            out.push(util::bytes_os(kept));
        }
        if value_follows && let Some(v) = it.next() {
            out.push(v);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applets_sorted_and_all_dispatch() {
        let mut sorted = APPLETS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, APPLETS);
        for a in APPLETS {
            assert!(is_applet(a), "{a}");
        }
    }

    #[test]
    fn no_suffix_matching() {
        for name in [
            "chmod",
            "chown",
            "xcat",
            "cat2",
            "uu-cat",
            "",
            "coreutils",
            "CAT",
            "[[",
        ] {
            assert!(!is_applet(name), "{name}");
        }
    }

    #[test]
    fn basename_of_arg0() {
        assert_eq!(basename(&"/usr/bin/cat".into()), "cat");
        assert_eq!(basename(&"cat".into()), "cat");
        assert_eq!(basename(&"[".into()), "[");
        assert_eq!(basename(&"dir/".into()), "dir");
    }

    fn sort_args(v: &[&str]) -> Result<Vec<String>, String> {
        sort_args_without_threads(v.iter().map(OsString::from).collect())
            .map(|a| a.iter().map(|s| s.to_string_lossy().into_owned()).collect())
    }

    #[test]
    fn sort_merge_and_check_on_wasi() {
        assert_eq!(
            sort_args(&["sort", "-m", "a", "b"]).unwrap(),
            ["sort", "a", "b"]
        );
        assert_eq!(
            sort_args(&["sort", "-mn", "a"]).unwrap(),
            ["sort", "-n", "a"]
        );
        assert_eq!(
            sort_args(&["sort", "--merge", "-r"]).unwrap(),
            ["sort", "-r"]
        );
        assert_eq!(
            sort_args(&["sort", "-t", "m", "-k", "2"]).unwrap(),
            ["sort", "-t", "m", "-k", "2"]
        );
        assert_eq!(
            sort_args(&["sort", "-tm", "-nk1m"]).unwrap(),
            ["sort", "-tm", "-nk1m"]
        );
        assert_eq!(
            sort_args(&["sort", "-o", "-m", "f"]).unwrap(),
            ["sort", "-o", "-m", "f"]
        );
        assert_eq!(
            sort_args(&["sort", "--", "-m"]).unwrap(),
            ["sort", "--", "-m"]
        );
        assert_eq!(
            sort_args(&["sort", "--key", "2", "-u"]).unwrap(),
            ["sort", "--key", "2", "-u"]
        );
        assert!(sort_args(&["sort", "-c"]).is_err());
        assert!(sort_args(&["sort", "-nC"]).is_err());
        assert!(sort_args(&["sort", "--check=quiet"]).is_err());
        assert!(sort_args(&["sort", "--check"]).is_err());
    }

    #[test]
    fn split_filter_is_detected() {
        let f = |v: &[&str]| split_runs_a_filter(&v.iter().map(OsString::from).collect::<Vec<_>>());
        assert!(f(&["split", "--filter=gzip > $FILE.gz", "a"]));
        assert!(f(&["split", "-l", "2", "--filter", "cat", "a"]));
        assert!(f(&["split", "--fil=cat", "a"]));
        assert!(f(&["split", "--f", "cat", "a"]));
        assert!(!f(&["split", "-l", "2", "a", "p"]));
        assert!(!f(&["split", "--", "--filter=x"]));
        assert!(!f(&["split", "-", "--"]));
        assert!(!f(&["--filter", "a"]));
    }

    #[test]
    fn cp_never_preserves_modes_on_wasi() {
        let f = |v: &[&str]| -> Vec<String> {
            cp_args_without_modes(v.iter().map(OsString::from).collect())
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(
            f(&["cp", "-a", "d", "e"]),
            ["cp", "-a", "d", "e", "--no-preserve=mode"]
        );
        assert_eq!(
            f(&["cp", "-p", "--", "-x", "y"]),
            ["cp", "-p", "--no-preserve=mode", "--", "-x", "y"]
        );
    }

    #[test]
    fn unknown_is_127() {
        assert_eq!(
            run(vec!["chmod".into(), "600".into()]),
            EXIT_UNKNOWN_COMMAND
        );
        assert_eq!(
            run(vec!["coreutils".into(), "chown".into()]),
            EXIT_UNKNOWN_COMMAND
        );
        assert_eq!(run(vec![]), EXIT_UNKNOWN_COMMAND);
    }
}
