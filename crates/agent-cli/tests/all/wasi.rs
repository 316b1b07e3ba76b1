//! `agent exec`, `agent shell` and the Bash tool's `wasi` backend, with the project's real
//! core-utils bundle installed from the registry `cargo xtask bundles` builds (CI builds it
//! before the tests; locally these tests say so and pass when it is missing).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

/// The registry, or `None` (and a note) when it has not been built.
fn registry() -> Option<PathBuf> {
    let dir = target_dir().join("bundles/registry");
    if dir.join("index.json").exists() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} is missing: `cargo xtask ci` builds it before the tests",
        dir.display()
    );
    eprintln!("skipped: run `cargo xtask bundles` first");
    None
}

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn env() -> Option<Env> {
    let registry = registry()?;
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let ws = root.join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/a.txt"), "alpha\nbeta\ngamma\n").unwrap();
    std::fs::write(ws.join("notes.md"), "# notes\nTODO one\nTODO two\n").unwrap();
    let e = Env {
        _tmp: tmp,
        home,
        ws,
    };
    let installed = e.agent(
        &[
            "bundles",
            "install",
            "core-utils",
            "--registry",
            &registry.to_string_lossy(),
        ],
        None,
    );
    assert_eq!(installed.code, 0, "{}", installed.stderr);
    Some(e)
}

impl Env {
    fn agent(&self, args: &[&str], stdin: Option<&str>) -> Run {
        self.agent_in(args, stdin, None)
    }

    /// Runs `agent` with this environment, `stdin`, and `PATH` set to `path` when given (so
    /// `bwrap` can be made unfindable).
    fn agent_in(&self, args: &[&str], stdin: Option<&str>, path: Option<&str>) -> Run {
        let mut command = Command::new(env!("CARGO_BIN_EXE_agent"));
        command
            .args(args)
            .env("HOME", &self.home)
            .env("AGENT_HOME", self.home.join(".agent"))
            // One compiled-module cache for every test, so the 6 MB module compiles once.
            .env("AGENT_WASI_CACHE", target_dir().join("wasi-test-cache"))
            .current_dir(&self.ws)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(path) = path {
            command.env("PATH", path);
        }
        let mut child = command.spawn().unwrap();
        if let Some(text) = stdin {
            use std::io::Write as _;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        let out = child.wait_with_output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }
}

#[test]
fn shell_runs_pipelines_on_a_fresh_install() {
    let Some(e) = env() else { return };
    let run = e.agent(&["shell", "ls | wc -l"], None);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "2\n"),
        "{}",
        run.stderr
    );
    let run = e.agent(
        &[
            "shell",
            "grep -c TODO notes.md && cat src/a.txt | sort -r | head -1 > top.txt; cat top.txt",
        ],
        None,
    );
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "2\ngamma\n"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(e.ws.join("top.txt")).unwrap(),
        "gamma\n"
    );
    let run = e.agent(
        &["shell", "cd src && cat a.txt | wc -l; nope; echo $?"],
        None,
    );
    assert_eq!(run.stdout, "3\n127\n");
    assert!(
        run.stderr.contains("nope: command not found"),
        "{}",
        run.stderr
    );
    let run = e.agent(&["shell", "yes | head -2"], None);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "y\ny\n"),
        "{}",
        run.stderr
    );
    let run = e.agent(&["shell", "cat missing.txt"], None);
    assert_eq!(run.code, 1);
    // The script's status is the last command's; stdin reaches the first command that reads.
    let run = e.agent(&["shell", "sort | uniq -c"], Some("b\na\nb\n"));
    assert_eq!(run.stdout, "      1 a\n      2 b\n");
}

#[test]
fn shell_refuses_unsupported_syntax_before_anything_runs() {
    let Some(e) = env() else { return };
    for (script, construct) in [
        ("touch made; cat <<EOF\nx\nEOF", "here-document"),
        ("touch made; echo $(ls)", "command substitution"),
        ("touch made; (cd src; ls)", "subshell"),
    ] {
        let run = e.agent(&["shell", script], None);
        assert_eq!(run.code, 2, "{script}");
        assert!(run.stderr.contains(construct), "{script}: {}", run.stderr);
        assert!(!e.ws.join("made").exists(), "{script}: nothing may run");
    }
}

