//! The path corpus: `..` escapes, symlinks out, loops, a symlink swapped in after the check
//! (through `SandboxedFs`), hard links, `/proc/self/root`, `//`, look-alikes, and
//! `/project-backup` versus `/project`.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use agent_sandbox::paths::{FsError, Op, PathPolicy, SandboxedFs};
use agent_sandbox::settings::SandboxSettings;

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    project: PathBuf,
    settings: SandboxSettings,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let project = root.join("project");
    let outside = root.join("outside");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(project.join("secrets")).unwrap();
    std::fs::create_dir_all(root.join("project-backup")).unwrap();
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("passwd"), "outside").unwrap();
    std::fs::write(project.join("src/main.rs"), "fn main() {}").unwrap();
    std::fs::write(root.join("project-backup/old.rs"), "old").unwrap();
    symlink(&outside, project.join("escape")).unwrap();
    symlink("../outside/passwd", project.join("rel-escape")).unwrap();
    symlink("src", project.join("inside-link")).unwrap();
    symlink("loop-b", project.join("loop-a")).unwrap();
    symlink("loop-a", project.join("loop-b")).unwrap();
    symlink(outside.join("new-file"), project.join("dangling-out")).unwrap();
    std::fs::hard_link(outside.join("passwd"), project.join("hardlink")).unwrap();
    let settings = SandboxSettings {
        base_dir: Some(project.clone()),
        read_only_dirs: vec![root.join("docs")],
        denied_paths: vec![project.join("secrets")],
        ..SandboxSettings::default()
    };
    Fixture {
        _tmp: tmp,
        root,
        project,
        settings,
    }
}

