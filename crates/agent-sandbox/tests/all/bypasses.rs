//! Issue 13, classes 6 and 8: the command checker under `allowedCommands`, `allowedReadPaths`
//! and `deniedPaths`, against the bypasses adversarial testing found; and paths resolved in the
//! kernel's order (a symlink before a following `..`) from the session's cwd.
//!
//! Issue 24, the sandbox's side of classes 1, 5, 6, 7, 12 and 17: variables that change what
//! runs or is read, globs through symlinks and in parent components, tilde forms and `cd`,
//! recursive readers that follow links, and sed scripts.

use std::path::{Path, PathBuf};

use agent_sandbox::commands::{CommandChecker, which};
use agent_sandbox::paths::{Op, PathPolicy};
use agent_sandbox::settings::SandboxSettings;

struct Scratch {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

/// `root/work` (the workdir, writable), `root/work/secret` (denied), `root/outside/o.txt`,
/// `root/work/dir/link` → `root/outside/deeper`.
fn scratch() -> Scratch {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join("work/dir")).unwrap();
    std::fs::create_dir_all(root.join("work/sub")).unwrap();
    std::fs::create_dir_all(root.join("outside/deeper")).unwrap();
    std::fs::write(root.join("work/secret"), "k").unwrap();
    std::fs::write(root.join("work/sub/key"), "k").unwrap();
    std::fs::write(root.join("work/f.txt"), "x").unwrap();
    std::fs::write(root.join("outside/o.txt"), "x").unwrap();
    std::os::unix::fs::symlink(root.join("outside/deeper"), root.join("work/dir/link")).unwrap();
    Scratch { _dir: dir, root }
}

fn path_dirs() -> Vec<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap()).collect()
}

fn checker(s: &Scratch, f: impl FnOnce(&mut SandboxSettings)) -> CommandChecker {
    let work = s.root.join("work");
    let mut settings = SandboxSettings {
        allowed_commands: Some(
            ["git", "cat", "grep", "ls", "find", "echo", "sort", "head"]
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
        ),
        allowed_write_paths: Some(vec![work.clone()]),
        ..SandboxSettings::default()
    };
    f(&mut settings);
    CommandChecker::with_path(&settings, &path_dirs()).with_cwd(work)
}

fn assert_denied(c: &CommandChecker, cmds: &[String]) {
    for cmd in cmds {
        let v = c.check(cmd);
        assert!(!v.allowed, "{cmd:?} was allowed: {}", v.reason);
    }
}

