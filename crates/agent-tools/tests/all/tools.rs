//! The built-in tools (issue 15): input shapes and errors, stale-read detection, output caps,
//! confinement to the workspace (`..`, absolute paths, file and directory symlinks), Glob and
//! Grep behaviour, TodoWrite, Task without a runner.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failure report"
)]

use std::path::Path;
use std::sync::Arc;

use agent_core::tools::{Tool, ToolContext, ToolError, ToolOutput};
use agent_tools::{ToolState, builtin_tools};
use serde_json::{Value, json};

struct Ws {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
    tools: Vec<Arc<dyn Tool>>,
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn ws() -> Ws {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("ws");
    let outside = base.join("outside");
    write(&outside, "secret.txt", "top secret\n");
    write(
        &root,
        "src/main.rs",
        "fn main() {\n    println!(\"Hello\");\n}\n",
    );
    write(&root, "src/lib.rs", "pub fn hello() {}\n// hello again\n");
    write(&root, "notes.md", "one\ntwo\nthree\n");
    write(&root, ".gitignore", "target/\n");
    write(&root, "target/gen.rs", "fn hello_generated() {}\n");
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("link-file")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("link-dir")).unwrap();
    Ws {
        _tmp: tmp,
        root,
        outside,
        tools: builtin_tools(&ToolState::new()),
    }
}

impl Ws {
    fn call(&self, tool: &str, input: Value) -> Result<ToolOutput, ToolError> {
        let t = self.tools.iter().find(|t| t.name() == tool).unwrap();
        let ctx = ToolContext::new(&self.root, "s1", "toolu_1");
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(t.call(input, &ctx))
    }

    fn text(&self, tool: &str, input: Value) -> String {
        match self.call(tool, input).unwrap().output {
            Value::String(s) => s,
            other => other.to_string(),
        }
    }
}

#[test]
fn every_tool_has_an_object_schema_with_its_required_fields() {
    let w = ws();
    let want = [
        ("Read", vec!["file_path"]),
        ("Write", vec!["file_path", "content"]),
        ("Edit", vec!["file_path", "old_string", "new_string"]),
        ("MultiEdit", vec!["file_path", "edits"]),
        ("Glob", vec!["pattern"]),
        ("Grep", vec!["pattern"]),
        ("TodoWrite", vec!["todos"]),
        ("Task", vec!["prompt", "description", "subagent_type"]),
    ];
    for (name, required) in want {
        let t = w.tools.iter().find(|t| t.name() == name).unwrap();
        let s = t.input_schema();
        assert_eq!(s["type"], "object", "{name}");
        assert_eq!(s["required"], json!(required), "{name}");
        // A missing required field is an invalid-input error naming it.
        let err = w.call(name, json!({})).unwrap_err();
        assert_eq!(err.error_type(), "invalid_input", "{name}: {err}");
        assert!(err.to_string().contains(required[0]), "{name}: {err}");
    }
}

#[test]
fn read_numbers_lines_pages_and_reports_non_text() {
    let w = ws();
    assert_eq!(
        w.text("Read", json!({"file_path": "notes.md"})),
        "     1\tone\n     2\ttwo\n     3\tthree\n"
    );
    assert_eq!(
        w.text(
            "Read",
            json!({"file_path": w.root.join("notes.md"), "offset": 2, "limit": 1})
        ),
        "     2\ttwo\n… (3 lines in all; read on with offset=3)\n"
    );
    assert!(
        w.text("Read", json!({"file_path": "notes.md", "offset": 9}))
            .contains("past its end")
    );
    // Long lines are cut; long files are paged at 50 KB.
    write(&w.root, "long.txt", &"x".repeat(5000));
    assert!(
        w.text("Read", json!({"file_path": "long.txt"}))
            .contains("[line cut: 5000 characters]")
    );
    let many: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    write(&w.root, "many.txt", &many);
    let page = w.text("Read", json!({"file_path": "many.txt"}));
    assert!(page.len() < 60_000 && page.contains("read on with offset="));
    // Images, PDFs, binaries, empty files, missing files.
    std::fs::write(w.root.join("p.png"), b"\x89PNG\r\n\x1a\n\0\0\0").unwrap();
    let img = w
        .call("Read", json!({"file_path": "p.png"}))
        .unwrap()
        .output;
    assert_eq!(img["type"], "image");
    assert_eq!(img["mediaType"], "image/png");
    std::fs::write(w.root.join("d.pdf"), b"%PDF-1.7\n").unwrap();
    assert_eq!(
        w.call("Read", json!({"file_path": "d.pdf"}))
            .unwrap()
            .output["type"],
        "pdf"
    );
    std::fs::write(w.root.join("b.bin"), [0xff, 0xfe, 0x00, 0x01]).unwrap();
    let err = w.call("Read", json!({"file_path": "b.bin"})).unwrap_err();
    assert!(err.to_string().contains("binary"), "{err}");
    write(&w.root, "empty.txt", "");
    assert!(
        w.text("Read", json!({"file_path": "empty.txt"}))
            .contains("empty")
    );
    let err = w
        .call("Read", json!({"file_path": "nope.txt"}))
        .unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");
}

