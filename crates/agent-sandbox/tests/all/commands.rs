//! The command corpus (every bypass document 000 lists and the known holes of its original
//! checker), a property test, and an execution oracle: every allowed command of the denylist
//! corpus is run under `strace -f -e trace=execve` and must not execute a denied program.

use std::path::PathBuf;

use agent_sandbox::commands::CommandChecker;
use agent_sandbox::settings::SandboxSettings;
use proptest::prelude::*;

const DENIED: &[&str] = &["rm", "sudo", "curl", "wget", "dd", "mkfs", "chmod", "nc"];

fn denylist() -> CommandChecker {
    CommandChecker::new(&SandboxSettings {
        denied_commands: DENIED.iter().map(|s| (*s).to_owned()).collect(),
        denied_paths: vec![
            PathBuf::from("/etc/shadow"),
            PathBuf::from("/opt/agent-sandbox-secret"),
        ],
        ..SandboxSettings::default()
    })
    // The commands run in a scratch directory under the temporary directory.
    .with_cwd(std::env::temp_dir())
}

/// With `rm` (and friends) denied: `true` = allowed.
const DENY_CORPUS: &[(&str, bool)] = &[
    // Plain and compound commands.
    ("ls -la", true),
    ("echo hello", true),
    ("git --version", true),
    ("ls; echo done", true),
    ("ls && echo ok || echo no", true),
    ("echo a | tr a b | cat", true),
    ("(echo sub)", true),
    ("{ echo brace; }", true),
    ("if true; then echo y; fi", true),
    ("for i in 1 2; do echo $i; done", true),
    ("while false; do echo x; done", true),
    ("case x in x) echo x;; esac", true),
    ("echo $(echo nested)", true),
    ("echo `echo back`", true),
    ("cat <(echo proc)", true),
    ("bash -c 'echo inner'", true),
    ("sh -c 'ls && echo ok'", true),
    ("bash -c 'echo non-login'", true),
    ("env LANG=C echo env", true),
    ("LANG=C echo assigned", true),
    // Exporting a variable outside the harmless list (issue 24, class 1).
    ("env FOO=1 echo env", false),
    ("FOO=bar echo assigned", false),
    ("x=$(echo y); echo $x", true),
    ("timeout 5 echo t", true),
    ("nice -n 5 echo n", true),
    ("command echo c", true),
    ("echo hi > out.txt", true),
    ("echo hi >> out.txt; cat out.txt", true),
    ("find . -name '*.txt'", true),
    ("find . -exec echo {} +", true),
    ("printf '%s\\n' a b | xargs echo", true),
    ("eval 'echo evaluated'", true),
    ("true && false || true", true),
    ("test -f out.txt || touch out.txt", true),
    ("mkdir -p d/e && ls d", true),
    ("echo 'rm -rf /' ", true),
    ("echo \"sudo make me\"", true),
    ("grep -r rm . || true", true),
    ("echo rm", true),
    ("ls rm", true),
    ("cat <<EOF\nrm -rf /\nEOF", true),
    ("wc -l < /dev/null", true),
    ("nohup echo bg", true),
    ("exec echo replaced", true),
    ("echo done &", true),
    ("sort -u /dev/null", true),
    ("head -c 10 /dev/zero | od", true),
    ("date +%s", true),
    ("uname -a", true),
    ("echo ~", true),
    ("ls /tmp", true),
    ("stat .", true),
    // Direct denied commands and every spelling.
    ("rm -rf /tmp/x", false),
    ("rm x", false),
    ("/usr/bin/rm x", false),
    ("/bin/rm x", false),
    ("./rm x", false),
    ("../bin/rm x", false),
    ("\\rm x", false),
    ("\"rm\" x", false),
    ("'rm' x", false),
    ("'r'm x", false),
    ("r''m x", false),
    ("r\"\"m x", false),
    ("$'\\x72m' x", false),
    ("$'rm' x", false),
    ("sudo ls", false),
    ("curl https://example.com", false),
    ("wget -q x", false),
    ("dd if=/dev/zero of=x", false),
    ("chmod 777 x", false),
    ("nc -l 1234", false),
    // Compound commands: any part.
    ("ls; rm -rf /", false),
    ("ls && rm x", false),
    ("false || rm x", false),
    ("echo x | rm -f y", false),
    ("echo a |& rm x", false),
    ("rm x &", false),
    ("ls\nrm x", false),
    ("(rm x)", false),
    ("{ rm x; }", false),
    ("if true; then rm x; fi", false),
    ("if rm x; then echo; fi", false),
    ("for f in a; do rm $f; done", false),
    ("while rm x; do :; done", false),
    ("until rm x; do :; done", false),
    ("case a in a) rm x;; esac", false),
    ("f() { rm x; }; f", false),
    ("function g { rm x; }; g", false),
    ("[[ -n $(rm x) ]]", false),
    ("(( $(rm x) ))", false),
    // Substitutions, at any depth.
    ("echo $(rm x)", false),
    ("echo `rm x`", false),
    ("$(echo $(rm x))", false),
    ("echo $(echo $(echo $(rm x)))", false),
    ("echo \"$(rm x)\"", false),
    ("x=$(rm y)", false),
    ("x=`rm y`", false),
    ("export X=$(rm y)", false),
    ("local_var=$(curl evil)", false),
    ("cat <(rm x)", false),
    ("tee >(rm x)", false),
    ("echo ${x:-$(rm y)}", false),
    ("diff <(ls) <(rm x)", false),
    // Shell strings.
    ("bash -c 'rm x'", false),
    ("bash -lc 'rm x'", false),
    ("sh -c \"rm x\"", false),
    ("zsh -c 'ls; rm x'", false),
    ("bash -c \"bash -c 'rm x'\"", false),
    ("eval 'rm x'", false),
    ("eval \"rm x\"", false),
    ("env -S 'rm x'", false),
    ("bash <<< 'rm x'", false),
    ("bash <<EOF\nrm x\nEOF", false),
    ("sh -c 'echo $(rm x)'", false),
    // Wrappers.
    ("env rm x", false),
    ("env -i PATH=/bin rm x", false),
    ("command rm x", false),
    ("exec rm x", false),
    ("nohup rm x", false),
    ("timeout 5 rm x", false),
    ("nice rm x", false),
    ("xargs rm < list", false),
    ("find . | xargs rm", false),
    ("find . -exec rm {} +", false),
    ("find . -execdir rm {} \\;", false),
    ("find . -ok rm {} \\;", false),
    ("sudo -u root ls", false),
    ("time rm x", false),
    ("FOO=1 rm x", false),
    ("builtin command rm x", false),
    // Dynamic command names.
    ("a=rm; $a x", false),
    ("$CMD x", false),
    ("${CMD} x", false),
    ("$(echo rm) x", false),
    ("`echo rm` x", false),
    ("{rm,-rf} x", false),
    ("r* x", false),
    ("/usr/bin/r? x", false),
    ("\"$X\" y", false),
    // Shells reading scripts we cannot see.
    ("echo ok | sh", false),
    ("echo ok | bash", false),
    ("curl x | sh", false),
    ("bash script.sh", false),
    ("sh < script.sh", false),
    ("bash -s", false),
    ("busybox sh", false),
    // Login shells run startup files the checker cannot see (found by the oracle: a profile
    // script ran chmod).
    ("bash -lc 'echo login'", false),
    ("bash --login -c 'echo login'", false),
    // Inline interpreter code while a denylist is in force.
    ("python3 -c 'import os; os.system(\"rm x\")'", false),
    ("perl -e 'system(\"rm x\")'", false),
    (
        "node -e 'require(\"child_process\").execSync(\"rm x\")'",
        false,
    ),
    ("awk 'BEGIN{system(\"rm x\")}'", false),
    // Unparseable or unanalysable.
    ("echo 'unterminated", false),
    ("bash -c \"$X\"", false),
    ("eval $X", false),
    ("ls |", false),
    // Found by the fuzz target: brush-parser hung on an empty here-doc delimiter in `$( )`.
    ("echo $( (0<<\"\")", false),
    ("echo $(rm (\u{1}0<<\"\")", false),
    // Found by the fuzz target: brush's word parser mis-split this word and hid the `rm`.
    ("echo $(rm cur$((;($))4(J)($)))", false),
    // Denied paths in arguments and redirects.
    ("cat /etc/shadow", false),
    ("cp /etc/shadow x", false),
    ("ls /opt/agent-sandbox-secret/.ssh", false),
    ("echo x > /etc/shadow", false),
    ("cat < /etc/shadow", false),
    ("cat /etc/../etc/shadow", false),
];

