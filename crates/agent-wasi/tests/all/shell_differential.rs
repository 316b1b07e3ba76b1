//! `Shell(script)` against real bash and GNU coreutils.
//!
//! Every script of `fixtures/shell/corpus.txt` runs twice on identical copies of
//! `fixtures/shell/tree/`: with `bash --noprofile --norc -c SCRIPT` (environment `LC_ALL=C`,
//! `PATH=/usr/bin:/bin` and nothing else, stdin empty), and through `run_script` with a
//! [`NativeStageRunner`] that runs each stage as a host process from `/usr/bin`. Stdout, the
//! exit status and the resulting file trees must match; stderr wording may differ. Later the
//! same corpus runs with the WASI runner and the project's wasm coreutils.
//!
//! Both copies are made at the same absolute path, one after the other, and the shell mounts
//! its copy at that path (its default, the workspace's real path), so a script may print
//! absolute paths (`pwd`, `$PWD`, `/path/*.txt`): bash and the shell must print the same ones.
//!
//! Every script of `fixtures/shell/unsupported.txt` must be refused before anything runs, with
//! the construct named.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use std::os::unix::process::{CommandExt, ExitStatusExt};

use agent_wasi::shell::{ShellContext, ShellError, ShellOutput, Stage, StageRunner, run_script};

/// How long one script may run, either way, before the test gives up on it.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(20);

/// The commands the corpus may use: those the core-utils bundle will provide.
const COMMANDS: &[&str] = &[
    "cat", "echo", "printf", "ls", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "grep",
    "sed", "find", "mkdir", "rm", "rmdir", "cp", "mv", "touch", "true", "false", "test", "[",
    "basename", "dirname", "tee", "seq", "env", "printenv", "sleep",
];

const ENV: [(&str, &str); 2] = [("LC_ALL", "C"), ("PATH", "/usr/bin:/bin")];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/shell")
}

/// Reads a corpus file: one entry per line, `| ` continues the previous entry on a new line,
/// `#` comments and blank lines skipped.
fn entries(name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(fixtures().join(name)).unwrap();
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("| ") {
            let last = out
                .last_mut()
                .expect("a continuation line needs an entry before it");
            last.push('\n');
            last.push_str(rest);
        } else if !(line.trim().is_empty() || line.starts_with('#')) {
            out.push(line.to_owned());
        }
    }
    out
}

/// Runs each stage as a host process: `/usr/bin/NAME` (or `/bin/NAME`) for the names in
/// [`COMMANDS`], in the stage's directory (a guest path under the stage's mount) mapped under
/// `root`, with the stage's environment, its streams pumped by threads.
struct NativeStageRunner {
    root: PathBuf,
    stages: AtomicUsize,
}

impl NativeStageRunner {
    fn new(root: &Path) -> Self {
        Self {
            root: root.to_owned(),
            stages: AtomicUsize::new(0),
        }
    }

    fn program(name: &str) -> Option<PathBuf> {
        if !COMMANDS.contains(&name) {
            return None;
        }
        ["/usr/bin", "/bin"]
            .iter()
            .map(|dir| Path::new(dir).join(name))
            .find(|p| p.is_file())
    }
}

/// Copies `from` to `to` until either end fails; a broken pipe ends the copy quietly.
fn pump(mut from: impl Read, mut to: impl Write) {
    let mut buf = [0u8; 8192];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if to.write_all(&buf[..n]).is_err() || to.flush().is_err() {
            return;
        }
    }
}

impl StageRunner for NativeStageRunner {
    fn has_command(&self, name: &str) -> bool {
        Self::program(name).is_some()
    }