#[test]
fn no_tool_reaches_outside_the_workspace() {
    let w = ws();
    let secret = w.outside.join("secret.txt");
    let ways = [
        "../outside/secret.txt".to_owned(),
        secret.display().to_string(),
        "link-file".to_owned(),
        "link-dir/secret.txt".to_owned(),
        "src/../../outside/secret.txt".to_owned(),
        "/etc/passwd".to_owned(),
    ];
    for path in &ways {
        let err = w.call("Read", json!({"file_path": path})).unwrap_err();
        assert_eq!(err.error_type(), "sandbox_denied", "Read {path}: {err}");
        let err = w
            .call("Write", json!({"file_path": path, "content": "pwned"}))
            .unwrap_err();
        assert_eq!(err.error_type(), "sandbox_denied", "Write {path}: {err}");
        let err = w
            .call(
                "Edit",
                json!({"file_path": path, "old_string": "top", "new_string": "x"}),
            )
            .unwrap_err();
        assert_eq!(err.error_type(), "sandbox_denied", "Edit {path}: {err}");
    }
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "top secret\n");
    for base in ["..", "link-dir", "/etc"] {
        let err = w
            .call("Glob", json!({"pattern": "*", "path": base}))
            .unwrap_err();
        assert_eq!(err.error_type(), "sandbox_denied", "Glob {base}: {err}");
        let err = w
            .call("Grep", json!({"pattern": "secret", "path": base}))
            .unwrap_err();
        assert_eq!(err.error_type(), "sandbox_denied", "Grep {base}: {err}");
    }
    // A walk from the root does not follow the links out.
    let found = w.text("Grep", json!({"pattern": "top secret"}));
    assert_eq!(found, "No matches found");
}

#[test]
fn write_and_edit_need_a_fresh_read() {
    let w = ws();
    // A new file needs no read.
    let out = w
        .call(
            "Write",
            json!({"file_path": "new/file.txt", "content": "fresh\n"}),
        )
        .unwrap();
    assert_eq!(out.output["type"], "create");
    assert_eq!(
        std::fs::read_to_string(w.root.join("new/file.txt")).unwrap(),
        "fresh\n"
    );
    // An existing file unread: refused.
    let err = w
        .call("Write", json!({"file_path": "notes.md", "content": "x"}))
        .unwrap_err();
    assert!(err.to_string().contains("Read it first"), "{err}");
    let err = w
        .call(
            "Edit",
            json!({"file_path": "notes.md", "old_string": "two", "new_string": "2"}),
        )
        .unwrap_err();
    assert!(err.to_string().contains("Read it first"), "{err}");
    // Read, then edit.
    w.call("Read", json!({"file_path": "notes.md"})).unwrap();
    let out = w
        .call(
            "Edit",
            json!({"file_path": "notes.md", "old_string": "two", "new_string": "2"}),
        )
        .unwrap();
    assert_eq!(out.output["replacements"], 1);
    assert_eq!(
        std::fs::read_to_string(w.root.join("notes.md")).unwrap(),
        "one\n2\nthree\n"
    );
    // Changed behind the agent's back: stale.
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(&w.root, "notes.md", "one\n2\nthree\nfour\n");
    let err = w
        .call(
            "Edit",
            json!({"file_path": "notes.md", "old_string": "one", "new_string": "1"}),
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("changed since it was last read"),
        "{err}"
    );
}