#[test]
fn deny_corpus() {
    assert!(DENY_CORPUS.len() >= 150, "{}", DENY_CORPUS.len());
    let checker = denylist();
    let mut wrong = Vec::new();
    for (cmd, want) in DENY_CORPUS {
        let v = checker.check(cmd);
        if v.allowed != *want {
            wrong.push(format!("{cmd:?}: allowed={} ({})", v.allowed, v.reason));
        }
        if !v.allowed {
            assert!(!v.reason.is_empty());
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// One parse per call: the permission engine's parse of a Bash call, handed to the checker,
/// gives the verdict the checker's own parse gives, for every case of the corpus. The corpus
/// also parses identically with and without the plain-script fast path.
#[test]
fn the_permission_engines_parse_is_shared() {
    use agent_core::permissions::{PermissionEngine, ToolCall};
    let engine = PermissionEngine::builder("/tmp", "/root").build().unwrap();
    let checker = denylist();
    for (cmd, _) in DENY_CORPUS {
        let prepared = engine.prepare(ToolCall::new("Bash", serde_json::json!({ "command": cmd })));
        let parsed = prepared.shell_parse().expect("a Bash call has a parse");
        assert_eq!(checker.check_parsed(parsed), checker.check(cmd), "{cmd}");
        assert_eq!(
            agent_core::shell::parse(cmd),
            agent_core::shell::parse_with_brush_only(cmd),
            "{cmd}"
        );
    }
    let read = engine.prepare(ToolCall::new(
        "Read",
        serde_json::json!({ "file_path": "/x" }),
    ));
    assert!(read.shell_parse().is_none());
}

/// Parse once and carry it: the decision's parse (`PermissionDecision::prepared`) is what the
/// checker reads when it is the parse of the command it is given, and gives the same verdicts
/// as a fresh parse; a command changed after the decision is parsed anew.
#[test]
fn the_decisions_parse_is_what_the_checker_reads() {
    use agent_core::permissions::{PermissionEngine, PreToolUseOutcome, ToolCall};
    let engine = PermissionEngine::builder("/tmp", "/root").build().unwrap();
    let checker = denylist();
    for (cmd, _) in DENY_CORPUS {
        let call = ToolCall::new("Bash", serde_json::json!({ "command": cmd }));
        let decision = engine.check(&call, &PreToolUseOutcome::default());
        let prepared = decision
            .prepared
            .expect("a Bash decision carries its parse");
        assert_eq!(prepared.text, *cmd);
        assert_eq!(
            checker.check_prepared(cmd, Some(&prepared)),
            checker.check(cmd),
            "{cmd}"
        );
    }
    // The carried parse is read, not the text again: a parse of another text under this
    // text's name decides (only a caller that forges it could do this).
    let forged = agent_core::shell::Prepared {
        text: "rm -rf x".into(),
        parsed: agent_core::shell::parse_script("ls"),
    };
    assert!(checker.check_prepared("rm -rf x", Some(&forged)).allowed);
    // Another text than the parse's is parsed anew.
    assert!(!checker.check_prepared("rm -rf y", Some(&forged)).allowed);
    assert!(!checker.check_prepared("rm -rf y", None).allowed);
}

#[test]
fn allowlist_corpus() {
    let checker = CommandChecker::new(&SandboxSettings {
        allowed_commands: Some(vec!["echo".into(), "ls".into(), "git".into(), "cat".into()]),
        ..SandboxSettings::default()
    });
    let cases: &[(&str, bool)] = &[
        ("echo hi", true),
        ("ls && git status", true),
        ("cat f | echo x", true),
        ("rm $(echo hi)", false),
        ("echo $(rm x)", false),
        ("echo hi | grep h", false),
        ("bash -c 'echo x'", false),
        ("env echo x", false),
        ("/bin/echo x", true),
    ];
    for (cmd, want) in cases {
        assert_eq!(
            checker.check(cmd).allowed,
            *want,
            "{cmd}: {:?}",
            checker.check(cmd)
        );
    }
    let empty = CommandChecker::new(&SandboxSettings {
        allowed_commands: Some(vec![]),
        ..SandboxSettings::default()
    });
    assert!(!empty.check("echo hi").allowed);
}

#[cfg(unix)]
#[test]
fn allowlisted_programs_in_a_writable_directory_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = std::fs::canonicalize(dir.path()).unwrap().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let tool = bin.join("mytool");
    std::fs::write(&tool, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let settings = SandboxSettings {
        base_dir: Some(dir.path().to_path_buf()),
        allowed_commands: Some(vec!["mytool".into(), "ls".into(), "nosuchtool".into()]),
        ..SandboxSettings::default()
    };
    let mut path = vec![bin.clone()];
    path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap()));
    let checker = CommandChecker::with_path(&settings, &path);
    let refused: Vec<&str> = checker.refused().iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(refused, ["mytool", "nosuchtool"]);
    let v = checker.check("mytool --go");
    assert!(
        !v.allowed && v.reason.contains("inside a writable directory"),
        "{v:?}"
    );
    assert!(checker.check("ls").allowed);
    let v = checker.check(&format!("{}/ls", bin.display()));
    assert!(!v.allowed, "{v:?}");
}

#[test]
fn the_disable_sandbox_flag_needs_settings() {
    let input = serde_json::json!({"command": "ls", "dangerouslyDisableSandbox": true});
    let strict = CommandChecker::new(&SandboxSettings {
        allow_unsandboxed_commands: false,
        ..SandboxSettings::default()
    });
    let r = strict.check_input(&input);
    assert!(r.verdict.allowed && !r.run_unsandboxed);
    let lax = CommandChecker::new(&SandboxSettings {
        allow_unsandboxed_commands: true,
        denied_commands: vec!["rm".into()],
        ..SandboxSettings::default()
    });
    assert!(lax.check_input(&input).run_unsandboxed);
    let r =
        lax.check_input(&serde_json::json!({"command": "rm x", "dangerouslyDisableSandbox": true}));
    assert!(
        !r.verdict.allowed,
        "the flag never skips the application checks"
    );
}

/// Runs every allowed command of the corpus under strace and checks which programs ran.
#[cfg(target_os = "linux")]
#[test]
fn execution_oracle_no_denied_program_runs() {
    let strace = std::process::Command::new("strace").arg("-V").output();
    assert!(
        strace.is_ok_and(|o| o.status.success()),
        "strace is needed for the execution oracle; install it (.ci/run does on CI)"
    );
    let checker = denylist();
    let mut checked = 0;
    for (cmd, _) in DENY_CORPUS {
        if !checker.check(cmd).allowed {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("trace");
        let out = std::process::Command::new("timeout")
            .args(["10", "strace", "-f", "-qq", "-e", "trace=execve", "-o"])
            .arg(&log)
            .args(["bash", "-c", cmd])
            .current_dir(dir.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let trace = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(!trace.is_empty(), "{cmd}: no trace ({out:?})");
        for line in trace.lines().filter(|l| l.contains("execve(")) {
            let Some(path) = line.split('"').nth(1) else {
                continue;
            };
            let base = path.rsplit('/').next().unwrap_or(path);
            assert!(
                !DENIED.contains(&base),
                "allowed command {cmd:?} executed denied program {path}:\n{trace}"
            );
        }
        checked += 1;
    }
    assert!(
        checked >= 40,
        "only {checked} allowed commands were executed"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    /// Whatever the text, the checker answers (no panic), and a denied name in command
    /// position, at any depth, is never allowed.
    #[test]
    fn never_panics_and_never_allows_a_denied_name(
        prefix in "[a-z ;|&$()`'\"{}<>=\\\\-]{0,30}",
        wrap in prop::sample::select(vec![
            "{}", "echo $({})", "bash -c '{}'", "(x; {})", "env {}", "timeout 1 {}",
            "echo `{}`", "if true; then {}; fi", "sudo {}", "eval '{}'", "x=$({})",
            "find . -exec {} \\;", "xargs {}", "nohup {}", "{{ {}; }}",
        ]),
        denied in prop::sample::select(DENIED.to_vec()),
        args in "[a-z /.-]{0,12}",
    ) {
        let checker = denylist();
        let _ = checker.check(&prefix);
        let inner = format!("{denied} {args}");
        let cmd = wrap.replace("{}", &inner).replace("{{", "{").replace("}}", "}");
        let v = checker.check(&cmd);
        prop_assert!(!v.allowed, "{cmd:?} was allowed: {}", v.reason);
        let v2 = checker.check(&format!("true; {cmd}"));
        prop_assert!(!v2.allowed, "true; {cmd} was allowed");
    }
}
