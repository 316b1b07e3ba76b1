//! `agent sandbox check-path | check-command | check-url`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::Path;

use agent_sandbox::Verdict;
use agent_sandbox::commands::CommandChecker;
use agent_sandbox::paths::{Op, PathPolicy};
use agent_sandbox::settings::SandboxSettings;
use agent_sandbox::urls::{StaticResolver, UrlPolicy};
use anyhow::{Context, Result, bail};
use serde_json::json;

use super::load_settings;
use crate::cli::{CheckCommandArgs, CheckPathArgs, CheckUrlArgs, SandboxCommand, SettingsArgs};
use crate::exit::Exit;
use crate::output;

pub fn run(cmd: SandboxCommand) -> Result<Exit> {
    match cmd {
        SandboxCommand::CheckPath(a) => check_path(&a),
        SandboxCommand::CheckCommand(a) => check_command(&a),
        SandboxCommand::CheckUrl(a) => check_url(&a),
    }
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
    let (s, _) = sandbox(&args.settings)?;
    let command = args.command.join(" ");
    if command.trim().is_empty() {
        bail!("the command is empty; pass it after `--`, e.g. -- 'git status && ls'");
    }
    let checker = CommandChecker::new(&s);
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