#[test]
fn exec_passes_status_and_output_through_and_reports_json() {
    let Some(e) = env() else { return };
    let run = e.agent(&["exec", "--", "cat", "src/a.txt"], None);
    assert_eq!((run.code, run.stdout.as_str()), (0, "alpha\nbeta\ngamma\n"));
    let run = e.agent(&["exec", "--", "grep", "-q", "zeta", "src/a.txt"], None);
    assert_eq!(run.code, 1);
    let run = e.agent(&["exec", "--", "nope"], None);
    assert_eq!(run.code, 127);
    assert!(
        run.stderr.contains("nope: command not found"),
        "{}",
        run.stderr
    );
    let run = e.agent(&["exec", "--json", "--", "wc", "-l", "notes.md"], None);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["exitCode"], 0);
    assert_eq!(v["stdout"], "3 notes.md\n");
    assert_eq!(v["bundle"], "core-utils@0.1.0");
    assert_eq!(v["moduleSha256"].as_str().unwrap().len(), 64);
    // The host is out of reach: the workspace is mounted at its own path, and above it there
    // is nothing but the (empty) directories that lead to it.
    let run = e.agent(&["exec", "--", "ls", "/"], None);
    assert_eq!(run.stdout, "");
    let run = e.agent(&["exec", "--", "ls", &e.ws.to_string_lossy()], None);
    assert_eq!(run.stdout, "notes.md\nsrc\n");
    let run = e.agent(&["exec", "--", "cat", "/etc/passwd"], None);
    assert_ne!(run.code, 0);
    let run = e.agent(&["exec", "--", "cat", "../../etc/passwd"], None);
    assert_ne!(run.code, 0);
    // A wall-time limit ends the command with 124.
    let run = e.agent(&["exec", "--timeout", "300", "--", "sleep", "5"], None);
    assert_eq!(run.code, 124, "{}", run.stderr);
    // Bad arguments: 2.
    assert_eq!(
        e.agent(&["exec", "--timeout", "0", "--", "ls"], None).code,
        2
    );
    assert_eq!(e.agent(&["exec", "--env", "1x", "--", "ls"], None).code, 2);
}

#[test]
fn without_a_bundle_exec_says_how_to_install_one() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_agent"))
        .args(["shell", "ls"])
        .env("AGENT_HOME", tmp.path().join("home"))
        .current_dir(tmp.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("no WASI bundle is installed") && err.contains("agent bundles install"),
        "{err}"
    );
}

#[test]
fn the_bash_tool_runs_on_the_wasi_backend_and_audits_each_command() {
    let Some(e) = env() else { return };
    let settings = e.home.join("settings.json");
    std::fs::write(
        &settings,
        json!({"permissions": {"allow": ["Bash"]}, "bash": {"backend": "wasi"}}).to_string(),
    )
    .unwrap();
    let run = e.agent(
        &[
            "tool",
            "Bash",
            "--input",
            &json!({"command": "cat src/a.txt | grep -c a"}).to_string(),
            "--workspace",
            &e.ws.to_string_lossy(),
            "--settings",
            &settings.to_string_lossy(),
        ],
        None,
    );
    assert_eq!(run.code, 0, "{} {}", run.stdout, run.stderr);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    let out = &v["output"];
    assert_eq!(out["stdout"], "3\n");
    assert_eq!(out["exitCode"], 0);
    let commands = out["commands"].as_array().unwrap();
    assert_eq!(commands.len(), 2);
    let argvs: Vec<&Value> = commands.iter().map(|c| &c["argv"]).collect();
    assert!(
        argvs.contains(&&json!(["cat", "src/a.txt"])),
        "{commands:?}"
    );
    assert!(argvs.contains(&&json!(["grep", "-c", "a"])), "{commands:?}");
    for c in commands {
        assert_eq!(c["bundle"], "core-utils@0.1.0");
        assert!(c["durationUs"].as_u64().is_some());
    }
    let cat = commands.iter().find(|c| c["argv"][0] == "cat").unwrap();
    assert_eq!(cat["stdoutBytes"], 17);
}

