//! The permission matrix: every mode × tool kind, every rule form, compound commands, wrappers,
//! assignments, `bash -c` recursion, redirects as writes, protected paths, critical `rm`.
//! One case per line: (mode, tool, input, expected behavior, expected step).

use agent_core::permissions::Behavior::{self, Allow, Ask, Deny};
use agent_core::permissions::PermissionMode;
use agent_core::permissions::Step::{self, AllowRule, AskRule, DenyRule, Mode, Prompt, Safety};
use serde_json::json;

use crate::support::{check, engine};

fn standard_settings() -> serde_json::Value {
    json!({"permissions": {
        "allow": [
            "Bash(git status)", "Bash(git diff *)", "Bash(npm run test:*)", "Bash(ls*)",
            "Bash(cargo build *)", "Bash(echo *)", "Bash(npm test)", "Bash(make *)",
            "Bash(watch -n 1 date)", "Bash(flock *)",
            "Read(//etc/hosts)", "Edit(./src/**)", "Edit(/generated/**)",
            "WebFetch(domain:docs.rs)", "WebFetch(domain:*.github.com)",
            "mcp__gh", "mcp__fs__read_*", "TodoWrite", "Agent"
        ],
        "ask": [
            "Bash(git push *)", "Bash(npm publish)", "Edit(./src/protected/**)",
            "Agent(model:opus)", "mcp__gh__delete_repo", "Read(//var/log/**)"
        ],
        "deny": [
            "Bash(rm -rf *)", "Bash(curl *)", "Bash(git clean:*)", "Read(.env)", "Edit(//etc/**)",
            "WebFetch(domain:evil.com)", "mcp__danger", "Bash(run_in_background:true)",
            "Agent(Explore)", "Read(./private/**)"
        ]
    }})
}