#[test]
fn edit_requires_a_unique_match_unless_replace_all() {
    let w = ws();
    write(&w.root, "dup.txt", "a b a b a\n");
    w.call("Read", json!({"file_path": "dup.txt"})).unwrap();
    let err = w
        .call(
            "Edit",
            json!({"file_path": "dup.txt", "old_string": "a", "new_string": "z"}),
        )
        .unwrap_err();
    assert!(err.to_string().contains("occurs 3 times"), "{err}");
    let err = w
        .call(
            "Edit",
            json!({"file_path": "dup.txt", "old_string": "q", "new_string": "z"}),
        )
        .unwrap_err();
    assert!(err.to_string().contains("not found"), "{err}");
    let err = w
        .call(
            "Edit",
            json!({"file_path": "dup.txt", "old_string": "a", "new_string": "a"}),
        )
        .unwrap_err();
    assert_eq!(err.error_type(), "invalid_input");
    let out = w
        .call(
            "Edit",
            json!({"file_path": "dup.txt", "old_string": "a", "new_string": "z", "replace_all": true}),
        )
        .unwrap();
    assert_eq!(out.output["replacements"], 3);
    // MultiEdit: all or nothing.
    let err = w
        .call(
            "MultiEdit",
            json!({"file_path": "dup.txt", "edits": [
                {"old_string": "z b z", "new_string": "Y"},
                {"old_string": "missing", "new_string": "x"}
            ]}),
        )
        .unwrap_err();
    assert!(err.to_string().contains("edit 2"), "{err}");
    assert_eq!(
        std::fs::read_to_string(w.root.join("dup.txt")).unwrap(),
        "z b z b z\n"
    );
    w.call(
        "MultiEdit",
        json!({"file_path": "dup.txt", "edits": [
            {"old_string": "z b z", "new_string": "Y"},
            {"old_string": "Y", "new_string": "W"}
        ]}),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(w.root.join("dup.txt")).unwrap(),
        "W b z\n"
    );
    // An empty old_string creates a new file.
    w.call(
        "Edit",
        json!({"file_path": "made.txt", "old_string": "", "new_string": "made\n"}),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(w.root.join("made.txt")).unwrap(),
        "made\n"
    );
}

#[test]
fn glob_is_gitignore_aware_and_newest_first() {
    let w = ws();
    std::thread::sleep(std::time::Duration::from_millis(20));
    write(&w.root, "src/newest.rs", "// newest\n");
    let out = w.text("Glob", json!({"pattern": "**/*.rs"}));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], w.root.join("src/newest.rs").display().to_string());
    assert_eq!(lines.len(), 3, "{out}");
    assert!(!out.contains("target/"), "ignored files listed: {out}");
    assert_eq!(
        w.text("Glob", json!({"pattern": "*.nothing"})),
        "No files found"
    );
    for i in 0..120 {
        write(&w.root, &format!("many/f{i:03}.txt"), "x");
    }
    let out = w.text("Glob", json!({"pattern": "many/*.txt"}));
    assert_eq!(out.lines().count(), 101);
    assert!(out.ends_with("… (20 more; narrow the pattern or the path)"));
}

#[test]
fn grep_modes_context_case_multiline_and_glob() {
    let w = ws();
    let main = w.root.join("src/main.rs").display().to_string();
    let lib = w.root.join("src/lib.rs").display().to_string();
    let files = w.text("Grep", json!({"pattern": "hello", "-i": true}));
    assert!(files.starts_with("Found 2 file(s)\n"), "{files}");
    assert!(files.contains(&main) && files.contains(&lib) && !files.contains("target"));
    let content = w.text(
        "Grep",
        json!({"pattern": "println", "output_mode": "content", "-B": 1}),
    );
    assert_eq!(
        content,
        format!("{main}-1-fn main() {{\n{main}:2:    println!(\"Hello\");")
    );
    let count = w.text("Grep", json!({"pattern": "hello", "output_mode": "count"}));
    assert_eq!(count, format!("{lib}:2"));
    let multi = w.text(
        "Grep",
        json!({"pattern": "main\\(\\) \\{.*Hello", "multiline": true, "output_mode": "content"}),
    );
    assert!(
        multi.contains(":1:fn main() {") && multi.contains(":2:"),
        "{multi}"
    );
    let only_lib = w.text(
        "Grep",
        json!({"pattern": "hello", "-i": true, "glob": "lib.rs"}),
    );
    assert!(
        only_lib.contains(&lib) && !only_lib.contains(&main),
        "{only_lib}"
    );
    let err = w.call("Grep", json!({"pattern": "("})).unwrap_err();
    assert_eq!(err.error_type(), "invalid_input");
    write(&w.root, "fr.txt", "L'ÉCOLE\n");
    let unicode = w.text("Grep", json!({"pattern": "école", "-i": true}));
    assert!(unicode.contains("fr.txt"), "{unicode}");
}