fn assert_allowed(c: &CommandChecker, cmds: &[String]) {
    for cmd in cmds {
        let v = c.check(cmd);
        assert!(v.allowed, "{cmd:?} was denied: {}", v.reason);
    }
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn an_allowlisted_git_runs_no_other_program_and_writes_only_where_allowed() {
    let s = scratch();
    let c = checker(&s, |_| {});
    assert_denied(
        &c,
        &strs(&[
            "git -c alias.x='!id' x",
            "git -c core.fsmonitor=id status",
            "git -c core.pager=id log",
            "git -ccore.pager=id log",
            "git --config-env=core.pager=P log",
            "git grep --open=vim x",
            "git grep --open-files-in-pager=vim x",
            "git grep -Ovim x",
            "git diff --ext-diff",
            "git log --textconv",
            "git log --output=/etc/x",
            "git log --outp=/etc/x",
            "git log --output /etc/x",
            "git init /etc/x",
            "git clone https://example.com/r /etc/x",
            "git clone https://example.com/r",
            "git -C / status",
            "git --git-dir=/etc status",
            "git --work-tree=/ status",
            "GIT_PAGER=id git log",
            "PAGER=id git log",
            "LD_PRELOAD=/tmp/x.so ls",
            "GIT_SSH_COMMAND=id git fetch",
            "sort -o /etc/x f.txt",
            "sort --compress-program=id f.txt",
            "source ./x.sh",
            ". ./x.sh",
        ]),
    );
    let inside = s.root.join("work/out.txt");
    assert_allowed(
        &c,
        &[
            "git status".to_owned(),
            "git log --oneline -5".to_owned(),
            "git -c color.ui=never log".to_owned(),
            format!("git log --output={}", inside.display()),
            "git init sub/repo".to_owned(),
            "LANG=C ls".to_owned(),
        ],
    );
}

#[test]
fn allowed_read_paths_bound_every_path_a_command_reads() {
    let s = scratch();
    let work = s.root.join("work");
    let c = checker(&s, |st| st.allowed_read_paths = Some(vec![work.clone()]));
    let outside = s.root.join("outside/o.txt");
    assert_denied(
        &c,
        &[
            "cat /etc/shadow".to_owned(),
            "cat < /etc/shadow".to_owned(),
            "grep -r x /etc".to_owned(),
            format!("cat {}", outside.display()),
            "cat ../outside/o.txt".to_owned(),
            "head -n1 /etc/passwd".to_owned(),
            "grep -f/etc/passwd x".to_owned(),
            "grep --file=/etc/passwd x".to_owned(),
            "cat /etc/*".to_owned(),
        ],
    );
    assert_allowed(
        &c,
        &strs(&[
            "cat f.txt",
            "cat ./f.txt",
            "grep -r x .",
            "ls",
            "git status",
            "echo /etc/shadow",
        ]),
    );
}

#[test]
fn denied_paths_hold_through_globs_braces_attached_values_variables_and_recursion() {
    let s = scratch();
    let secret = s.root.join("work/secret");
    let key = s.root.join("work/sub/key");
    let c = checker(&s, |st| st.denied_paths = vec![secret.clone(), key.clone()]);
    let w = s.root.join("work");
    let w = w.display();
    assert_denied(
        &c,
        &[
            format!("cat {w}/secre?"),
            format!("cat {w}/secr*"),
            format!("cat {w}/[s]ecret"),
            "cat secre?".to_owned(),
            "cat ./s*".to_owned(),
            format!("cat {{{w}/secret,y}}"),
            "cat {secret,f.txt}".to_owned(),
            format!("grep -f{w}/secret k"),
            "grep -fsecret k".to_owned(),
            "grep -isecret k".to_owned(),
            "grep -fsub/key k".to_owned(),
            format!("grep --file={w}/secret k"),
            format!("p={w}/secret; cat $p"),
            "p=secret; cat \"$p\"".to_owned(),
            "cat $HOME_SECRET_PATH".to_owned(),
            format!("grep -r k {w}"),
            "grep -r k .".to_owned(),
            "grep -R k sub".to_owned(),
            "find . -name x".to_owned(),
            format!("find {w}"),
            "cat sub/*".to_owned(),
            "cat secret".to_owned(),
            "cat < secret".to_owned(),
            "cat dir/../secret".to_owned(),
        ],
    );
    assert_allowed(
        &c,
        &strs(&[
            "ls",
            "ls sub",
            "cat f.txt",
            "cat f*",
            "grep k f.txt",
            "echo $X",
        ]),
    );
}

#[test]
fn a_program_named_by_a_path_is_allowed_only_as_the_allowlisted_executable() {
    let s = scratch();
    let c = checker(&s, |_| {});
    let Some(git) = which("git", &path_dirs()) else {
        return; // git is not installed: nothing to compare with
    };
    std::fs::write(s.root.join("work/git"), "#!/bin/sh\nid\n").unwrap();
    assert_denied(
        &c,
        &strs(&[
            "./git status",
            "../work/git status",
            "/tmp/git status",
            "~/bin/git status",
            "sub/../git status",
        ]),
    );
    assert_allowed(&c, &[format!("{} status", git.display())]);
}

#[test]
fn runtime_evaluation_forms_are_refused() {
    let s = scratch();
    let c = checker(&s, |st| {
        st.allowed_commands = None;
        st.denied_commands = vec!["rm".into()];
    });
    let forms = include_str!("../../../agent-core/tests/data/runtime_eval_forms.txt");
    for form in forms
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let cmd = form.replace("CMD", "rm -rf x");
        let v = c.check(&cmd);
        assert!(!v.allowed, "{cmd:?} was allowed: {}", v.reason);
        let cmd = form.replace("CMD", "id");
        assert!(!c.check(&cmd).allowed, "{cmd:?} was allowed");
    }
}

#[test]
fn paths_resolve_symlinks_before_dot_dot_and_from_the_cwd() {
    let s = scratch();
    let work = s.root.join("work");
    let c = checker(&s, |st| {
        st.denied_paths = vec![s.root.join("outside/o.txt")]
    });
    // `dir/link/..` is `outside`, not `dir`: the write lands outside the writable workdir.
    assert_denied(
        &c,
        &strs(&["echo x > dir/link/../o.txt", "cat dir/link/../o.txt"]),
    );
    // Relative paths are the cwd's: writes inside the workdir are allowed.
    assert_allowed(&c, &strs(&["echo x > out.txt", "echo x > dir/new.txt"]));
    let settings = SandboxSettings {
        allowed_write_paths: Some(vec![work.clone()]),
        denied_paths: vec![s.root.join("outside/o.txt")],
        ..SandboxSettings::default()
    };
    let policy = PathPolicy::new(&settings, Some(&work));
    assert!(
        !policy
            .check(Path::new("dir/link/../o.txt"), Op::Read)
            .allowed
    );
    assert!(
        !policy
            .check(Path::new("dir/link/../x.txt"), Op::Write)
            .allowed
    );
    assert!(policy.check(Path::new("dir/x.txt"), Op::Write).allowed);
}

