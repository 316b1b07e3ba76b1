//! `agent sandbox check-path | check-command | check-url`: verdict JSON and exit codes 0/1/2.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test and bench code: a panic is a failure report"
)]

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
