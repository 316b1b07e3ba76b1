//! The checker/interpreter differential (issue 24): what the permission checker sees in a
//! script against what the WASI shell then does with it.
//!
//! The checker is agent-core's view of the script: [`programs_seen`] (every program it saw,
//! through wrappers) and the engine's files ([`PreparedCall::files_seen`]: every file it judged
//! read or written, resolved from where each command runs). The interpreter runs the script
//! with a [`RecordingRunner`] that executes nothing: it says yes to a fixed set of programs,
//! records each command line and its directory, and answers with canned output (`ls` lists
//! names, `cat FILE` prints a line naming a program, filters copy their input), so `xargs`
//! and `find -exec` have something to run. Three things must hold for every script the shell
//! accepts (a refused script is skipped):
//!
//! 1. Every program started (a stage the runner got, at any depth of `xargs`, `env`,
//!    `timeout`, `find -exec`) has a basename the checker saw, unless the checker saw a command
//!    whose name it could not know (`$X`, a glob), which it never approves by prediction. The
//!    same script run again with the checker's programs as its containment
//!    ([`ShellContext::with_programs`]) must refuse nothing (the refusal's words, wherever the
//!    script sends its stderr) and start the same command lines (unless the runs depend on
//!    time: a `timeout`, a cancellation): a launch refused there (the shell's own `xargs`,
//!    `env` or `timeout` included) is a program not seen.
//! 2. Every file the shell itself opens (redirects, `xargs -a`), observed with inotify on the
//!    workspace, is a file the checker saw: read or written (written, if the shell wrote it),
//!    at the same path, or a redirect whose target it knew it could not know. A script the
//!    checker cannot analyse whole, or whose program is only known at run time, is never
//!    approved by prediction, so its files are not compared either (`xargs -a GLOB rm`: the
//!    glob may make several words, one of them the command).
//! 3. Every operand the checker resolved (`cat x` after `cd d`: `d/x`) is resolved from the
//!    directory the command really runs in (a `cd` that fails leaves the shell where it was).
//!
//! Shared by `tests/all/checker_agrees.rs` and `fuzz/fuzz_targets/checker_agrees.rs` (`#[path]`).

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test support: a failed unwrap is a failed test; each user takes a part"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use agent_core::permissions::{FileSeen, PermissionEngine, ToolCall, programs_seen};
use agent_core::shell::ParsedScript;
use agent_wasi::shell::{Plan, ShellContext, Stage, StageRunner};
use rustix::fs::inotify;

/// The programs the recording runner has: the core-utils set, and a few that run scripts or
/// other programs (which the runner, executing nothing, never does).
pub const PROGRAMS: &[&str] = &[
    "cat", "echo", "printf", "ls", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "grep",
    "sed", "find", "mkdir", "rm", "rmdir", "cp", "mv", "touch", "true", "false", "test", "[",
    "basename", "dirname", "tee", "seq", "env", "printenv", "sleep", "chmod", "ln", "date", "nice",
    "nohup", "time", "stdbuf", "awk", "diff", "stat", "md5sum", "realpath", "git", "sh", "bash",
    "python3", "make", "cargo", "npm", "curl",
];

/// Programs whose non-option arguments are files (for check 3).
const FILE_OPERANDS: &[&str] = &[
    "cat", "head", "tail", "wc", "sort", "uniq", "cut", "rm", "rmdir", "touch", "mkdir", "cp",
    "mv", "tee", "diff", "stat", "md5sum",
];

/// What a refused launch says after the program's name in the contained run.
const REFUSAL: &str = "CHECKER-AGREES: not among the programs the checker saw";

/// One command line the interpreter started.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Started {
    /// The command line as the runner got it.
    pub argv: Vec<String>,
    /// Its working directory (a guest path: the workspace is mounted at its real path).
    pub cwd: String,
}

/// Runs nothing: records each stage and answers with canned output.
#[derive(Default)]
pub struct RecordingRunner {
    started: Mutex<Vec<Started>>,
}

