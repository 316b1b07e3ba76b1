//! Rendering a [`ProfilePlan`] as a bubblewrap command line (Linux).
//!
//! The filesystem view: the host's root read-only; a fresh `/dev`, `/proc` and `/tmp`; the home
//! directory replaced by an empty tmpfs, into which only what the selected profiles declare
//! (`$$linux-ro=` / `$$linux-rw=`) is bound back; the read-only add-dirs, the read-write
//! add-dirs and the workdir; then the protected paths inside writable directories bound
//! read-only over themselves. Namespaces: pid, ipc, uts, cgroup, and network unless a selected
//! profile allows it (`$$linux-network$$`). The process gets a new session, dies with its
//! parent, and has no capabilities. The environment is cleared and set to the sanitised one.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::env::EnvPlan;
use super::sbpl::PROTECTED;
use super::selection::ProfilePlan;

/// One filesystem operation of the sandbox, for the audit record and `--explain`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mount {
    /// `ro-bind`, `bind`, `tmpfs`, `dev`, `proc` (`-try`: skipped when the path is missing).
    pub kind: String,
    /// The path inside the sandbox (the same path outside, for binds).
    pub path: PathBuf,
    /// Why it is there.
    pub why: String,
}

/// A rendered bubblewrap invocation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BwrapCommand {
    /// The arguments after the `bwrap` program, up to and including `--`; the command follows.
    pub args: Vec<String>,
    /// What is mounted, in order.
    pub mounts: Vec<Mount>,
    /// Whether the network namespace is kept.
    pub network: bool,
    /// The environment.
    pub env: EnvPlan,
}

/// Renders `plan` with the environment `env`. Identical inputs give identical arguments.
pub fn render(plan: &ProfilePlan, env: &EnvPlan) -> BwrapCommand {
    let mut b = Builder::default();
    b.push(&["--die-with-parent", "--new-session", "--cap-drop", "ALL"]);
    // `--as-pid-1`: the command is the namespace's first process, so bubblewrap reaps it itself;
    // with bubblewrap's own init inside, the outer bwrap exits before that init is reaped, and
    // the init is left a zombie for the runtime (a child subreaper while any contained run is
    // active) to collect: one leaked process per command.
    b.push(&[
        "--unshare-pid",
        "--as-pid-1",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]);
    let network = plan.network();
    if !network {
        b.push(&["--unshare-net"]);
    }
    b.mount("--ro-bind", Path::new("/"), "the host's root, read-only");
    b.special("--dev", "/dev", "a minimal /dev");
    b.special("--proc", "/proc", "the sandbox's own /proc");
    b.special("--tmpfs", "/tmp", "a fresh, empty /tmp");
    let home = plan.home.as_path();
    if home != Path::new("/") {
        b.special(
            "--tmpfs",
            &home.to_string_lossy(),
            "the home directory hidden; profiles bind back what they need",
        );
    }
    for part in &plan.parts {
        let why = format!("profile {}", part.profile.rel);
        for p in &part.profile.meta.linux_ro {
            b.mount("--ro-bind-try", &expand(p, home), &why);
        }
        for p in &part.profile.meta.linux_rw {
            b.mount("--bind-try", &expand(p, home), &why);
        }
        for p in &part.profile.meta.linux_tmpfs {
            b.special(
                "--tmpfs",
                &expand(p, home).to_string_lossy(),
                &format!("{why}: a throw-away writable cache"),
            );
        }
    }
    for g in &plan.add_dirs_ro {
        b.mount("--ro-bind", &g.path, "add-dirs-ro");
    }
    for g in &plan.add_dirs {
        b.mount("--bind", &g.path, "add-dirs");
    }
    if let Some((g, source)) = &plan.workdir {
        if plan.workdir_read_only {
            b.mount(
                "--ro-bind",
                &g.path,
                &format!("workdir ({source}), read-only"),
            );
        } else {
            b.mount("--bind", &g.path, &format!("workdir ({source})"));
        }
    }
    let writable: Vec<PathBuf> = plan.writable().map(|g| g.path.clone()).collect();
    for w in &writable {
        for rel in PROTECTED {
            b.mount(
                "--ro-bind-try",
                &w.join(rel),
                "protected inside a writable directory",
            );
        }
    }
    b.push(&["--clearenv"]);
    for (k, v) in &env.kept {
        b.args.extend(["--setenv".to_owned(), k.clone(), v.clone()]);
    }
    let chdir = plan
        .workdir
        .as_ref()
        .map_or_else(|| PathBuf::from("/"), |(g, _)| g.path.clone());
    b.args
        .extend(["--chdir".to_owned(), chdir.to_string_lossy().into_owned()]);
    b.push(&["--"]);
    BwrapCommand {
        args: b.args,
        mounts: b.mounts,
        network,
        env: env.clone(),
    }
}

/// `HOME/x` → the home directory joined with `x`; other paths as written.
fn expand(p: &str, home: &Path) -> PathBuf {
    match p.strip_prefix("HOME/") {
        Some(rest) => home.join(rest),
        None if p == "HOME" => home.to_path_buf(),
        None => PathBuf::from(p),
    }
}

#[derive(Default)]
struct Builder {
    args: Vec<String>,
    mounts: Vec<Mount>,
}

impl Builder {
    fn push(&mut self, args: &[&str]) {
        self.args.extend(args.iter().map(|a| (*a).to_owned()));
    }

    fn mount(&mut self, flag: &str, path: &Path, why: &str) {
        let p = path.to_string_lossy().into_owned();
        self.args.extend([flag.to_owned(), p.clone(), p]);
        self.mounts.push(Mount {
            kind: flag.trim_start_matches("--").to_owned(),
            path: path.to_path_buf(),
            why: why.to_owned(),
        });
    }

    fn special(&mut self, flag: &str, path: &str, why: &str) {
        self.args.extend([flag.to_owned(), path.to_owned()]);
        self.mounts.push(Mount {
            kind: flag.trim_start_matches("--").to_owned(),
            path: PathBuf::from(path),
            why: why.to_owned(),
        });
    }
}
