//! `find ... -exec CMD ARGS ;`, `-exec CMD ARGS {} +` and `-execdir`, run by the shell: a WASI
//! guest cannot start other commands, so the bundle's `find` refuses `-exec`. When the
//! `-exec` clause is the expression's last word and its only action, the shell runs the
//! bundle's `find` with the clause replaced by `-print0` (which selects exactly the same files:
//! it stands at the same place in the expression, binds the same way and, like `-exec`,
//! switches off the default `-print`), then runs the command for the files found, in the order
//! found, as GNU findutils 4.9 does:
//!
//! - `;`: once per file, every `{}` inside any argument replaced by the path; the command's
//!   status does not change find's;
//! - `{} +`: with as many paths as fit in 128 KiB of arguments at the end; find's status is 1
//!   when any invocation failed;
//! - `-execdir`: in the file's directory, the file named `./NAME`;
//! - a command nothing provides: `find: 'CMD': No such file or directory` once per invocation
//!   (a failure like any other: status 1 with `+` only); the commands share find's stdin.
//!
//! Anything else with `-exec` (another action such as `-print` or `-delete` beside it, words
//! after it, `-ok` / `-okdir`) is refused with status 1 and a message saying what to write
//! instead (`find ... -print0 | xargs -0 CMD`).

/// The total size of the paths one `{} +` invocation gets (GNU xargs' default buffer).
pub(crate) const BATCH_BYTES: usize = 128 * 1024;

/// Predicates that take one argument (GNU findutils), whose argument is never a predicate.
const ONE_ARGUMENT: &[&str] = &[
    "-amin",
    "-anewer",
    "-atime",
    "-cmin",
    "-cnewer",
    "-context",
    "-ctime",
    "-fls",
    "-fprint",
    "-fprint0",
    "-gid",
    "-group",
    "-ilname",
    "-iname",
    "-inum",
    "-ipath",
    "-iregex",
    "-iwholename",
    "-links",
    "-lname",
    "-maxdepth",
    "-mindepth",
    "-mmin",
    "-mtime",
    "-name",
    "-newer",
    "-path",
    "-perm",
    "-printf",
    "-regex",
    "-regextype",
    "-samefile",
    "-size",
    "-type",
    "-uid",
    "-used",
    "-user",
    "-wholename",
    "-xtype",
];

/// Actions: with `-exec`, the shell cannot keep their order relative to the command's output.
const ACTIONS: &[&str] = &[
    "-delete", "-fls", "-fprint", "-fprint0", "-fprintf", "-ls", "-print", "-print0", "-printf",
    "-quit",
];

/// What `find ARGS...` asks of the shell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FindCall {
    /// No `-exec`: the bundle's `find` runs as it is.
    Bundle,
    /// Run the bundle's `find`, then the command for each file found.
    Exec(FindExec),
    /// Refused before anything runs: the message (find exits 1).
    Fail(String),
}

/// A `find ... -exec` the shell runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FindExec {
    /// find's arguments with the `-exec` clause replaced by `-print0`.
    pub find_args: Vec<String>,
    /// The command and its arguments, `{}` where the path goes.
    pub command: Vec<String>,
    /// Where the command starts in find's arguments.
    pub command_at: usize,
    /// `{} +`: many paths per invocation.
    pub batch: bool,
    /// `-execdir`: run in the file's directory.
    pub in_dir: bool,
}

/// The advice every refusal ends with.
const INSTEAD: &str = "write `find ... -print0 | xargs -0 CMD` instead";

