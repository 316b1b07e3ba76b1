//! The interpreter against a fake stage runner: commands written in Rust, recorded as they run.

use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::*;

/// Fake commands: `yes`, `head [-n N|-N]`, `cat` (stdin only), `args` (prints `<arg>` per
/// line), `env` (prints `K=V` lines), `status N`, `err TEXT` (to stderr), `cwd`, `mount`.
#[derive(Default)]
struct Fake {
    ran: Mutex<Vec<Vec<String>>>,
}

impl Fake {
    fn ran(&self) -> Vec<Vec<String>> {
        self.ran.lock().unwrap().clone()
    }
}

impl StageRunner for Fake {
    fn has_command(&self, name: &str) -> bool {
        matches!(
            name,
            "yes" | "head" | "cat" | "args" | "env" | "status" | "err" | "cwd" | "mount"
        )
    }

    fn run_stage(&self, mut stage: Stage) -> i32 {
        self.ran.lock().unwrap().push(stage.argv.clone());
        let args: Vec<&str> = stage.argv.iter().skip(1).map(String::as_str).collect();
        match stage.argv[0].as_str() {
            "yes" => loop {
                if stage.stdout.write_all(b"y\n").is_err() {
                    return 141;
                }
            },
            "head" => {
                let n: usize = match args.as_slice() {
                    ["-n", n] => n.parse().unwrap(),
                    [n] => n.trim_start_matches('-').parse().unwrap(),
                    _ => 10,
                };
                let mut reader = BufReader::new(stage.stdin);
                for _ in 0..n {
                    let mut line = Vec::new();
                    if reader.read_until(b'\n', &mut line).unwrap() == 0 {
                        break;
                    }
                    if stage.stdout.write_all(&line).is_err() {
                        return 141;
                    }
                }
                0
            }
            "cat" => i32::from(std::io::copy(&mut stage.stdin, &mut stage.stdout).is_err()),
            "args" => {
                for a in args {
                    writeln!(stage.stdout, "<{a}>").unwrap();
                }
                0
            }
            "env" => {
                for (k, v) in &stage.env {
                    writeln!(stage.stdout, "{k}={v}").unwrap();
                }
                0
            }
            "status" => args[0].parse().unwrap(),
            "err" => {
                writeln!(stage.stderr, "{}", args.join(" ")).unwrap();
                0
            }
            "cwd" => {
                writeln!(stage.stdout, "{}", stage.cwd).unwrap();
                0
            }
            "mount" => {
                writeln!(stage.stdout, "{}", stage.mount).unwrap();
                0
            }
            other => panic!("unexpected command {other}"),
        }
    }
}

struct Ws {
    dir: tempfile::TempDir,
}

impl Ws {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
        std::fs::write(dir.path().join("b.txt"), "beta\n").unwrap();
        std::fs::write(dir.path().join(".hidden"), "h\n").unwrap();
        Self { dir }
    }

    /// The workspace at `/` (the tests of mounts elsewhere use [`Ws::mounted`]).
    fn ctx(&self) -> ShellContext {
        ShellContext::new(self.dir.path()).with_mount("/")
    }

    /// The default context: the workspace at its own real path.
    fn mounted(&self) -> ShellContext {
        ShellContext::new(self.dir.path())
    }

    /// The workspace's real path, where [`Ws::mounted`] shows it.
    fn real(&self) -> String {
        self.dir
            .path()
            .canonicalize()
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned()
    }

    fn read(&self, path: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(path)).unwrap()
    }

    fn exists(&self, path: &str) -> bool {
        self.dir.path().join(path).exists()
    }
}

fn run(ws: &Ws, script: &str) -> ShellOutput {
    run_script(script, &ws.ctx(), &Fake::default()).unwrap()
}

fn out(ws: &Ws, script: &str) -> (String, i32) {
    let o = run(ws, script);
    (String::from_utf8(o.stdout).unwrap(), o.exit_code)
}

#[test]
fn yes_head_ends() {
    let ws = Ws::new();
    let started = Instant::now();
    let o = run(&ws, "yes | head -1");
    assert_eq!(o.stdout, b"y\n");
    assert_eq!(o.exit_code, 0);
    assert!(started.elapsed() < Duration::from_secs(10));
    // A built-in on the right ends the pipeline the same way.
    assert_eq!(out(&ws, "yes | true; echo $?"), ("0\n".to_owned(), 0));
    // And a long pipeline.
    assert_eq!(
        out(&ws, "yes | cat | cat | head -n 3 | cat"),
        ("y\ny\ny\n".to_owned(), 0)
    );
}

