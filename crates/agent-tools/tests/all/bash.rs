//! The Bash tool (issue 15): the command checker refuses before anything runs, the native
//! backend runs in the workspace (inside bubblewrap when that is the outer sandbox), output is
//! capped and spilled, a timeout ends the whole process group, the WASI backend says it is not
//! built.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failure report"
)]

use std::path::Path;
use std::sync::Arc;

use agent_core::tools::{Tool, ToolContext, ToolError, ToolOutput};
use agent_sandbox::caps::OutputCaps;
use agent_sandbox::outer::backend_named;
use agent_sandbox::profile::ProfileTree;
use agent_sandbox::settings::SandboxSettings;
use agent_tools::{Bash, BashBackend as _, NativeBackend, Unsandboxed};
use serde_json::{Value, json};

fn tree() -> ProfileTree {
    ProfileTree::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles")).unwrap()
}

fn bash(outer: &str, sandbox: SandboxSettings, spill: &Path) -> Bash {
    let backend = NativeBackend::new(backend_named(outer).unwrap(), tree(), Unsandboxed::Allowed);
    Bash::new(Arc::new(backend), sandbox).with_caps(OutputCaps {
        spill_dir: spill.to_path_buf(),
        ..OutputCaps::default()
    })
}

fn run(tool: &Bash, dir: &Path, input: Value) -> Result<ToolOutput, ToolError> {
    let ctx = ToolContext::new(dir, "s1", "toolu_1");
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap()
        .block_on(tool.call(input, &ctx))
}

fn dirs() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let ws = base.join("ws");
    let spill = base.join("spill");
    std::fs::create_dir_all(&ws).unwrap();
    (tmp, ws, spill)
}

#[test]
fn a_denied_command_never_runs() {
    let (_t, ws, spill) = dirs();
    let sandbox = SandboxSettings {
        denied_commands: vec!["rm".into()],
        ..SandboxSettings::default()
    };
    let tool = bash("none", sandbox, &spill);
    std::fs::write(ws.join("keep.txt"), "x").unwrap();
    for cmd in [
        "touch marker; rm keep.txt",
        "echo ok && bash -c 'touch marker; \\rm keep.txt'",
        "x=$(rm keep.txt); touch marker",
    ] {
        let err = run(&tool, &ws, json!({"command": cmd})).unwrap_err();
        assert_eq!(err.error_type(), "sandbox_denied", "{cmd}: {err}");
        assert!(!ws.join("marker").exists(), "{cmd}: something ran");
        assert!(ws.join("keep.txt").exists());
    }
}

#[test]
fn an_allowed_command_runs_in_the_workspace() {
    let (_t, ws, spill) = dirs();
    let tool = bash("none", SandboxSettings::default(), &spill);
    let out = run(&tool, &ws, json!({"command": "pwd; echo err >&2; exit 3"})).unwrap();
    assert_eq!(out.output["stdout"], format!("{}\n", ws.display()));
    assert_eq!(out.output["stderr"], "err\n");
    assert_eq!(out.output["exitCode"], 3);
    assert_eq!(out.output["interrupted"], false);
    assert!(out.is_error);
    let out = run(&tool, &ws, json!({"command": "true"})).unwrap();
    assert!(!out.is_error);
}

#[test]
fn output_over_the_cap_is_cut_and_spilled_whole() {
    let (_t, ws, spill) = dirs();
    let tool = bash("none", SandboxSettings::default(), &spill);
    let out = run(&tool, &ws, json!({"command": "seq 1 20000"})).unwrap();
    let inline = out.output["stdout"].as_str().unwrap();
    assert!(inline.len() < 11_000, "{} bytes inline", inline.len());
    let file = out.output["stdoutFile"].as_str().unwrap();
    let whole = std::fs::read_to_string(file).unwrap();
    assert!(whole.starts_with("1\n2\n") && whole.ends_with("19999\n20000\n"));
    assert!(Path::new(file).starts_with(&spill));
}