    fn run_stage(&self, stage: Stage) -> i32 {
        self.stages.fetch_add(1, Ordering::Relaxed);
        let Stage {
            argv,
            mount,
            cwd,
            env,
            stdin,
            stdout,
            mut stderr,
            stderr_is_stdout,
            wall_time,
            ..
        } = stage;
        let Some(program) = Self::program(&argv[0]) else {
            let _ = writeln!(stderr, "{}: not a corpus command", argv[0]);
            return 127;
        };
        let mut command = Command::new(program);
        command
            .arg0(&argv[0])
            .args(&argv[1..])
            .env_clear()
            .envs(env)
            .current_dir(
                self.root.join(
                    Path::new(&cwd)
                        .strip_prefix(&mount)
                        .expect("the shell keeps the working directory under the mount"),
                ),
            )
            .stdin(Stdio::piped());
        // One pipe for both outputs when they lead to the same place, so their order holds.
        let merged = if stderr_is_stdout {
            let (reader, writer) = std::io::pipe().unwrap();
            command.stdout(writer.try_clone().unwrap()).stderr(writer);
            Some(reader)
        } else {
            command.stdout(Stdio::piped()).stderr(Stdio::piped());
            None
        };
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                let _ = writeln!(stderr, "{}: {e}", argv[0]);
                return 126;
            }
        };
        // The parent's copies of the write ends must go, or the reader never sees the end.
        drop(command);
        let child_in = child.stdin.take().unwrap();
        let status = std::thread::scope(|scope| {
            let input = scope.spawn(move || pump(stdin, child_in));
            let outputs = match merged {
                Some(reader) => {
                    drop(stderr);
                    vec![scope.spawn(move || pump(reader, stdout))]
                }
                None => {
                    let child_out = child.stdout.take().unwrap();
                    let child_err = child.stderr.take().unwrap();
                    vec![
                        scope.spawn(move || pump(child_out, stdout)),
                        scope.spawn(move || pump(child_err, stderr)),
                    ]
                }
            };
            let status = match wall_time {
                None => child.wait().unwrap(),
                // As the wasm runner: stopped at the cap, status 124.
                Some(cap) => {
                    let deadline = std::time::Instant::now() + cap;
                    loop {
                        if let Some(status) = child.try_wait().unwrap() {
                            break status;
                        }
                        if std::time::Instant::now() >= deadline {
                            child.kill().unwrap();
                            child.wait().unwrap();
                            break std::process::ExitStatus::from_raw(124 << 8);
                        }
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                }
            };
            for output in outputs {
                output.join().unwrap();
            }
            input.join().unwrap();
            status
        });
        status
            .code()
            .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
    }
}

/// A file tree: relative path → what is there.
type Tree = BTreeMap<PathBuf, Node>;

#[derive(Debug, PartialEq, Eq)]
enum Node {
    Dir,
    File(Vec<u8>),
    Link(PathBuf),
}