#[test]
fn statuses_and_lists() {
    let ws = Ws::new();
    for (script, want) in [
        ("true && echo a || echo b", "a\n"),
        ("false && echo a || echo b", "b\n"),
        ("false; echo $?", "1\n"),
        ("status 3; echo $?", "3\n"),
        ("status 3 | true; echo $?", "0\n"),
        ("true | status 4; echo $?", "4\n"),
        ("! true; echo $?", "1\n"),
        ("! status 5; echo $?", "0\n"),
        ("false && echo no; echo $?", "1\n"),
        ("nope; echo $?", "127\n"),
        ("\"\"; echo $?", "127\n"),
        ("echo a; exit 3; echo b", "a\n"),
        ("exit 3 | cat; echo $?", "0\n"),
        ("echo $? ; false; echo $?; true; echo $?", "0\n1\n0\n"),
    ] {
        assert_eq!(out(&ws, script).0, want, "{script}");
    }
    assert_eq!(out(&ws, "exit 300").1, 44);
    assert_eq!(out(&ws, "exit -1").1, 255);
    assert_eq!(out(&ws, "exit x").1, 2);
    assert_eq!(out(&ws, "false; exit").1, 1);
    assert_eq!(out(&ws, "exit 1 2; echo $?"), (String::new(), 1));
    let o = run(&ws, "nope");
    assert_eq!(o.exit_code, 127);
    assert_eq!(o.stderr, b"bash: nope: command not found\n");
}

#[test]
fn variables_and_splitting() {
    let ws = Ws::new();
    for (script, want) in [
        ("A='x  y'; args $A \"$A\"", "<x>\n<y>\n<x  y>\n"),
        ("A=1; A+=2; echo ${A}3", "123\n"),
        ("args $UNSET \"$UNSET\"", "<>\n"),
        ("A=1 env", "A=1\nPWD=/\n"),
        ("A=1 true; echo \"[$A]\"", "[]\n"),
        ("B=2; A=1 B=$A env", "A=1\nB=1\nPWD=/\n"),
        ("export A=1; env", "A=1\nPWD=/\n"),
        ("X='a b'; export Y=$X; echo \"$Y\"", "a b\n"),
        ("X='a b'; export Y; Y=$X; env", "PWD=/\nY=a b\n"),
        ("export A=1; unset A; env", "PWD=/\n"),
        ("IFS=:; X=a:b; args $X", "<a>\n<b>\n"),
        ("echo '$A' \"\\$A\" \\$A", "$A $A $A\n"),
        ("echo $'a\\tb'", "a\tb\n"),
    ] {
        assert_eq!(out(&ws, script).0, want, "{script}");
    }
    let o = run(&ws, "export 1a=b; echo $?");
    assert_eq!(o.stdout, b"1\n");
    assert_eq!(o.stderr, b"bash: export: `1a=b': not a valid identifier\n");
}

#[test]
fn environment_and_final_state() {
    let ws = Ws::new();
    let ctx = ws.ctx().with_env([("HOME", "/sub"), ("K", "v")]);
    let o = run_script(
        "export E=1; cd; cwd; echo $PWD $OLDPWD",
        &ctx,
        &Fake::default(),
    )
    .unwrap();
    assert_eq!(o.stdout, b"/sub\n/sub /\n");
    assert_eq!(o.cwd, "/sub");
    let names: Vec<&str> = o.env.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["E", "HOME", "K", "OLDPWD", "PWD"]);
}

#[test]
fn cd_and_pwd() {
    let ws = Ws::new();
    for (script, want) in [
        ("cd sub; pwd; cwd", "/sub\n/sub\n"),
        ("cd sub; cd ..; pwd", "/\n"),
        ("cd sub | true; pwd", "/\n"),
        ("cd /sub; cd -; cd -", "/\n/sub\n"),
        ("cd nope; echo $?; pwd", "1\n/\n"),
        ("cd a.txt; echo $?", "1\n"),
        ("cd ..; echo $?; pwd", "1\n/\n"),
        ("cd; echo $?", "1\n"),
        ("cd sub sub; echo $?", "1\n"),
    ] {
        assert_eq!(out(&ws, script).0, want, "{script}");
    }
    assert_eq!(
        run(&ws, "cd ..").stderr,
        b"bash: cd: ..: Permission denied\n"
    );
    let in_sub = run_script(
        "pwd; cd ..; pwd",
        &ws.ctx().with_cwd("/sub"),
        &Fake::default(),
    );
    assert_eq!(in_sub.unwrap().stdout, b"/sub\n/\n");
}