/// `scratch()` plus: `work/box/k` (a directory to deny), `work/l -> work/box`,
/// `work/out_link -> outside/o.txt`, `work/outdir -> outside`, `outside/deeper/k`.
fn linked() -> Scratch {
    let s = scratch();
    let (w, o) = (s.root.join("work"), s.root.join("outside"));
    std::fs::create_dir_all(w.join("box")).unwrap();
    std::fs::write(w.join("box/k"), "k").unwrap();
    std::fs::write(o.join("deeper/k"), "k").unwrap();
    std::os::unix::fs::symlink(w.join("box"), w.join("l")).unwrap();
    std::os::unix::fs::symlink(o.join("o.txt"), w.join("out_link")).unwrap();
    std::os::unix::fs::symlink(&o, w.join("outdir")).unwrap();
    s
}

/// A denylist checker (`rm` denied, any other program runs) writing only in `work`.
fn denylist(s: &Scratch, f: impl FnOnce(&mut SandboxSettings)) -> CommandChecker {
    checker(s, |st| {
        st.allowed_commands = None;
        st.denied_commands = vec!["rm".into()];
        f(st);
    })
}

#[test]
fn a_quoted_bracket_next_to_a_glob_matches_its_own_characters() {
    // `'[o]'*` is the text `[o]*` with a literal `[o]`: it names `[o]_link`, which bash
    // expands it to, although `[o]` unquoted is a bracket expression.
    let s = linked();
    std::os::unix::fs::symlink(s.root.join("outside/o.txt"), s.root.join("work/[o]_link")).unwrap();
    let denied = denylist(&s, |st| {
        st.denied_paths = vec![s.root.join("outside/o.txt")]
    });
    assert_denied(
        &denied,
        &strs(&["cat '[o]'*", "cat \\[o]*", "cat \"[o]\"_l?nk"]),
    );
    assert_allowed(&denied, &strs(&["cat '[f]'*", "cat [f].txt"]));
}

#[test]
fn a_glob_is_judged_by_what_each_match_resolves_to() {
    let s = linked();
    let denied = denylist(&s, |st| {
        st.denied_paths = vec![s.root.join("work/box"), s.root.join("outside/o.txt")]
    });
    let refused = strs(&[
        "cat out_l*",
        "grep x out_lin?",
        "cat < out_l*",
        "cat l*/k",
        "cat [l]/k",
        "head {l,x}/k",
        "cat < l*/k",
        "cat outd*/o.txt",
        "cat ./outd?r/*.txt",
        "echo x > out_l*",
        "echo x > l*/k",
        "shopt -s globstar; cat **/o.txt",
        "cat **/o.txt",
    ]);
    assert_denied(&denied, &refused);
    assert_allowed(
        &denied,
        &strs(&["cat f*", "cat d*/../f.txt", "ls outd*", "cat su*/key"]),
    );
    let work = s.root.join("work");
    let limited = denylist(&s, |st| st.allowed_read_paths = Some(vec![work.clone()]));
    assert_denied(
        &limited,
        &strs(&[
            "cat outd*",
            "cat outd*/o.txt",
            "cat out_l*",
            "cat < out_l*",
            "grep x o*",
            "cat ./*/deeper/k",
        ]),
    );
    assert_allowed(
        &limited,
        &strs(&["cat f*", "cat l*/k", "grep x s*/*", "cat di*/x"]),
    );
}

