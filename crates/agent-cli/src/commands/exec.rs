//! `agent exec` and `agent shell`: commands from the installed WASI bundles, run in-process.

use std::io::{IsTerminal as _, Read as _, Write as _};
use std::path::PathBuf;
use std::time::Duration;

use agent_sandbox::settings::NetworkSettings;
use agent_sandbox::urls::{UrlPolicy, normalize_domain_entry};
use agent_wasi::shell::ShellContext;
use agent_wasi::toolbox::Toolbox;
use agent_wasi::{CommandInput, Input, Limits, NetGrant, Output};
use anyhow::{Context, Result, bail};
use serde_json::json;

use super::absolute;
use super::toolbox::open_toolbox;
use crate::cli::wasi::{ShellArgs, WasiArgs, WasiExecArgs};
use crate::exit::Exit;
use crate::output;

/// Default cap on each of stdout and stderr for these verbs.
const OUTPUT_LIMIT: usize = 16 << 20;

/// The workspace, environment and toolbox the options describe.
struct Setup {
    workspace: PathBuf,
    env: Vec<(String, String)>,
    toolbox: Toolbox,
    output_limit: usize,
}

fn setup(args: &WasiArgs) -> Result<Setup> {
    let workspace = match &args.workspace {
        Some(w) => absolute(w.clone())?,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    if !workspace.is_dir() {
        bail!("--workspace {} is not a directory", workspace.display());
    }
    let mut env = Vec::new();
    for pair in &args.env {
        let Some((name, value)) = pair.split_once('=') else {
            bail!("--env {pair:?} must be NAME=VALUE");
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            bail!("--env {pair:?}: {name:?} is not a variable name");
        }
        env.push((name.to_string(), value.to_string()));
    }
    let mut limits = Limits::default();
    if let Some(ms) = args.timeout {
        if ms == 0 {
            bail!("--timeout must be at least 1 ms");
        }
        limits = limits.with_wall_time(Duration::from_millis(ms));
    }
    if let Some(bytes) = args.memory {
        limits = limits.with_memory_bytes(usize::try_from(bytes).unwrap_or(usize::MAX));
    }
    let toolbox = open_toolbox(args.store.clone(), &args.prefer, limits)?;
    let toolbox = match network(&args.allow_domain)? {
        Some(grant) => toolbox.with_network(grant),
        None => toolbox,
    };
    Ok(Setup {
        workspace,
        env,
        toolbox,
        output_limit: args.output_limit.unwrap_or(OUTPUT_LIMIT),
    })
}

/// The network grant `--allow-domain` asks for: only those domains, never a private or loopback
/// address; `None` (no network) without the option.
fn network(domains: &[String]) -> Result<Option<NetGrant>> {
    if domains.is_empty() {
        return Ok(None);
    }
    for domain in domains {
        if let Err(why) = normalize_domain_entry(domain) {
            bail!("--allow-domain {domain:?}: {why}");
        }
    }
    let settings = NetworkSettings {
        allowed_domains: Some(domains.to_vec()),
        ..NetworkSettings::default()
    };
    Ok(Some(NetGrant::new(UrlPolicy::new(&settings))))
}

/// stdin when it is not a terminal (a pipe or a file), else nothing.
fn piped_stdin() -> Result<Vec<u8>> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(Vec::new());
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .read_to_end(&mut bytes)
        .context("cannot read stdin")?;
    Ok(bytes)
}

fn pass_through(stdout: &[u8], stderr: &[u8]) {
    let _ = std::io::stdout().lock().write_all(stdout);
    let _ = std::io::stderr().lock().write_all(stderr);
}

fn exit_code(code: i32) -> Exit {
    Exit::Code(u8::try_from(code.clamp(0, 255)).unwrap_or(1))
}

pub fn exec(args: WasiExecArgs) -> Result<Exit> {
    let s = setup(&args.wasi)?;
    let stdin = piped_stdin()?;
    // The guest sees the workspace at its real path, as `agent shell` and the Bash tool do, so
    // the paths it prints are the host's.
    let mount = agent_wasi::host_mount(&s.workspace)
        .with_context(|| format!("cannot mount the workspace {}", s.workspace.display()))?;
    let mut input = CommandInput::new(args.argv.clone())
        .with_mount(mount)
        .with_stdin(if stdin.is_empty() {
            Input::Null
        } else {
            Input::Bytes(stdin)
        })
        .with_stdout(Output::Capture {
            limit: s.output_limit,
        })
        .with_stderr(Output::Capture {
            limit: s.output_limit,
        });
    input.env = s.env;
    let out = s.toolbox.exec_input(input, &s.workspace)?;
    if args.wasi.json {
        output::stdout_line(
            &json!({
                "argv": args.argv,
                "exitCode": out.exit_code,
                "stdout": String::from_utf8_lossy(&out.stdout),
                "stderr": String::from_utf8_lossy(&out.stderr),
                "stdoutTruncated": out.stdout_truncated,
                "stderrTruncated": out.stderr_truncated,
                "durationUs": out.record.duration_us,
                "bundle": out.record.bundle,
                "limit": out.record.limit,
                "moduleSha256": out.meta.as_ref().map(|m| m.module_sha256.clone()),
                "netRequests": out.meta.as_ref().map(|m| &m.net_requests),
            })
            .to_string(),
        );
    } else {
        pass_through(&out.stdout, &out.stderr);
    }
    Ok(exit_code(out.exit_code))
}

pub fn shell(args: ShellArgs) -> Result<Exit> {
    // Refuse unsupported syntax before opening anything.
    agent_wasi::shell::Plan::parse(&args.script)?;
    let s = setup(&args.wasi)?;
    // ShellContext's default mount: the workspace at its real path (`pwd` prints it).
    let ctx = ShellContext::new(&s.workspace)
        .with_env(s.env)
        .with_stdin(piped_stdin()?)
        .with_output_limits(s.output_limit, s.output_limit);
    let run = s.toolbox.shell(&args.script, &ctx)?;
    let out = &run.output;
    if args.wasi.json {
        output::stdout_line(
            &json!({
                "exitCode": out.exit_code,
                "stdout": String::from_utf8_lossy(&out.stdout),
                "stderr": String::from_utf8_lossy(&out.stderr),
                "stdoutTruncated": out.stdout_truncated,
                "stderrTruncated": out.stderr_truncated,
                "commands": run.commands,
            })
            .to_string(),
        );
    } else {
        pass_through(&out.stdout, &out.stderr);
    }
    Ok(exit_code(out.exit_code))
}