#[test]
fn exec_fetch_needs_allow_domain_and_private_addresses_stay_refused() {
    let Some(e) = env() else { return };
    // A loopback listener that would accept a connection, to show that nothing reaches it.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/",
        listener.local_addr().unwrap().port()
    );
    // No --allow-domain: no network at all.
    let run = e.agent(&["exec", "--", "fetch", &url], None);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "fetch: network is not granted to this command\n"
    );
    // Allowing the address does not make a loopback address fetchable.
    let run = e.agent(
        &["exec", "--allow-domain", "127.0.0.1", "--", "fetch", &url],
        None,
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("a loopback (127.0.0.0/8) address"),
        "{}",
        run.stderr
    );
    // A host outside the list is refused, and the request is in the JSON report.
    let run = e.agent(
        &[
            "exec",
            "--allow-domain",
            "example.com",
            "--allow-domain",
            "*.example.org",
            "--json",
            "--",
            "fetch",
            "http://10.0.0.1/",
        ],
        None,
    );
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["exitCode"], 1);
    assert_eq!(v["netRequests"][0]["url"], "http://10.0.0.1/");
    assert_eq!(v["netRequests"][0]["error"], "refused");
    assert!(
        v["netRequests"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("10.0.0.1 is not in the allowed domains"),
        "{v}"
    );
    // A malformed domain is a usage error.
    let run = e.agent(
        &[
            "exec",
            "--allow-domain",
            "http://example.com/",
            "--",
            "true",
        ],
        None,
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--allow-domain"), "{}", run.stderr);
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "nothing may reach the listener");
}

#[test]
fn the_bash_tool_fetches_only_with_the_settings_allowed_domains() {
    let Some(e) = env() else { return };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/",
        listener.local_addr().unwrap().port()
    );
    let bash = |settings_json: Value, command: &str| -> Value {
        let settings = e.home.join("settings.json");
        std::fs::create_dir_all(&e.home).unwrap();
        std::fs::write(&settings, settings_json.to_string()).unwrap();
        let run = e.agent(
            &[
                "tool",
                "Bash",
                "--input",
                &json!({ "command": command }).to_string(),
                "--workspace",
                &e.ws.to_string_lossy(),
                "--settings",
                &settings.to_string_lossy(),
            ],
            None,
        );
        // `agent tool` exits 1 when the result is an error (a command's status is not 0).
        let v: Value = serde_json::from_str(&run.stdout).unwrap();
        let failed = v["isError"] == true;
        assert_eq!(run.code, i32::from(failed), "{} {}", run.stdout, run.stderr);
        v["output"].clone()
    };
    // No allowedDomains: the Bash tool's commands have no network.
    let out = bash(
        json!({"permissions": {"allow": ["Bash"]}, "bash": {"backend": "wasi"}}),
        &format!("fetch {url}"),
    );
    assert_eq!(out["exitCode"], 1, "{out}");
    assert_eq!(
        out["stderr"],
        "fetch: network is not granted to this command\n"
    );
    // allowedDomains grants those domains only, never a loopback address, and every request is
    // in the command's record.
    let allowed = json!({
        "permissions": {"allow": ["Bash"]},
        "bash": {"backend": "wasi"},
        "sandbox": {"network": {"allowedDomains": ["example.com", "127.0.0.1"]}}
    });
    let out = bash(allowed, &format!("fetch {url}; fetch http://10.0.0.1/"));
    assert_eq!(out["exitCode"], 1, "{out}");
    let commands = out["commands"].as_array().unwrap();
    assert_eq!(commands.len(), 2, "{out}");
    let first = &commands[0]["netRequests"][0];
    assert_eq!(first["url"], url.as_str());
    assert_eq!(first["error"], "refused");
    assert!(
        first["reason"]
            .as_str()
            .unwrap()
            .contains("a loopback (127.0.0.0/8) address"),
        "{first}"
    );
    let second = &commands[1]["netRequests"][0];
    assert!(
        second["reason"]
            .as_str()
            .unwrap()
            .contains("10.0.0.1 is not in the allowed domains"),
        "{second}"
    );
    // deniedDomains wins over allowedDomains.
    let out = bash(
        json!({
            "permissions": {"allow": ["Bash"]},
            "bash": {"backend": "wasi"},
            "sandbox": {"network": {"allowedDomains": ["*.example.com"], "deniedDomains": ["bad.example.com"]}}
        }),
        "fetch http://bad.example.com/",
    );
    let request = &out["commands"][0]["netRequests"][0];
    assert_eq!(request["error"], "refused", "{out}");
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "nothing may reach the listener");
}

