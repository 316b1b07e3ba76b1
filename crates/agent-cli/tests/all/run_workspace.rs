//! `agent run` on a real folder as a user knows it (issue 25 B): the repository root is
//! imported and the agent starts where it was run; a reused shadow is refreshed first; the
//! model, the transcript and the session see the real folder's paths, never the shadow's; MCP
//! servers start in the shadow. Against a loopback server speaking the OpenAI wire format.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::model::{call, on_path, serve, text};

fn agent(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agent"));
    c.env("AGENT_HOME", home)
        .env("HOME", home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_COMPATIBLE_API_KEY")
        .env_remove("OPENAI_COMPATIBLE_BASE_URL");
    c
}

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    repo: PathBuf,
    settings: PathBuf,
}

/// A repository `repo/` (a `.git` directory) with `Makefile`, `src/app.py`, `tests/t.py`.
fn env(settings: Value) -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let home = root.join("home");
    let repo = root.join("repo");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::create_dir_all(repo.join("tests")).unwrap();
    std::fs::write(repo.join("Makefile"), "test:\n\tpython3 tests/t.py\n").unwrap();
    std::fs::write(repo.join("src/app.py"), "print('one')\n").unwrap();
    std::fs::write(repo.join("tests/t.py"), "import sys\n").unwrap();
    let s = root.join("settings.json");
    std::fs::write(&s, settings.to_string()).unwrap();
    Env {
        _tmp: tmp,
        home,
        repo,
        settings: s,
    }
}

fn run(e: &Env, cwd: &Path, bodies: Vec<String>, extra: &[&str]) -> Output {
    let url = serve(bodies);
    agent(&e.home)
        .args([
            "run",
            "work",
            "--provider",
            "openai-compatible",
            "--base-url",
        ])
        .arg(&url)
        .args(["--model", "m", "--json", "--settings"])
        .arg(&e.settings)
        .args(extra)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn json_out(o: &Output) -> Value {
    let text = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(text.lines().last().unwrap_or("")).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {text}\nstderr: {}",
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

fn ok(o: &Output) -> Value {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    json_out(o)
}

fn log_text(home: &Path, id: &str) -> String {
    std::fs::read_to_string(home.join("sessions").join(id).join("events.jsonl")).unwrap()
}

fn result_of(log: &str, id: &str) -> Value {
    log.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["type"] == "tool.result" && l["toolUseId"] == id)
        .unwrap_or_else(|| panic!("no result for {id} in {log}"))
}

#[test]
fn run_in_a_subfolder_imports_the_repository_and_starts_in_the_subfolder() {
    let e = env(json!({"permissions": {"allow": ["Read", "Glob"]}}));
    let out = run(
        &e,
        &e.repo.join("src"),
        vec![
            // Relative to where the agent starts: src/ inside the shadow.
            call("c1", "Read", &json!({"file_path": "app.py"})),
            // The repository's root is in the shadow too.
            call("c2", "Read", &json!({"file_path": "../Makefile"})),
            text("done"),
        ],
        &[],
    );
    let v = ok(&out);
    assert_eq!(v["real"], e.repo.display().to_string());
    let shadow = PathBuf::from(v["shadow"].as_str().unwrap());
    assert!(shadow.join("Makefile").is_file() && shadow.join("tests/t.py").is_file());
    let log = log_text(&e.home, v["sessionId"].as_str().unwrap());
    assert_eq!(result_of(&log, "c1")["isError"], false, "{log}");
    assert!(result_of(&log, "c1").to_string().contains("print('one')"));
    assert_eq!(result_of(&log, "c2")["isError"], false, "{log}");
    assert!(
        result_of(&log, "c2")
            .to_string()
            .contains("python3 tests/t.py")
    );
}

#[test]
fn the_model_and_the_session_see_the_real_folders_paths_never_the_shadows() {
    let e = env(json!({"permissions": {"allow": ["Read", "Glob", "Write"]}}));
    let real_app = e.repo.join("src/app.py").display().to_string();
    let out = run(
        &e,
        &e.repo,
        vec![
            // The real folder's absolute path reads the shadow's copy (which the next call
            // changes, so the read must not be of the real file). Write needs a Read first.
            call("c0", "Read", &json!({"file_path": real_app})),
            call(
                "c1",
                "Write",
                &json!({"file_path": real_app, "content": "print('two')\n"}),
            ),
            call("c2", "Read", &json!({"file_path": real_app})),
            call("c3", "Glob", &json!({"pattern": "**/*.py"})),
            text("done"),
        ],
        &[],
    );
    let v = ok(&out);
    let shadow = v["shadow"].as_str().unwrap().to_owned();
    // The real file is untouched (no --yes); the shadow holds the write.
    assert_eq!(
        std::fs::read_to_string(e.repo.join("src/app.py")).unwrap(),
        "print('one')\n"
    );
    assert_eq!(
        std::fs::read_to_string(Path::new(&shadow).join("src/app.py")).unwrap(),
        "print('two')\n"
    );
    let log = log_text(&e.home, v["sessionId"].as_str().unwrap());
    assert!(result_of(&log, "c2").to_string().contains("print('two')"));
    let glob = result_of(&log, "c3").to_string();
    assert!(glob.contains(&real_app), "{glob}");
    assert!(
        !log.contains(&shadow),
        "the transcript mentions the shadow {shadow}: {log}"
    );
    // The session is the real folder's.
    let list = agent(&e.home)
        .args(["sessions", "list", "--json", "--cwd"])
        .arg(&e.repo)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(
        listed.contains(v["sessionId"].as_str().unwrap()),
        "{listed}\n{}",
        String::from_utf8_lossy(&list.stderr)
    );
}

#[test]
fn a_reused_shadow_is_refreshed_before_the_model_starts() {
    let e = env(json!({"permissions": {"allow": ["Read", "Write"]}}));
    let first = ok(&run(
        &e,
        &e.repo,
        vec![
            call(
                "c1",
                "Write",
                &json!({"file_path": "notes.txt", "content": "agent\n"}),
            ),
            text("done"),
        ],
        &[],
    ));
    assert!(first["commit"].is_null());
    // The user edits the real folder between runs.
    std::fs::write(e.repo.join("src/app.py"), "print('user')\n").unwrap();
    let out = run(
        &e,
        &e.repo,
        vec![
            call("c1", "Read", &json!({"file_path": "src/app.py"})),
            text("done"),
        ],
        &[],
    );
    let second = ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("refreshed"), "{stderr}");
    let log = log_text(&e.home, second["sessionId"].as_str().unwrap());
    assert!(
        result_of(&log, "c1").to_string().contains("print('user')"),
        "the model read a stale copy: {log}"
    );
    // The agent's earlier change is still pending in the shadow.
    let paths: Vec<&str> = second["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["notes.txt"]);
}

#[test]
fn mcp_servers_start_in_the_shadow_not_the_real_folder() {
    let server =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent-mcp/tests/fixtures/mcp_server.py");
    let e = env(json!({}));
    // A server that writes into its working directory, and one given the project's path.
    let settings = json!({
        "mcpServers": {
            "here": {"command": "sh", "args": ["-c", format!("echo here > written-by-mcp && exec python3 {}", server.display())]},
            "given": {"command": "sh", "args": ["-c", format!("echo given > \"$0/given-by-mcp\" && exec python3 {}", server.display()), e.repo.display().to_string()]}
        }
    });
    std::fs::write(&e.settings, settings.to_string()).unwrap();
    let v = ok(&run(&e, &e.repo, vec![text("done")], &["--no-commit"]));
    let shadow = PathBuf::from(v["shadow"].as_str().unwrap());
    assert!(!e.repo.join("written-by-mcp").exists());
    assert!(!e.repo.join("given-by-mcp").exists());
    assert!(shadow.join("written-by-mcp").is_file());
    assert!(shadow.join("given-by-mcp").is_file());
}

/// The core-utils bundle registry `cargo xtask ci` builds (`None`, skipped, outside CI when it
/// was not built).
fn registry() -> Option<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let dir = target.join("bundles/registry");
    if dir.join("index.json").exists() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{} is missing: `cargo xtask ci` builds it before the tests",
        dir.display()
    );
    None
}