/// Runs `script` with the workspace at its real path, every occurrence of `@` in the script
/// replaced by that path; stdout and stderr with the path put back as `@`.
fn at_real(ws: &Ws, script: &str) -> (String, String, i32) {
    let real = ws.real();
    let o = run_script(&script.replace('@', &real), &ws.mounted(), &Fake::default()).unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap().replace(&real, "@");
    (text(o.stdout), text(o.stderr), o.exit_code)
}

#[test]
fn by_default_the_workspace_is_at_its_real_path() {
    let ws = Ws::new();
    for (script, want) in [
        ("pwd; echo $PWD; cwd; mount", "@\n@\n@\n@\n"),
        (
            "cd sub; pwd; cwd; echo $PWD $OLDPWD",
            "@/sub\n@/sub\n@/sub @\n",
        ),
        ("cd @/sub && pwd; cd @ && pwd", "@/sub\n@\n"),
        ("cd sub; cd ..; pwd; cd -", "@\n@/sub\n"),
        ("args @/*.txt", "<@/a.txt>\n<@/b.txt>\n"),
        (
            "args @/s*/ @//./sub/../*.txt",
            "<@/sub/>\n<@//./sub/../a.txt>\n<@//./sub/../b.txt>\n",
        ),
        ("cd sub; args ../*.txt", "<../a.txt>\n<../b.txt>\n"),
        // Nothing above the mount is listed: the pattern stays as written.
        ("args /*", "</*>\n"),
        ("echo abs > @/sub/o.txt; cat < @/sub/o.txt", "abs\n"),
        (
            "[[ -f @/a.txt && -d @/sub && ! -e /etc/passwd && ! -d / ]] && echo yes",
            "yes\n",
        ),
        ("[[ -n $PWD ]] && echo \"[${PWD#@}]\"", "[]\n"),
        ("echo x > /dev/null; cat < /dev/null; echo $?", "0\n"),
    ] {
        let (stdout, stderr, _) = at_real(&ws, script);
        assert_eq!(stdout, want, "{script}: {stderr}");
    }
    assert_eq!(ws.read("sub/o.txt"), "abs\n");
    // HOME at the mount: `cd` alone goes there.
    let home = ws
        .mounted()
        .with_env([("HOME", ws.real())])
        .with_cwd(format!("{}/sub", ws.real()));
    let o = run_script("pwd; cd; pwd", &home, &Fake::default()).unwrap();
    assert_eq!(
        String::from_utf8(o.stdout)
            .unwrap()
            .replace(&ws.real(), "@"),
        "@/sub\n@\n"
    );
    assert_eq!(o.cwd, ws.real());
}

#[test]
fn paths_outside_the_mount_are_refused() {
    let ws = Ws::new();
    for (script, stderr) in [
        ("cd /", "bash: cd: /: outside the workspace\n"),
        ("cd /etc", "bash: cd: /etc: outside the workspace\n"),
        ("cd @/..", "bash: cd: @/..: outside the workspace\n"),
        ("cd ..", "bash: cd: ..: Permission denied\n"),
        (
            "cat < /etc/passwd",
            "bash: /etc/passwd: outside the workspace\n",
        ),
        ("echo x > /tmp/x", "bash: /tmp/x: outside the workspace\n"),
        ("echo x > ../x", "bash: ../x: Permission denied\n"),
        ("HOME=/ ; cd", "bash: cd: /: outside the workspace\n"),
        (
            "xargs -a /etc/passwd args",
            "xargs: Cannot open input file '/etc/passwd': outside the workspace\n",
        ),
    ] {
        let (stdout, got, status) = at_real(&ws, script);
        assert_eq!((got.as_str(), status), (stderr, 1), "{script}: {stdout}");
    }
    let (_, got, status) = at_real(&ws, "env -C / cwd");
    assert_eq!(
        (got.as_str(), status),
        (
            "env: cannot change directory to '/': outside the workspace\n",
            125
        )
    );
    assert!(!std::path::Path::new("/tmp/x").exists() || ws.real().starts_with("/tmp/x"));
    // A shell that failed to leave stays where it was.
    assert_eq!(at_real(&ws, "cd /; cd ..; pwd").0, "@\n");
    // `env -C` inside the mount works with absolute paths.
    assert_eq!(at_real(&ws, "env -C @/sub cwd").0, "@/sub\n");
}

