//! `agent sandbox check-path | check-command | check-url | profile | exec`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_sandbox::Verdict;
use agent_sandbox::commands::CommandChecker;
use agent_sandbox::outer::{self, Ending, ExecRequest, ResourceLimits, backend_named};
use agent_sandbox::paths::{Op, PathPolicy};
use agent_sandbox::profile::env::EnvPlan;
use agent_sandbox::profile::explain::explain;
use agent_sandbox::profile::host::{Host, SystemHost};
use agent_sandbox::profile::selection::{ProfilePlan, Selection, Workdir};
use agent_sandbox::profile::{ProfileTree, bwrap, sbpl};
use agent_sandbox::settings::SandboxSettings;
use agent_sandbox::urls::{StaticResolver, UrlPolicy};
use anyhow::{Context, Result, bail};
use serde_json::json;

use super::load_settings;
use crate::cli::sandbox::{
    CheckCommandArgs, CheckPathArgs, CheckUrlArgs, ExecArgs, ProfileArgs, SandboxCommand,
    SelectionArgs,
};
use crate::cli::settings::SettingsArgs;
use crate::exit::Exit;
use crate::output;

pub fn run(cmd: SandboxCommand) -> Result<Exit> {
    match cmd {
        SandboxCommand::CheckPath(a) => check_path(&a),
        SandboxCommand::CheckCommand(a) => check_command(&a),
        SandboxCommand::CheckUrl(a) => check_url(&a),
        SandboxCommand::Profile(a) => profile(&a),
        SandboxCommand::Exec(a) => exec(&a),
    }
}

/// The selection flags, resolved against the tree and this machine.
fn plan(args: &SelectionArgs, command: Option<&str>) -> Result<ProfilePlan> {
    let tree = match &args.profiles_dir {
        Some(dir) => ProfileTree::load(dir)?,
        None => crate::profiles::embedded()?,
    };
    let split = |list: &[String]| -> Vec<PathBuf> {
        list.iter()
            .flat_map(|l| l.split(':'))
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .collect()
    };
    let selection = Selection {
        workdir: match args.workdir.as_deref() {
            None => Workdir::Current,
            Some("") => Workdir::Disabled,
            Some(dir) => Workdir::Path(PathBuf::from(dir)),
        },
        add_dirs: split(&args.add_dirs),
        add_dirs_ro: split(&args.add_dirs_ro),
        enable: args.enable.clone(),
        append_profiles: args.append_profile.clone(),
        command: args.command.clone().or_else(|| command.map(str::to_owned)),
        workdir_read_only: false,
    };
    Ok(ProfilePlan::resolve(&tree, &selection, &SystemHost)?)
}

fn profile(args: &ProfileArgs) -> Result<Exit> {
    let plan = plan(&args.selection, None)?;
    if args.explain {
        output::stdout_text(&explain(&plan, &format!("stdout ({} format)", args.format)));
        return Ok(Exit::Success);
    }
    if args.format == "bwrap" {
        let env = EnvPlan::sanitize(&SystemHost.vars(), &[]);
        let rendered = bwrap::render(&plan, &env);
        output::stdout_line(&shell_lines("bwrap", &rendered.args));
    } else {
        output::stdout_text(&sbpl::render(&plan));
    }
    Ok(Exit::Success)
}

