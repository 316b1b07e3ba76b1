//! Policy assembly (issue 5): stage and byte order, `$$require=`, agent selection, ancestor
//! literals, workdir forms, append-profile, errors, HOME_DIR, determinism, and snapshots of
//! full policies from this project's own `profiles/` tree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agent_sandbox::profile::env::EnvPlan;
use agent_sandbox::profile::explain::explain;
use agent_sandbox::profile::host::FixedHost;
use agent_sandbox::profile::selection::{ProfilePlan, Reason, Selection, Workdir};
use agent_sandbox::profile::{ProfileError, ProfileTree, bwrap, sbpl};

fn host() -> FixedHost {
    FixedHost {
        home: PathBuf::from("/home/u"),
        cwd: PathBuf::from("/home/u/work/app"),
        ..FixedHost::default()
    }
}

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

const BASE: (&str, &str) = (
    "00-base.sb",
    "(version 1)\n(define HOME_DIR \"__AGENT_HOME_DIR__\")\n(deny default)\n",
);

fn plan(dir: &Path, selection: &Selection) -> Result<ProfilePlan, ProfileError> {
    ProfilePlan::resolve(&ProfileTree::load(dir)?, selection, &host())
}

fn order(policy: &str) -> Vec<String> {
    policy
        .lines()
        .filter_map(|l| l.strip_prefix(";; ---- "))
        .map(|l| l.trim_end_matches(" ----").to_owned())
        .collect()
}

fn ours() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles")
}

#[test]
fn stages_in_order_and_files_in_byte_order() {
    let dir = tree(&[
        ("65-apps/app.sb", ""),
        ("30-toolchains/b.sb", ""),
        ("30-toolchains/B.sb", ""),
        ("30-toolchains/_x.sb", ""),
        ("30-toolchains/a.sb", ""),
        ("20-network.sb", ""),
        ("50-integrations-core/git.sb", ""),
        ("40-shared/common.sb", ""),
        ("10-system-runtime.sb", ""),
        ("55-integrations-optional/docker.sb", ""),
        BASE,
        ("notes.txt", "not a profile"),
        ("99-unknown/x.sb", ""),
    ]);
    let p = plan(
        dir.path(),
        &Selection {
            enable: vec!["docker".into(), "all-apps".into()],
            workdir: Workdir::Disabled,
            ..Selection::default()
        },
    )
    .unwrap();
    assert_eq!(
        order(&sbpl::render(&p)),
        [
            "00-base.sb",
            "10-system-runtime.sb",
            "20-network.sb",
            "30-toolchains/B.sb",
            "30-toolchains/_x.sb",
            "30-toolchains/a.sb",
            "30-toolchains/b.sb",
            "40-shared/common.sb",
            "50-integrations-core/git.sb",
            "55-integrations-optional/docker.sb",
            "65-apps/app.sb",
        ]
    );
    assert_eq!(p.ignored, ["99-unknown/", "notes.txt"]);
}