#[test]
fn a_timeout_ends_the_command_and_what_it_started() {
    let (_t, ws, spill) = dirs();
    let tool = bash("none", SandboxSettings::default(), &spill);
    let out = run(
        &tool,
        &ws,
        json!({"command": "sleep 30 & echo $! > child.pid; wait", "timeout": 300}),
    )
    .unwrap();
    assert_eq!(out.output["interrupted"], true);
    assert!(
        out.output["stoppedBy"]
            .as_str()
            .unwrap()
            .contains("timed out")
    );
    let pid = std::fs::read_to_string(ws.join("child.pid")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let alive = Path::new(&format!("/proc/{}", pid.trim())).exists()
        && !std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
            .unwrap_or_default()
            .contains(") Z ");
    assert!(!alive, "the background child {pid} survived the timeout");
}

#[test]
fn inputs_outside_the_contract_are_refused() {
    let (_t, ws, spill) = dirs();
    let tool = bash("none", SandboxSettings::default(), &spill);
    for (input, kind) in [
        (json!({}), "invalid_input"),
        (json!({"command": "  "}), "invalid_input"),
        (
            json!({"command": "true", "timeout": 600_001}),
            "invalid_input",
        ),
        (
            json!({"command": "true", "dangerouslyDisableSandbox": true}),
            "sandbox_denied",
        ),
    ] {
        let err = run(&tool, &ws, input.clone()).unwrap_err();
        assert_eq!(err.error_type(), kind, "{input}: {err}");
    }
}

#[test]
fn inside_bubblewrap_only_the_workspace_is_writable() {
    let probe = backend_named("bwrap").unwrap();
    if let Err(e) = probe.probe() {
        eprintln!("bubblewrap cannot run here ({e}); this test is skipped");
        return;
    }
    let (_t, ws, spill) = dirs();
    let outside = ws.parent().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let backend = NativeBackend::new(backend_named("bwrap").unwrap(), tree(), Unsandboxed::Refuse);
    assert_eq!(backend.outer_name(), "bwrap");
    let tool = Bash::new(Arc::new(backend), SandboxSettings::default()).with_caps(OutputCaps {
        spill_dir: spill,
        ..OutputCaps::default()
    });
    let cmd = format!(
        "touch inside.txt && echo made; touch {}/escape.txt 2>/dev/null || echo refused",
        outside.display()
    );
    let out = run(&tool, &ws, json!({"command": cmd})).unwrap();
    assert_eq!(out.output["stdout"], "made\nrefused\n", "{}", out.output);
    assert!(ws.join("inside.txt").exists());
    assert!(!outside.join("escape.txt").exists());
}

#[test]
fn spilled_output_lands_in_the_workspace_where_read_can_page_through_it() {
    let (_t, ws, _spill) = dirs();
    let backend = NativeBackend::new(backend_named("none").unwrap(), tree(), Unsandboxed::Allowed);
    let tool = Bash::new(Arc::new(backend), SandboxSettings::default());
    let out = run(&tool, &ws, json!({"command": "seq 1 20000"})).unwrap();
    let file = out.output["stdoutFile"].as_str().unwrap().to_owned();
    assert!(
        Path::new(&file).starts_with(ws.join(".agent/output")),
        "{file}"
    );
    let tools = agent_tools::builtin_tools(&agent_tools::ToolState::new());
    let read = tools.iter().find(|t| t.name() == "Read").unwrap();
    let ctx = ToolContext::new(&ws, "s1", "toolu_2");
    let page = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(read.call(json!({"file_path": file, "offset": 19999}), &ctx))
        .unwrap();
    assert_eq!(page.output, " 19999\t19999\n 20000\t20000\n");
}

#[test]
fn a_background_command_returns_at_once_and_writes_its_result() {
    let (_t, ws, spill) = dirs();
    let tool = bash("none", SandboxSettings::default(), &spill);
    let started = std::time::Instant::now();
    let out = run(
        &tool,
        &ws,
        json!({"command": "sleep 2; echo done; exit 4", "run_in_background": true}),
    )
    .unwrap();
    // Generous on a shared machine: the point is that it returns long before the command ends.
    assert!(started.elapsed() < std::time::Duration::from_millis(1500));
    assert_eq!(out.output["status"], "running");
    let file = out.output["outputFile"].as_str().unwrap().to_owned();
    let first: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(first["status"], "running");
    tool.wait_background();
    let done: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["stdout"], "done\n");
    assert_eq!(done["exitCode"], 4);
    // The checker still runs first.
    let denying = bash(
        "none",
        SandboxSettings {
            denied_commands: vec!["rm".into()],
            ..SandboxSettings::default()
        },
        &spill,
    );
    let err = run(
        &denying,
        &ws,
        json!({"command": "rm -rf x", "run_in_background": true}),
    )
    .unwrap_err();
    assert_eq!(err.error_type(), "sandbox_denied");
}