impl RecordingRunner {
    /// The stages started so far, in no particular order.
    pub fn started(&self) -> Vec<Started> {
        self.started.lock().unwrap().clone()
    }
}

fn basename(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// `printf FORMAT ARGS...` far enough for the corpus: `\n`, `\t`, `\\`, `\0` and `%s`.
fn printf(args: &[String]) -> Vec<u8> {
    let Some(format) = args.first() else {
        return Vec::new();
    };
    let mut values = args[1..].iter();
    let mut out = Vec::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('n') => out.push(b'\n'),
                Some('t') => out.push(b'\t'),
                Some('0') => out.push(0),
                Some(other) => out.extend(other.to_string().bytes()),
                None => out.push(b'\\'),
            },
            '%' => match chars.next() {
                Some('s') => out.extend(values.next().map_or("", String::as_str).bytes()),
                Some('%') => out.push(b'%'),
                Some(other) => out.extend(format!("%{other}").bytes()),
                None => out.push(b'%'),
            },
            c => out.extend(c.to_string().bytes()),
        }
    }
    out
}

impl StageRunner for RecordingRunner {
    fn has_command(&self, name: &str) -> bool {
        PROGRAMS.contains(&basename(name))
    }

    fn run_stage(&self, stage: Stage) -> i32 {
        let Stage {
            argv,
            cwd,
            mut stdin,
            mut stdout,
            ..
        } = stage;
        self.started.lock().unwrap().push(Started {
            argv: argv.clone(),
            cwd,
        });
        let args = &argv[1..];
        let operands = args.iter().filter(|a| !a.starts_with('-')).count();
        let out: Vec<u8> = match basename(&argv[0]) {
            "ls" => b"a.txt\nb.txt\nrm\n".to_vec(),
            "find" if args.iter().any(|a| a == "-print0") => b"./a.txt\0./dir1/x.txt\0".to_vec(),
            "find" => b"./a.txt\n./dir1/x.txt\n".to_vec(),
            "printf" => printf(args),
            "seq" => {
                let n: u32 = args.last().and_then(|n| n.parse().ok()).unwrap_or(0);
                (1..=n.min(100))
                    .map(|i| format!("{i}\n"))
                    .collect::<String>()
                    .into_bytes()
            }
            "false" => return 1,
            "head" if operands == 0 => {
                // At most ten lines, then it is gone (its writer sees a broken pipe).
                let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stdin));
                let mut out = String::new();
                for line in lines.by_ref().take(10).map_while(Result::ok) {
                    out.push_str(&line);
                    out.push('\n');
                }
                out.into_bytes()
            }
            "cat" | "tail" | "sort" | "uniq" | "cut" | "tr" | "grep" | "sed" | "tee" | "awk"
                if operands == 0
                    || (operands == 1 && matches!(basename(&argv[0]), "tr" | "grep" | "sed")) =>
            {
                // A filter: its input, as it came.
                let mut input = Vec::new();
                let _ = stdin.read_to_end(&mut input);
                input
            }
            "cat" => b"rm\nx.txt\n".to_vec(),
            _ => Vec::new(),
        };
        let _ = stdout.write_all(&out);
        0
    }
}

/// Makes the workspace the corpus runs in, at `ws` (replacing whatever is there): files, a
/// directory tree, a list of words that name programs, and symlinks inside it.
pub fn make_tree(ws: &Path) {
    if ws.symlink_metadata().is_ok() {
        std::fs::remove_dir_all(ws).unwrap();
    }
    for dir in ["dir1/sub", "dir2"] {
        std::fs::create_dir_all(ws.join(dir)).unwrap();
    }
    for (file, text) in [
        ("a.txt", "a\n"),
        ("b.txt", "b\n"),
        ("list.txt", "rm\nx.txt\n"),
        ("with space.txt", "s\n"),
        (".hidden", "h\n"),
        ("dir1/x.txt", "x\n"),
        ("dir1/sub/z.txt", "z\n"),
    ] {
        std::fs::write(ws.join(file), text).unwrap();
    }
    std::os::unix::fs::symlink("a.txt", ws.join("link.txt")).unwrap();
    std::os::unix::fs::symlink("dir1", ws.join("ldir")).unwrap();
}