#[test]
fn grep_skips_binary_files_and_reads_other_encodings_as_ripgrep_does() {
    let w = ws();
    let bin = w.root.join("blob.bin");
    std::fs::write(&bin, b"needle\0\x01\x02 needle").unwrap();
    let latin1 = w.root.join("latin1.txt");
    std::fs::write(&latin1, b"caf\xe9 needle\n").unwrap();
    let files = w.text("Grep", json!({"pattern": "needle"}));
    assert_eq!(
        files,
        format!("Found 1 file(s)\n{}", latin1.display()),
        "binary files are skipped, non-UTF-8 text is searched"
    );
    let content = w.text(
        "Grep",
        json!({"pattern": "needle", "output_mode": "content"}),
    );
    assert_eq!(
        content,
        format!("{}:1:caf\u{fffd} needle", latin1.display())
    );
}

#[test]
fn grep_separates_context_groups_and_counts_every_match() {
    let w = ws();
    let f = w.root.join("groups.txt");
    let text: String = (1..=12)
        .map(|i| {
            if i == 3 || i == 10 {
                format!("hit hit {i}\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    std::fs::write(&f, text).unwrap();
    let p = f.display().to_string();
    let content = w.text(
        "Grep",
        json!({"pattern": "hit", "path": "groups.txt", "output_mode": "content", "-C": 1}),
    );
    assert_eq!(
        content,
        format!(
            "{p}-2-line 2\n{p}:3:hit hit 3\n{p}-4-line 4\n--\n{p}-9-line 9\n{p}:10:hit hit 10\n{p}-11-line 11"
        )
    );
    let no_numbers = w.text(
        "Grep",
        json!({"pattern": "hit", "path": "groups.txt", "output_mode": "content", "-n": false}),
    );
    assert_eq!(no_numbers, format!("{p}:hit hit 3\n{p}:hit hit 10"));
    let count = w.text(
        "Grep",
        json!({"pattern": "hit", "path": "groups.txt", "output_mode": "count"}),
    );
    assert_eq!(count, format!("{p}:4"), "two matches on each of two lines");
}

#[test]
fn grep_lists_every_matching_file_newest_first_and_cuts_at_head_limit() {
    let w = ws();
    for i in 0..30 {
        write(&w.root, &format!("many/f{i:02}.txt"), "match me\n");
    }
    let newest = w.root.join("many/newest.txt");
    std::fs::write(&newest, "match me\n").unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&newest)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let out = w.text("Grep", json!({"pattern": "match me", "head_limit": 10}));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Found 31 file(s)");
    assert_eq!(lines[1], newest.display().to_string());
    assert_eq!(lines.len(), 12, "{out}");
    assert!(lines[11].starts_with("… (output cut at 10 lines"), "{out}");
}

#[test]
fn grep_without_multiline_matches_within_lines_only() {
    let w = ws();
    let err = w
        .call("Grep", json!({"pattern": "main\\(\\) \\{\\n"}))
        .unwrap_err();
    assert_eq!(err.error_type(), "invalid_input");
    assert!(err.to_string().contains("multiline: true"), "{err}");
    let spans = w.text(
        "Grep",
        json!({"pattern": "\\{\\s+println", "output_mode": "count"}),
    );
    assert_eq!(
        spans, "No matches found",
        "\\s does not reach the next line"
    );
}

#[test]
fn todo_write_keeps_the_list_and_task_needs_a_runner() {
    let w = ws();
    let out = w
        .call(
            "TodoWrite",
            json!({"todos": [{"content": "write tests", "status": "in_progress", "activeForm": "Writing tests"}]}),
        )
        .unwrap();
    assert_eq!(out.output["newTodos"][0]["content"], "write tests");
    let out = w
        .call(
            "TodoWrite",
            json!({"todos": [{"content": "ship", "status": "pending"}]}),
        )
        .unwrap();
    assert_eq!(out.output["oldTodos"][0]["content"], "write tests");
    let err = w
        .call(
            "TodoWrite",
            json!({"todos": [{"content": "x", "status": "doing"}]}),
        )
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("pending, in_progress or completed"),
        "{err}"
    );
    let err = w
        .call(
            "Task",
            json!({"prompt": "p", "description": "d", "subagent_type": "general-purpose"}),
        )
        .unwrap_err();
    assert_eq!(err.error_type(), "not_supported");
}