type Case = (&'static str, &'static str, &'static str, Behavior, Step);

const CASES: &[Case] = &[
    // --- default mode: Bash allow rules and compound commands ---
    ("default", "Bash", "git status", Allow, AllowRule),
    ("default", "Bash", "git status; rm x", Ask, Prompt),
    (
        "default",
        "Bash",
        "git status && curl x | sh",
        Deny,
        DenyRule,
    ),
    ("default", "Bash", "git status $(rm x)", Ask, Prompt),
    ("default", "Bash", "git status $(rm -rf x)", Deny, DenyRule),
    ("default", "Bash", "git status; rm -rf /", Deny, DenyRule),
    ("default", "Bash", "git diff HEAD", Allow, AllowRule),
    ("default", "Bash", "git diff", Allow, AllowRule),
    ("default", "Bash", "git diffx", Ask, Prompt),
    ("default", "Bash", "npm run test", Allow, AllowRule),
    // Claude Code's rule matches `npm run test --watch` (see rules::bash), but npm reads
    // `--watch` as its own configuration, and only options known to change nothing about
    // what runs pass a prefix rule for a script (issue 24, class 16); after `--` they go to
    // the script.
    ("default", "Bash", "npm run test --watch", Ask, Prompt),
    ("default", "Bash", "npm run test --silent", Allow, AllowRule),
    ("default", "Bash", "npm run test:unit", Ask, Prompt),
    (
        "default",
        "Bash",
        "npm run test -- --watch",
        Allow,
        AllowRule,
    ),
    ("default", "Bash", "lsof -i", Allow, AllowRule),
    ("default", "Bash", "ls -la", Allow, AllowRule),
    ("default", "Bash", "ls /", Allow, AllowRule),
    ("default", "Bash", "cargo build --release", Allow, AllowRule),
    ("default", "Bash", "cargo build", Allow, AllowRule),
    ("default", "Bash", "cargo test", Ask, Prompt),
    ("default", "Bash", "echo hello", Allow, AllowRule),
    ("default", "Bash", "echo $(whoami)", Allow, AllowRule),
    ("default", "Bash", "echo ok &", Allow, AllowRule),
    (
        "default",
        "Bash",
        "ls && git status && echo done",
        Allow,
        AllowRule,
    ),
    ("default", "Bash", "ls | grep x | wc -l", Allow, AllowRule),
    (
        "default",
        "Bash",
        "git status || echo failed",
        Allow,
        AllowRule,
    ),
    ("default", "Bash", "git status\nls", Allow, AllowRule),
    ("default", "Bash", "(ls; git status)", Allow, AllowRule),
    ("default", "Bash", "ls $(pwd)", Allow, AllowRule),
    ("default", "Bash", "ls $(curl x)", Deny, DenyRule),
    ("default", "Bash", "echo a | sh", Ask, Prompt),
    ("default", "Bash", "ls; rm -rf build", Deny, DenyRule),
    // --- built-in read-only set ---
    ("default", "Bash", "true && false", Allow, AllowRule),
    ("default", "Bash", "pwd", Allow, AllowRule),
    ("default", "Bash", "cat README.md | wc -l", Allow, AllowRule),
    ("default", "Bash", "grep -r foo src", Allow, AllowRule),
    ("default", "Bash", "git log --oneline -5", Allow, AllowRule),
    ("default", "Bash", "git -c core.pager=sh log", Ask, Safety),
    (
        "default",
        "Bash",
        "find . -name '*.rs' -delete",
        Ask,
        Prompt,
    ),
    ("default", "Bash", "cd src && ls", Allow, AllowRule),
    ("default", "Bash", "cd /tmp && ls", Ask, Prompt),
    ("default", "Bash", "cat /etc/hosts", Ask, Prompt),
    (
        "default",
        "Bash",
        "git status > /dev/null 2>&1",
        Allow,
        AllowRule,
    ),
    // --- redirects are writes ---
    ("default", "Bash", "echo hi > out.txt", Ask, Prompt),
    ("default", "Bash", "echo hi > src/out.txt", Allow, AllowRule),
    ("default", "Bash", "echo hi > /dev/null", Allow, AllowRule),
    ("default", "Bash", "echo hi > /etc/x", Deny, DenyRule),
    ("default", "Bash", "echo hi >> .env", Deny, DenyRule),
    ("default", "Bash", "git status 2> err.log", Ask, Prompt),
    (
        "default",
        "Bash",
        "echo x &> src/both.log",
        Allow,
        AllowRule,
    ),
    ("default", "Bash", "echo x > ~/src/x", Ask, Prompt),
    ("default", "Bash", "echo x > src/*.txt", Ask, Prompt),
    ("default", "Bash", "echo x | tee src/out.txt", Ask, Prompt),
    // --- Read deny rules seen through Bash ---
    ("default", "Bash", "cat .env", Deny, DenyRule),
    ("default", "Bash", "cat src/.env", Deny, DenyRule),
    ("default", "Bash", "cat < .env", Deny, DenyRule),
    ("default", "Bash", "{ cat .env; }", Deny, DenyRule),
    ("default", "Bash", "cat <(ls) .env", Deny, DenyRule),
    ("default", "Bash", "grep KEY .env", Deny, DenyRule),
    (
        "default",
        "Bash",
        "head -n 1 private/key.pem",
        Deny,
        DenyRule,
    ),
    // --- wrappers and assignments for deny ---
    ("default", "Bash", "timeout 5 curl x", Deny, DenyRule),
    ("default", "Bash", "sudo curl x", Deny, DenyRule),
    ("default", "Bash", "sudo -u root curl x", Deny, DenyRule),
    ("default", "Bash", "env A=1 curl x", Deny, DenyRule),
    ("default", "Bash", "nice -n 5 curl x", Deny, DenyRule),
    ("default", "Bash", "nohup curl x", Deny, DenyRule),
    ("default", "Bash", "xargs curl", Deny, DenyRule),
    ("default", "Bash", "xargs -0 curl", Deny, DenyRule),
    ("default", "Bash", "FOO=1 curl x", Deny, DenyRule),
    ("default", "Bash", "FOO=1 BAR=2 curl x", Deny, DenyRule),
    ("default", "Bash", "\\curl x", Deny, DenyRule),
    ("default", "Bash", "\"curl\" x", Deny, DenyRule),
    ("default", "Bash", "'curl' x", Deny, DenyRule),
    ("default", "Bash", "c''url x", Deny, DenyRule),
    ("default", "Bash", "/usr/bin/curl x", Deny, DenyRule),
    ("default", "Bash", "$'\\x63url' x", Deny, DenyRule),
    ("default", "Bash", "watch curl x", Deny, DenyRule),
    ("default", "Bash", "stdbuf -oL curl x", Deny, DenyRule),
    ("default", "Bash", "command curl x", Deny, DenyRule),
    // --- nesting for deny ---
    ("default", "Bash", "bash -c 'curl x'", Deny, DenyRule),
    (
        "default",
        "Bash",
        "sh -c \"git status; curl x\"",
        Deny,
        DenyRule,
    ),
    ("default", "Bash", "bash -lc 'curl x'", Deny, DenyRule),
    ("default", "Bash", "sudo bash -c 'curl x'", Deny, DenyRule),
    ("default", "Bash", "eval \"curl x\"", Deny, DenyRule),
    ("default", "Bash", "echo $(curl x)", Deny, DenyRule),
    ("default", "Bash", "echo `curl x`", Deny, DenyRule),
    (
        "default",
        "Bash",
        "echo \"$(echo \"$(curl x)\")\"",
        Deny,
        DenyRule,
    ),
    ("default", "Bash", "(curl x)", Deny, DenyRule),
    ("default", "Bash", "{ curl x; }", Deny, DenyRule),
    (
        "default",
        "Bash",
        "if true; then curl x; fi",
        Deny,
        DenyRule,
    ),
    (
        "default",
        "Bash",
        "for i in 1; do curl x; done",
        Deny,
        DenyRule,
    ),
    (
        "default",
        "Bash",
        "while false; do curl x; done",
        Deny,
        DenyRule,
    ),
    (
        "default",
        "Bash",
        "case a in a) curl x;; esac",
        Deny,
        DenyRule,
    ),
    ("default", "Bash", "f() { curl x; }; f", Deny, DenyRule),
    (
        "default",
        "Bash",
        "find . -exec curl {} \\;",
        Deny,
        DenyRule,
    ),
    ("default", "Bash", "bash <<EOF\ncurl x\nEOF", Deny, DenyRule),
    (
        "default",
        "Bash",
        "cat <<EOF\n$(curl x)\nEOF",
        Deny,
        DenyRule,
    ),
    ("default", "Bash", "diff <(curl a) <(ls)", Deny, DenyRule),
    ("default", "Bash", "echo ${X:-$(curl x)}", Deny, DenyRule),
    ("default", "Bash", "git clean -fd", Deny, DenyRule),
    (
        "default",
        "Bash",
        "git fetch && git clean -fd",
        Deny,
        DenyRule,
    ),
    ("default", "Bash", "git cleanup", Ask, Prompt),
    // --- ask rules ---
    ("default", "Bash", "git push origin main", Ask, AskRule),
    ("default", "Bash", "git status && git push", Ask, AskRule),
    ("default", "Bash", "npm publish", Ask, AskRule),
    ("default", "Bash", "git push; curl x", Deny, DenyRule),
    // --- assignments and wrappers for allow ---
    (
        "default",
        "Bash",
        "NODE_ENV=test npm test",
        Allow,
        AllowRule,
    ),
    ("default", "Bash", "LANG=C ls", Allow, AllowRule),
    ("default", "Bash", "EVIL=1 npm test", Ask, Safety),
    ("default", "Bash", "PATH=/tmp npm test", Ask, Safety),
    ("default", "Bash", "NODE_ENV=$(id) npm test", Ask, Safety),
    ("default", "Bash", "timeout 10 npm test", Allow, AllowRule),
    ("default", "Bash", "nohup make all &", Allow, AllowRule),
    ("default", "Bash", "time make", Allow, AllowRule),
    ("default", "Bash", "command make x", Allow, AllowRule),
    ("default", "Bash", "command -v make", Ask, Prompt),
    ("default", "Bash", "builtin echo x", Allow, AllowRule),
    ("default", "Bash", "exec make", Allow, AllowRule),
    ("default", "Bash", "stdbuf -oL make", Allow, AllowRule),
    ("default", "Bash", "xargs make", Allow, AllowRule),
    ("default", "Bash", "xargs -0 make", Ask, Prompt),
    ("default", "Bash", "sudo npm test", Ask, Prompt),
    ("default", "Bash", "env make", Ask, Prompt),
    ("default", "Bash", "watch -n 1 date", Allow, AllowRule),
    ("default", "Bash", "watch -n 2 date", Ask, Prompt),
    ("default", "Bash", "flock /tmp/l ls", Ask, Prompt),
    ("default", "Bash", "bash -c 'git status'", Ask, Prompt),
    // --- parameter rules ---
    (
        "default",
        "Bash",
        r#"{"command":"ls","run_in_background":true}"#,
        Deny,
        DenyRule,
    ),
    (
        "default",
        "Bash",
        r#"{"command":"ls","run_in_background":false}"#,
        Allow,
        AllowRule,
    ),
    // --- safety: unanalysable, critical rm, protected paths ---
    ("default", "Bash", "x=rm; $x -rf /", Ask, Safety),
    ("default", "Bash", "echo \"unterminated", Ask, Safety),
    ("default", "Bash", "rm -rf / \"unterminated", Deny, DenyRule),
    ("default", "Bash", "bash -c \"$CMD\"", Ask, Safety),
    ("default", "Bash", "eval $X", Ask, Safety),
    ("default", "Bash", "{rm,-r,/}", Ask, Safety),
    ("default", "Bash", "rm -r /", Ask, Safety),
    ("default", "Bash", "rm -r ~", Ask, Safety),
    ("default", "Bash", "rm -r .", Ask, Safety),
    ("default", "Bash", "rm -r ..", Ask, Safety),
    ("default", "Bash", "rm -r /usr", Ask, Safety),
    ("default", "Bash", "rm -r *", Ask, Safety),
    ("default", "Bash", "rm -r \"$DIR\"/*", Ask, Safety),
    ("default", "Bash", "echo $(rm -r /)", Ask, Safety),
    ("default", "Bash", "rm -rf \"$DIR\"/*", Deny, DenyRule),
    ("default", "Bash", "rm x.txt", Ask, Prompt),
    ("default", "Bash", "echo x > .git/config", Ask, Safety),
    ("default", "Bash", "echo x > ~/.bashrc", Ask, Safety),
    ("default", "Bash", "echo x >> src/.npmrc", Ask, Safety),
    (
        "default",
        "Bash",
        "touch .vscode/settings.json",
        Ask,
        Safety,
    ),
    ("default", "Bash", "git config core.pager evil", Ask, Safety),
    ("default", "Bash", "mkdir x", Ask, Prompt),
    ("default", "Bash", "sudo rm -rf x", Deny, DenyRule),
    // --- default mode: read tools ---
    ("default", "Read", "src/main.rs", Allow, Mode),
    (
        "default",
        "Read",
        "/srv/agent-fixture/proj/README.md",
        Allow,
        Mode,
    ),
    ("default", "Read", ".env", Deny, DenyRule),
    ("default", "Read", "a/b/.env", Deny, DenyRule),
    ("default", "Read", "/etc/hosts", Allow, AllowRule),
    ("default", "Read", "/etc/passwd", Ask, Prompt),
    ("default", "Read", "/var/log/syslog", Ask, AskRule),
    ("default", "Read", "../other/x", Ask, Prompt),
    (
        "default",
        "Read",
        "/srv/agent-fixture/proj-backup/x",
        Ask,
        Prompt,
    ),
    ("default", "Read", "private/key", Deny, DenyRule),
    ("default", "Read", "sub/private/key", Deny, DenyRule),
    ("default", "Read", "~/notes.txt", Ask, Prompt),
    ("default", "Read", "src/../../proj/x", Allow, Mode),
    ("default", "Read", "src/../../other/x", Ask, Prompt),
    ("default", "Glob", ".", Allow, Mode),
    ("default", "Glob", "/etc", Ask, Prompt),
    ("default", "Grep", ".env", Deny, DenyRule),
    ("default", "Grep", "src", Allow, Mode),
    ("default", "Read", "{}", Deny, Safety),
    // --- default mode: edit tools ---
    ("default", "Edit", "src/lib.rs", Allow, AllowRule),
    ("default", "Write", "src/new.rs", Allow, AllowRule),
    ("default", "MultiEdit", "src/a.rs", Allow, AllowRule),
    ("default", "NotebookEdit", "src/n.ipynb", Allow, AllowRule),
    ("default", "Edit", "README.md", Ask, Prompt),
    ("default", "Write", "/etc/passwd", Deny, DenyRule),
    ("default", "Edit", "src/protected/x.rs", Ask, AskRule),
    ("default", "Write", ".git/config", Ask, Safety),
    ("default", "Write", ".env", Deny, DenyRule),
    ("default", "Edit", "generated/x.rs", Allow, AllowRule),
    ("default", "Write", ".agent/settings.json", Ask, Safety),
    ("default", "Write", "src/.bashrc", Ask, Safety),
    ("default", "Write", "src/../README.md", Ask, Prompt),
    // --- default mode: network, MCP, other tools ---
    ("default", "WebFetch", "https://docs.rs/x", Allow, AllowRule),
    (
        "default",
        "WebFetch",
        "https://api.github.com/x",
        Allow,
        AllowRule,
    ),
    ("default", "WebFetch", "https://github.com/x", Ask, Prompt),
    ("default", "WebFetch", "https://evil.com/", Deny, DenyRule),
    ("default", "WebFetch", "https://EVIL.com./a", Deny, DenyRule),
    ("default", "WebFetch", "https://example.org", Ask, Prompt),
    ("default", "WebFetch", "not a url", Ask, Prompt),
    ("default", "mcp__gh__create_issue", "{}", Allow, AllowRule),
    ("default", "mcp__fs__read_file", "{}", Allow, AllowRule),
    ("default", "mcp__fs__write_file", "{}", Ask, Prompt),
    ("default", "mcp__danger__x", "{}", Deny, DenyRule),
    ("default", "mcp__gh__delete_repo", "{}", Ask, AskRule),
    ("default", "TodoWrite", "{}", Allow, AllowRule),
    (
        "default",
        "Agent",
        r#"{"subagent_type":"Explore"}"#,
        Deny,
        DenyRule,
    ),
    (
        "default",
        "Task",
        r#"{"subagent_type":"Explore"}"#,
        Deny,
        DenyRule,
    ),
    (
        "default",
        "Agent",
        r#"{"subagent_type":"general","model":"opus"}"#,
        Ask,
        AskRule,
    ),
    (
        "default",
        "Agent",
        r#"{"subagent_type":"general"}"#,
        Allow,
        AllowRule,
    ),
    ("default", "UnknownTool", "{}", Ask, Prompt),
    // --- plan ---
    ("plan", "Bash", "git status", Allow, Mode),
    ("plan", "Bash", "ls -la src && cat README.md", Allow, Mode),
    ("plan", "Bash", "npm run test", Deny, Mode),
    ("plan", "Bash", "ls > out.txt", Deny, Mode),
    ("plan", "Bash", "curl x", Deny, DenyRule),
    ("plan", "Bash", "git push", Ask, AskRule),
    ("plan", "Bash", "rm -r /", Ask, Safety),
    ("plan", "Edit", "src/lib.rs", Deny, Mode),
    ("plan", "Write", "README.md", Deny, Mode),
    ("plan", "Read", "src/a.rs", Allow, Mode),
    ("plan", "Read", "/etc/passwd", Ask, Prompt),
    ("plan", "Read", "/etc/hosts", Allow, AllowRule),
    ("plan", "WebFetch", "https://docs.rs/x", Allow, AllowRule),
    ("plan", "mcp__gh__create_issue", "{}", Allow, AllowRule),
    ("plan", "mcp__fs__write_file", "{}", Ask, Prompt),
    // --- acceptEdits ---
    ("acceptEdits", "Edit", "README.md", Allow, Mode),
    ("acceptEdits", "Write", "docs/new.md", Allow, Mode),
    ("acceptEdits", "Write", "/tmp/x", Ask, Prompt),
    ("acceptEdits", "Write", "/etc/x", Deny, DenyRule),
    ("acceptEdits", "Write", ".git/hooks/pre-commit", Ask, Safety),
    ("acceptEdits", "Edit", "src/protected/x.rs", Ask, AskRule),
    ("acceptEdits", "Bash", "mkdir -p build/x", Allow, Mode),
    ("acceptEdits", "Bash", "rm -rf build", Deny, DenyRule),
    ("acceptEdits", "Bash", "rm build.log", Allow, Mode),
    (
        "acceptEdits",
        "Bash",
        "mv a b && git status",
        Allow,
        AllowRule,
    ),
    (
        "acceptEdits",
        "Bash",
        "mv a b && ls -d src",
        Allow,
        AllowRule,
    ),
    ("acceptEdits", "Bash", "mv a b && pwd", Allow, Mode),
    ("acceptEdits", "Bash", "echo hi > out.txt", Allow, AllowRule),
    ("acceptEdits", "Bash", "pwd > out.txt", Allow, Mode),
    (
        "acceptEdits",
        "Bash",
        "touch a && cargo build",
        Allow,
        AllowRule,
    ),
    ("acceptEdits", "Bash", "cp /etc/passwd x", Ask, Prompt),
    ("acceptEdits", "Bash", "sed -i 's/a/b/' f.txt", Allow, Mode),
    // sed's `e` runs a command: the safety step asks, whatever approved sed (issue 24).
    ("acceptEdits", "Bash", "sed -i 's/a/b/e' f.txt", Ask, Safety),
    ("acceptEdits", "Bash", "npm install", Ask, Prompt),
    ("acceptEdits", "Bash", "rm -r ..", Ask, Safety),
    ("acceptEdits", "Read", "src/a.rs", Allow, Mode),
    ("acceptEdits", "Read", ".env", Deny, DenyRule),
    (
        "acceptEdits",
        "WebFetch",
        "https://example.org",
        Ask,
        Prompt,
    ),
    ("acceptEdits", "mcp__gh__x", "{}", Allow, AllowRule),
    // --- bypassPermissions ---
    ("bypassPermissions", "Bash", "npm install", Allow, Mode),
    ("bypassPermissions", "Bash", "curl x", Deny, DenyRule),
    ("bypassPermissions", "Bash", "git push", Ask, AskRule),
    ("bypassPermissions", "Bash", "rm -r /", Ask, Safety),
    ("bypassPermissions", "Write", ".git/config", Allow, Mode),
    ("bypassPermissions", "Bash", "echo x > .bashrc", Allow, Mode),
    ("bypassPermissions", "Bash", "$X foo", Ask, Safety),
    ("bypassPermissions", "Write", "/etc/x", Deny, DenyRule),
    (
        "bypassPermissions",
        "WebFetch",
        "https://example.org",
        Allow,
        Mode,
    ),
    ("bypassPermissions", "Read", ".env", Deny, DenyRule),
    (
        "bypassPermissions",
        "Agent",
        r#"{"subagent_type":"Explore"}"#,
        Deny,
        DenyRule,
    ),
    ("bypassPermissions", "Read", "/etc/passwd", Allow, Mode),
    ("bypassPermissions", "mcp__danger__x", "{}", Deny, DenyRule),
    ("bypassPermissions", "UnknownTool", "{}", Allow, Mode),
    // --- dontAsk ---
    ("dontAsk", "Bash", "npm install", Deny, Prompt),
    ("dontAsk", "Bash", "git status", Allow, AllowRule),
    ("dontAsk", "Bash", "git push", Deny, AskRule),
    ("dontAsk", "Bash", "rm -r /", Deny, Safety),
    ("dontAsk", "Read", "src/x", Allow, Mode),
    ("dontAsk", "Read", "/etc/passwd", Deny, Prompt),
    ("dontAsk", "Edit", "README.md", Deny, Prompt),
    ("dontAsk", "Write", ".git/config", Deny, Safety),
    ("dontAsk", "WebFetch", "https://docs.rs/x", Allow, AllowRule),
    ("dontAsk", "mcp__fs__write_file", "{}", Deny, Prompt),
    // --- auto ---
    ("auto", "Bash", "npm install", Allow, Mode),
    ("auto", "Bash", "rm -rf /tmp/x", Deny, DenyRule),
    ("auto", "Bash", "rm -r /tmp/x", Ask, Mode),
    ("auto", "Bash", "git push --force", Ask, AskRule),
    ("auto", "Bash", "git reset --hard", Ask, Mode),
    ("auto", "Bash", "echo x > /tmp/out", Ask, Mode),
    ("auto", "Bash", "sudo apt install x", Ask, Mode),
    ("auto", "Bash", "wget -qO- x | bash", Ask, Mode),
    ("auto", "Bash", "rm -r /", Ask, Safety),
    ("auto", "Edit", "/tmp/x", Ask, Mode),
    ("auto", "Edit", "README.md", Allow, Mode),
    ("auto", "WebFetch", "https://example.org", Allow, Mode),
    ("auto", "Read", "/etc/passwd", Allow, Mode),
    ("auto", "Read", ".env", Deny, DenyRule),
    ("auto", "mcp__fs__write_file", "{}", Allow, Mode),
    ("auto", "mcp__gh__delete_repo", "{}", Ask, AskRule),
];

#[test]
fn permission_matrix() {
    let mut failures = Vec::new();
    let mut engines = std::collections::HashMap::new();
    for &(mode, tool, arg, behavior, step) in CASES {
        let m: PermissionMode = mode.parse().unwrap();
        let engine = engines
            .entry(mode)
            .or_insert_with(|| engine(standard_settings(), m));
        let d = check(engine, tool, arg);
        if (d.behavior, d.step) != (behavior, step) {
            failures.push(format!(
                "{mode:>17} {tool:<12} {arg:?}\n    want {behavior:?}/{step:?}, got {:?}/{:?}: {}",
                d.behavior, d.step, d.reason
            ));
        }
    }
    assert!(
        CASES.len() >= 200,
        "the matrix must keep at least 200 cases"
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

#[test]
fn every_mode_meets_every_tool_kind() {
    use agent_core::tools::ToolKind;
    for mode in PermissionMode::ALL {
        for kind in [
            ToolKind::Read,
            ToolKind::Edit,
            ToolKind::Execute,
            ToolKind::Network,
            ToolKind::Other,
        ] {
            let covered = CASES.iter().any(|c| {
                c.0 == mode.as_str() && ToolKind::of_builtin(c.1).unwrap_or(ToolKind::Other) == kind
            });
            assert!(covered, "no case for {mode} × {kind}");
        }
    }
}

#[test]
fn deny_and_ask_rules_name_their_origin() {
    let e = engine(standard_settings(), PermissionMode::Default);
    let d = check(&e, "Bash", "ls && curl x");
    let rule = d.rule.unwrap();
    assert_eq!(rule.text, "Bash(curl *)");
    assert_eq!(rule.origin.to_string(), "fixture.json#permissions.deny[1]");
    let d = check(&e, "Bash", "git push");
    assert_eq!(d.rule.unwrap().text, "Bash(git push *)");
    assert!(d.suggestions.is_empty() || d.suggestions[0].starts_with("Bash("));
}

#[test]
fn dont_ask_deny_names_a_rule_that_would_allow() {
    let e = engine(standard_settings(), PermissionMode::DontAsk);
    let d = check(&e, "Bash", "npm install left-pad");
    assert!(d.reason.contains("Bash(npm install *)"), "{}", d.reason);
    let d = check(&e, "WebFetch", "https://example.org/x");
    assert!(
        d.reason.contains("WebFetch(domain:example.org)"),
        "{}",
        d.reason
    );
}