/// A file the shell opened, seen by inotify.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opened {
    /// Its host path (the real one: a symlink's target).
    pub path: PathBuf,
    /// Whether it was created, changed or opened for writing.
    pub wrote: bool,
}

thread_local! {
    /// One inotify instance per thread, for all its runs: closing one waits for the kernel's
    /// RCU grace period (about 15 ms), longer than most runs.
    static INOTIFY: OwnedFd = inotify::init(inotify::CreateFlags::NONBLOCK | inotify::CreateFlags::CLOEXEC)
        .unwrap();
}

/// inotify watches on every directory of a tree.
struct Watch {
    dirs: BTreeMap<i32, PathBuf>,
}

impl Watch {
    /// Watches every directory under `root`, after dropping what earlier runs left queued.
    fn new(root: &Path) -> Self {
        drain(|_, _| {});
        let mut watch = Self {
            dirs: BTreeMap::new(),
        };
        watch.add(root);
        watch
    }

    fn add(&mut self, dir: &Path) {
        let flags = inotify::WatchFlags::OPEN
            | inotify::WatchFlags::CLOSE_WRITE
            | inotify::WatchFlags::CLOSE_NOWRITE
            | inotify::WatchFlags::CREATE
            | inotify::WatchFlags::MODIFY;
        let wd = INOTIFY
            .with(|fd| inotify::add_watch(fd, dir, flags))
            .unwrap();
        self.dirs.insert(wd, dir.to_owned());
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                self.add(&entry.path());
            }
        }
    }

    /// The files opened since the watch began (directories left out: globs list them).
    fn opened(self) -> Vec<Opened> {
        let mut seen: BTreeMap<PathBuf, bool> = BTreeMap::new();
        drain(|wd, event| {
            let flags = event.events();
            if flags.contains(inotify::ReadFlags::ISDIR) {
                return;
            }
            let (Some(name), Some(dir)) = (event.file_name(), self.dirs.get(&wd)) else {
                return;
            };
            let path = dir.join(name.to_string_lossy().as_ref());
            let wrote = flags.intersects(
                inotify::ReadFlags::CLOSE_WRITE
                    | inotify::ReadFlags::CREATE
                    | inotify::ReadFlags::MODIFY,
            );
            *seen.entry(path).or_default() |= wrote;
        });
        seen.into_iter()
            .map(|(path, wrote)| Opened { path, wrote })
            .collect()
    }
}