/// Every place the OS sandbox mounts (each bind of the profiles, the home directory, `/tmp`, the
/// folder around the workspace, the toolchain caches), tried for writing by one command: only
/// the workspace keeps what was written.
#[test]
fn nothing_but_the_workspace_keeps_a_write() {
    use agent_sandbox::profile::bwrap;
    use agent_sandbox::profile::env::EnvPlan;
    use agent_sandbox::profile::host::SystemHost;
    use agent_sandbox::profile::selection::{ProfilePlan, Selection, Workdir};

    let probe = backend_named("bwrap").unwrap();
    if let Err(e) = probe.probe() {
        eprintln!("bubblewrap cannot run here ({e}); this test is skipped");
        return;
    }
    let (_t, ws, spill) = dirs();
    let real = ws.parent().unwrap().to_path_buf();
    let selection = Selection {
        workdir: Workdir::Path(ws.clone()),
        command: Some("bash".into()),
        ..Selection::default()
    };
    let plan = ProfilePlan::resolve(&tree(), &selection, &SystemHost).unwrap();
    let rendered = bwrap::render(&plan, &EnvPlan::default());
    let home = std::env::var("HOME").unwrap();
    let mut targets: Vec<std::path::PathBuf> = rendered
        .mounts
        .iter()
        .filter(|m| m.path != ws && m.path.as_os_str() != "/dev" && m.path.as_os_str() != "/proc")
        .map(|m| m.path.clone())
        .collect();
    targets.extend([
        std::path::PathBuf::from(&home),
        real,
        std::path::PathBuf::from("/tmp"),
        std::path::PathBuf::from(&home).join(".cargo/registry"),
        std::path::PathBuf::from(&home).join(".cargo"),
    ]);
    let name = format!("probe-{}", std::process::id());
    let mut script = format!("echo in > {name}; ");
    for t in &targets {
        let p = if t.is_dir() || !t.exists() {
            t.join(&name)
        } else {
            t.clone()
        };
        script.push_str(&format!("(echo x > '{}') 2>/dev/null; ", p.display()));
    }
    script.push_str("echo done");
    let backend = NativeBackend::new(backend_named("bwrap").unwrap(), tree(), Unsandboxed::Refuse);
    let tool = Bash::new(Arc::new(backend), SandboxSettings::default()).with_caps(OutputCaps {
        spill_dir: spill,
        ..OutputCaps::default()
    });
    let out = run(&tool, &ws, json!({"command": script})).unwrap();
    assert_eq!(out.output["stdout"], "done\n", "{}", out.output);
    assert_eq!(out.output["backend"], "sandbox", "{}", out.output);
    assert!(ws.join(&name).exists(), "the workspace write was lost");
    for t in &targets {
        let p = if t.is_dir() || !t.exists() {
            t.join(&name)
        } else {
            t.clone()
        };
        if p.starts_with(&ws) {
            continue;
        }
        // A file the command targeted directly must be unchanged; a new one must not exist.
        let written = std::fs::read_to_string(&p).is_ok_and(|c| c == "x\n");
        assert!(!written, "{} kept the sandboxed write", p.display());
    }
}

