//! Oracle test: runs every case of `tests/cases.json` through the host's GNU tools (coreutils,
//! grep, sed, findutils) and through this crate's `coreutils` multicall compiled natively for the
//! host, and compares them; a case whose command is a lite applet (`echo`, `true`, `false`, `pwd`,
//! `basename`, `dirname`) also runs through the `coreutils-lite` binary, compared the same way.
//! The runner crate runs the same corpus through the wasm build (the bundle's mapping).
//!
//! Rules (also in docs/guest-coreutils.md):
//! - Each case runs in a fresh directory holding `files` (a key ending in `/` is an empty
//!   directory; parents are implied), which is the current directory; arguments use relative
//!   paths only. Both sides run in the same directory path, which is emptied and set up again
//!   between the two runs.
//! - The environment is cleared except `LC_ALL=C` and (host side only) `PATH`.
//! - argv\[0\] is the command name (`CommandExt::arg0`); `stdin` (default empty) is piped in.
//! - `compare`: `all` (default) compares stdout bytes and the exit status; `stdout` only stdout;
//!   `exit` only the exit status; `sorted` stdout with its lines sorted, and the exit status (for
//!   `find` and `grep -r`, whose GNU order is the file system's directory order).
//! - `stdout_matches` (a regex): both stdouts must match it (used with `compare: exit`).
//! - `check_files`: the resulting trees (paths, kinds, file contents) must be equal too.
//! - `expected` (`{stdout, status}`): compared against that instead of GNU, for behaviour GNU has
//!   no equivalent of (multicall dispatch, `env` refusing to run a command).
//! - Neither output (stdout, stderr) of ours may hold a uutils message id (`ls-total`) that the
//!   reference's output and the case's inputs do not (`support/message_ids.rs`): an id is what a
//!   utility prints when its locale file was not embedded.
//!
//! `ORACLE_FILTER=text` runs only the cases whose name contains `text`.

#![allow(
    clippy::expect_used,
    reason = "test harness: a failed setup step must abort the test with its message"
)]

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

#[path = "support/message_ids.rs"]
mod message_ids;

/// What to compare for a case.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Compare {
    #[default]
    All,
    Stdout,
    Exit,
    Sorted,
}

/// A fixed expectation replacing the GNU run.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expected {
    stdout: String,
    status: i32,
}

/// One case of the corpus.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    argv: Vec<String>,
    #[serde(default)]
    stdin: Option<String>,
    #[serde(default)]
    files: BTreeMap<String, String>,
    #[serde(default)]
    check_files: bool,
    #[serde(default)]
    compare: Compare,
    #[serde(default)]
    stdout_matches: Option<String>,
    #[serde(default)]
    expected: Option<Expected>,
}

/// What one run produced.
#[derive(Debug)]
struct Outcome {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    status: i32,
    tree: BTreeMap<String, String>,
}

fn load_cases() -> Vec<Case> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases.json");
    let text = fs::read_to_string(&path).expect("read cases.json");
    serde_json::from_str(&text).expect("parse cases.json")
}

fn setup(dir: &Path, files: &BTreeMap<String, String>) {
    if dir.exists() {
        fs::remove_dir_all(dir).expect("clear case dir");
    }
    fs::create_dir_all(dir).expect("create case dir");
    for (rel, content) in files {
        assert!(
            !rel.starts_with('/') && !rel.contains(".."),
            "relative paths only: {rel}"
        );
        let p = dir.join(rel);
        if let Some(d) = rel.strip_suffix('/') {
            fs::create_dir_all(dir.join(d)).expect("mkdir");
        } else {
            if let Some(parent) = p.parent() {
                fs::create_dir_all(parent).expect("mkdir parent");
            }
            fs::write(&p, content).expect("write file");
        }
    }
}

fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        let mut entries: Vec<_> = fs::read_dir(dir).expect("read_dir").flatten().collect();
        entries.sort_by_key(fs::DirEntry::file_name);
        for e in entries {
            let p = e.path();
            let rel = p
                .strip_prefix(root)
                .expect("prefix")
                .to_string_lossy()
                .into_owned();
            let ft = e.file_type().expect("file type");
            if ft.is_symlink() {
                let target = fs::read_link(&p)
                    .map(|t| t.display().to_string())
                    .unwrap_or_default();
                out.insert(format!("{rel}@"), target);
            } else if ft.is_dir() {
                out.insert(format!("{rel}/"), String::new());
                walk(root, &p, out);
            } else {
                let data = fs::read(&p).unwrap_or_default();
                out.insert(rel, String::from_utf8_lossy(&data).into_owned());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Runs `program` with `argv` (argv\[0\] as given) in `dir`.
fn execute(program: &Path, argv: &[String], dir: &Path, stdin: &[u8]) -> Result<Outcome, String> {
    let host_path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    let mut cmd = Command::new(program);
    cmd.arg0(&argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .env_clear()
        .env("LC_ALL", "C")
        .env("PATH", host_path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("spawn {}: {e}", program.display()))?;
    let mut out_pipe = child.stdout.take().expect("stdout pipe");
    let mut err_pipe = child.stderr.take().expect("stderr pipe");
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out_pipe.read_to_end(&mut v);
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err_pipe.read_to_end(&mut v);
        v
    });
    if let Some(mut sin) = child.stdin.take() {
        let _ = sin.write_all(stdin);
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err("timed out after 30 s".into());
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let code = status.code().unwrap_or_else(|| {
        use std::os::unix::process::ExitStatusExt;
        128 + status.signal().unwrap_or(0)
    });
    Ok(Outcome {
        stdout: out_t.join().unwrap_or_default(),
        stderr: err_t.join().unwrap_or_default(),
        status: code,
        tree: snapshot(dir),
    })
}

/// Finds a program in the host PATH.
fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").ok()?;
    path.split(':')
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

fn show(b: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(b))
}

fn sorted_lines(b: &[u8]) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = b.split(|&c| c == b'\n').collect();
    v.sort();
    v
}

/// Compares one case; returns a description of every difference.
fn check(case: &Case, ours: &Outcome, theirs: &Outcome, label: &str) -> Vec<String> {
    let mut diffs = Vec::new();
    let cmp_stdout = matches!(case.compare, Compare::All | Compare::Stdout);
    let cmp_status = matches!(case.compare, Compare::All | Compare::Exit | Compare::Sorted);
    if cmp_stdout && ours.stdout != theirs.stdout {
        diffs.push(format!(
            "stdout differs\n    ours:  {}\n    {label}: {}",
            show(&ours.stdout),
            show(&theirs.stdout)
        ));
    }
    if case.compare == Compare::Sorted && sorted_lines(&ours.stdout) != sorted_lines(&theirs.stdout)
    {
        diffs.push(format!(
            "sorted stdout differs\n    ours:  {}\n    {label}: {}",
            show(&ours.stdout),
            show(&theirs.stdout)
        ));
    }
    if cmp_status && ours.status != theirs.status {
        diffs.push(format!(
            "exit status differs: ours {} {label} {}",
            ours.status, theirs.status
        ));
    }
    if let Some(re) = &case.stdout_matches {
        let re = regex::Regex::new(re).expect("stdout_matches regex");
        for (who, o) in [("ours", ours), (label, theirs)] {
            if !re.is_match(&String::from_utf8_lossy(&o.stdout)) {
                diffs.push(format!(
                    "{who} stdout {} does not match /{re}/",
                    show(&o.stdout)
                ));
            }
        }
    }
    if case.check_files && ours.tree != theirs.tree {
        diffs.push(format!(
            "file tree differs\n    ours:  {:?}\n    {label}: {:?}",
            ours.tree, theirs.tree
        ));
    }
    let leaked = leaked_ids(case, ours, theirs);
    if !leaked.is_empty() {
        diffs.push(format!(
            "message ids instead of messages (a locale file was not embedded): {leaked:?}"
        ));
    }
    if !diffs.is_empty() {
        diffs.push(format!(
            "stderr\n    ours:  {}\n    {label}: {}",
            show(&ours.stderr),
            show(&theirs.stderr)
        ));
    }
    diffs
}

/// The message ids in our stdout and stderr that the reference's output and the case's inputs
/// (arguments, stdin, file names and contents) do not hold.
fn leaked_ids(case: &Case, ours: &Outcome, theirs: &Outcome) -> Vec<String> {
    let output = [&ours.stdout[..], b"\n", &ours.stderr[..]].concat();
    let mut allowed = [&theirs.stdout[..], b"\n", &theirs.stderr[..]].concat();
    for text in case.argv.iter().chain(&case.stdin).chain(
        case.files
            .iter()
            .flat_map(|(name, content)| [name, content]),
    ) {
        allowed.push(b'\n');
        allowed.extend_from_slice(text.as_bytes());
    }
    message_ids::leaked_message_ids(
        &String::from_utf8_lossy(&output),
        &String::from_utf8_lossy(&allowed),
        guest_coreutils::APPLETS,
    )
}