#[test]
fn the_wasi_shell_shows_the_shadow_at_the_real_folders_path() {
    let Some(registry) = registry() else { return };
    let e = env(json!({"permissions": {"allow": ["Bash"]}, "bash": {"backend": "wasi"}}));
    let installed = agent(&e.home)
        .args(["bundles", "install", "core-utils", "--registry"])
        .arg(&registry)
        .output()
        .unwrap();
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    let real_app = e.repo.join("src/app.py").display().to_string();
    let url = serve(vec![
        call(
            "c1",
            "Bash",
            &json!({"command": format!("pwd && ls .. && cat {real_app}")}),
        ),
        text("done"),
    ]);
    let out = agent(&e.home)
        .args([
            "run",
            "work",
            "--provider",
            "openai-compatible",
            "--base-url",
        ])
        .arg(&url)
        .args(["--model", "m", "--json", "--settings"])
        .arg(&e.settings)
        .env("AGENT_WASI_CACHE", registry.join("../../wasi-test-cache"))
        .current_dir(e.repo.join("src"))
        .output()
        .unwrap();
    let v = ok(&out);
    let log = log_text(&e.home, v["sessionId"].as_str().unwrap());
    let result = result_of(&log, "c1");
    assert_eq!(result["isError"], false, "{result}");
    let stdout = result["output"]["stdout"].as_str().unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[0],
        e.repo.join("src").display().to_string(),
        "{stdout}"
    );
    assert!(
        lines.contains(&"Makefile") && lines.contains(&"tests"),
        "{stdout}"
    );
    assert!(stdout.contains("print('one')"), "{stdout}");
}