/// `bwrap --opt a b \` lines, one option per line, shell-quoted.
fn shell_lines(program: &str, args: &[String]) -> String {
    let mut out = program.to_owned();
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        out.push_str(" \\\n  ");
        out.push_str(&shell_quote(a));
        while it.peek().is_some_and(|n| !n.starts_with("--")) {
            out.push(' ');
            out.push_str(&shell_quote(it.next().map_or("", String::as_str)));
        }
    }
    out
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,+@%".contains(&b))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn exec(args: &ExecArgs) -> Result<Exit> {
    let (settings, _) = sandbox(&args.settings)?;
    let plan = plan(&args.selection, args.argv.first().map(String::as_str))?;
    let backend_name = match args.backend.as_deref() {
        Some(b) => b,
        None if cfg!(target_os = "linux") => "bwrap",
        None if cfg!(target_os = "macos") => "sandbox-exec",
        None => bail!(
            "there is no OS sandbox for this platform; pass --backend none to run without one"
        ),
    };
    let backend = backend_named(backend_name).map_err(anyhow::Error::msg)?;
    let defaults = ResourceLimits::default();
    let wall = match args.timeout {
        Some(t) if t.is_finite() && t > 0.0 => Some(Duration::from_secs_f64(t)),
        Some(t) => bail!("--timeout {t} must be a positive number of seconds"),
        None => defaults.wall,
    };
    let request = ExecRequest {
        plan,
        env: EnvPlan::sanitize(&SystemHost.vars(), &args.env),
        command: args.argv.clone(),
        limits: ResourceLimits {
            wall,
            cpu_seconds: args.cpu_seconds.or(defaults.cpu_seconds),
            address_space: args.memory_bytes.or(defaults.address_space),
            file_size: defaults.file_size,
            output_bytes: args.output_bytes.unwrap_or(defaults.output_bytes),
        },
        fail_if_unavailable: settings.fails_if_unavailable(),
    };
    let outcome = outer::run(backend.as_ref(), &request)?;
    {
        use std::io::Write as _;
        let _ = std::io::stdout().lock().write_all(&outcome.stdout);
        let _ = std::io::stderr().lock().write_all(&outcome.stderr);
    }
    if let Some(path) = &args.audit {
        let json = serde_json::to_string_pretty(&outcome.audit)?;
        std::fs::write(path, json + "\n")
            .with_context(|| format!("cannot write the audit record to {}", path.display()))?;
    }
    for d in &outcome.audit.denied {
        output::warning(d);
    }
    Ok(Exit::Code(match outcome.audit.ending {
        Ending::Exited { code } => u8::try_from(code).unwrap_or(1),
        Ending::Signaled { signal } => u8::try_from(128 + signal).unwrap_or(1),
        Ending::WallTimeout => 124,
        Ending::OutputLimit => 125,
        // Never here (nothing cancels this run); as a shell reports SIGINT.
        Ending::Cancelled => 130,
    }))
}

fn sandbox(args: &SettingsArgs) -> Result<(SandboxSettings, std::path::PathBuf)> {
    let loaded = load_settings(args)?;
    let s = SandboxSettings::from_settings(&loaded.settings, &loaded.home)?;
    Ok((s, loaded.cwd))
}

fn print(v: &Verdict) -> Exit {
    output::stdout_line(
        &json!({"allowed": v.allowed, "reason": v.reason, "rule": v.rule}).to_string(),
    );
    if v.allowed {
        Exit::Success
    } else {
        Exit::Denied
    }
}

fn check_path(args: &CheckPathArgs) -> Result<Exit> {
    let (s, cwd) = sandbox(&args.settings)?;
    let op = if args.op == "write" {
        Op::Write
    } else {
        Op::Read
    };
    if args.path.as_os_str().is_empty() {
        bail!("the path is empty; give the file or directory to check");
    }
    let policy = PathPolicy::new(&s, Some(&cwd));
    Ok(print(&policy.check(Path::new(&args.path), op)))
}

fn check_command(args: &CheckCommandArgs) -> Result<Exit> {
    let (s, cwd) = sandbox(&args.settings)?;
    let command = args.command.join(" ");
    if command.trim().is_empty() {
        bail!("the command is empty; give it as one quoted argument, e.g. 'git status && ls'");
    }
    // Relative paths in the command are the session's: anchored at --cwd (default: the
    // current directory).
    let checker = CommandChecker::new(&s).with_cwd(cwd);
    for (name, why) in checker.refused() {
        output::warning(&format!("allowedCommands: `{name}` refused: {why}"));
    }
    Ok(print(&checker.check(&command)))
}

fn check_url(args: &CheckUrlArgs) -> Result<Exit> {
    let (s, _) = sandbox(&args.settings)?;
    let mut entries: HashMap<String, Vec<IpAddr>> = HashMap::new();
    for r in &args.resolve {
        let (host, ip) = r
            .split_once('=')
            .or_else(|| r.rsplit_once(':'))
            .with_context(|| {
                format!("--resolve {r:?} must be HOST=IP, e.g. example.com=93.184.216.34")
            })?;
        let ip: IpAddr = ip
            .trim_matches(['[', ']'])
            .parse()
            .with_context(|| format!("--resolve {r:?}: {ip:?} is not an IP address"))?;
        entries
            .entry(host.to_ascii_lowercase())
            .or_default()
            .push(ip);
    }
    let resolver = StaticResolver {
        entries,
        offline: false,
    };
    let policy = UrlPolicy::new(&s.network);
    Ok(print(&policy.check(&args.url, &resolver).verdict))
}