#[test]
fn shell_json_records_carry_the_network_requests() {
    let Some(e) = env() else { return };
    let run = e.agent(
        &[
            "shell",
            "--allow-domain",
            "example.com",
            "--json",
            "fetch http://10.0.0.1/ | wc -c",
        ],
        None,
    );
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    let commands = v["commands"].as_array().unwrap();
    let fetch = commands.iter().find(|c| c["argv"][0] == "fetch").unwrap();
    assert_eq!(fetch["netRequests"][0]["url"], "http://10.0.0.1/", "{v}");
    assert_eq!(fetch["netRequests"][0]["error"], "refused", "{v}");
    let wc = commands.iter().find(|c| c["argv"][0] == "wc").unwrap();
    assert!(wc.get("netRequests").is_none(), "{wc}");
}

impl Env {
    /// `agent tool Bash` on the workspace with `command`, the extra `args`, and `PATH`.
    fn bash(&self, command: &str, args: &[&str], path: &str) -> (Run, Value) {
        let input = json!({ "command": command }).to_string();
        let ws = self.ws.to_string_lossy().into_owned();
        let mut all = vec!["tool", "Bash", "--input", &input, "--workspace", &ws];
        all.extend_from_slice(args);
        let run = self.agent_in(&all, None, Some(path));
        let v = serde_json::from_str(&run.stdout).unwrap_or(Value::Null);
        (run, v)
    }

    fn settings(&self, name: &str, value: &Value) -> String {
        let p = self.home.join(name);
        std::fs::write(&p, value.to_string()).unwrap();
        p.to_string_lossy().into_owned()
    }
}

fn bwrap_runs() -> bool {
    use agent_sandbox::outer::OuterSandbox as _;
    match agent_sandbox::outer::BwrapBackend::new(None).probe() {
        Ok(()) => true,
        Err(e) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "bubblewrap cannot run here ({e}); .ci/run installs it"
            );
            eprintln!("skipped: bubblewrap cannot run here ({e})");
            false
        }
    }
}