#[test]
fn path_corpus() {
    let f = fixture();
    let p = &f.project;
    let r = &f.root;
    let policy = PathPolicy::new(&f.settings, None);
    let s = |x: &Path| x.to_str().unwrap().to_owned();
    let cases: Vec<(String, Op, bool)> = vec![
        (s(&p.join("src/main.rs")), Op::Read, true),
        (s(&p.join("src/main.rs")), Op::Write, true),
        ("src/main.rs".into(), Op::Read, true),
        ("./src/../src/./main.rs".into(), Op::Write, true),
        (s(&p.join("new/dir/file")), Op::Write, true),
        (format!("{}//src///main.rs/", s(p)), Op::Read, true),
        (s(&p.join("inside-link/main.rs")), Op::Write, true),
        // `..` escapes.
        (s(&p.join("src/../../outside/passwd")), Op::Read, false),
        ("../outside/passwd".into(), Op::Read, false),
        ("../../../../../../etc/passwd".into(), Op::Read, false),
        (
            s(&p.join("src/../../project-backup/old.rs")),
            Op::Read,
            false,
        ),
        // Segment boundaries.
        (s(&r.join("project-backup/old.rs")), Op::Read, false),
        (format!("{}-backup/old.rs", s(p)), Op::Write, false),
        // Symlinks out, relative and absolute, dangling, loops.
        (s(&p.join("escape/passwd")), Op::Read, false),
        (s(&p.join("rel-escape")), Op::Read, false),
        (s(&p.join("dangling-out")), Op::Write, false),
        (s(&p.join("loop-a")), Op::Read, false),
        (s(&p.join("loop-a/x")), Op::Write, false),
        // Hard link to a file outside: readable path, but never written.
        (s(&p.join("hardlink")), Op::Write, false),
        // Denied wins inside the base directory.
        (s(&p.join("secrets/key")), Op::Read, false),
        (s(&p.join("src/../secrets/key")), Op::Write, false),
        // Read-only directory.
        (s(&r.join("docs/readme")), Op::Read, true),
        (s(&r.join("docs/readme")), Op::Write, false),
        // The root and /proc/self/root.
        ("/".into(), Op::Read, false),
        ("//".into(), Op::Read, false),
        ("/proc/self/root/etc/passwd".into(), Op::Read, false),
        (
            format!("/proc/self/root{}", s(&p.join("src/main.rs"))),
            Op::Read,
            true,
        ),
        // Look-alikes stay literal names: inside when under the project, outside otherwise.
        (
            s(&p.join("src\u{2215}..\u{2215}..\u{2215}outside")),
            Op::Write,
            true,
        ),
        (s(&r.join("pr\u{043e}ject/src/main.rs")), Op::Read, false),
        (format!("{}\u{200b}/x", s(p)), Op::Read, false),
    ];
    let mut wrong = Vec::new();
    for (path, op, want) in &cases {
        let v = policy.check(Path::new(path), *op);
        if v.allowed != *want {
            wrong.push(format!(
                "{path:?} {op:?}: allowed={} ({})",
                v.allowed, v.reason
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn unrestricted_mode_still_guards_root_and_denials() {
    let f = fixture();
    let s = SandboxSettings {
        unrestricted: true,
        ..f.settings.clone()
    };
    let policy = PathPolicy::new(&s, None);
    assert!(policy.check(Path::new("/usr/bin/env"), Op::Read).allowed);
    assert!(!policy.check(Path::new("/"), Op::Read).allowed);
    assert!(!policy.check(&f.project.join("secrets/x"), Op::Read).allowed);
    assert!(s.validate().is_ok());
    let bad = SandboxSettings {
        read_write_dirs: vec![PathBuf::from("/")],
        ..SandboxSettings::default()
    };
    assert!(
        bad.validate()
            .unwrap_err()
            .to_string()
            .contains("never grantable")
    );
}

#[test]
fn sandboxed_fs_reads_writes_and_refuses() {
    let f = fixture();
    let fs = SandboxedFs::new(&f.settings).unwrap();
    assert_eq!(
        fs.read(&f.project.join("src/main.rs")).unwrap(),
        b"fn main() {}"
    );
    fs.create_dir_all(&f.project.join("out/deep")).unwrap();
    fs.write(&f.project.join("out/deep/x.txt"), b"hi").unwrap();
    assert_eq!(
        std::fs::read(f.project.join("out/deep/x.txt")).unwrap(),
        b"hi"
    );
    assert!(fs.list(&f.project).unwrap().contains(&"src".to_owned()));
    assert!(matches!(
        fs.read(&f.project.join("escape/passwd")),
        Err(FsError::Denied(_))
    ));
    assert!(matches!(
        fs.write(&f.root.join("docs/new"), b"x"),
        Err(FsError::Denied(_))
    ));
    fs.remove_file(&f.project.join("out/deep/x.txt")).unwrap();
}

/// The race: a path is checked while it is a plain directory, then swapped for a symlink to
/// the outside before the open. The capability handle refuses the escape.
#[test]
fn a_symlink_swapped_in_after_the_check_cannot_escape() {
    let f = fixture();
    let fs = SandboxedFs::new(&f.settings).unwrap();
    let target = f.project.join("swap/passwd");
    std::fs::create_dir(f.project.join("swap")).unwrap();
    std::fs::write(&target, "inside").unwrap();
    assert!(fs.policy().check(&target, Op::Read).allowed);
    // Attacker swaps the directory for a symlink to the outside.
    std::fs::remove_dir_all(f.project.join("swap")).unwrap();
    symlink(f.root.join("outside"), f.project.join("swap")).unwrap();
    // The operation re-checks and, even if a check were skipped, the handle resolves beneath
    // the project: the outside file is never read.
    match fs.read(&target) {
        Ok(bytes) => assert_ne!(bytes, b"outside", "escaped through a swapped symlink"),
        Err(e) => assert!(matches!(e, FsError::Denied(_) | FsError::Io { .. }), "{e}"),
    }
    // Directly through the capability layer (the check-then-use gap itself): still refused.
    let dir = cap_std::fs::Dir::open_ambient_dir(&f.project, cap_std::ambient_authority()).unwrap();
    assert!(dir.read("swap/passwd").is_err());
}