/// Reads every queued event of this thread's inotify instance.
fn drain(mut each: impl FnMut(i32, &inotify::Event<'_>)) {
    INOTIFY.with(|fd| {
        let mut buf = [MaybeUninit::uninit(); 8192];
        let mut reader = inotify::Reader::new(fd, &mut buf);
        loop {
            match reader.next() {
                Ok(event) => each(event.wd(), &event),
                Err(rustix::io::Errno::WOULDBLOCK) => break,
                Err(e) => panic!("reading inotify events: {e}"),
            }
        }
    });
}

/// What the checker saw in a script.
pub struct CheckerView {
    /// [`programs_seen`].
    pub programs: Vec<String>,
    /// Some command's name (or a wrapped command's) is only known at run time.
    pub program_unknown: bool,
    /// The engine's files.
    pub files: Vec<FileSeen>,
}

/// The checker's view of `script` in a session at `ws` (its cwd and home); `None` when it
/// cannot parse it.
pub fn checker_view(script: &str, ws: &Path) -> Option<CheckerView> {
    let engine = PermissionEngine::builder(ws, ws).build().unwrap();
    let prepared = engine.prepare(ToolCall::new(
        "Bash",
        serde_json::json!({ "command": script }),
    ));
    let Some(Ok(parsed)) = prepared.shell_parse() else {
        return None;
    };
    Some(CheckerView {
        programs: programs_seen(parsed),
        // A script the checker cannot analyse whole is never approved by a prediction (it is
        // asked, and approved as written): its programs are not compared, as for a name only
        // known at run time.
        program_unknown: has_unknown_program(parsed) || !parsed.is_fully_analysed(),
        files: prepared.files_seen(),
    })
}

/// Whether a command's name, or the name of a command a wrapper of it runs, is only known at
/// run time.
fn has_unknown_program(parsed: &ParsedScript) -> bool {
    parsed.commands.iter().any(|cmd| {
        std::iter::once(0)
            .chain(cmd.layers.iter().map(|l| l.inner))
            .any(|i| cmd.words.get(i).is_some_and(|w| !w.is_static()))
    })
}

/// The classes of `fixtures/checker_agrees/known_failures.txt` that `script` belongs to, told
/// from its words: the fuzz target skips such inputs (the test checks that every listed script
/// is told as its class). Each goes when its class leaves the list.
pub fn known_classes(script: &str) -> Vec<&'static str> {
    let Ok(parsed) = agent_core::shell::parse(script) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut add = |class: &'static str| {
        if !out.contains(&class) {
            out.push(class);
        }
    };
    for cmd in &parsed.commands {
        let words: Vec<&str> = cmd.words.iter().map(|w| w.text.as_str()).collect();
        for (i, word) in words.iter().enumerate() {
            let wrapper = basename(word);
            if !matches!(wrapper, "env" | "xargs" | "timeout") {
                continue;
            }
            let rest = &words[i + 1..];
            let short = |w: &&&str| w.len() > 1 && w.starts_with('-') && !w.starts_with("--");
            if rest.iter().any(|w| w.len() > 2 && w.starts_with("--")) {
                add("wrappers: long options abbreviated or with optional values");
            }
            if wrapper == "env" && rest.contains(&"-") {
                add("wrappers: env's lone `-`");
            }
            if wrapper == "env"
                && rest
                    .iter()
                    .any(|w| (short(&w) && w.contains('C')) || w.starts_with("--c"))
            {
                add("wrappers: env -C changes the directory");
            }
            if wrapper == "xargs"
                && rest
                    .iter()
                    .any(|w| (short(&w) && w.contains('a')) || w.starts_with("--a"))
            {
                add("wrappers: xargs -a reads a file");
            }
        }
        for (n, layer) in cmd.layers.iter().enumerate() {
            if layer.wrapper != "xargs" {
                continue;
            }
            let start = if n == 0 { 0 } else { cmd.layers[n - 1].inner };
            let options = words.get(start + 1..layer.inner).unwrap_or(&[]);
            let inner = words.get(layer.inner).copied().unwrap_or_default();
            if replace_strings(options)
                .iter()
                .any(|r| inner.contains(r.as_str()))
            {
                add("wrappers: xargs -I in the command name");
            }
        }
    }
    out
}

/// The replace strings xargs' options set (`-I R`, `-IR`, `-i`, `-iR`, `--replace[=R]`).
fn replace_strings(options: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, w) in options.iter().enumerate() {
        if let Some(long) = w.strip_prefix("--") {
            if long.len() >= 2 && "replace".starts_with(long.split('=').next().unwrap_or(long)) {
                out.push(long.split_once('=').map_or("{}", |(_, r)| r).to_owned());
            }
        } else if let Some(flags) = w.strip_prefix('-')
            && let Some(at) = flags.find(['I', 'i'])
        {
            let rest = &flags[at + 1..];
            let r = match (&flags[at..=at], rest.is_empty()) {
                ("I", true) => options.get(i + 1).copied().unwrap_or_default(),
                ("i", true) => "{}",
                _ => rest,
            };
            if !r.is_empty() {
                out.push(r.to_owned());
            }
        }
    }
    out
}

/// What one script gave.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The shell refused the script (the message); nothing ran.
    pub refused: Option<String>,
    /// Each disagreement, in words.
    pub problems: Vec<String>,
    /// The script ran into its time bound and was cancelled.
    pub cancelled: bool,
    /// Programs were not compared: the checker saw a name it could not know.
    pub programs_unknown: bool,
    /// How many command lines started and files the shell opened.
    pub stages: usize,
    pub opened: usize,
}