#[test]
fn any_mount_can_be_chosen() {
    let ws = Ws::new();
    let ctx = ws
        .ctx()
        .with_mount("/work/proj/")
        .with_cwd("/work/proj/sub");
    let o = run_script(
        "pwd; mount; cd /work/proj; args /work/proj/*.txt; echo hi > /work/proj/sub/h; cd /work; echo $?",
        &ctx,
        &Fake::default(),
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "/work/proj/sub\n/work/proj\n</work/proj/a.txt>\n</work/proj/b.txt>\n1\n"
    );
    assert_eq!(o.stderr, b"bash: cd: /work: outside the workspace\n");
    assert_eq!(ws.read("sub/h"), "hi\n");
    assert_eq!(o.cwd, "/work/proj");
    assert_eq!(ctx.mount_path().unwrap(), "/work/proj");
    assert_eq!(ws.mounted().mount_path().unwrap(), ws.real());
}

#[test]
fn bad_mounts_are_errors() {
    let ws = Ws::new();
    let fake = Fake::default();
    for mount in ["rel/path", "", "/a/../b", "/a/./b"] {
        let e = run_script("true", &ws.ctx().with_mount(mount), &fake).unwrap_err();
        assert!(matches!(e, ShellError::Mount { .. }), "{mount}: {e}");
        assert!(e.to_string().contains("absolute path"), "{e}");
    }
    // The working directory must be under the mount: `/` is not when it is elsewhere.
    for cwd in ["/", "/sub", "/work", "/work/proj/nope", "/work/proj/../x"] {
        let e = run_script(
            "true",
            &ws.ctx().with_mount("/work/proj").with_cwd(cwd),
            &fake,
        )
        .unwrap_err();
        assert!(matches!(e, ShellError::Cwd { .. }), "{cwd}: {e}");
    }
    let e = run_script("true", &ws.mounted().with_cwd("/"), &fake).unwrap_err();
    assert!(e.to_string().contains("outside the workspace"), "{e}");
    assert!(fake.ran().is_empty());
}

#[test]
fn redirects() {
    let ws = Ws::new();
    assert_eq!(out(&ws, "echo hi > o; cat < o").0, "hi\n");
    assert_eq!(ws.read("o"), "hi\n");
    out(&ws, "echo 1 > p; echo 2 >> p; echo 3 >| q");
    assert_eq!(ws.read("p"), "1\n2\n");
    assert_eq!(ws.read("q"), "3\n");
    out(&ws, "err e1 2> e; err e2 2>> e");
    assert_eq!(ws.read("e"), "e1\ne2\n");
    // Order matters: `>f 2>&1` sends both to f; `2>&1 >g` sends stderr to the old stdout.
    let o = run(&ws, "err x >f 2>&1; err y 2>&1 >g");
    assert_eq!(ws.read("f"), "x\n");
    assert_eq!(ws.read("g"), "");
    assert_eq!(o.stdout, b"y\n");
    out(&ws, "echo out &> both; err more &>> both");
    assert_eq!(ws.read("both"), "out\nmore\n");
    let o = run(&ws, "echo to-err >&2; echo x 1>&2");
    assert_eq!((o.stdout, o.stderr), (vec![], b"to-err\nx\n".to_vec()));
    // Errors: the command does not run, status 1.
    let o = run(&ws, "cat < missing; echo $?");
    assert_eq!(o.stdout, b"1\n");
    assert_eq!(o.stderr, b"bash: missing: No such file or directory\n");
    let o = run(&ws, "echo x > ../out; echo $?");
    assert_eq!(o.stdout, b"1\n");
    assert_eq!(o.stderr, b"bash: ../out: Permission denied\n");
    let o = run(&ws, "echo x > sub; echo $?");
    assert_eq!(o.stderr, b"bash: sub: Is a directory\n");
    let o = run(&ws, "X='a b'; echo x > $X; echo $?");
    assert_eq!(o.stdout, b"1\n");
    assert_eq!(o.stderr, b"bash: $X: ambiguous redirect\n");
    // `/` is the workspace root.
    out(&ws, "cd sub; echo abs > /abs.txt; echo rel > ../rel.txt");
    assert_eq!(ws.read("abs.txt"), "abs\n");
    assert_eq!(ws.read("rel.txt"), "rel\n");
    // A redirect alone creates the file.
    assert_eq!(out(&ws, "> empty; echo $?").0, "0\n");
    assert_eq!(ws.read("empty"), "");
    // The shell's own devices.
    let o = run(
        &ws,
        "echo gone > /dev/null; err gone 2>/dev/null; cat < /dev/null; echo x > /dev/stderr",
    );
    assert_eq!((o.stdout, o.stderr), (vec![], b"x\n".to_vec()));
    assert!(!ws.exists("dev"));
    // Redirects on built-ins.
    out(&ws, "pwd > pw; cd sub > cdout");
    assert_eq!(ws.read("pw"), "/\n");
    assert!(ws.exists("cdout"));
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_workspace_are_refused() {
    let ws = Ws::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.dir.path().join("out")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), ws.dir.path().join("link")).unwrap();
    let o = run(&ws, "cat < link; echo x > out/new; cd out; args out/*");
    assert_eq!(o.stdout, b"<out/*>\n");
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        "bash: link: Permission denied\nbash: out/new: Permission denied\n\
         bash: cd: out: Permission denied\n"
    );
    assert!(!outside.path().join("new").exists());
}

