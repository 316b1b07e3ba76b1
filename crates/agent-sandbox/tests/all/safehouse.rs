//! Agent Safehouse compatibility (issue 14): a tree in Safehouse's own layout and forms
//! (`tests/fixtures/safehouse-tree`, written for these tests) assembles to the same rules, in
//! the same order, as Safehouse's generator produces for the same selection, plus this
//! project's one deliberate addition (protected paths inside writable directories, write-denied).
//!
//! The expected rule lists below were produced by running Safehouse's generator (0.11.1, on
//! Linux) on this fixture tree with the same selection and the same machine facts (`HOME`
//! `/home/u`, `/bin` → `/usr/bin`, `~/.fixture-tools` → `/opt/fixture-tools`, `/srv/notes.txt` a
//! file), then keeping only the rules (comments and blank lines dropped).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agent_sandbox::profile::host::{FixedHost, GitWorktrees};
use agent_sandbox::profile::sbpl::PROTECTED;
use agent_sandbox::profile::selection::{ProfilePlan, Reason, Selection, Workdir};
use agent_sandbox::profile::{ProfileError, ProfileTree, sbpl};

fn fixture() -> ProfileTree {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/safehouse-tree");
    ProfileTree::load(&root).unwrap()
}

fn host() -> FixedHost {
    FixedHost {
        home: PathBuf::from("/home/u"),
        cwd: PathBuf::from("/home/u/work/app"),
        links: BTreeMap::from([
            (PathBuf::from("/bin"), PathBuf::from("/usr/bin")),
            (
                PathBuf::from("/home/u/.fixture-tools"),
                PathBuf::from("/opt/fixture-tools"),
            ),
            (
                PathBuf::from("/var/select/developer_dir"),
                PathBuf::from("/Applications/Xcode.app/Contents/Developer"),
            ),
        ]),
        existing: vec![
            PathBuf::from("/usr"),
            PathBuf::from("/bin"),
            PathBuf::from("/home/u/.fixture-tools"),
            PathBuf::from("/var/select/developer_dir"),
        ],
        files: vec![PathBuf::from("/srv/notes.txt")],
        ..FixedHost::default()
    }
}

fn plan(selection: &Selection, host: &FixedHost) -> Result<ProfilePlan, ProfileError> {
    ProfilePlan::resolve(&fixture(), selection, host)
}

/// The rules of a policy: comment lines, trailing comments and blank lines dropped.
fn rules(policy: &str) -> Vec<String> {
    policy
        .lines()
        .filter(|l| !l.trim_start().starts_with(';'))
        .map(|l| match l.find(';') {
            Some(i) if !l[..i].contains('"') => l[..i].trim_end().to_owned(),
            _ => l.to_owned(),
        })
        .filter(|l| !l.trim().is_empty())
        .collect()
}

fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_owned).collect()
}

fn ancestors_block(path: &str) -> String {
    let mut out = String::from("(allow file-read*\n    (literal \"/\")");
    let mut current = String::new();
    for part in path.trim_start_matches('/').split('/') {
        current.push('/');
        current.push_str(part);
        out.push_str(&format!("\n    (literal \"{current}\")"));
    }
    out.push_str("\n)");
    out
}

/// Safehouse's rules for `--workdir=/home/u/work/app --enable=docker
/// --add-dirs-ro=/srv/data:/srv/notes.txt --add-dirs=/srv/cache --append-profile=/srv/extra.sb
/// -- claude`, before its dynamic grants.
const SAFEHOUSE_PROFILES: &str = r#"(version 1)
(define HOME_DIR "/home/u")
(define (home-subpath rel) (subpath (string-append HOME_DIR rel)))
(define (home-literal rel) (literal (string-append HOME_DIR rel)))
(define WORK_DIR "/home/u/work/app")
(deny default)
(allow file-read*
    (subpath "/usr")
    (subpath "/bin")
    (literal "/var/select/developer_dir")
)
(allow file-read*
    (home-subpath "/.fixture-tools")
)
(allow process-exec)
(allow file-read*
    (literal "/")
    (literal "/usr")
    (literal "/usr/bin")
)
(allow file-read* (subpath "/usr/bin"))
(allow file-read*
    (literal "/")
    (literal "/opt")
    (literal "/opt/fixture-tools")
)
(allow file-read* (subpath "/opt/fixture-tools"))
(allow file-read-metadata
    (literal "/")
    (literal "/home")
    (literal "/home/u")
)
(allow network-outbound (remote unix-socket))
(allow file-read* (home-subpath "/.cargo"))
(allow file-read* (literal "/etc/fixture.conf"))
(allow file-read* (home-literal "/.gitconfig"))
(allow file-read* file-write* (home-subpath "/.docker"))
(allow file-read* (home-subpath "/.electron"))
(allow mach-lookup (global-name "com.apple.SecurityServer"))
(allow mach-lookup (global-name "com.apple.windowserver.active"))
(allow device-microphone)
(allow file-read* file-write* (home-subpath "/.claude"))"#;

