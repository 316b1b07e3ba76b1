//! The core-utils bundle, run for real: every case of `guest/tests/cases.json` goes through
//! the installed, verified `coreutils.wasm` in this crate's runner ([`Toolbox::exec`]) and
//! through the host's GNU tools, in identical directories, and the two are compared with the
//! corpus's rules (docs/guest-coreutils.md): stdout bytes and exit status by default, sorted
//! lines for `find` / `grep -r`, the resulting tree with `check_files`, a fixed expectation
//! where GNU has no equivalent. No output of the bundle (stdout, stderr) may hold a uutils
//! message id (`ls-total`) that GNU's output and the case's inputs do not: an id is what a
//! utility prints when uucore did not embed its locale file (docs/guest-coreutils.md, "Locales on
//! a fresh registry"; the check is `guest/tests/support/message_ids.rs`, shared with the guest's
//! oracle test).
//!
//! Needs the registry `cargo xtask bundles` builds (CI builds it before the tests; locally the
//! test says so and passes when it is missing). `CASES_FILTER=text` runs only matching cases.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "test code: a panic is a failure report; the skip note is for the reader"
)]

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};

use agent_wasi::Input;
use agent_wasi::toolbox::Toolbox;
use serde::Deserialize;

use crate::support::{root, toolbox};

#[path = "../../../../guest/tests/support/message_ids.rs"]
mod message_ids;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Compare {
    #[default]
    All,
    Stdout,
    Exit,
    Sorted,
}

#[derive(Debug, Deserialize)]
struct Expected {
    stdout: String,
    status: i32,
}

#[derive(Debug, Deserialize)]
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

struct Outcome {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    status: i32,
    tree: BTreeMap<String, String>,
}

fn setup(dir: &Path, files: &BTreeMap<String, String>) {
    if dir.exists() {
        std::fs::remove_dir_all(dir).unwrap();
    }
    std::fs::create_dir_all(dir).unwrap();
    for (rel, content) in files {
        if let Some(d) = rel.strip_suffix('/') {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        } else {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, content).unwrap();
        }
    }
}

fn snapshot(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let p = e.path();
        let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        let ft = e.file_type().unwrap();
        if ft.is_symlink() {
            out.insert(format!("{rel}@"), String::new());
        } else if ft.is_dir() {
            out.insert(format!("{rel}/"), String::new());
            snapshot(root, &p, out);
        } else {
            let data = std::fs::read(&p).unwrap_or_default();
            out.insert(rel, String::from_utf8_lossy(&data).into_owned());
        }
    }
}

fn tree(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    snapshot(dir, dir, &mut out);
    out
}

fn gnu(case: &Case, dir: &Path) -> Outcome {
    let mut child = Command::new(&case.argv[0])
        .arg0(&case.argv[0])
        .args(&case.argv[1..])
        .current_dir(dir)
        .env_clear()
        .env("LC_ALL", "C")
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: cannot run the host's {}: {e}", case.name, case.argv[0]));
    let stdin = case.stdin.clone().unwrap_or_default();
    let mut pipe = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(stdin.as_bytes());
    });
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    let mut stderr = Vec::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_end(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap().code().unwrap_or(-1);
    let _ = writer.join();
    Outcome {
        stdout,
        stderr,
        status,
        tree: tree(dir),
    }
}

fn wasm(toolbox: &Toolbox, case: &Case, dir: &Path) -> Outcome {
    let out = toolbox
        .exec(
            case.argv.clone(),
            "/",
            vec![("LC_ALL".into(), "C".into())],
            Input::Bytes(case.stdin.clone().unwrap_or_default().into_bytes()),
            16 << 20,
            dir,
        )
        .unwrap();
    Outcome {
        stdout: out.stdout,
        stderr: out.stderr,
        status: out.exit_code,
        tree: tree(dir),
    }
}

/// The bundle's command names (guest/bundle.json): the prefixes of the message ids looked for.
fn bundle_commands() -> Vec<String> {
    let spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root().join("guest/bundle.json")).unwrap())
            .unwrap();
    let names: Vec<String> = spec["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.iter().any(|n| n == "ls"), "{names:?}");
    names
}

