//! Wrappers (`xargs`, `env`, `timeout`, `time`, ...) as the programs read their arguments
//! (issue 24): the command they run, the items `xargs` appends, and the files they write.
//! One case per line: (mode, command, expected behavior).

use agent_core::permissions::Behavior::{self, Allow, Ask, Deny};
use agent_core::permissions::PermissionMode;
use serde_json::json;

use crate::support::{check, engine};

fn run(settings: serde_json::Value, cases: &[(&str, &str, Behavior)]) {
    let mut failures = Vec::new();
    for &(mode, command, want) in cases {
        let m: PermissionMode = mode.parse().unwrap();
        let d = check(&engine(settings.clone(), m), "Bash", command);
        if d.behavior != want {
            failures.push(format!(
                "{mode} {command:?}: want {want:?}, got {:?}/{:?}: {}",
                d.behavior, d.step, d.reason
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A wrapper's options are read with the program's own complete table (abbreviations,
/// optional values only attached), so deny rules see the command it really runs; an option
/// the program would refuse or could read two ways is never seen through or approved.
#[test]
fn wrappers_run_the_command_their_program_would_run() {
    let settings = json!({"permissions": {
        "allow": ["Bash(ls *)", "Bash(xargs *)", "Bash(timeout *)", "Bash(env *)"],
        "deny": ["Bash(rm *)"],
    }});
    run(
        settings,
        &[
            ("default", "ls | xargs --replace rm -rf x", Deny),
            ("default", "timeout --sig KILL 5 rm x", Deny),
            ("default", "xargs --max-a 1 rm x", Deny),
            ("default", "env --u X rm x", Deny),
            ("default", "xargs --replace sh -c 'rm x'", Deny),
            ("default", "xargs -I{} sh -c 'ls; rm x'", Deny),
            ("default", "env -S'rm x'", Deny),
            ("default", "env --split-string='-u X rm' y", Deny),
            ("default", "nice -n 5 timeout -k1 5 xargs -0 rm", Deny),
            // Unknown or ambiguous options, run-time words where an option may stand, the
            // command taken from the input: not analysable, so never allowed by `xargs *`.
            ("default", "ls | xargs --max 1 ls", Ask),
            ("default", "ls | xargs --bogus ls", Ask),
            ("default", "ls | xargs $OPTS ls", Ask),
            ("default", "ls | xargs -I{} {} x", Ask),
            ("default", "timeout --ver 5 ls", Ask),
            ("dontAsk", "xargs --e ls", Deny),
            // The command runs in another directory: its relative paths are not those checked.
            ("default", "env -C /etc cat shadow", Ask),
            ("default", "env --ch=.git sed -i s/a/b/ config", Ask),
            // Still allowed when read right.
            ("default", "ls | xargs --replace ls x", Allow),
            ("default", "ls | xargs -I{} ls {}", Allow),
            ("default", "timeout --sig KILL 5 ls", Allow),
        ],
    );
}

/// `xargs CMD` appends the items it reads to CMD's arguments: they can be options the
/// checker never saw (`--output=F`, `--compress-program=sh`) or files anywhere, so CMD is
/// read-only only if it stays read-only with any more words.
#[test]
fn xargs_items_are_words_the_checker_never_saw() {
    let settings = json!({"permissions": {}});
    run(
        settings,
        &[
            ("default", "echo --output=F | xargs git log", Ask),
            ("default", "ls | xargs sort", Ask),
            ("default", "ls | xargs wc -l", Ask),
            ("default", "ls | xargs cat", Ask),
            ("default", "ls | xargs head -n 1", Ask),
            ("default", "ls | xargs -- git log", Ask),
            ("default", "ls | timeout 5 xargs git status", Ask),
            ("dontAsk", "echo --output=F | xargs git log", Deny),
            // Harmless with any words: echo prints them.
            ("default", "ls | xargs echo", Allow),
            ("default", "ls | xargs", Ask),
            // Without xargs, the same commands stay read-only.
            ("default", "git log", Allow),
            ("default", "sort a.txt", Allow),
        ],
    );
}

/// GNU `time -o FILE` (and `flock FILE`, `watch -s DIR`, ...) write files: behind any number
/// of transparent wrappers, spelled any way getopt accepts, they are writes, checked like
/// redirects (protected paths, the working directories, `Edit` rules).
#[test]
fn files_written_by_wrappers_are_writes() {
    let settings = json!({"permissions": {
        "allow": [
            "Bash(flock out/lock ls)", "Bash(flock .git/config ls)", "Bash(flock .bashrc -c ls)",
            "Edit(./out/**)"
        ],
        "deny": ["Edit(./secret/**)"],
    }});
    run(
        settings,
        &[
            ("default", "\\time -o ~/.bashrc ls", Ask),
            ("default", "command time -o .git/config ls", Ask),
            ("default", "nice time --output=.git/config ls", Ask),
            ("default", "timeout 5 time --out .bashrc ls", Ask),
            ("default", "/usr/bin/time -aoF ls", Ask),
            ("acceptEdits", "\\time -o .git/config ls", Ask),
            ("acceptEdits", "\\time --output-file=~/.bashrc ls", Ask),
            ("acceptEdits", "\\time -o notes.txt ls", Allow),
            ("default", "\\time -o out/t.txt ls", Allow),
            ("default", "\\time -o secret/t.txt ls", Deny),
            ("default", "\\time ls", Allow),
            ("default", "flock .git/config ls", Ask),
            ("acceptEdits", "flock .bashrc -c 'ls'", Ask),
            ("default", "flock out/lock ls", Allow),
            ("plan", "\\time -o notes.txt ls", Deny),
        ],
    );
}

/// docs/permissions.md lists every wrapper's table and example rows; they must be the tables
/// the code uses. Regenerate with
/// `AGENT_WRITE_DOCS=1 cargo test -p agent-core wrapper_tables_in_docs`.
#[test]
fn wrapper_tables_in_docs() {
    let path = format!("{}/../../docs/permissions.md", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let (begin, end) = (
        "<!-- wrapper-table:begin -->\n",
        "<!-- wrapper-table:end -->",
    );
    let start = text.find(begin).expect("the begin marker") + begin.len();
    let stop = text.find(end).expect("the end marker");
    let table = agent_core::programs::wrappers::markdown_table();
    if std::env::var_os("AGENT_WRITE_DOCS").is_some() {
        let updated = format!("{}{table}{}", &text[..start], &text[stop..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    assert_eq!(
        &text[start..stop],
        table,
        "docs/permissions.md is stale: regenerate it"
    );
}