const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Default settings, a bundle installed: each script goes where it can run, the result says
/// which, paths agree with the host's, and a host command cannot reach past the workspace.
#[test]
fn the_bash_tool_routes_each_script_and_contains_host_commands() {
    let Some(e) = env() else { return };
    if !bwrap_runs() {
        return;
    }
    // Read-only and bundle-only: the WASI shell, at the workspace's real path.
    let (run, v) = e.bash("pwd; ls src; realpath notes.md", &[], PATH);
    assert_eq!(run.code, 0, "{} {}", run.stdout, run.stderr);
    let ws = e.ws.display();
    assert_eq!(v["output"]["backend"], "wasi", "{v}");
    assert_eq!(
        v["output"]["stdout"],
        format!("{ws}\na.txt\n{ws}/notes.md\n"),
        "{v}"
    );
    // A program the bundle does not have: the host's bash in the OS sandbox.
    let allow = e.settings(
        "allow-python.json",
        &json!({"permissions": {"allow": ["Bash(python3 *)"]}}),
    );
    let (run, v) = e.bash(
        "python3 -c 'import os; print(6 * 7, os.getcwd())'",
        &["--settings", &allow],
        PATH,
    );
    assert_eq!(run.code, 0, "{} {}", run.stdout, run.stderr);
    assert_eq!(v["output"]["backend"], "sandbox", "{v}");
    assert_eq!(v["output"]["stdout"], format!("42 {ws}\n"), "{v}");
    assert!(
        v["output"]["notes"][0]
            .as_str()
            .is_some_and(|n| n.contains("python3")),
        "{v}"
    );
    // Nothing it writes outside the workspace stays: not the folder around it, not $HOME,
    // not a toolchain cache; and the environment holds no secret.
    let outside = e.ws.parent().unwrap().join("outside.txt");
    let home_file = e.home.join("planted.txt");
    let script = format!(
        "import os\nfor p in [{:?}, {:?}, os.path.expanduser('~/.cargo/registry/x')]:\n    try:\n        open(p, 'w').write('x')\n    except OSError as e:\n        print('refused', type(e).__name__)\nprint(sorted(k for k in os.environ if 'SECRET' in k))",
        outside.display().to_string(),
        home_file.display().to_string()
    );
    let cmd = format!("python3 -c \"{}\"", script.replace('"', "\\\""));
    let out = Command::new(env!("CARGO_BIN_EXE_agent"))
        .args([
            "tool",
            "Bash",
            "--input",
            &json!({ "command": cmd }).to_string(),
            "--workspace",
            &e.ws.to_string_lossy(),
            "--settings",
            &allow,
        ])
        .env("HOME", &e.home)
        .env("AGENT_HOME", e.home.join(".agent"))
        .env("AGENT_WASI_CACHE", target_dir().join("wasi-test-cache"))
        .env("MY_SECRET_TOKEN", "s3cr3t")
        .current_dir(&e.ws)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["output"]["backend"], "sandbox", "{v}");
    let stdout = v["output"]["stdout"].as_str().unwrap();
    assert!(stdout.ends_with("[]\n"), "{v}");
    assert!(
        !outside.exists(),
        "a sandboxed command wrote next to the workspace"
    );
    assert!(!home_file.exists(), "a sandboxed command wrote into $HOME");
}