fn full_selection(extra: &Path) -> Selection {
    Selection {
        workdir: Workdir::Path(PathBuf::from("/home/u/work/app")),
        add_dirs_ro: vec![PathBuf::from("/srv/data"), PathBuf::from("/srv/notes.txt")],
        add_dirs: vec![PathBuf::from("/srv/cache")],
        enable: vec!["docker".into()],
        append_profiles: vec![extra.to_path_buf()],
        command: Some("claude".into()),
        workdir_read_only: false,
    }
}

#[test]
fn a_safehouse_tree_assembles_to_safehouses_rules_in_safehouses_order() {
    let dir = tempfile::tempdir().unwrap();
    let extra = dir.path().join("extra.sb");
    std::fs::write(
        &extra,
        "(deny file-read* (subpath \"/home/u/work/app/secret\"))\n",
    )
    .unwrap();
    let policy = sbpl::render(&plan(&full_selection(&extra), &host()).unwrap());

    let mut want = lines(SAFEHOUSE_PROFILES);
    // Dynamic grants: add-dirs-ro (a directory as a subpath, a file as a literal), add-dirs,
    // the workdir, each after its ancestor literals.
    for (path, ops, matcher) in [
        ("/srv/data", "file-read*", "subpath"),
        ("/srv/notes.txt", "file-read*", "literal"),
        ("/srv/cache", "file-read* file-write*", "subpath"),
        ("/home/u/work/app", "file-read* file-write*", "subpath"),
    ] {
        want.extend(lines(&ancestors_block(path)));
        want.push(format!("(allow {ops} ({matcher} \"{path}\"))"));
    }
    // This project's deliberate addition (not in Safehouse's output).
    want.push("(deny file-write*".into());
    for dir in ["/srv/cache", "/home/u/work/app"] {
        for rel in PROTECTED {
            want.push(format!("    (subpath \"{dir}/{rel}\")"));
        }
    }
    let last = want.pop().unwrap();
    want.push(format!("{last})"));
    // The appended profile, then the write-denies of the policy's own files, last.
    want.push("(deny file-read* (subpath \"/home/u/work/app/secret\"))".into());
    want.push(format!(
        "(deny file-write* (literal \"{}\"))",
        extra.display()
    ));
    want.push("(deny file-write* (literal \"/home/u/work/app/.safehouse\"))".into());

    assert_eq!(rules(&policy), want);
    assert!(
        !policy.contains("__SAFEHOUSE_"),
        "a placeholder was left raw"
    );
}

#[test]
fn several_requirements_in_one_token_are_split_trimmed_and_lowercased() {
    let p = plan(
        &Selection {
            command: Some("claude".into()),
            ..Selection::default()
        },
        &host(),
    )
    .unwrap();
    let reason = |rel: &str| {
        p.parts
            .iter()
            .find(|part| part.profile.rel == rel)
            .map(|part| part.reason.clone())
    };
    let by_agent = Some(Reason::RequiredBy("60-agents/claude-code.sb".into()));
    assert_eq!(reason("55-integrations-optional/keychain.sb"), by_agent);
    assert_eq!(reason("55-integrations-optional/electron.sb"), by_agent);
    assert_eq!(reason("55-integrations-optional/microphone.sb"), by_agent);
    // Transitively: electron requires the GUI integration.
    assert_eq!(
        reason("55-integrations-optional/macos-gui.sb"),
        Some(Reason::RequiredBy(
            "55-integrations-optional/electron.sb".into()
        ))
    );
    assert_eq!(reason("55-integrations-optional/docker.sb"), None);
}