/// Parses `find`'s arguments (without `find` itself).
pub(crate) fn parse(args: &[String]) -> FindCall {
    // Starting points: the words before the first that starts with `-` or is `(` / `!`.
    let mut i = args
        .iter()
        .position(|a| a.starts_with('-') || a == "(" || a == "!")
        .unwrap_or(args.len());
    let expression_start = i;
    let mut exec_at = None;
    while i < args.len() {
        let word = args[i].as_str();
        match word {
            "-exec" | "-execdir" => {
                exec_at = Some(i);
                break;
            }
            "-ok" | "-okdir" => {
                return FindCall::Fail(format!(
                    "find: {word} is not supported: commands have no terminal to ask; use -exec"
                ));
            }
            "-fprintf" => i += 3,
            _ if ONE_ARGUMENT.contains(&word) => i += 2,
            _ => i += 1,
        }
    }
    let Some(at) = exec_at else {
        return FindCall::Bundle;
    };
    let which = args[at].as_str();
    let missing = || FindCall::Fail(format!("find: missing argument to `{which}'"));
    // The clause ends at `;`, or at `+` right after `{}`.
    let mut end = None;
    for j in at + 1..args.len() {
        if args[j] == ";" || (args[j] == "+" && j > at + 1 && args[j - 1] == "{}") {
            end = Some(j);
            break;
        }
    }
    let Some(end) = end else {
        return missing();
    };
    let command = args[at + 1..end].to_vec();
    let batch = args[end] == "+";
    if command.is_empty() || (batch && command.len() == 1) {
        return missing();
    }
    if end + 1 != args.len() {
        return FindCall::Fail(format!(
            "find: the agent's shell runs {which} only as the last words of the expression (here `{}` follows it); {INSTEAD}",
            args[end + 1]
        ));
    }
    if let Some(action) = args[expression_start..at]
        .iter()
        .find(|a| ACTIONS.contains(&a.as_str()))
    {
        return FindCall::Fail(format!(
            "find: the agent's shell runs {which} only as the expression's one action (here with {action}); {INSTEAD}"
        ));
    }
    if batch
        && command[..command.len() - 1]
            .iter()
            .any(|w| w.contains("{}"))
    {
        return FindCall::Fail(format!(
            "find: only one instance of {{}} is supported with {which} ... +"
        ));
    }
    let mut find_args = args[..at].to_vec();
    find_args.push("-print0".to_owned());
    FindCall::Exec(FindExec {
        find_args,
        command,
        command_at: at + 1,
        batch,
        in_dir: which == "-execdir",
    })
}

impl FindExec {
    /// The command line for one file (`;`): every `{}` inside any argument replaced.
    pub fn one(&self, path: &str) -> Vec<String> {
        self.command.iter().map(|w| w.replace("{}", path)).collect()
    }

    /// The command line for a batch (`{} +`): the paths in place of the final `{}`.
    pub fn many(&self, paths: &[String]) -> Vec<String> {
        let fixed = &self.command[..self.command.len() - 1];
        fixed.iter().chain(paths).cloned().collect()
    }

    /// Groups `paths` into batches of at most [`BATCH_BYTES`] (each path counting its length
    /// plus one); with `-execdir`, a batch never spans two directories.
    pub fn batches<'p>(&self, paths: &'p [(String, String)]) -> Vec<&'p [(String, String)]> {
        let mut out = Vec::new();
        let mut start = 0;
        let mut bytes = 0;
        for (i, (dir, arg)) in paths.iter().enumerate() {
            let size = arg.len() + 1;
            let new_dir = self.in_dir && i > start && paths[i - 1].0 != *dir;
            if i > start && (bytes + size > BATCH_BYTES || new_dir) {
                out.push(&paths[start..i]);
                start = i;
                bytes = 0;
            }
            bytes += size;
        }
        if start < paths.len() {
            out.push(&paths[start..]);
        }
        out
    }
}