#[test]
fn globs() {
    let ws = Ws::new();
    for (script, want) in [
        ("args *.txt", "<a.txt>\n<b.txt>\n"),
        (
            "args '*.txt' \"*\".txt \\*.txt",
            "<*.txt>\n<*.txt>\n<*.txt>\n",
        ),
        ("args *.none", "<*.none>\n"),
        ("args .h*", "<.hidden>\n"),
        ("args *", "<a.txt>\n<b.txt>\n<sub>\n"),
        (
            "args [ab].txt ?.txt",
            "<a.txt>\n<b.txt>\n<a.txt>\n<b.txt>\n",
        ),
        ("P='*.txt'; args $P \"$P\"", "<a.txt>\n<b.txt>\n<*.txt>\n"),
        ("cd sub; args ../*.txt", "<../a.txt>\n<../b.txt>\n"),
        ("args ../*", "<../*>\n"),
        ("A=*; args \"$A\"", "<*>\n"),
    ] {
        assert_eq!(out(&ws, script).0, want, "{script}");
    }
}

#[test]
fn stdin_is_shared_and_consumed() {
    let ws = Ws::new();
    let ctx = ws.ctx().with_stdin("one\ntwo\n");
    // Like a pipe on bash's stdin: the first reader takes what it reads.
    let o = run_script("cat; echo -; cat", &ctx, &Fake::default()).unwrap();
    assert_eq!(o.stdout, b"one\ntwo\n-\n");
    let o = run_script("cat | cat", &ctx, &Fake::default()).unwrap();
    assert_eq!(o.stdout, b"one\ntwo\n");
}

#[test]
fn output_is_capped() {
    let ws = Ws::new();
    let ctx = ws.ctx().with_output_limits(4, 3);
    let o = run_script("echo 123456; err abcdef", &ctx, &Fake::default()).unwrap();
    assert_eq!(o.stdout, b"1234");
    assert!(o.stdout_truncated);
    assert_eq!(o.stderr, b"abc");
    assert!(o.stderr_truncated);
    let o = run_script("echo 12", &ctx, &Fake::default()).unwrap();
    assert!(!o.stdout_truncated);
}

#[test]
fn cancellation_stops_between_commands() {
    let ws = Ws::new();
    let flag = Arc::new(AtomicBool::new(false));
    struct Cancels(Arc<AtomicBool>, Fake);
    impl StageRunner for Cancels {
        fn has_command(&self, name: &str) -> bool {
            self.1.has_command(name)
        }
        fn run_stage(&self, stage: Stage) -> i32 {
            self.0.store(true, Ordering::Relaxed);
            self.1.run_stage(stage)
        }
    }
    let runner = Cancels(Arc::clone(&flag), Fake::default());
    let ctx = ws.ctx().with_cancel(flag);
    let o = run_script("echo a; cat; echo b", &ctx, &runner).unwrap();
    assert!(o.cancelled);
    assert_eq!(o.exit_code, 130);
    assert_eq!(o.stdout, b"a\n");
}

