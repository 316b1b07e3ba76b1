//! The bench of a whole new process: `agent shell` running a 5-command pipeline, against
//! `bash -c` running the same pipeline with the host's tools, as a user (or a hook) starts it.
//! Criterion measures code inside one process, so this one times processes itself: it builds
//! the release binary, installs the core-utils bundle into a fresh `AGENT_HOME` (which compiles
//! the modules and fills the compiled-module cache, as `agent bundles install` does for a user),
//! then runs each side [`RUNS`] times and writes the median wall time and the median peak
//! resident memory (`/usr/bin/time -f %M`, GNU time, in separate runs so its own start does not
//! count in the times).

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// The group's name for `--only`.
pub const NAME: &str = "startup";
/// The section's heading in docs/benchmarks.md.
pub const HEADING: &str = "Start-up of `agent shell` (a new process running a 5-command pipeline)";

/// Runs of each side; the medians are reported.
const RUNS: usize = 10;
/// The pipeline both sides run, in a workspace holding `words.txt`.
const SCRIPT: &str = "cat words.txt | grep x | sort | uniq -c | head -3";
/// The targets: at most this many times bash's wall time, and this much peak memory.
const TARGET_RATIO: f64 = 5.0;
const TARGET_MIB: f64 = 50.0;
/// GNU time, which reports a process's peak resident memory (`%M`, in KiB).
const GNU_TIME: &str = "/usr/bin/time";

/// The figures measured before issue 28 made start-up cheaper, by hand with the same script:
/// kept in the section so the change stays visible.
const BEFORE: &str = "Before issue 28's start-up work (the same pipeline, medians of 10, measured by hand on the `profiling` build): `agent shell` 160 to 330 ms and 170 to 180 MiB peak against `bash -c`'s 5 to 7 ms and 3 MiB, by the machine's load (the issue's own figures: 252 ms and 193 MiB against 8 ms and 11 MiB). Mapping the compiled module instead of reading it and not reading the 8 MB module at all: 94 ms and 33 MiB against 7 ms under load (36 ms against 5.4 ms on the quieter machine). Then the cache file's CRC-32 instead of SHA-256: the figures above (docs/wasi.md, Start-up of a new process).";

/// Median wall time and peak memory of one side.
struct Figures {
    ms: f64,
    mib: Option<f64>,
}

/// One side of the comparison: the command line, and the `AGENT_HOME` for `agent`.
struct Side {
    argv: Vec<OsString>,
    home: Option<PathBuf>,
}

impl Side {
    /// The command, run in `ws` with no stdin, optionally under `wrapper` (its arguments
    /// first).
    fn command(&self, ws: &Path, wrapper: &[&str]) -> Command {
        let (program, args) = match wrapper.split_first() {
            Some((first, rest)) => (
                OsString::from(first),
                rest.iter()
                    .map(OsString::from)
                    .chain(self.argv.iter().cloned())
                    .collect::<Vec<_>>(),
            ),
            None => (self.argv[0].clone(), self.argv[1..].to_vec()),
        };
        let mut cmd = Command::new(program);
        cmd.args(args).current_dir(ws).stdin(Stdio::null());
        if let Some(home) = &self.home {
            // The compiled modules in the store's own cache, `<store>/.compiled`.
            cmd.env("AGENT_HOME", home).env_remove("AGENT_WASI_CACHE");
        }
        cmd
    }
}

/// Builds the release `agent`, measures both sides and returns the section.
pub fn section(root: &Path) -> Result<String> {
    crate::cargo(&["build", "--release", "-p", "agent-cli", "--locked"])?;
    let target = crate::bundles::target_dir(root);
    let agent = target.join("release/agent");
    let registry = target.join("bundles/registry");
    if !registry.join("index.json").exists() {
        bail!(
            "{} is missing: run `cargo xtask bundles` first",
            registry.display()
        );
    }
    let scratch = target.join("bench-startup");
    if scratch.exists() {
        std::fs::remove_dir_all(&scratch)
            .with_context(|| format!("cannot clear {}", scratch.display()))?;
    }
    let home = scratch.join("home");
    let ws = scratch.join("ws");
    std::fs::create_dir_all(&ws).with_context(|| format!("cannot create {}", ws.display()))?;
    std::fs::write(ws.join("words.txt"), words())
        .with_context(|| format!("cannot write {}", ws.join("words.txt").display()))?;
    let install = Command::new(&agent)
        .args(["bundles", "install", "core-utils", "--registry"])
        .arg(&registry)
        .env("AGENT_HOME", &home)
        .env_remove("AGENT_WASI_CACHE")
        .output()
        .with_context(|| format!("cannot run {}", agent.display()))?;
    if !install.status.success() {
        bail!(
            "`agent bundles install core-utils` failed: {}",
            String::from_utf8_lossy(&install.stderr)
        );
    }
    let agent_side = Side {
        argv: vec![agent.into_os_string(), "shell".into(), SCRIPT.into()],
        home: Some(home),
    };
    let bash_side = Side {
        argv: vec!["bash".into(), "-c".into(), SCRIPT.into()],
        home: None,
    };
    let expected = output_of(&ws, &bash_side)?;
    let got = output_of(&ws, &agent_side)?;
    if got != expected {
        bail!(
            "`agent shell` printed {:?}, bash {:?}: the two sides must do the same work",
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&expected)
        );
    }
    let bash = measure(&ws, &bash_side)?;
    let ours = measure(&ws, &agent_side)?;
    render(&ours, &bash)
}