/// Without an OS sandbox (here: turned off), the backend's rule decides: refuse (nothing to
/// ask), run after the user approved it (the policy asks every time), or run (the user's own
/// `failIfUnavailable: false`); what ran says `host`.
#[test]
fn without_the_os_sandbox_the_unsandboxed_rule_decides() {
    let (_t, ws, spill) = dirs();
    let make = |rule| NativeBackend::new(backend_named("none").unwrap(), tree(), rule);
    let tool = |backend: NativeBackend| {
        Bash::new(Arc::new(backend), SandboxSettings::default()).with_caps(OutputCaps {
            spill_dir: spill.clone(),
            ..OutputCaps::default()
        })
    };
    let refuse = make(Unsandboxed::Refuse);
    assert_eq!(refuse.unsandboxed("true"), None);
    let err = run(&tool(refuse), &ws, json!({"command": "true"})).unwrap_err();
    assert_eq!(err.error_type(), "sandbox_denied", "{err}");
    let asked = make(Unsandboxed::AfterApproval);
    assert!(
        asked
            .unsandboxed("true")
            .is_some_and(|w| w.contains("WITHOUT the OS sandbox")),
    );
    let policy = tool(make(Unsandboxed::AfterApproval)).host_policy();
    let call = agent_core::permissions::ToolCall::new("Bash", json!({"command": "true"}));
    use agent_core::permissions::PermissionPolicy as _;
    assert!(matches!(
        policy.evaluate(&call),
        Some(agent_core::permissions::PolicyVerdict::Ask(_))
    ));
    let out = run(&tool(asked), &ws, json!({"command": "echo ran"})).unwrap();
    assert_eq!(out.output["backend"], "host", "{}", out.output);
    let allowed = make(Unsandboxed::Allowed);
    assert_eq!(allowed.unsandboxed("true"), None);
    let out = run(&tool(allowed), &ws, json!({"command": "echo ran"})).unwrap();
    assert_eq!(
        (
            out.output["backend"].as_str(),
            out.output["stdout"].as_str()
        ),
        (Some("host"), Some("ran\n"))
    );
}

/// Listed domains are not reachable from host commands, and the model is told so.
#[test]
fn host_commands_say_listed_domains_are_not_theirs() {
    if let Err(e) = backend_named("bwrap").unwrap().probe() {
        eprintln!("bubblewrap cannot run here ({e}); this test is skipped");
        return;
    }
    let (_t, ws, spill) = dirs();
    let backend = NativeBackend::new(backend_named("bwrap").unwrap(), tree(), Unsandboxed::Refuse)
        .with_domains_listed(true);
    assert!(
        backend.describe().contains("allowedDomains"),
        "{}",
        backend.describe()
    );
    let tool = Bash::new(Arc::new(backend), SandboxSettings::default()).with_caps(OutputCaps {
        spill_dir: spill,
        ..OutputCaps::default()
    });
    assert!(tool.description().contains("allowedDomains"));
    let out = run(&tool, &ws, json!({"command": "true"})).unwrap();
    let notes = out.output["notes"].to_string();
    assert!(
        notes.contains("no network even for sandbox.network.allowedDomains"),
        "{notes}"
    );
}

/// The system prompt's Bash fact comes from the backend as configured: which shell, which
/// sandbox, which network, and what happens without a sandbox.
#[test]
fn placement_says_where_scripts_run_as_configured() {
    use agent_tools::{Choice, RoutedBackend};
    let make = |rule| NativeBackend::new(backend_named("none").unwrap(), tree(), rule);
    let placement = |rule, choice| {
        #[cfg(feature = "wasi")]
        let routed = RoutedBackend::new(None, make(rule), choice);
        #[cfg(not(feature = "wasi"))]
        let routed = RoutedBackend::new(make(rule), choice);
        Bash::new(Arc::new(routed), SandboxSettings::default()).placement()
    };
    let allowed = placement(Unsandboxed::Allowed, Choice::Auto);
    assert!(
        allowed.starts_with("Every script runs in the host's bash WITHOUT an OS sandbox")
            && allowed.contains("the user's files and network")
            && allowed.contains("the WASI shell is not available"),
        "{allowed}"
    );
    let asked = placement(Unsandboxed::AfterApproval, Choice::HostOnly);
    assert!(
        asked.contains("only after the user approves it") && asked.contains("\"native\""),
        "{asked}"
    );
    let refused = placement(Unsandboxed::Refuse, Choice::WasiOnly);
    assert!(refused.starts_with("Every script is refused"), "{refused}");
    if backend_named("bwrap").is_ok_and(|b| b.probe().is_ok()) {
        let sandboxed =
            NativeBackend::new(backend_named("bwrap").unwrap(), tree(), Unsandboxed::Refuse);
        assert_eq!(
            sandboxed.placement(),
            "the host's bash inside the OS sandbox (bwrap): no network, only the workspace writable"
        );
    }
}