/// One run of `plan` in the workspace at `ws` (as [`make_tree`] made it) with the recording
/// runner, cancelled after `bound`.
fn run_once(
    plan: &Plan,
    ws: &Path,
    programs: Option<&[String]>,
    bound: Duration,
) -> (Vec<Started>, Vec<u8>, Vec<u8>, bool, Vec<Opened>) {
    let watch = Watch::new(ws);
    let cancel = Arc::new(AtomicBool::new(false));
    let home = ws.to_string_lossy().into_owned();
    let mut ctx = ShellContext::new(ws)
        .with_env([
            ("HOME", home.as_str()),
            ("LC_ALL", "C"),
            ("PATH", "/usr/bin:/bin"),
        ])
        .with_cancel(Arc::clone(&cancel));
    if let Some(programs) = programs {
        ctx = ctx.with_programs(programs.to_vec(), REFUSAL);
    }
    let runner = RecordingRunner::default();
    let (done, timer) = mpsc::channel::<()>();
    let flag = Arc::clone(&cancel);
    let watchdog = std::thread::spawn(move || {
        if timer.recv_timeout(bound).is_err() {
            flag.store(true, Ordering::Relaxed);
        }
    });
    let out = plan.run(&ctx, &runner);
    let _ = done.send(());
    watchdog.join().unwrap();
    let opened = watch.opened();
    let (stdout, stderr, cancelled) = match out {
        Ok(out) => (out.stdout, out.stderr, out.cancelled),
        Err(e) => (Vec::new(), e.to_string().into_bytes(), false),
    };
    (runner.started(), stdout, stderr, cancelled, opened)
}

/// Lexical `cwd/arg` (both absolute once joined), `.` and `..` folded.
fn join(cwd: &str, arg: &str) -> PathBuf {
    let joined = if arg.starts_with('/') {
        PathBuf::from(arg)
    } else {
        Path::new(cwd).join(arg)
    };
    agent_core::permissions::normalize_path(&joined)
}

/// Runs the differential on `script` in a workspace made at `ws` (a path whose parent exists;
/// its real path is used), each run bounded by `bound`.
///
/// The workspace is made when it is not there and made again after a run that wrote in it,
/// so each run starts from [`make_tree`]'s tree; most scripts write nothing, and the file
/// system is not touched between them.
pub fn check(script: &str, ws: &Path, bound: Duration) -> Outcome {
    if let Err(e) = Plan::parse(script) {
        return Outcome {
            refused: Some(e.to_string()),
            ..Outcome::default()
        };
    }
    if ws.symlink_metadata().is_err() {
        make_tree(ws);
    }
    let ws = ws.canonicalize().unwrap();
    match checker_view(script, &ws) {
        Some(view) => compare(script, &ws, &view, bound),
        None => Outcome {
            problems: vec!["the shell accepts it but the checker cannot parse it".to_owned()],
            ..Outcome::default()
        },
    }
}