/// An untrusted project cannot loosen Bash: its `sandbox.enabled: true` approves nothing and
/// its `bash.backend: "native"` is ignored, with a warning naming each.
#[test]
fn an_untrusted_project_cannot_loosen_bash() {
    let Some(e) = env() else { return };
    std::fs::create_dir_all(e.ws.join(".agent")).unwrap();
    std::fs::write(
        e.ws.join(".agent/settings.json"),
        json!({"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true}, "bash": {"backend": "native"}})
            .to_string(),
    )
    .unwrap();
    let (run, v) = e.bash("echo pwned > pwned.txt", &[], PATH);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert_eq!(v["decision"], "deny", "{v}");
    assert!(!e.ws.join("pwned.txt").exists());
    for key in ["sandbox.autoAllowBashIfSandboxed", "bash.backend"] {
        assert!(run.stderr.contains(key), "{key} not named: {}", run.stderr);
    }
}

/// Where no OS sandbox can run, a host command is never run silently: it asks every time (no
/// prompter here: denied, even in bypassPermissions), unless the user's own settings say
/// `sandbox.failIfUnavailable: false`; a project cannot say it for them.
#[test]
fn without_an_os_sandbox_a_host_command_asks_every_time() {
    let Some(e) = env() else { return };
    // No bwrap on this PATH: the OS sandbox cannot start.
    let no_bwrap = "/nonexistent";
    let cmd = "/bin/true";
    let (run, v) = e.bash(cmd, &["--mode", "bypassPermissions"], no_bwrap);
    assert_ne!(run.code, 0);
    assert_eq!(v["decision"], "deny", "{v}");
    assert_eq!(v["step"], "prompt", "{v}");
    assert!(
        v["reason"]
            .as_str()
            .is_some_and(|r| r.contains("WITHOUT the OS sandbox")),
        "{v}"
    );
    // A trusted project saying failIfUnavailable: false changes nothing.
    std::fs::create_dir_all(e.ws.join(".agent")).unwrap();
    std::fs::write(
        e.ws.join(".agent/settings.json"),
        json!({"sandbox": {"failIfUnavailable": false}}).to_string(),
    )
    .unwrap();
    let (_, v) = e.bash(cmd, &["--mode", "bypassPermissions", "--trust"], no_bwrap);
    assert_eq!(v["decision"], "deny", "{v}");
    // The user's own settings do.
    std::fs::create_dir_all(e.home.join(".agent")).unwrap();
    std::fs::write(
        e.home.join(".agent/settings.json"),
        json!({"sandbox": {"failIfUnavailable": false}}).to_string(),
    )
    .unwrap();
    let (run, v) = e.bash(cmd, &["--mode", "bypassPermissions"], no_bwrap);
    assert_eq!(run.code, 0, "{} {}", run.stdout, run.stderr);
    assert_eq!(v["output"]["backend"], "host", "{v}");
}

/// Approved means contained: an auto-approved read-only command runs with a read-only view,
/// no network and only the programs the checker saw, and its result says so; an allow rule's
/// approval writes only inside the workspace; a command the user approved as written carries
/// no prediction to hold it to.
#[test]
fn an_auto_approved_command_runs_held_to_what_it_was_approved_as() {
    let Some(e) = env() else { return };
    if !bwrap_runs() {
        return;
    }
    let (run, v) = e.bash("cat src/a.txt | wc -l", &[], PATH);
    assert_eq!(run.code, 0, "{} {}", run.stdout, run.stderr);
    assert_eq!(v["reason"], "built-in read-only command", "{v}");
    let out = &v["output"];
    assert_eq!(out["stdout"], "3\n", "{v}");
    assert_eq!(out["backend"], "wasi", "{v}");
    let c = &out["containment"];
    assert_eq!(c["writes"], "none", "{v}");
    assert_eq!(c["network"], false, "{v}");
    assert_eq!(c["programs"], json!(["cat", "wc"]), "{v}");
    assert_eq!(c["approvedAs"], "a built-in read-only command", "{v}");
    let enforced = c["enforced"].to_string();
    assert!(enforced.contains("the workspace was read-only"), "{v}");
    assert!(
        enforced.contains("only these programs could start: cat, wc"),
        "{v}"
    );
    // On the host (git is no bundle command) the OS sandbox binds the workspace read-only.
    let (run, v) = e.bash("git status", &[], PATH);
    assert_eq!(v["output"]["backend"], "sandbox", "{} {v}", run.stderr);
    let c = &v["output"]["containment"];
    assert_eq!(c["writes"], "none", "{v}");
    assert!(
        c["enforced"]
            .to_string()
            .contains("the workspace was read-only"),
        "{v}"
    );
    // An allow rule: writes inside the workspace, the programs the rule covers.
    let allow = e.settings(
        "allow-touch.json",
        &json!({"permissions": {"allow": ["Bash(touch *)"]}}),
    );
    let (run, v) = e.bash("touch made.txt", &["--settings", &allow], PATH);
    assert_eq!(run.code, 0, "{} {}", run.stdout, run.stderr);
    assert!(e.ws.join("made.txt").exists(), "{v}");
    let c = &v["output"]["containment"];
    assert_eq!(c["writes"], "workingDirs", "{v}");
    assert_eq!(c["programs"], json!(["touch"]), "{v}");
    assert_eq!(c["approvedAs"], "allow rule `Bash(touch *)`", "{v}");
    // A bare `Bash` allow approves every command as written: nothing predicted, nothing held.
    let all = e.settings(
        "allow-all.json",
        &json!({"permissions": {"allow": ["Bash"]}}),
    );
    let (_, v) = e.bash("touch other.txt", &["--settings", &all], PATH);
    assert!(v["output"].get("containment").is_none(), "{v}");
    assert!(e.ws.join("other.txt").exists(), "{v}");
}