/// Runs `git` in `dir`, quietly, with a fixed identity.
fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every file under `dir` with its bytes.
fn tree_bytes(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                out.push((path, bytes));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_scripted_session_in_a_git_repository_edits_runs_git_diff_and_commits() {
    if !(on_path("git") && on_path("bwrap")) {
        assert!(
            std::env::var_os("CI").is_none(),
            "git and bwrap are needed (.ci/run installs bubblewrap)"
        );
        return;
    }
    let e = env(
        json!({"permissions": {"allow": ["Read", "Edit", "Bash(git diff*)"]}, "bash": {"backend": "native"}}),
    );
    std::fs::remove_dir_all(e.repo.join(".git")).unwrap();
    git(&e.repo, &["init", "-q", "-b", "main"]);
    git(&e.repo, &["add", "-A"]);
    git(&e.repo, &["commit", "-q", "-m", "first"]);
    let before = tree_bytes(&e.repo.join(".git"));
    let out = run(
        &e,
        &e.repo,
        vec![
            call("c1", "Read", &json!({"file_path": "src/app.py"})),
            call(
                "c2",
                "Edit",
                &json!({"file_path": "src/app.py", "old_string": "one", "new_string": "two"}),
            ),
            call("c3", "Bash", &json!({"command": "git diff"})),
            text("done"),
        ],
        &["--yes"],
    );
    let v = ok(&out);
    let log = log_text(&e.home, v["sessionId"].as_str().unwrap());
    let diff = result_of(&log, "c3");
    assert_eq!(diff["isError"], false, "{diff}");
    let stdout = diff["output"]["stdout"].as_str().unwrap();
    assert!(
        stdout.contains("-print('one')") && stdout.contains("+print('two')"),
        "git diff in the shadow shows the agent's change against HEAD: {diff}"
    );
    // Committed through the review, and only the checkout changed.
    assert_eq!(
        std::fs::read_to_string(e.repo.join("src/app.py")).unwrap(),
        "print('two')\n"
    );
    let paths: Vec<&str> = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["src/app.py"], "no .git in the change set");
    assert!(
        before == tree_bytes(&e.repo.join(".git")),
        "the real repository's .git changed"
    );
}

#[test]
fn background_commands_finish_before_the_review() {
    if !on_path("bwrap") {
        assert!(
            std::env::var_os("CI").is_none(),
            "bwrap is needed (.ci/run installs bubblewrap)"
        );
        return;
    }
    let e = env(json!({"permissions": {"allow": ["Bash"]}, "bash": {"backend": "native"}}));
    let out = run(
        &e,
        &e.repo,
        vec![
            call(
                "c1",
                "Bash",
                &json!({"command": "sleep 2 && echo late > late.txt", "run_in_background": true}),
            ),
            text("started it"),
        ],
        &[],
    );
    let v = ok(&out);
    let paths: Vec<&str> = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"late.txt"),
        "the review was taken before the background command ended: {paths:?}"
    );
}

#[test]
fn the_projects_deny_rules_hold_in_the_shadow() {
    let e = env(json!({"permissions": {"allow": ["Read"]}}));
    std::fs::create_dir_all(e.repo.join("secrets")).unwrap();
    std::fs::write(e.repo.join("secrets/key"), "TOP-SECRET\n").unwrap();
    std::fs::create_dir_all(e.repo.join(".agent")).unwrap();
    std::fs::write(
        e.repo.join(".agent/settings.json"),
        json!({"permissions": {"deny": ["Read(/secrets/**)"]}}).to_string(),
    )
    .unwrap();
    let out = run(
        &e,
        &e.repo,
        vec![
            call("c1", "Read", &json!({"file_path": "secrets/key"})),
            text("done"),
        ],
        &[],
    );
    let v = ok(&out);
    let log = log_text(&e.home, v["sessionId"].as_str().unwrap());
    let result = result_of(&log, "c1");
    assert_eq!(result["errorType"], "permission_denied", "{result}");
    assert!(!log.contains("TOP-SECRET"), "{log}");
}

#[test]
fn the_projects_sandbox_paths_hold_in_the_shadow() {
    if !on_path("bwrap") {
        assert!(
            std::env::var_os("CI").is_none(),
            "bwrap is needed (.ci/run installs bubblewrap)"
        );
        return;
    }
    let e = env(json!({"permissions": {"allow": ["Bash"]}, "bash": {"backend": "native"}}));
    std::fs::create_dir_all(e.repo.join("secrets")).unwrap();
    std::fs::write(e.repo.join("secrets/key"), "TOP-SECRET\n").unwrap();
    std::fs::create_dir_all(e.repo.join(".agent")).unwrap();
    std::fs::write(
        e.repo.join(".agent/settings.json"),
        json!({"sandbox": {"filesystem": {"denyRead": ["./secrets"]}}}).to_string(),
    )
    .unwrap();
    let out = run(
        &e,
        &e.repo,
        vec![
            call("c1", "Bash", &json!({"command": "cat secrets/key"})),
            text("done"),
        ],
        &[],
    );
    let v = ok(&out);
    let log = log_text(&e.home, v["sessionId"].as_str().unwrap());
    let result = result_of(&log, "c1");
    assert!(
        !result.to_string().contains("TOP-SECRET"),
        "the copied secret was read: {result}"
    );
}