/// The message ids in `outputs` that `allowed` (GNU's output, the case's inputs) does not hold.
fn leaked_ids(outputs: &[&[u8]], allowed: &[&[u8]], commands: &[String]) -> Vec<String> {
    let text = |parts: &[&[u8]]| String::from_utf8_lossy(&parts.join(&b'\n')).into_owned();
    let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
    message_ids::leaked_message_ids(&text(outputs), &text(allowed), &commands)
}

fn sorted_lines(bytes: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(bytes)
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

#[test]
fn every_case_matches_gnu_through_the_wasm_runner() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(toolbox) = toolbox(tmp.path()) else {
        return;
    };
    let cases: Vec<Case> = serde_json::from_str(
        &std::fs::read_to_string(root().join("guest/tests/cases.json")).unwrap(),
    )
    .unwrap();
    assert!(cases.len() >= 150, "the corpus has {} cases", cases.len());
    let filter = std::env::var("CASES_FILTER").unwrap_or_default();
    let work = tmp.path().join("case");
    let commands = bundle_commands();
    let mut failures = Vec::new();
    let mut ran = 0;
    // `coreutils NAME ...` exercises the multicall's own dispatch, which the runner never uses:
    // it runs bundle commands by name, and `coreutils` is not one (the runner answers 127).
    for case in cases
        .iter()
        .filter(|c| c.name.contains(&filter) && c.argv[0] != "coreutils")
    {
        ran += 1;
        setup(&work, &case.files);
        let ours = wasm(&toolbox, case, &work);
        let (want_stdout, want_stderr, want_status, want_tree) = match &case.expected {
            Some(e) => (e.stdout.clone().into_bytes(), Vec::new(), e.status, None),
            None => {
                setup(&work, &case.files);
                let theirs = gnu(case, &work);
                (
                    theirs.stdout,
                    theirs.stderr,
                    theirs.status,
                    Some(theirs.tree),
                )
            }
        };
        let mut why = Vec::new();
        let stdout_ok = match case.compare {
            Compare::Exit => true,
            Compare::Sorted => sorted_lines(&ours.stdout) == sorted_lines(&want_stdout),
            Compare::All | Compare::Stdout => ours.stdout == want_stdout,
        };
        if !stdout_ok {
            why.push(format!(
                "stdout {:?} != {:?}",
                String::from_utf8_lossy(&ours.stdout),
                String::from_utf8_lossy(&want_stdout)
            ));
        }
        if case.compare != Compare::Stdout && ours.status != want_status {
            why.push(format!(
                "status {} != {} (stderr {:?})",
                ours.status,
                want_status,
                String::from_utf8_lossy(&ours.stderr)
            ));
        }
        if let Some(re) = &case.stdout_matches {
            let re = regex::Regex::new(re).unwrap();
            if !re.is_match(&String::from_utf8_lossy(&ours.stdout)) {
                why.push(format!("stdout does not match {:?}", case.stdout_matches));
            }
        }
        let mut allowed: Vec<&[u8]> = vec![&want_stdout, &want_stderr];
        allowed.extend(case.argv.iter().map(String::as_bytes));
        allowed.extend(case.stdin.iter().map(String::as_bytes));
        for (name, content) in &case.files {
            allowed.extend([name.as_bytes(), content.as_bytes()]);
        }
        let leaked = leaked_ids(&[&ours.stdout, &ours.stderr], &allowed, &commands);
        if !leaked.is_empty() {
            why.push(format!(
                "message ids instead of messages {leaked:?} (stderr {:?})",
                String::from_utf8_lossy(&ours.stderr)
            ));
        }
        if case.check_files
            && let Some(want) = &want_tree
            && &ours.tree != want
        {
            why.push(format!("tree {:?} != {want:?}", ours.tree));
        }
        if !why.is_empty() {
            failures.push(format!(
                "{} ({:?}): {}",
                case.name,
                case.argv,
                why.join("; ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} cases differ from GNU:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `ls -l` in the guest (guest/vendor/README.md): WASI has no permission bits, owners or block
/// counts, so the patched uu_ls shows what the workspace is to the agent (files readable and
/// writable, directories searchable) and counts 4 KiB blocks, as GNU does on ext4; the sizes
/// and names are the real ones.
#[test]
fn ls_long_shows_writable_files_and_real_block_totals() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(toolbox) = toolbox(tmp.path()) else {
        return;
    };
    let work = tmp.path().join("ws");
    setup(
        &work,
        &BTreeMap::from([
            ("a.txt".to_owned(), "abc".to_owned()),
            ("big.bin".to_owned(), "x".repeat(5000)),
            ("empty".to_owned(), String::new()),
            ("sub/n.txt".to_owned(), "n\n".to_owned()),
        ]),
    );
    let run = |argv: &[&str]| {
        let out = toolbox
            .exec(
                argv.iter().map(|a| (*a).to_owned()).collect(),
                "/",
                vec![("LC_ALL".into(), "C".into())],
                Input::Bytes(Vec::new()),
                1 << 20,
                &work,
            )
            .unwrap();
        assert_eq!(
            out.exit_code,
            0,
            "{:?}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let long = run(&["ls", "-l"]);
    let lines: Vec<(&str, &str)> = long
        .lines()
        .skip(1)
        .map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            (fields[0], *fields.last().unwrap())
        })
        .collect();
    assert_eq!(
        lines,
        [
            ("-rw-r--r--", "a.txt"),
            ("-rw-r--r--", "big.bin"),
            ("-rw-r--r--", "empty"),
            ("drwxr-xr-x", "sub"),
        ],
        "{long}"
    );
    // 4 (a.txt) + 8 (big.bin, 5000 bytes) + 0 (empty) + 4 (sub) KiB.
    assert!(long.starts_with("total 16\n"), "{long}");
    assert_eq!(run(&["ls", "-s", "big.bin"]), "8 big.bin\n");
    assert_eq!(run(&["ls", "-sh", "a.txt"]), "4.0K a.txt\n");
}

/// What uucore embeds for `ls` (docs/guest-coreutils.md, "Locales on a fresh registry"): `ls`
/// runs the vendored copy, and a build whose uucore had not embedded ls's locale file printed the
/// message ids (`ls-total 16`, `ls: ls-error-cannot-access-no-such-file`) instead of the messages.
#[test]
fn ls_prints_its_messages_not_their_ids() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(toolbox) = toolbox(tmp.path()) else {
        return;
    };
    let work = tmp.path().join("ws");
    setup(
        &work,
        &BTreeMap::from([("a.txt".to_owned(), "abc".to_owned())]),
    );
    let run = |argv: &[&str]| {
        toolbox
            .exec(
                argv.iter().map(|a| (*a).to_owned()).collect(),
                "/",
                vec![("LC_ALL".into(), "C".into())],
                Input::Bytes(Vec::new()),
                1 << 20,
                &work,
            )
            .unwrap()
    };
    let long = run(&["ls", "-l"]);
    let stdout = String::from_utf8_lossy(&long.stdout);
    assert_eq!(
        long.exit_code,
        0,
        "{:?}",
        String::from_utf8_lossy(&long.stderr)
    );
    assert!(stdout.starts_with("total 4\n"), "{stdout:?}");
    let missing = run(&["ls", "missing.txt"]);
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.exit_code, 2, "{stderr:?}");
    assert_eq!(
        stderr,
        "ls: cannot access 'missing.txt': No such file or directory\n"
    );
}

/// Every command's `--help` through the bundle is text, not message ids: uutils builds its help
/// from the utility's locale file (`cp-about`, `cp-usage`, `cp-help-...`), so this fails for any
/// utility whose locale file uucore did not embed in the wasm build.
#[test]
fn every_command_help_is_text_not_message_ids() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(toolbox) = toolbox(tmp.path()) else {
        return;
    };
    let work = tmp.path().join("ws");
    std::fs::create_dir_all(&work).unwrap();
    let commands = bundle_commands();
    let mut failures = Vec::new();
    for command in &commands {
        let out = toolbox
            .exec(
                vec![command.clone(), "--help".to_owned()],
                "/",
                vec![("LC_ALL".into(), "C".into())],
                Input::Bytes(Vec::new()),
                1 << 20,
                &work,
            )
            .unwrap();
        let leaked = leaked_ids(&[&out.stdout, &out.stderr], &[], &commands);
        if !leaked.is_empty() {
            failures.push(format!("{command} --help: {leaked:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