#[test]
fn a_pattern_in_a_parent_component_cannot_reach_below_a_denied_directory() {
    let s = linked();
    let w = s.root.join("work");
    let c = denylist(&s, |st| st.denied_paths = vec![w.join("box")]);
    let wd = w.display();
    assert_denied(
        &c,
        &[
            "cat b*/k".to_owned(),
            "cat */k".to_owned(),
            "cat ?ox/k".to_owned(),
            "cat [b]ox/k".to_owned(),
            "cat [!x]ox/k".to_owned(),
            "cat {b,x}ox/k".to_owned(),
            "cat B*/k".to_owned(),
            "cat b*/not-yet-there".to_owned(),
            "cat **/k".to_owned(),
            "cat ./b*/k".to_owned(),
            "cat .*/box/k".to_owned(),
            "cat sub/../b*/k".to_owned(),
            format!("cat {wd}/b*/k"),
            "grep -r x b*/".to_owned(),
            "cat < */k".to_owned(),
            // Bash lists the directory to expand the pattern, even for `echo`.
            "echo box/*".to_owned(),
            "echo l/.*".to_owned(),
            "printf '%s\n' */*".to_owned(),
            // A run-time value in a later component can climb out (`x=../box`).
            "x=../box; cat sub/$x/k".to_owned(),
            "cat sub/\"$x\"".to_owned(),
        ],
    );
    assert_allowed(
        &c,
        &strs(&["cat su*/key", "cat d*/x", "ls", "cat f.txt", "ls s*"]),
    );
}

#[test]
fn tilde_forms_and_cd_resolve_relative_paths_where_bash_does_or_are_refused() {
    let s = linked();
    let w = s.root.join("work");
    let c = denylist(&s, |st| st.denied_paths = vec![w.join("box")]);
    let root = s.root.display();
    assert_denied(
        &c,
        &[
            "cat ~+/box/k".to_owned(),
            "cat ~+/b*/k".to_owned(),
            "cat ~-/box/k".to_owned(),
            "cat ~-".to_owned(),
            "cat ~root/x".to_owned(),
            "cat ~+1/x".to_owned(),
            "dd if=~+/box/k".to_owned(),
            // `cd` moves the directory relative paths (and `~+`) start from.
            "cd sub && cat ../box/k".to_owned(),
            "cd sub; cat ~+/../box/k".to_owned(),
            format!("cd {root} && cat work/box/k"),
            "(cd sub && cat ../box/k)".to_owned(),
            "pushd sub && cat ../box/k".to_owned(),
            "env -C sub cat ../box/k".to_owned(),
            "cd \"$d\" && cat k".to_owned(),
            "cd - && cat k".to_owned(),
            "for i in 1 2; do cd ..; done; cat work/box/k".to_owned(),
        ],
    );
    assert_allowed(
        &c,
        &strs(&[
            "cat ~+/f.txt",
            "cat '~+'/box/k",
            "cd sub && cat key",
            "(cd sub && ls)",
            "cd .. && ls",
            "cd ~ && ls",
        ]),
    );
}

#[test]
fn assignments_that_change_what_runs_or_is_read_are_refused() {
    let s = scratch();
    let allow = checker(&s, |_| {});
    assert_denied(
        &allow,
        &strs(&[
            "PATH=.; git status",
            "PATH=.:$PATH; git status",
            "HOME=/tmp; cat ~/x",
            "GIT_DIR=/etc; git status",
            "CDPATH=/; ls",
            "IFS=/; ls",
            "LD_PRELOAD=./x.so; ls",
        ]),
    );
    let deny = denylist(&s, |st| st.denied_paths = vec![s.root.join("work/secret")]);
    assert_denied(
        &deny,
        &strs(&[
            "GIT_EXTERNAL_DIFF=rm git diff",
            "PAGER=rm git log",
            "export GIT_EXTERNAL_DIFF=rm; git diff",
            "declare -x PAGER=rm; git log",
            "read PATH <<< .; git status",
            "printf -v PATH %s .; git status",
            "mapfile -t HOME < f.txt",
            "unset HOME; cd",
            "env -u GIT_CONFIG_NOSYSTEM git status",
            "export dir=x",
            "bash -c 'path=.; ls'",
        ]),
    );
    assert_allowed(
        &deny,
        &strs(&[
            "LANG=C git status",
            "x=1; echo $x",
            "dir=sub; ls",
            "read -r line < f.txt",
            "while IFS= read -r line; do echo \"$line\"; done < f.txt",
            "local_var=1; git status",
        ]),
    );
}

#[test]
fn recursive_readers_that_follow_links_are_checked_through_them() {
    let s = linked();
    let deeper = s.root.join("outside/deeper/k");
    let refused = strs(&[
        "grep -R x dir",
        "grep -R x .",
        "grep -rR x dir",
        "grep --dereference-recursive x dir",
        "ls -RL dir",
        "du -L dir",
        "find -L dir",
        "find dir -follow",
        "tar -hcf a.tar dir",
        "tar chf a.tar dir",
        "tar --dereference -cf a.tar dir",
        "cp -rL dir copy",
        "cp -aL dir copy",
        "rsync -rL dir copy",
        "zip -r a.zip dir",
        "grep -R x d*",
    ]);
    let allowed = strs(&[
        "grep -r x dir",
        "find dir -name x",
        "du dir",
        "ls -R dir",
        "tar -cf a.tar dir",
        "cp -r dir copy",
        "ls -L dir",
    ]);
    let denied = denylist(&s, |st| st.denied_paths = vec![deeper.clone()]);
    assert_denied(&denied, &refused);
    assert_allowed(&denied, &allowed);
    let work = s.root.join("work");
    let limited = denylist(&s, |st| st.allowed_read_paths = Some(vec![work.clone()]));
    assert_denied(&limited, &refused);
    assert_allowed(&limited, &allowed);
}