fn snapshot(root: &Path) -> Tree {
    fn walk(root: &Path, dir: &Path, out: &mut Tree) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap().to_owned();
            let kind = entry.file_type().unwrap();
            if kind.is_symlink() {
                out.insert(rel, Node::Link(std::fs::read_link(&path).unwrap()));
            } else if kind.is_dir() {
                out.insert(rel, Node::Dir);
                walk(root, &path, out);
            } else {
                out.insert(rel, Node::File(std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Tree::new();
    walk(root, root, &mut out);
    out
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A fresh copy of the fixture tree.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixtures().join("tree"), dir.path());
    dir
}

/// A fresh copy of the fixture tree at `at` (its real path), replacing whatever is there.
fn copy_at(at: &Path) {
    if at.exists() {
        std::fs::remove_dir_all(at).unwrap();
    }
    std::fs::create_dir(at).unwrap();
    copy_tree(&fixtures().join("tree"), at);
}

struct Run {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    status: i32,
}

fn run_bash(script: &str, dir: &Path) -> Run {
    let mut child = Command::new("bash")
        .args(["--noprofile", "--norc", "-c", script])
        .env_clear()
        .envs(ENV)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut o = Vec::new();
        out.read_to_end(&mut o).unwrap();
        o
    });
    let err_reader = std::thread::spawn(move || {
        let mut e = Vec::new();
        err.read_to_end(&mut e).unwrap();
        e
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > SCRIPT_TIMEOUT {
            child.kill().unwrap();
            panic!("bash did not finish {script:?} in {SCRIPT_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Run {
        stdout: reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
        status: status
            .code()
            .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
    }
}

fn run_ours(script: &str, dir: &Path) -> Result<Run, ShellError> {
    let (tx, rx) = mpsc::channel();
    let script_owned = script.to_owned();
    let root = dir.to_owned();
    std::thread::spawn(move || {
        let runner = NativeStageRunner::new(&root);
        let ctx = ShellContext::new(&root).with_env(ENV);
        let _ = tx.send(run_script(&script_owned, &ctx, &runner));
    });
    let out: ShellOutput = rx
        .recv_timeout(SCRIPT_TIMEOUT)
        .unwrap_or_else(|_| panic!("the shell did not finish {script:?} in {SCRIPT_TIMEOUT:?}"))?;
    assert!(!out.stdout_truncated && !out.stderr_truncated);
    Ok(Run {
        stdout: out.stdout,
        stderr: out.stderr,
        status: out.exit_code,
    })
}

#[test]
fn corpus_matches_bash() {
    corpus_matches_bash_with(&run_ours);
}

/// The same corpus with every command a verified module of the real core-utils bundle, run
/// in-process by the wasmtime runner (the Bash tool's `wasi` backend), instead of host
/// binaries.
#[test]
fn corpus_matches_bash_on_the_wasi_runner() {
    let home = tempfile::tempdir().unwrap();
    let Some(toolbox) = crate::support::toolbox(home.path()) else {
        return;
    };
    corpus_matches_bash_with(&|script: &str, dir: &Path| {
        let ctx = ShellContext::new(dir).with_env(ENV);
        let run = toolbox.shell(script, &ctx)?;
        assert!(!run.output.stdout_truncated && !run.output.stderr_truncated);
        Ok(Run {
            stdout: run.output.stdout,
            stderr: run.output.stderr,
            status: run.output.exit_code,
        })
    });
}

fn corpus_matches_bash_with(run_ours: &dyn Fn(&str, &Path) -> Result<Run, ShellError>) {
    let scripts = entries("corpus.txt");
    assert!(
        scripts.len() >= 110,
        "the corpus has {} scripts",
        scripts.len()
    );
    let mut failures = Vec::new();
    // One path for both runs (bash's first, then the shell's on a fresh copy), so absolute
    // paths in the output agree; canonical, as the shell's default mount and bash's `pwd` are.
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().canonicalize().unwrap().join("ws");
    for script in &scripts {
        copy_at(&dir);
        let theirs = run_bash(script, &dir);
        let theirs_tree = snapshot(&dir);
        copy_at(&dir);
        let ours = match run_ours(script, &dir) {
            Ok(run) => run,
            Err(e) => {
                failures.push(format!("{script:?}: refused: {e}"));
                continue;
            }
        };
        let mut diffs = Vec::new();
        if theirs.stdout != ours.stdout {
            diffs.push(format!(
                "stdout: bash {:?}, ours {:?}",
                String::from_utf8_lossy(&theirs.stdout),
                String::from_utf8_lossy(&ours.stdout)
            ));
        }
        if theirs.status != ours.status {
            diffs.push(format!(
                "status: bash {}, ours {}",
                theirs.status, ours.status
            ));
        }
        let (a, b) = (theirs_tree, snapshot(&dir));
        if a != b {
            let differ: Vec<_> = a
                .keys()
                .chain(b.keys())
                .filter(|k| a.get(*k) != b.get(*k))
                .collect();
            diffs.push(format!("files differ: {differ:?}"));
        }
        if !diffs.is_empty() {
            failures.push(format!(
                "{script:?}:\n  {}\n  bash stderr {:?}\n  ours stderr {:?}",
                diffs.join("\n  "),
                String::from_utf8_lossy(&theirs.stderr),
                String::from_utf8_lossy(&ours.stderr)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} scripts differ from bash:\n{}",
        failures.len(),
        scripts.len(),
        failures.join("\n")
    );
}

#[test]
fn unsupported_scripts_are_refused_before_anything_runs() {
    let entries = entries("unsupported.txt");
    assert!(entries.len() >= 25, "{} entries", entries.len());
    let mut failures = Vec::new();
    for entry in &entries {
        let (construct, script) = entry
            .split_once(" => ")
            .unwrap_or_else(|| panic!("{entry:?} has no ` => `"));
        // The corpus is bash: a refusal must come from the subset, not from bad syntax.
        let check = Command::new("bash")
            .args(["--noprofile", "--norc", "-n", "-c", script])
            .env_clear()
            .envs(ENV)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        if !check.status.success() {
            failures.push(format!(
                "{script:?} is not valid bash: {}",
                String::from_utf8_lossy(&check.stderr)
            ));
            continue;
        }
        let dir = workspace();
        let runner = NativeStageRunner::new(dir.path());
        let ctx = ShellContext::new(dir.path()).with_env(ENV);
        let full = format!("echo x > marker\n{script}");
        match run_script(&full, &ctx, &runner) {
            Err(ShellError::Unsupported {
                construct: named,
                position,
            }) => {
                if !named.starts_with(construct) {
                    failures.push(format!(
                        "{script:?}: named {named:?}, expected {construct:?}"
                    ));
                }
                if position.line < 2 {
                    failures.push(format!("{script:?}: position {position} is on line 1"));
                }
            }
            other => failures.push(format!("{script:?}: {other:?}")),
        }
        if dir.path().join("marker").exists() || runner.stages.load(Ordering::Relaxed) > 0 {
            failures.push(format!("{script:?}: something ran before the refusal"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} entries failed:\n{}",
        failures.len(),
        entries.len(),
        failures.join("\n")
    );
}

/// The corpus only uses commands a stage runner can provide; a script that names anything
/// else would test the host instead of the shell.
#[test]
fn native_runner_knows_only_the_corpus_commands() {
    let runner = NativeStageRunner::new(Path::new("/"));
    assert!(runner.has_command("sort"));
    assert!(!runner.has_command("bash"));
    assert!(!runner.has_command("/usr/bin/sort"));
}