/// Runs `script` in the workspace at `ws` (a real path, as [`make_tree`] made it) and compares
/// what it did with `view`; the workspace is left as it was found.
pub fn compare(script: &str, ws: &Path, view: &CheckerView, bound: Duration) -> Outcome {
    let mut outcome = Outcome::default();
    let plan = match Plan::parse(script) {
        Ok(plan) => plan,
        Err(e) => {
            outcome.refused = Some(e.to_string());
            return outcome;
        }
    };
    let ws = ws.to_owned();
    let (started, _, _, cancelled, opened) = run_once(&plan, &ws, None, bound);
    if opened.iter().any(|o| o.wrote) {
        make_tree(&ws);
    }
    outcome.cancelled = cancelled;
    outcome.stages = started.len();
    outcome.opened = opened.len();
    outcome.programs_unknown = view.program_unknown;
    let saw = view.programs.join(" ");

    // 1. Programs.
    if !view.program_unknown {
        for s in &started {
            let base = basename(&s.argv[0]);
            if !view.programs.iter().any(|p| p == base) {
                outcome.problems.push(format!(
                    "started `{}`, a program the checker did not see (it saw: {saw})",
                    s.argv.join(" ")
                ));
            }
        }
        let (mut contained, stdout, stderr, stopped, wrote) =
            run_once(&plan, &ws, Some(&view.programs), bound);
        // A refused launch says so on the command's stderr, wherever that leads: the
        // script's output or a file it wrote.
        let mut said = String::from_utf8_lossy(&stderr).into_owned();
        said.push_str(&String::from_utf8_lossy(&stdout));
        for o in wrote.iter().filter(|o| o.wrote) {
            if let Ok(text) = std::fs::read(&o.path) {
                said.push_str(&String::from_utf8_lossy(&text));
            }
        }
        if wrote.iter().any(|o| o.wrote) {
            make_tree(&ws);
        }
        let refused: Vec<&str> = said.lines().filter(|l| l.contains(REFUSAL)).collect();
        // The command lines started must be the same too (a refusal sent to /dev/null), unless
        // the runs depend on time: cancelled, or a `timeout` whose deadline may pass between
        // two commands in one run and not in the other.
        let timed = stopped || cancelled || view.programs.iter().any(|p| p == "timeout");
        let mut free = started.clone();
        contained.sort();
        free.sort();
        if !refused.is_empty() || (!timed && contained != free) {
            outcome.problems.push(format!(
                "contained to the programs the checker saw ({saw}), it ran differently: {} command lines instead of {}{}",
                contained.len(),
                free.len(),
                if refused.is_empty() {
                    String::new()
                } else {
                    format!("; refused: {}", refused.join("; "))
                }
            ));
        }
    }

    // 2. The shell's own opens.
    let seen_files = || {
        view.files
            .iter()
            .map(|f| {
                let path = f
                    .path
                    .as_ref()
                    .map_or_else(|| "?".to_owned(), |p| p.lexical.display().to_string());
                format!(
                    "{} {} ({path})",
                    if f.writes { "writes" } else { "reads" },
                    f.word.raw
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    for o in &opened {
        let kind_fits = |f: &FileSeen| f.writes || !o.wrote;
        let known = view.files.iter().any(|f| {
            kind_fits(f)
                && f.path
                    .as_ref()
                    .is_some_and(|p| p.forms().any(|form| form == o.path))
        });
        let unknown_redirect = view
            .files
            .iter()
            .any(|f| kind_fits(f) && f.redirect && f.path.is_none());
        // A script the checker cannot analyse whole (or whose program is only known at run
        // time) is never approved by prediction: nothing the checker saw is claimed for it.
        if !known && !unknown_redirect && !view.program_unknown {
            outcome.problems.push(format!(
                "the shell opened {} for {}, which the checker did not see (it saw: {})",
                o.path.display(),
                if o.wrote { "writing" } else { "reading" },
                seen_files()
            ));
        }
    }

    // 3. Operands resolved from where the command runs.
    let mut judged: BTreeMap<&str, BTreeSet<PathBuf>> = BTreeMap::new();
    for f in &view.files {
        if let Some(p) = f
            .path
            .as_ref()
            .filter(|_| !f.redirect && f.word.is_static())
        {
            judged
                .entry(f.word.text.as_str())
                .or_default()
                .insert(p.lexical.clone());
        }
    }
    for s in &started {
        if !FILE_OPERANDS.contains(&basename(&s.argv[0])) {
            continue;
        }
        for arg in &s.argv[1..] {
            let Some(paths) = judged.get(arg.as_str()) else {
                continue;
            };
            let at = join(&s.cwd, arg);
            if !paths.contains(&at) {
                outcome.problems.push(format!(
                    "`{}` ran in {}, so `{arg}` is {}; the checker judged {}",
                    s.argv.join(" "),
                    s.cwd,
                    at.display(),
                    paths
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(" or ")
                ));
            }
        }
    }
    outcome.problems.dedup();
    outcome
}
