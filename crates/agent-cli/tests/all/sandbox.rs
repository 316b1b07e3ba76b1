//! `agent sandbox check-path | check-command | check-url`: verdict JSON and exit codes 0/1/2.

use std::process::Command;

use serde_json::{Value, json};

fn agent(home: &std::path::Path, args: &[&str]) -> (Option<i32>, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_agent"))
        .args(args)
        .env("HOME", home)
        .env_remove("AGENT_HOME")
        .current_dir(home)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let v = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    (out.status.code(), v, String::from_utf8(out.stderr).unwrap())
}

#[test]
fn verdicts_and_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(dir.path()).unwrap();
    let s = home.join("s.json");
    std::fs::write(
        &s,
        json!({"sandbox": {"deniedCommands": ["rm"], "deniedPaths": ["/etc"],
                           "allowedWritePaths": [home.join("work").to_str().unwrap()],
                           "network": {"deniedDomains": ["evil.test"]}}})
        .to_string(),
    )
    .unwrap();
    let s = s.to_str().unwrap();
    let work = home.join("work/x/../y");
    let cases: Vec<(Vec<&str>, i32, Option<&str>)> = vec![
        (
            vec![
                "sandbox",
                "check-command",
                "--settings",
                s,
                "--",
                "ls; rm -rf /",
            ],
            1,
            Some("deniedCommands: rm"),
        ),
        (
            vec![
                "sandbox",
                "check-command",
                "--settings",
                s,
                "--",
                "git status && ls",
            ],
            0,
            None,
        ),
        (
            vec![
                "sandbox",
                "check-command",
                "--settings",
                s,
                "--",
                "bash -lc 'rm x'",
            ],
            1,
            None,
        ),
        (
            vec![
                "sandbox",
                "check-path",
                "--settings",
                s,
                "--op",
                "read",
                "/etc/passwd",
            ],
            1,
            Some("deniedPaths: /etc"),
        ),
        (
            vec![
                "sandbox",
                "check-path",
                "--settings",
                s,
                "--op",
                "write",
                work.to_str().unwrap(),
            ],
            0,
            None,
        ),
        (
            vec![
                "sandbox",
                "check-path",
                "--settings",
                s,
                "--op",
                "write",
                "/",
            ],
            1,
            Some("built-in: filesystem root"),
        ),
        (
            vec!["sandbox", "check-url", "http://0x7f.1/"],
            1,
            Some("built-in: non-public address"),
        ),
        (
            vec![
                "sandbox",
                "check-url",
                "--resolve",
                "ok.test=93.184.216.34",
                "https://ok.test/",
            ],
            0,
            None,
        ),
        (
            vec![
                "sandbox",
                "check-url",
                "--settings",
                s,
                "--resolve",
                "evil.test=93.184.216.34",
                "https://evil.test/",
            ],
            1,
            Some("network.deniedDomains: evil.test"),
        ),
    ];
    for (args, code, rule) in cases {
        let (got, v, stderr) = agent(&home, &args);
        assert_eq!(got, Some(code), "{args:?}: {v} {stderr}");
        assert_eq!(v["allowed"], json!(code == 0), "{args:?}");
        assert!(v["reason"].is_string());
        if let Some(r) = rule {
            assert_eq!(v["rule"], r, "{args:?}");
        }
    }
    for args in [
        vec!["sandbox", "check-url", "--resolve", "nonsense", "http://x/"],
        vec!["sandbox", "check-path", "--op", "delete", "/x"],
        vec![
            "sandbox",
            "check-command",
            "--settings",
            "/nonexistent.json",
            "--",
            "ls",
        ],
    ] {
        let (got, _, stderr) = agent(&home, &args);
        assert_eq!(got, Some(2), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

fn run_agent(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_agent"))
        .args(args)
        .env("HOME", dir)
        .env("SECRET_THING_TOKEN", "do-not-pass")
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn profile_prints_policies_and_explanations() {
    let dir = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(dir.path()).unwrap();
    let (code, sb, _) = run_agent(
        &home,
        &["sandbox", "profile", "--add-dirs-ro", "/srv/a:/srv/b"],
    );
    assert_eq!(code, Some(0));
    assert!(sb.starts_with(";; Assembled by agent-sandbox"));
    assert!(sb.contains("(deny default)"));
    assert!(sb.contains(&format!("(define HOME_DIR \"{}\")", home.display())));
    assert!(sb.contains("(allow file-read* (subpath \"/srv/b\"))"));
    let (code, text, _) = run_agent(
        &home,
        &[
            "sandbox",
            "profile",
            "--explain",
            "--enable",
            "ssh",
            "--command",
            "/usr/bin/codex",
        ],
    );
    assert_eq!(code, Some(0));
    assert!(
        text.contains("optional integrations explicitly enabled: ssh\n"),
        "{text}"
    );
    assert!(text.contains("network (required by"), "{text}");
    assert!(
        text.contains("60-agents/codex.sb (command `codex`)"),
        "{text}"
    );
    let (code, argv, _) = run_agent(
        &home,
        &["sandbox", "profile", "--format", "bwrap", "--workdir="],
    );
    assert_eq!(code, Some(0));
    assert!(argv.starts_with("bwrap \\\n  --die-with-parent"), "{argv}");
    assert!(argv.contains("--unshare-net"));
    assert!(
        !argv.contains("do-not-pass"),
        "secrets never reach the printed command"
    );
    // A tree given with --profiles-dir, and errors: one line, exit 2.
    let tree = home.join("tree");
    std::fs::create_dir_all(tree.join("55-integrations-optional")).unwrap();
    std::fs::write(tree.join("00-base.sb"), "(version 1)\n").unwrap();
    std::fs::write(tree.join("55-integrations-optional/x.sb"), ";; x\n").unwrap();
    let t = tree.to_str().unwrap();
    let (code, sb, _) = run_agent(
        &home,
        &["sandbox", "profile", "--profiles-dir", t, "--enable", "x"],
    );
    assert_eq!(code, Some(0));
    assert!(sb.contains(";; ---- 55-integrations-optional/x.sb ----"));
    for (args, needle) in [
        (
            vec!["--enable", "nope"],
            "unknown feature `nope`; valid features: all-agents, all-apps, x",
        ),
        (vec!["--add-dirs", "/"], "never granted"),
        (
            vec!["--append-profile", "/nonexistent.sb"],
            "cannot read the appended profile",
        ),
    ] {
        let mut a = vec!["sandbox", "profile", "--profiles-dir", t];
        a.extend(args);
        let (code, out, err) = run_agent(&home, &a);
        assert_eq!(code, Some(2), "{a:?}");
        assert!(out.is_empty());
        assert!(err.contains(needle), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn exec_runs_inside_the_sandbox() {
    let probe = agent_sandbox::outer::BwrapBackend::new(None);
    if let Err(e) = agent_sandbox::outer::OuterSandbox::probe(&probe) {
        #[allow(clippy::print_stderr, reason = "a skip is reported loudly")]
        {
            eprintln!("SKIPPED (bubblewrap unavailable on this machine): {e}");
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(dir.path()).unwrap();
    let work = home.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let audit = home.join("audit.json");
    let (code, out, err) = run_agent(
        &home,
        &[
            "sandbox",
            "exec",
            "--backend",
            "bwrap",
            "--workdir",
            work.to_str().unwrap(),
            "--audit",
            audit.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "echo made > f.txt; echo token=$SECRET_THING_TOKEN; exit 3",
        ],
    );
    assert_eq!(code, Some(3), "{err}");
    assert_eq!(out, "token=\n");
    assert_eq!(
        std::fs::read_to_string(work.join("f.txt")).unwrap(),
        "made\n"
    );
    let record: Value = serde_json::from_str(&std::fs::read_to_string(&audit).unwrap()).unwrap();
    assert_eq!(record["backend"], "bwrap");
    assert_eq!(record["ending"], json!({"kind": "exited", "code": 3}));
    assert!(
        record["env_dropped"]
            .as_array()
            .unwrap()
            .contains(&json!("SECRET_THING_TOKEN"))
    );
    let (code, _, err) = run_agent(
        &home,
        &[
            "sandbox",
            "exec",
            "--timeout",
            "0.3",
            "--workdir",
            work.to_str().unwrap(),
            "--",
            "sleep",
            "10",
        ],
    );
    assert_eq!(code, Some(124));
    assert!(err.contains("wall time passed"), "{err}");
    let (code, _, err) = run_agent(
        &home,
        &["sandbox", "exec", "--backend", "sandbox-exec", "--", "true"],
    );
    assert_eq!(code, Some(2));
    assert!(err.contains("only on macOS"), "{err}");
}

#[test]
fn profile_assembles_a_tree_in_agent_safehouses_forms() {
    let dir = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(dir.path()).unwrap();
    let work = home.join("work");
    std::fs::create_dir(&work).unwrap();
    let tree = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../agent-sandbox/tests/fixtures/safehouse-tree");
    let tree = tree.to_str().unwrap();
    let work_s = work.to_str().unwrap();
    let (code, sb, err) = run_agent(
        &home,
        &[
            "sandbox",
            "profile",
            "--profiles-dir",
            tree,
            "--workdir",
            work_s,
            "--command",
            "/usr/local/bin/Claude-Code",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(sb.contains(&format!("(define WORK_DIR \"{work_s}\")")));
    assert!(sb.contains(&format!("(define HOME_DIR \"{}\")", home.display())));
    assert!(!sb.contains("__SAFEHOUSE_"));
    // All three entries of the comma-separated requirement, and electron's own.
    for rel in ["keychain", "electron", "microphone", "macos-gui"] {
        assert!(
            sb.contains(&format!(";; ---- 55-integrations-optional/{rel}.sb ----")),
            "{rel} missing"
        );
    }
    assert!(sb.ends_with(&format!(
        "(deny file-write* (literal \"{work_s}/.safehouse\"))\n"
    )));
    let (code, sb, err) = run_agent(
        &home,
        &["sandbox", "profile", "--profiles-dir", tree, "--workdir="],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(sb.contains("\n(define WORK_DIR #f)\n"));
    let (code, _, err) = run_agent(
        &home,
        &[
            "sandbox",
            "profile",
            "--profiles-dir",
            tree,
            "--enable",
            "wide-read",
        ],
    );
    assert_eq!(code, Some(2));
    assert!(
        err.contains("wide-read") && err.lines().count() == 1,
        "{err}"
    );
}