#[test]
fn oracle_cases_match_gnu() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_coreutils"));
    let lite_bin = PathBuf::from(env!("CARGO_BIN_EXE_coreutils-lite"));
    let mut lite_ran = 0;
    let cases = load_cases();
    let filter = std::env::var("ORACLE_FILTER").ok();
    let base = tempfile::Builder::new()
        .prefix("oracle")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("tempdir");
    let mut failures = Vec::new();
    let mut ran = 0;
    for (n, case) in cases.iter().enumerate() {
        if filter
            .as_ref()
            .is_some_and(|f| !case.name.contains(f.as_str()))
        {
            continue;
        }
        ran += 1;
        let dir = base.path().join(format!("case{n}"));
        let stdin = case.stdin.as_deref().unwrap_or("").as_bytes();
        let theirs = match &case.expected {
            Some(e) => {
                setup(&dir, &case.files);
                Ok(Outcome {
                    stdout: e.stdout.as_bytes().to_vec(),
                    stderr: Vec::new(),
                    status: e.status,
                    tree: snapshot(&dir),
                })
            }
            None => match which(&case.argv[0]) {
                Some(gnu) => {
                    setup(&dir, &case.files);
                    execute(&gnu, &case.argv, &dir, stdin)
                }
                None => Err(format!("host has no `{}` to compare with", case.argv[0])),
            },
        };
        setup(&dir, &case.files);
        let ours = execute(&bin, &case.argv, &dir, stdin);
        let label = if case.expected.is_some() {
            "expected"
        } else {
            "gnu"
        };
        let mut diffs = match (ours, &theirs) {
            (Ok(o), Ok(t)) => check(case, &o, t, label),
            (Err(e), _) => vec![format!("ours failed to run: {e}")],
            (_, Err(e)) => vec![format!("{label} failed to run: {e}")],
        };
        if guest_coreutils::lite::is_lite_applet(&case.argv[0]) {
            lite_ran += 1;
            setup(&dir, &case.files);
            let lite = execute(&lite_bin, &case.argv, &dir, stdin);
            match (lite, &theirs) {
                (Ok(o), Ok(t)) => diffs.extend(
                    check(case, &o, t, label)
                        .into_iter()
                        .map(|d| format!("coreutils-lite: {d}")),
                ),
                (Err(e), _) => diffs.push(format!("coreutils-lite failed to run: {e}")),
                (_, Err(_)) => {}
            }
        }
        if !diffs.is_empty() {
            failures.push(format!(
                "case {:?} argv {:?}\n  {}",
                case.name,
                case.argv,
                diffs.join("\n  ")
            ));
        }
    }
    assert!(ran > 0, "no case selected");
    assert!(
        failures.is_empty(),
        "{} of {ran} oracle cases failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    assert!(
        filter.is_some() || lite_ran > 0,
        "no case ran through coreutils-lite"
    );
    println!("{ran} oracle cases match ({lite_ran} also through coreutils-lite)");
}

#[test]
fn corpus_covers_every_command() {
    let cases = load_cases();
    assert!(cases.len() >= 150, "only {} cases", cases.len());
    let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(before, names.len(), "case names must be unique");
    for cmd in guest_coreutils::APPLETS {
        let n = cases.iter().filter(|c| c.argv[0] == *cmd).count();
        assert!(n >= 1, "no case for `{cmd}`");
    }
    for c in &cases {
        assert!(!c.argv.is_empty(), "{}: empty argv", c.name);
        for f in c.files.keys() {
            assert!(
                !f.starts_with('/') && !f.contains(".."),
                "{}: {f} is not relative",
                c.name
            );
        }
    }
}

#[test]
fn bundle_spec_lists_exactly_the_applets() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("bundle.json");
    let spec: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(path).expect("read bundle.json")).expect("json");
    let commands = spec["commands"].as_array().expect("commands array");
    let mut names: Vec<&str> = commands
        .iter()
        .map(|c| c["name"].as_str().expect("name"))
        .collect();
    names.sort_unstable();
    assert_eq!(names, guest_coreutils::APPLETS);
    // Two modules: the lite applets from the small std-only one, everything else from the
    // multicall (which also keeps the lite names, see docs/guest-coreutils.md).
    for c in commands {
        let name = c["name"].as_str().expect("name");
        let module = if guest_coreutils::lite::is_lite_applet(name) {
            "coreutils-lite.wasm"
        } else {
            "coreutils.wasm"
        };
        assert_eq!(c["modulePath"], module, "{name}");
    }
    for name in guest_coreutils::lite::LITE_APPLETS {
        assert!(guest_coreutils::is_applet(name), "{name}");
    }
}

/// Every applet's `--help` is text, not message ids: uutils builds its help from the utility's
/// locale file (`ls-about`, `ls-usage`, `ls-help-...`), so this fails for any utility whose
/// locale file uucore did not embed (docs/guest-coreutils.md, "Locales on a fresh registry").
#[test]
fn every_applet_help_is_text_not_message_ids() {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_coreutils"));
    let dir = tempfile::Builder::new()
        .prefix("help")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("tempdir");
    let mut failures = Vec::new();
    for applet in guest_coreutils::APPLETS {
        let argv = [(*applet).to_owned(), "--help".to_owned()];
        let out = execute(&bin, &argv, dir.path(), b"").expect("run --help");
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let leaked = message_ids::leaked_message_ids(&text, "", guest_coreutils::APPLETS);
        if !leaked.is_empty() {
            failures.push(format!("{applet} --help: {leaked:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