/// Where a found path's command runs and what it is called there: with `-execdir`, its
/// directory and `./NAME`; otherwise `.` (the working directory) and the path as found.
pub(crate) fn placement(path: &str, in_dir: bool) -> (String, String) {
    if !in_dir {
        return (".".to_owned(), path.to_owned());
    }
    let trimmed = path.trim_end_matches('/');
    match trimmed.rsplit_once('/') {
        Some(("", name)) => ("/".to_owned(), format!("./{name}")),
        Some((dir, name)) => (dir.to_owned(), format!("./{name}")),
        None if trimmed.is_empty() => ("/".to_owned(), "./".to_owned()),
        None => (".".to_owned(), format!("./{trimmed}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(args: &[&str]) -> FindCall {
        parse(&args.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
    }

    fn exec(args: &[&str]) -> FindExec {
        match call(args) {
            FindCall::Exec(e) => e,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    fn fail(args: &[&str]) -> String {
        match call(args) {
            FindCall::Fail(m) => m,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn without_exec_the_bundle_runs() {
        assert_eq!(call(&[".", "-name", "*.rs"]), FindCall::Bundle);
        assert_eq!(
            call(&[".", "-name", "-exec"]),
            FindCall::Bundle,
            "an argument, not a predicate"
        );
        assert_eq!(call(&["-exec"]), call(&["-exec"]));
    }

    #[test]
    fn the_clause_becomes_print0_in_place() {
        let e = exec(&[".", "-name", "*.txt", "-exec", "wc", "-l", "{}", ";"]);
        assert_eq!(e.find_args, [".", "-name", "*.txt", "-print0"]);
        assert_eq!(e.command, ["wc", "-l", "{}"]);
        assert!(!e.batch && !e.in_dir);
        assert_eq!(e.one("./a.txt"), ["wc", "-l", "./a.txt"]);
        let e = exec(&[
            ".", "-type", "f", "-o", "-name", "x", "-execdir", "cp", "{}", "{}.bak", ";",
        ]);
        assert!(e.in_dir);
        assert_eq!(e.one("./x"), ["cp", "./x", "./x.bak"]);
        let e = exec(&["src", "-exec", "grep", "-l", "fn", "{}", "+"]);
        assert!(e.batch);
        assert_eq!(
            e.many(&["a".to_owned(), "b".to_owned()]),
            ["grep", "-l", "fn", "a", "b"]
        );
        // `+` not after `{}` is an argument; the clause goes on to `;`.
        let e = exec(&[".", "-exec", "echo", "+", "{}", ";"]);
        assert_eq!(e.command, ["echo", "+", "{}"]);
    }

    #[test]
    fn refusals_say_what_to_write() {
        assert_eq!(
            fail(&[".", "-exec", "ls"]),
            "find: missing argument to `-exec'"
        );
        assert_eq!(
            fail(&[".", "-exec", ";"]),
            "find: missing argument to `-exec'"
        );
        assert!(fail(&[".", "-exec", "ls", ";", "-print"]).contains("xargs -0"));
        assert!(fail(&[".", "-print", "-exec", "ls", ";"]).contains("with -print"));
        assert!(fail(&[".", "(", "-exec", "ls", ";", ")"]).contains("last words"));
        assert!(fail(&[".", "-ok", "rm", "{}", ";"]).contains("no terminal"));
        assert!(fail(&[".", "-exec", "mv", "{}", "{}", "+"]).contains("only one instance"));
    }

    #[test]
    fn batches_respect_size_and_directories() {
        let e = exec(&[".", "-execdir", "ls", "{}", "+"]);
        let paths: Vec<(String, String)> = ["./a/x", "./a/y", "./b/z"]
            .iter()
            .map(|p| placement(p, true))
            .collect();
        assert_eq!(paths[0], ("./a".to_owned(), "./x".to_owned()));
        let batches = e.batches(&paths);
        assert_eq!(batches.len(), 2);
        assert_eq!(batches[0].len(), 2);
        let e = exec(&[".", "-exec", "ls", "{}", "+"]);
        let long: Vec<(String, String)> = (0..3)
            .map(|_| (".".to_owned(), "x".repeat(BATCH_BYTES / 2)))
            .collect();
        assert_eq!(e.batches(&long).len(), 3);
        assert_eq!(
            placement("/top", true),
            ("/".to_owned(), "./top".to_owned())
        );
        assert_eq!(placement(".", true), (".".to_owned(), "./.".to_owned()));
        assert_eq!(placement("./a", false), (".".to_owned(), "./a".to_owned()));
    }
}