#[test]
fn diff_of_a_directory_follows_its_links_unless_told_not_to() {
    // GNU diff compares the files inside two directories through their links unless
    // `--no-dereference`, as the permission engine's read-only set knows.
    let s = linked();
    let deeper = s.root.join("outside/deeper/k");
    let refused = strs(&["diff dir work2", "diff -r dir work2", "diff -q . dir"]);
    let allowed = strs(&[
        "diff --no-dereference dir work2",
        "diff -r --no-dereference dir work2",
        "diff f.txt g.txt",
    ]);
    let denied = denylist(&s, |st| st.denied_paths = vec![deeper.clone()]);
    assert_denied(&denied, &refused);
    assert_allowed(&denied, &allowed);
}

#[test]
fn sed_scripts_are_read_for_the_commands_they_run_and_the_files_they_write() {
    let s = scratch();
    std::fs::write(s.root.join("work/a.txt"), "a").unwrap();
    let c = denylist(&s, |st| st.denied_paths = vec![s.root.join("work/secret")]);
    assert_denied(
        &c,
        &strs(&[
            "sed 'e rm x' f.txt",
            "sed -n '1e rm x' f.txt",
            "sed 's/a/b/e' f.txt",
            "sed --expression='s/a/b/e' f.txt",
            "sed --expr '$e rm x' f.txt",
            "sed -ne p -e '/x/{e rm x\n}' f.txt",
            "sed -e p -e 'w /etc/x' f.txt",
            "sed 's/a/b/w /etc/x' f.txt",
            "sed -n 'W ../outside/x' f.txt",
            "sed 's/a/b/w secret' f.txt",
            "sed 'r secret' f.txt",
            "sed '1R secret' f.txt",
            "sed -i'/tmp/*' s/a/b/ f.txt",
            "sed --in-place=.bak s/a/b/ ../outside/o.txt",
            "sed -i s/a/b/ secret",
            "sed -i s/a/b/ ./s*",
            "sed -f script.sed f.txt",
            "sed --file=script.sed f.txt",
            "sed \"$s\" f.txt",
            "sed -n p \"$f\"",
            "sed -n p *.txt",
            "echo x | sed 's/x/y/e'",
        ]),
    );
    assert_allowed(
        &c,
        &strs(&[
            "sed -n 's/a/b/p' f.txt",
            "sed -i.bak s/a/b/ f.txt",
            "sed -i 's/a/b/' ./*.txt",
            "sed 's/a/b/w out.txt' f.txt",
            "sed -e 1d -e '$d' f.txt",
            "echo x | sed 's/x/y/'",
            "sed -n '/a/{p;q}' f.txt",
            "sed -n p -- ./f.txt",
        ]),
    );
}

#[test]
fn sed_with_help_or_version_still_has_its_script_checked() {
    let s = scratch();
    let c = denylist(&s, |st| st.denied_paths = vec![s.root.join("work/secret")]);
    assert_denied(
        &c,
        &strs(&[
            "sed --version 's/a/b/e' f.txt",
            "sed --help 'w secret' f.txt",
        ]),
    );
    assert_allowed(&c, &strs(&["sed --version", "sed --help"]));
}

#[test]
fn the_words_xargs_adds_from_its_input_are_paths_only_known_at_run_time() {
    let s = scratch();
    let c = denylist(&s, |st| st.denied_paths = vec![s.root.join("work/secret")]);
    assert_denied(
        &c,
        &strs(&[
            "echo secret | xargs cat",
            "ls | xargs grep x",
            "ls | xargs -0 head",
            "xargs -a list.txt cat",
            "git ls-files | xargs sed -i s/a/b/",
            "find . -name '*.txt' -print0 | xargs -0 sed -i.bak s/a/b/",
        ]),
    );
    assert_allowed(&c, &strs(&["ls | xargs echo", "ls | xargs -n1 echo"]));
    let open = denylist(&s, |_| {});
    assert_allowed(&open, &strs(&["ls | xargs cat", "ls | xargs grep x"]));
}