#[test]
fn a_loop_of_builtins_stops_when_cancelled() {
    let ws = Ws::new();
    let flag = Arc::new(AtomicBool::new(false));
    let setter = {
        let flag = Arc::clone(&flag);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            flag.store(true, Ordering::Relaxed);
        })
    };
    let ctx = ws.ctx().with_cancel(flag);
    for script in [
        "while true; do :; done",
        "until false; do x=1; done",
        "while true; do for i in a b; do continue; done; done",
    ] {
        let o = run_script(script, &ctx, &Fake::default()).unwrap();
        assert!(o.cancelled, "{script}");
        assert_eq!(o.exit_code, 130, "{script}");
    }
    setter.join().unwrap();
}

#[test]
fn compound_commands_share_their_redirected_streams() {
    let ws = Ws::new();
    let fake = Fake::default();
    let o = run_script(
        "{ echo a; echo b >&2; } > out.txt 2>&1; cat < out.txt; for x in 1 2; do echo $x; done > loop.txt; cat < loop.txt",
        &ws.ctx(),
        &fake,
    )
    .unwrap();
    assert_eq!(o.stdout, b"a\nb\n1\n2\n");
    // Built-ins of a compound command change the shell; in a pipeline stage they do not.
    let o = run_script(
        "{ cd sub; }; pwd; for v in a; do w=$v; done; echo $v$w; for z in q; do :; done | cat; echo [$z]",
        &ws.ctx(),
        &fake,
    )
    .unwrap();
    assert_eq!(o.stdout, b"/sub\naa\n[]\n");
    assert_eq!(o.cwd, "/sub");
}

#[test]
fn nothing_runs_when_anything_is_refused() {
    let ws = Ws::new();
    let fake = Fake::default();
    for script in [
        "echo x > marker; args $(id)",
        "args a > marker\ncat <<EOF\nx\nEOF",
        "args a > marker; for x in a; do (args); done",
    ] {
        assert!(run_script(script, &ws.ctx(), &fake).is_err(), "{script}");
    }
    assert!(fake.ran().is_empty());
    assert!(!ws.exists("marker"));
}

#[test]
fn bad_contexts_are_errors() {
    let ws = Ws::new();
    let fake = Fake::default();
    for cwd in ["sub", "/nope", "/a.txt", "/.."] {
        let e = run_script("true", &ws.ctx().with_cwd(cwd), &fake).unwrap_err();
        assert!(matches!(e, ShellError::Cwd { .. }), "{cwd}: {e}");
    }
    let e = run_script("true", &ShellContext::new("/nonexistent/ws"), &fake).unwrap_err();
    assert!(matches!(e, ShellError::Workspace { .. }), "{e}");
    let huge = "x".repeat(vars::MAX_VARIABLE_BYTES + 1);
    let e = run_script("true", &ws.ctx().with_env([("H", huge)]), &fake).unwrap_err();
    assert!(matches!(e, ShellError::Environment { .. }), "{e}");
}

#[test]
fn echo_builtin() {
    let ws = Ws::new();
    for (script, want) in [
        ("echo a  b", "a b\n"),
        ("echo -n a; echo b", "ab\n"),
        ("echo -e 'a\\nb'", "a\nb\n"),
        ("echo -ne 'x\\ty'", "x\ty"),
        ("echo -x a", "-x a\n"),
        ("echo -- a", "-- a\n"),
        ("echo 'a\\nb'", "a\\nb\n"),
        ("echo", "\n"),
    ] {
        assert_eq!(out(&ws, script).0, want, "{script}");
    }
}

/// Random scripts over the characters the word compiler, the brace expander, the `${..}`
/// scanner and the arithmetic checker read (a fixed seed, so a failure reproduces): compiling
/// never panics or overflows the stack, and a compiled plan with only the built-ins it can
/// reach runs to an end.
#[test]
fn random_scripts_compile_without_panicking() {
    const PIECES: &[&str] = &[
        "${", "}", "{", ",", "..", "$((", "))", "((", "(", ")", "[[", "]]", "$", "x", "1", "0",
        ":-", "#", "%", "/", "//", "^", "?", "+", "=", "!", "*", "'", "\"", "\\", " ", ";", "|",
        "&&", "\n", "echo ", "read ", "set -e", "a", "-", "~", "[", "]", "i++", "<", ">",
    ];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let started = Instant::now();
    for _ in 0..30_000 {
        let len = 1 + (next() % 48) as usize;
        let script: String = (0..len)
            .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
            .collect();
        let _ = Plan::parse(&script);
    }
    // Generous: the point is that no input makes the compiler spin.
    assert!(started.elapsed() < Duration::from_secs(120));
}