/// Lines for the pipeline: a few words repeated, some with an `x`.
fn words() -> String {
    const WORDS: [&str; 8] = ["axe", "box", "cat", "dog", "fox", "hex", "ink", "jam"];
    let mut out = String::new();
    for i in 0..2000 {
        let _ = writeln!(out, "{} {}", WORDS[i % WORDS.len()], i % 13);
    }
    out
}

/// The stdout of one run (which must succeed).
fn output_of(ws: &Path, side: &Side) -> Result<Vec<u8>> {
    let out = side
        .command(ws, &[])
        .output()
        .context("cannot run the pipeline")?;
    if !out.status.success() {
        bail!(
            "the pipeline failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(out.stdout)
}

/// [`RUNS`] timed runs, then [`RUNS`] runs under GNU time for the peak memory.
fn measure(ws: &Path, side: &Side) -> Result<Figures> {
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let mut cmd = side.command(ws, &[]);
        cmd.stdout(Stdio::null()).stderr(Stdio::null());
        let started = Instant::now();
        let status = cmd.status().context("cannot run the pipeline")?;
        times.push(started.elapsed().as_secs_f64() * 1e3);
        if !status.success() {
            bail!("the pipeline failed ({status})");
        }
    }
    let mib = if Path::new(GNU_TIME).exists() {
        let mut peaks = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let out = side
                .command(ws, &[GNU_TIME, "-f", "%M"])
                .stdout(Stdio::null())
                .output()
                .context("cannot run /usr/bin/time")?;
            let text = String::from_utf8_lossy(&out.stderr);
            let kib: f64 = text
                .lines()
                .last()
                .and_then(|l| l.trim().parse().ok())
                .with_context(|| format!("/usr/bin/time printed no peak memory: {text:?}"))?;
            peaks.push(kib / 1024.0);
        }
        Some(median(peaks))
    } else {
        eprintln!("xtask: /usr/bin/time (GNU time) is missing: peak memory not measured");
        None
    };
    Ok(Figures {
        ms: median(times),
        mib,
    })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    }
}

fn render(ours: &Figures, bash: &Figures) -> Result<String> {
    let mib =
        |m: Option<f64>| m.map_or_else(|| "not measured".to_owned(), |m| format!("{m:.1} MiB"));
    let ratio = ours.ms / bash.ms;
    let meets_time = ratio <= TARGET_RATIO;
    let meets_memory = ours.mib.map(|m| m <= TARGET_MIB);
    let mut out = String::new();
    writeln!(out, "## {HEADING}\n")?;
    writeln!(
        out,
        "| process | median wall time | median peak RSS | time ratio to bash | target | meets target |"
    )?;
    writeln!(out, "|---|---:|---:|---:|---|---|")?;
    writeln!(
        out,
        "| `bash -c` (baseline) | {:.1} ms | {} | 1.00 | — | — |",
        bash.ms,
        mib(bash.mib)
    )?;
    writeln!(
        out,
        "| `agent shell` | {:.1} ms | {} | {ratio:.2} | ≤ {TARGET_RATIO:.0}× bash and ≤ {TARGET_MIB:.0} MiB | {} |",
        ours.ms,
        mib(ours.mib),
        match (meets_time, meets_memory) {
            (true, Some(true)) => "yes",
            (true, None) => "time yes, memory not measured",
            (false, _) | (true, Some(false)) => "no",
        }
    )?;
    writeln!(
        out,
        "\nThe script is `{SCRIPT}` on a 2,000-line file, run from its directory: `agent shell` with the core-utils bundle installed in a fresh `AGENT_HOME` (so its compiled modules are in the disk cache, as after `agent bundles install`), `bash -c` with the host's GNU tools (a fork and exec per command). Whole processes, started {RUNS} times each by `cargo xtask bench --only {NAME}` from the release build; the wall time is measured around each process, the peak resident memory (`/usr/bin/time -f %M`) in {RUNS} further runs. What the time goes to is in docs/wasi.md (Start-up of a new process).\n"
    )?;
    writeln!(out, "{BEFORE}\n")?;
    Ok(out)
}