#[test]
fn a_missing_entry_in_a_requirement_list_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/safehouse-tree");
    for entry in walk(&root) {
        let rel = entry.strip_prefix(&root).unwrap();
        let to = dir.path().join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &to).unwrap();
    }
    std::fs::write(
        dir.path().join("60-agents/aider.sb"),
        ";; $$require=55-integrations-optional/docker.sb,55-integrations-optional/gone.sb$$\n",
    )
    .unwrap();
    let tree = ProfileTree::load(dir.path()).unwrap();
    let err = ProfilePlan::resolve(
        &tree,
        &Selection {
            command: Some("aider".into()),
            ..Selection::default()
        },
        &host(),
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("60-agents/aider.sb requires 55-integrations-optional/gone.sb,"),
        "{msg}"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn work_dir_is_defined_or_false_and_no_placeholder_stays_raw() {
    let with = sbpl::render(&plan(&Selection::default(), &host()).unwrap());
    assert!(with.contains("\n(define WORK_DIR \"/home/u/work/app\")\n"));
    let without = sbpl::render(
        &plan(
            &Selection {
                workdir: Workdir::Disabled,
                ..Selection::default()
            },
            &host(),
        )
        .unwrap(),
    );
    assert!(without.contains("\n(define WORK_DIR #f)\n"));
    for policy in [&with, &without] {
        assert!(!policy.contains("__SAFEHOUSE_"), "{policy}");
        assert!(policy.contains("(define HOME_DIR \"/home/u\")"));
    }
    // No workdir: no workdir grant and no `.safehouse` deny.
    assert!(!without.contains(".safehouse"));
    assert!(without.contains(";;   shared git common dir: (none)"));
}

#[test]
fn command_aliases_select_agent_and_app_profiles() {
    let selected = |command: &str| -> Vec<String> {
        plan(
            &Selection {
                command: Some(command.into()),
                ..Selection::default()
            },
            &host(),
        )
        .unwrap()
        .parts
        .iter()
        .filter(|p| matches!(p.reason, Reason::Command(_)))
        .map(|p| p.profile.rel.clone())
        .collect()
    };
    let claude = vec!["60-agents/claude-code.sb".to_owned()];
    assert_eq!(selected("claude"), claude);
    assert_eq!(selected("/usr/local/bin/Claude-Code"), claude);
    assert_eq!(selected("claude-code"), claude);
    // No alias declared: the file stem.
    assert_eq!(selected("aider"), ["60-agents/aider.sb"]);
    assert_eq!(selected("editor"), ["65-apps/editor-app.sb"]);
    // An alias list replaces the stem.
    assert!(selected("editor-app").is_empty());
    assert!(selected("code").is_empty());
}

#[test]
fn linked_worktrees_get_their_shared_git_directory_and_read_only_siblings() {
    let h = FixedHost {
        worktrees: GitWorktrees {
            common_dir: Some(PathBuf::from("/home/u/src/repo/.git")),
            linked: vec![PathBuf::from("/home/u/src/repo")],
        },
        ..host()
    };
    let policy = sbpl::render(&plan(&Selection::default(), &h).unwrap());
    assert!(policy.contains(";;   shared git common dir: /home/u/src/repo/.git\n"));
    assert!(policy.contains(";;   linked worktree read paths: /home/u/src/repo\n"));
    let r = rules(&policy).join("\n");
    assert!(r.contains(&format!(
        "{}\n(allow file-read* file-write* (subpath \"/home/u/src/repo/.git\"))",
        ancestors_block("/home/u/src/repo/.git")
    )));
    assert!(r.contains(&format!(
        "{}\n(allow file-read* (subpath \"/home/u/src/repo\"))",
        ancestors_block("/home/u/src/repo")
    )));
}

#[test]
fn git_worktree_layout_is_read_from_the_files_git_writes() {
    let git = |dir: &Path, args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
    };
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let main = base.join("main");
    std::fs::create_dir(&main).unwrap();
    if git(&main, &["init", "-q"]).is_err() {
        eprintln!("git is not installed; the worktree discovery test is skipped");
        return;
    }
    let commit = git(
        &main,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
    )
    .unwrap();
    assert!(commit.status.success(), "{commit:?}");
    let add = git(&main, &["worktree", "add", "-q", "../linked"]).unwrap();
    assert!(add.status.success(), "{add:?}");
    let linked = base.join("linked");

    let from_linked = GitWorktrees::discover(&linked);
    assert_eq!(from_linked.common_dir, Some(main.join(".git")));
    assert_eq!(from_linked.linked, std::slice::from_ref(&main));
    let from_main = GitWorktrees::discover(&main);
    assert_eq!(from_main.common_dir, None);
    assert_eq!(from_main.linked, [linked]);
    // Not the root of a checkout: nothing.
    std::fs::create_dir(main.join("sub")).unwrap();
    assert_eq!(
        GitWorktrees::discover(&main.join("sub")),
        GitWorktrees::default()
    );
}

#[test]
fn wide_read_is_refused_because_the_root_is_never_granted() {
    let err = plan(
        &Selection {
            enable: vec!["wide-read".into()],
            ..Selection::default()
        },
        &host(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("`wide-read`"), "{err}");
    assert!(err.to_string().contains("--add-dirs-ro"), "{err}");
}