#[test]
fn requirements_direct_transitive_and_from_agents() {
    let dir = tree(&[
        BASE,
        (
            "55-integrations-optional/a.sb",
            ";; $$require=55-integrations-optional/b.sb$$\n",
        ),
        (
            "55-integrations-optional/b.sb",
            ";; $$require=55-integrations-optional/c.sb$$\n",
        ),
        ("55-integrations-optional/c.sb", ""),
        ("55-integrations-optional/unused.sb", ""),
        ("55-integrations-optional/keychain.sb", ""),
        (
            "60-agents/claude-code.sb",
            ";; $$command=claude$$\n;; $$require=55-integrations-optional/keychain.sb$$\n",
        ),
        ("60-agents/aider.sb", ""),
    ]);
    let p = plan(
        dir.path(),
        &Selection {
            enable: vec!["a".into()],
            command: Some("/usr/local/bin/claude".into()),
            ..Selection::default()
        },
    )
    .unwrap();
    let reasons: BTreeMap<String, Reason> = p
        .parts
        .iter()
        .map(|part| (part.profile.rel.clone(), part.reason.clone()))
        .collect();
    assert_eq!(reasons["55-integrations-optional/a.sb"], Reason::Enabled);
    assert_eq!(
        reasons["55-integrations-optional/b.sb"],
        Reason::RequiredBy("55-integrations-optional/a.sb".into())
    );
    assert_eq!(
        reasons["55-integrations-optional/c.sb"],
        Reason::RequiredBy("55-integrations-optional/b.sb".into())
    );
    // Keychain-style auto-injection by an agent profile chosen by the command's basename.
    assert_eq!(
        reasons["60-agents/claude-code.sb"],
        Reason::Command("claude".into())
    );
    assert_eq!(
        reasons["55-integrations-optional/keychain.sb"],
        Reason::RequiredBy("60-agents/claude-code.sb".into())
    );
    assert!(!reasons.contains_key("60-agents/aider.sb"));
    assert_eq!(p.excluded, ["unused"]);
    let text = explain(&p, "stdout");
    assert!(
        text.contains("optional integrations explicitly enabled: a\n"),
        "{text}"
    );
    assert!(
        text.contains("b (required by 55-integrations-optional/a.sb)"),
        "{text}"
    );
    assert!(text.contains("selected agent profiles: 60-agents/claude-code.sb (command `claude`)"));

    // Without the command, nothing injects keychain, and it cannot be enabled by name.
    let p = plan(dir.path(), &Selection::default()).unwrap();
    assert!(p.parts.iter().all(|x| x.profile.name != "keychain"));
    let e = plan(
        dir.path(),
        &Selection {
            enable: vec!["keychain".into()],
            ..Selection::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("injected only"), "{e}");
    // all-agents selects every agent profile.
    let p = plan(
        dir.path(),
        &Selection {
            enable: vec!["all-agents".into()],
            ..Selection::default()
        },
    )
    .unwrap();
    assert_eq!(
        p.parts
            .iter()
            .filter(|x| x.profile.rel.starts_with("60-agents/"))
            .count(),
        2
    );
}

#[test]
fn cycles_unknown_features_and_missing_files_are_errors() {
    let dir = tree(&[
        BASE,
        (
            "55-integrations-optional/a.sb",
            ";; $$require=55-integrations-optional/b.sb$$\n",
        ),
        (
            "55-integrations-optional/b.sb",
            ";; $$require=55-integrations-optional/a.sb$$\n",
        ),
        (
            "55-integrations-optional/lost.sb",
            ";; $$require=55-integrations-optional/missing.sb$$\n",
        ),
    ]);
    let e = |enable: &str| {
        plan(
            dir.path(),
            &Selection {
                enable: vec![enable.into()],
                ..Selection::default()
            },
        )
        .unwrap_err()
        .to_string()
    };
    let cycle = e("a");
    assert!(cycle.contains("cycle"), "{cycle}");
    assert!(
        cycle.contains("55-integrations-optional/a.sb → 55-integrations-optional/b.sb → 55-integrations-optional/a.sb"),
        "{cycle}"
    );
    let unknown = e("dockr");
    assert!(unknown.contains("unknown feature `dockr`"), "{unknown}");
    assert!(
        unknown.contains("valid features: a, all-agents, all-apps, b, lost"),
        "{unknown}"
    );
    let missing = e("lost");
    assert!(
        missing.contains(
            "requires 55-integrations-optional/missing.sb, which is not in the profile tree"
        ),
        "{missing}"
    );
    let no_append = plan(
        dir.path(),
        &Selection {
            append_profiles: vec![PathBuf::from("/nonexistent/extra.sb")],
            ..Selection::default()
        },
    )
    .unwrap_err();
    assert!(
        no_append
            .to_string()
            .contains("cannot read the appended profile /nonexistent/extra.sb"),
        "{no_append}"
    );
    let no_tree = ProfileTree::load(Path::new("/nonexistent/profiles")).unwrap_err();
    assert!(
        no_tree
            .to_string()
            .contains("cannot read the profile directory")
    );
    let empty = tempfile::tempdir().unwrap();
    let not_tree = ProfileTree::load(empty.path()).unwrap_err();
    assert!(not_tree.to_string().contains("is it a profile tree?"));
}

#[test]
fn directory_grants_ancestors_workdir_and_append() {
    let dir = tree(&[BASE]);
    let outside = tempfile::tempdir().unwrap();
    let extra = outside.path().join("extra.sb");
    std::fs::write(
        &extra,
        "(deny file-read* (subpath \"/home/u/work/app/secret\"))\n",
    )
    .unwrap();
    let p = plan(
        dir.path(),
        &Selection {
            add_dirs_ro: vec![PathBuf::from("/data/sets/a")],
            add_dirs: vec![PathBuf::from("/data/sets/a/b"), PathBuf::from("cache")],
            append_profiles: vec![extra.clone()],
            ..Selection::default()
        },
    )
    .unwrap();
    let policy = sbpl::render(&p);
    let sections = order(&policy);
    assert_eq!(
        &sections[1..],
        [
            "add-dirs-ro: /data/sets/a".to_owned(),
            "add-dirs: /data/sets/a/b".to_owned(),
            "add-dirs: /home/u/work/app/cache".to_owned(),
            "workdir (source: current directory): /home/u/work/app".to_owned(),
            "protected paths inside writable directories: read-only".to_owned(),
            format!("appended: {}", extra.display()),
            "the appended profiles' own files: not writable".to_owned(),
            "the workdir's .safehouse configuration: not writable (last)".to_owned(),
        ]
    );
    assert!(policy.contains(
        "(allow file-read*\n    (literal \"/\")\n    (literal \"/data\")\n    (literal \"/data/sets\")\n    (literal \"/data/sets/a\")\n)\n(allow file-read* (subpath \"/data/sets/a\"))"
    ));
    assert!(policy.contains(
        "    (literal \"/data/sets/a\")\n    (literal \"/data/sets/a/b\")\n)\n(allow file-read* file-write* (subpath \"/data/sets/a/b\"))"
    ));
    assert!(policy.contains("(subpath \"/home/u/work/app/.git/hooks\")"));
    // The appended deny comes after the workdir grant, so it wins (last rule wins).
    let grant = policy
        .find("(allow file-read* file-write* (subpath \"/home/u/work/app\"))")
        .unwrap();
    let deny = policy
        .find("(deny file-read* (subpath \"/home/u/work/app/secret\"))")
        .unwrap();
    assert!(deny > grant);
    assert!(policy.ends_with(&format!(
        "(deny file-read* (subpath \"/home/u/work/app/secret\"))\n\n\
         ;; ---- the appended profiles' own files: not writable ----\n\
         (deny file-write* (literal \"{}\"))\n\n\
         ;; ---- the workdir's .safehouse configuration: not writable (last) ----\n\
         (deny file-write* (literal \"/home/u/work/app/.safehouse\"))\n",
        extra.display()
    )));

    // Explicit (relative to the current directory) and disabled workdirs.
    let explicit = plan(
        dir.path(),
        &Selection {
            workdir: Workdir::Path(PathBuf::from("../other")),
            ..Selection::default()
        },
    )
    .unwrap();
    let (g, source) = explicit.workdir.clone().unwrap();
    assert_eq!(
        (g.path.as_path(), source),
        (Path::new("/home/u/work/other"), "--workdir")
    );
    let disabled = plan(
        dir.path(),
        &Selection {
            workdir: Workdir::Disabled,
            ..Selection::default()
        },
    )
    .unwrap();
    let policy = sbpl::render(&disabled);
    assert!(!policy.contains("workdir"));
    assert!(!policy.contains("protected paths"));
    assert!(explain(&disabled, "stdout").contains("effective workdir: none"));
}

#[test]
fn home_dir_symlinks_and_the_root() {
    let dir = tree(&[
        BASE,
        (
            "30-toolchains/old.sb",
            "(define HOME \"__SAFEHOUSE_REPLACE_ME_WITH_ABSOLUTE_HOME_DIR__\")\n",
        ),
    ]);
    let mut h = host();
    h.home = PathBuf::from("/Users/a \"quoted\" name");
    h.links.insert(
        PathBuf::from("/home/u/work"),
        PathBuf::from("/private/work"),
    );
    let p = ProfilePlan::resolve(
        &ProfileTree::load(dir.path()).unwrap(),
        &Selection::default(),
        &h,
    )
    .unwrap();
    let policy = sbpl::render(&p);
    assert!(
        policy.contains("(define HOME_DIR \"/Users/a \\\"quoted\\\" name\")"),
        "{policy}"
    );
    assert!(policy.contains("(define HOME \"/Users/a \\\"quoted\\\" name\")"));
    assert!(!policy.contains("__AGENT_HOME_DIR__"));
    assert!(
        policy.contains("(subpath \"/private/work/app\")"),
        "symlink resolved"
    );
    for root in ["/", "/tmp/.."] {
        let e = plan(
            dir.path(),
            &Selection {
                add_dirs: vec![PathBuf::from(root)],
                ..Selection::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("never granted"), "{e}");
    }
    let e = plan(
        dir.path(),
        &Selection {
            add_dirs_ro: vec![PathBuf::from("/data/line\nbreak")],
            ..Selection::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("control characters"), "{e}");
}

/// Two machines (the tree at two different places, different real hosts) with the same
/// injected environment give the same bytes.
#[test]
fn assembly_is_deterministic() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    for dir in [a.path(), b.path()] {
        copy_tree(&ours(), dir);
    }
    let selection = Selection {
        enable: vec!["docker".into(), "ssh".into()],
        add_dirs: vec!["/srv/data".into()],
        command: Some("claude".into()),
        ..Selection::default()
    };
    let one =
        ProfilePlan::resolve(&ProfileTree::load(a.path()).unwrap(), &selection, &host()).unwrap();
    let two =
        ProfilePlan::resolve(&ProfileTree::load(b.path()).unwrap(), &selection, &host()).unwrap();
    assert_eq!(sbpl::render(&one), sbpl::render(&two));
    let env = EnvPlan::sanitize(&[("PATH".into(), "/usr/bin".into())], &[]);
    assert_eq!(bwrap::render(&one, &env), bwrap::render(&two, &env));
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// This project's tree: every feature can be enabled together and every requirement resolves.
#[test]
fn our_tree_loads_and_resolves_everything() {
    let t = ProfileTree::load(&ours()).unwrap();
    assert!(t.ignored().is_empty(), "{:?}", t.ignored());
    let features = [
        "all-agents",
        "all-apps",
        "clipboard",
        "docker",
        "kubectl",
        "network",
        "ssh",
    ];
    let p = ProfilePlan::resolve(
        &t,
        &Selection {
            enable: features.iter().map(|f| (*f).to_owned()).collect(),
            ..Selection::default()
        },
        &host(),
    )
    .unwrap();
    assert_eq!(p.parts.len(), t.profiles().len(), "every profile selected");
    for toolchain in ["go", "node", "python", "rust"] {
        assert!(t.get(&format!("30-toolchains/{toolchain}.sb")).is_some());
    }
    for profile in t.profiles() {
        let first = profile.text.lines().next().unwrap_or("");
        assert!(
            first.starts_with(&format!(";; {}.sb: ", profile.name)),
            "{} must open with a one-line purpose",
            profile.rel
        );
    }
}

fn snapshot_selection() -> Selection {
    Selection {
        add_dirs_ro: vec!["/srv/datasets".into()],
        add_dirs: vec!["/srv/cache/build".into()],
        enable: vec!["docker".into(), "ssh".into()],
        command: Some("claude".into()),
        ..Selection::default()
    }
}

#[test]
fn snapshot_default_policy() {
    let p = ProfilePlan::resolve(
        &ProfileTree::load(&ours()).unwrap(),
        &Selection::default(),
        &host(),
    )
    .unwrap();
    insta::assert_snapshot!("default_sb", sbpl::render(&p));
}

#[test]
fn snapshot_claude_with_docker_ssh_and_dirs() {
    let p = ProfilePlan::resolve(
        &ProfileTree::load(&ours()).unwrap(),
        &snapshot_selection(),
        &host(),
    )
    .unwrap();
    insta::assert_snapshot!("claude_docker_ssh_sb", sbpl::render(&p));
    let explained = explain(&p, "stdout").replace(&ours().display().to_string(), "[TREE]");
    insta::assert_snapshot!("claude_docker_ssh_explain", explained);
    let env = EnvPlan::sanitize(
        &[
            ("HOME".into(), "/home/u".into()),
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("GITHUB_TOKEN".into(), "hidden".into()),
        ],
        &[],
    );
    let rendered = bwrap::render(&p, &env);
    let mut lines = String::new();
    let mut args = rendered.args.iter().peekable();
    while let Some(a) = args.next() {
        lines.push_str(a);
        // One option per line, with its operands.
        while args.peek().is_some_and(|n| !n.starts_with("--")) {
            lines.push(' ');
            lines.push_str(args.next().unwrap());
        }
        lines.push('\n');
    }
    insta::assert_snapshot!("claude_docker_ssh_bwrap", lines);
}

#[test]
fn a_read_only_workdir_is_granted_for_reading_only() {
    let dir = tree(&[BASE]);
    let p = plan(
        dir.path(),
        &Selection {
            workdir_read_only: true,
            ..Selection::default()
        },
    )
    .unwrap();
    assert_eq!(p.writable().count(), 0);
    let policy = sbpl::render(&p);
    assert!(
        policy.contains("(allow file-read* (subpath \"/home/u/work/app\"))"),
        "{policy}"
    );
    assert!(
        !policy.contains("file-write* (subpath \"/home/u/work/app\")"),
        "{policy}"
    );
    assert!(
        order(&policy).contains(
            &"workdir (source: current directory), read-only: /home/u/work/app".to_owned()
        )
    );
    let args = bwrap::render(&p, &EnvPlan::default()).args.join(" ");
    assert!(
        args.contains("--ro-bind /home/u/work/app /home/u/work/app"),
        "{args}"
    );
    assert!(!args.contains("--bind /home/u/work/app "), "{args}");
}
