//! The shadow workspace (issue 15): import and ignore rules, every change kind, commit exactly
//! the change set, conflicts refused with nothing half-applied, rollback of a failure in the
//! middle of a commit, symlinks never followed, modes preserved, refresh and discard.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is a failure report"
)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use agent_sessions::workspace::{
    ChangeKind, CommitOptions, ImportOptions, Workspace, WorkspaceError,
};

struct Fixture {
    real: tempfile::TempDir,
    state: tempfile::TempDir,
    outside: tempfile::TempDir,
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn fixture() -> Fixture {
    let f = Fixture {
        real: tempfile::tempdir().unwrap(),
        state: tempfile::tempdir().unwrap(),
        outside: tempfile::tempdir().unwrap(),
    };
    let r = f.real.path();
    write(r, "src/main.rs", "fn main() {}\n");
    write(r, "src/lib.rs", "pub fn one() -> u32 { 1 }\n");
    write(r, "README.md", "# demo\n");
    write(r, "old.txt", "move me\n");
    write(r, "gone.txt", "delete me\n");
    write(r, "run.sh", "#!/bin/sh\necho hi\n");
    write(r, ".gitignore", "target/\n*.log\n");
    write(r, "target/debug/app", "binary");
    write(r, "build.log", "noise\n");
    write(r, ".agentignore", "secrets/\n");
    write(r, "secrets/key", "k\n");
    write(r, ".agent/settings.json", "{}\n");
    write(r, ".git/HEAD", "ref: refs/heads/main\n");
    write(r, "nested/.gitignore", "*.tmp\n");
    write(r, "nested/keep.txt", "keep\n");
    write(r, "nested/drop.tmp", "drop\n");
    std::fs::set_permissions(r.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    write(f.outside.path(), "secret.txt", "outside secret\n");
    std::os::unix::fs::symlink(f.outside.path().join("secret.txt"), r.join("escape")).unwrap();
    std::os::unix::fs::symlink("README.md", r.join("readme-link")).unwrap();
    f
}

fn import(f: &Fixture) -> Workspace {
    let opts = ImportOptions {
        state_root: Some(f.state.path().to_path_buf()),
        ..ImportOptions::default()
    };
    Workspace::import(f.real.path(), &opts).unwrap().0
}

fn files(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    fn go(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_str().unwrap().to_owned();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.file_type().is_symlink() {
                out.insert(
                    rel,
                    format!("-> {}", std::fs::read_link(&p).unwrap().display()),
                );
            } else if meta.is_dir() {
                go(root, &p, out);
            } else {
                out.insert(rel, std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    go(root, root, &mut out);
    out
}

#[test]
fn import_copies_what_belongs_and_follows_no_link() {
    let f = fixture();
    let opts = ImportOptions {
        state_root: Some(f.state.path().to_path_buf()),
        ..ImportOptions::default()
    };
    let (ws, report) = Workspace::import(f.real.path(), &opts).unwrap();
    let shadow = files(ws.shadow());
    let names: Vec<&str> = shadow.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            ".agentignore",
            ".gitignore",
            "README.md",
            "gone.txt",
            "nested/.gitignore",
            "nested/keep.txt",
            "old.txt",
            "readme-link",
            "run.sh",
            "src/lib.rs",
            "src/main.rs",
        ]
    );
    assert_eq!(shadow["readme-link"], "-> README.md");
    assert_eq!(report.skipped_links, ["escape"]);
    assert_eq!(report.files, 11);
    // Modes are kept.
    let mode = std::fs::metadata(ws.shadow().join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    // The base snapshot has sizes and hashes.
    let base = &ws.base()["src/main.rs"];
    assert_eq!(base.size, 13);
    assert_eq!(base.sha256.len(), 64);
    // Reopened from the real folder or from the shadow.
    let again = Workspace::open(f.real.path(), Some(f.state.path())).unwrap();
    assert_eq!(again.shadow(), ws.shadow());
    let by_shadow = Workspace::open(ws.shadow(), Some(f.state.path())).unwrap();
    assert_eq!(by_shadow.real(), ws.real());
    // A second import is refused with what to do.
    let err = Workspace::import(f.real.path(), &opts).unwrap_err();
    assert!(matches!(err, WorkspaceError::Exists { .. }), "{err}");
}

/// Issue 25 (B1): `.git` is never copied; a `.git` that git cannot read (here a lone
/// `.git/HEAD`) leaves the shadow without one, and the report says why.
#[test]
fn a_git_directory_git_cannot_read_is_not_copied_and_the_report_says_why() {
    let f = fixture();
    let opts = ImportOptions {
        state_root: Some(f.state.path().to_path_buf()),
        ..ImportOptions::default()
    };
    let (ws, report) = Workspace::import(f.real.path(), &opts).unwrap();
    assert!(!ws.shadow().join(".git").exists());
    let why = report.git.unwrap().skipped.unwrap();
    assert!(why.contains("the shadow has no .git"), "{why}");
    assert!(!ws.shadow().join(".agent").exists());
}

#[test]
fn every_change_kind_is_reported() {
    let f = fixture();
    let ws = import(&f);
    let s = ws.shadow();
    assert!(ws.status().unwrap().is_empty());
    write(s, "src/lib.rs", "pub fn one() -> u32 { 2 }\n");
    write(s, "src/new.rs", "// new\n");
    std::fs::remove_file(s.join("gone.txt")).unwrap();
    std::fs::rename(s.join("old.txt"), s.join("moved.txt")).unwrap();
    std::fs::set_permissions(s.join("README.md"), std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(s.join("image.bin"), [0u8, 159, 146, 150]).unwrap();
    write(s, "target/out", "ignored output\n");
    let set = ws.status().unwrap();
    let kinds: Vec<(String, ChangeKind, bool)> = set
        .changes
        .iter()
        .map(|c| (c.path.clone(), c.kind.clone(), c.binary))
        .collect();
    assert_eq!(
        kinds,
        [
            ("README.md".into(), ChangeKind::ModeChanged, false),
            ("gone.txt".into(), ChangeKind::Deleted, false),
            ("image.bin".into(), ChangeKind::Added, true),
            (
                "moved.txt".into(),
                ChangeKind::Renamed {
                    from: "old.txt".into()
                },
                false
            ),
            ("src/lib.rs".into(), ChangeKind::Modified, false),
            ("src/new.rs".into(), ChangeKind::Added, false),
        ]
    );
    let diffs = ws.diff(None).unwrap();
    let lib = &diffs
        .iter()
        .find(|(c, _)| c.path == "src/lib.rs")
        .unwrap()
        .1;
    assert!(
        lib.contains("--- a/src/lib.rs\n+++ b/src/lib.rs\n"),
        "{lib}"
    );
    assert!(lib.contains("-pub fn one() -> u32 { 1 }\n+pub fn one() -> u32 { 2 }\n"));
    let bin = &diffs.iter().find(|(c, _)| c.path == "image.bin").unwrap().1;
    assert_eq!(bin, "Binary files /dev/null and b/image.bin differ\n");
    let mode = &diffs.iter().find(|(c, _)| c.path == "README.md").unwrap().1;
    assert_eq!(mode, "old mode 644\nnew mode 600\n");
    assert_eq!(ws.diff(Some("src")).unwrap().len(), 2);
    let event = set.event();
    assert_eq!(event.added, ["image.bin", "moved.txt", "src/new.rs"]);
    assert_eq!(event.deleted, ["gone.txt", "old.txt"]);
}

#[test]
fn commit_applies_exactly_the_change_set() {
    let f = fixture();
    let mut ws = import(&f);
    let s = ws.shadow().to_path_buf();
    write(&s, "src/lib.rs", "pub fn one() -> u32 { 2 }\n");
    write(&s, "src/deep/new.rs", "// new\n");
    std::fs::remove_file(s.join("gone.txt")).unwrap();
    std::fs::rename(s.join("old.txt"), s.join("moved.txt")).unwrap();
    std::fs::set_permissions(s.join("README.md"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let before = files(f.real.path());
    let report = ws.commit(&CommitOptions::default()).unwrap();
    assert_eq!(
        report.applied,
        [
            "README.md",
            "gone.txt",
            "moved.txt",
            "old.txt",
            "src/deep/new.rs",
            "src/lib.rs"
        ]
    );
    let after = files(f.real.path());
    let mut want = before;
    want.insert("src/lib.rs".into(), "pub fn one() -> u32 { 2 }\n".into());
    want.insert("src/deep/new.rs".into(), "// new\n".into());
    want.remove("gone.txt");
    let moved = want.remove("old.txt").unwrap();
    want.insert("moved.txt".into(), moved);
    assert_eq!(after, want);
    let mode = std::fs::metadata(f.real.path().join("README.md"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // Ignored and reserved paths in the real folder are untouched.
    assert!(f.real.path().join("target/debug/app").exists());
    assert!(f.real.path().join(".agent/settings.json").exists());
    // The base advanced: nothing left to commit.
    assert!(ws.status().unwrap().is_empty());
    assert_eq!(report.event().applied.len(), 6);
}

#[test]
fn paths_changed_in_the_real_folder_are_conflicts_and_nothing_is_applied() {
    for (case, change) in [
        (
            "edited",
            (|r: &Path| write(r, "src/lib.rs", "edited by the user\n")) as fn(&Path),
        ),
        ("deleted", |r: &Path| {
            std::fs::remove_file(r.join("src/lib.rs")).unwrap()
        }),
        ("created", |r: &Path| {
            write(r, "src/new.rs", "made by the user\n")
        }),
    ] {
        let f = fixture();
        let mut ws = import(&f);
        let s = ws.shadow().to_path_buf();
        write(&s, "src/lib.rs", "agent version\n");
        write(&s, "src/new.rs", "agent new\n");
        write(&s, "README.md", "# agent readme\n");
        change(f.real.path());
        let before = files(f.real.path());
        let err = ws.commit(&CommitOptions::default()).unwrap_err();
        let WorkspaceError::Conflicts(conflicts) = &err else {
            panic!("{case}: {err}");
        };
        assert_eq!(conflicts.len(), 1, "{case}: {conflicts:?}");
        assert_eq!(conflicts[0].why, case);
        assert!(err.to_string().contains("--force"), "{err}");
        assert_eq!(
            files(f.real.path()),
            before,
            "{case}: something was applied"
        );
        // Forcing the path applies everything.
        let rel = conflicts[0].path.clone();
        let report = ws
            .commit(&CommitOptions {
                force: vec![rel.clone()],
                ..CommitOptions::default()
            })
            .unwrap();
        assert_eq!(report.forced, [rel]);
        assert_eq!(
            std::fs::read_to_string(f.real.path().join("README.md")).unwrap(),
            "# agent readme\n"
        );
    }
}

#[test]
fn a_failure_in_the_middle_of_a_commit_rolls_everything_back() {
    let f = fixture();
    let mut ws = import(&f);
    let s = ws.shadow().to_path_buf();
    write(&s, "README.md", "# changed\n");
    write(&s, "a/b/c/new.txt", "new\n");
    std::fs::remove_file(s.join("gone.txt")).unwrap();
    write(&s, "src/lib.rs", "changed\n");
    let before = files(f.real.path());
    for fail_after in 1..4 {
        let err = ws
            .commit(&CommitOptions {
                fail_after: Some(fail_after),
                ..CommitOptions::default()
            })
            .unwrap_err();
        assert!(
            matches!(err, WorkspaceError::RolledBack { .. }),
            "{fail_after}: {err}"
        );
        assert_eq!(
            files(f.real.path()),
            before,
            "after failing at {fail_after}"
        );
        assert!(
            !f.real.path().join("a").exists(),
            "created directories stay"
        );
    }
    // The change set is still there and commits afterwards.
    assert_eq!(ws.status().unwrap().changes.len(), 4);
    ws.commit(&CommitOptions::default()).unwrap();
    assert_eq!(
        std::fs::read_to_string(f.real.path().join("a/b/c/new.txt")).unwrap(),
        "new\n"
    );
}

#[test]
fn commit_writes_nothing_through_links() {
    let f = fixture();
    let mut ws = import(&f);
    let s = ws.shadow().to_path_buf();
    // A link in the shadow pointing outside is refused.
    std::os::unix::fs::symlink("/etc/passwd", s.join("out-link")).unwrap();
    let err = ws.commit(&CommitOptions::default()).unwrap_err();
    assert!(err.to_string().contains("outside the workspace"), "{err}");
    std::fs::remove_file(s.join("out-link")).unwrap();
    // A directory of the real folder replaced by a link to elsewhere since import.
    write(&s, "nested/keep.txt", "agent\n");
    let nested = f.real.path().join("nested");
    std::fs::remove_dir_all(&nested).unwrap();
    std::os::unix::fs::symlink(f.outside.path(), &nested).unwrap();
    let err = ws
        .commit(&CommitOptions {
            force: vec!["nested/keep.txt".into()],
            ..CommitOptions::default()
        })
        .unwrap_err();
    assert!(matches!(err, WorkspaceError::RolledBack { .. }), "{err}");
    assert!(!f.outside.path().join("keep.txt").exists());
}

#[test]
fn refresh_pulls_real_changes_that_do_not_conflict() {
    let f = fixture();
    let mut ws = import(&f);
    let s = ws.shadow().to_path_buf();
    write(&s, "src/lib.rs", "agent\n");
    write(f.real.path(), "src/lib.rs", "user\n");
    write(f.real.path(), "README.md", "# user readme\n");
    write(f.real.path(), "docs/new.md", "user doc\n");
    std::fs::remove_file(f.real.path().join("gone.txt")).unwrap();
    let report = ws.refresh().unwrap();
    assert_eq!(report.pulled, ["README.md", "docs/new.md", "gone.txt"]);
    assert_eq!(report.conflicts, ["src/lib.rs"]);
    assert_eq!(
        std::fs::read_to_string(s.join("README.md")).unwrap(),
        "# user readme\n"
    );
    assert!(!s.join("gone.txt").exists());
    assert_eq!(
        std::fs::read_to_string(s.join("src/lib.rs")).unwrap(),
        "agent\n"
    );
    let set = ws.status().unwrap();
    assert_eq!(set.changes.len(), 1);
    assert_eq!(set.changes[0].path, "src/lib.rs");
}

#[test]
fn discard_drops_every_shadow_change() {
    let f = fixture();
    let mut ws = import(&f);
    let s = ws.shadow().to_path_buf();
    write(&s, "src/lib.rs", "agent\n");
    write(&s, "extra.txt", "agent\n");
    ws.discard().unwrap();
    assert!(ws.status().unwrap().is_empty());
    assert!(!s.join("extra.txt").exists());
    assert_eq!(
        std::fs::read_to_string(s.join("src/lib.rs")).unwrap(),
        "pub fn one() -> u32 { 1 }\n"
    );
}

#[test]
fn a_shadow_inside_the_real_folder_is_refused() {
    let f = fixture();
    let opts = ImportOptions {
        state_root: Some(f.state.path().to_path_buf()),
        shadow: Some(f.real.path().join("shadow")),
    };
    let err = Workspace::import(f.real.path(), &opts).unwrap_err();
    assert!(err.to_string().contains("overlap"), "{err}");
}
