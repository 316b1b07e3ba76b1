//! The routing question: can the WASI shell run this script, or should the host's bash?
//!
//! The answer comes from the script's text alone, without running anything: the script is
//! compiled exactly as [`Plan::parse`] compiles it before a run (so every construct outside the
//! portable subset is found with its position), then every command the plan can start is
//! looked at. A command the script names must be a built-in or a command of the bundles; so
//! must every command the shell's own launchers start (`xargs`, `env`, `timeout`, `find ...
//! -exec`, `command`), read from their arguments with the parsers the shell runs them with.
//! A command whose name is only known at run time cannot be promised: a name from an expansion
//! (`$X args`), a glob (`*.sh`) or a brace expansion that makes several words (`{ls,cat}`);
//! `xargs` or `find -exec` taking the name from their input (`xargs -I{} {}`, `-exec {} \;`);
//! an unquoted expansion or glob among a launcher's arguments before its command (its words
//! could hold options or the command itself: `env $VARS cmd`, `find $DIR -exec ..`); the items
//! `xargs` appends, when the command it runs is itself a launcher (`xargs env A=1` runs the
//! first item). A quoted expansion (`"$DIR"`) counts as one argument of unknown text.

use super::builtins::Builtin;
use super::env_command::{self, EnvCall};
use super::error::ShellError;
use super::find_exec::{self, FindCall};
use super::plan::{AndOr, Command, Compound, Node, Part, Plan, Word};
use super::timeout;
use super::xargs;

/// Where a script should run ([`Plan::route`], [`route`], `Toolbox::route`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// The WASI shell can run all of it: the syntax is inside the portable subset and every
    /// program it can start is a built-in or a bundle command.
    Wasi,
    /// The host's bash should run it.
    Host {
        /// Why not the WASI shell, for the agent and its logs: "`python3` is not a bundle
        /// command", "here-document (<<) is outside the portable subset (line 1, column 5)".
        reason: String,
    },
}

/// Routes `script`: [`Route::Host`] with the compiler's reason when [`Plan::parse`] refuses it,
/// else [`Plan::route`]. `is_bundle_command` says whether the bundles provide a name.
pub fn route(script: &str, is_bundle_command: &dyn Fn(&str) -> bool) -> Route {
    route_compiled(&Plan::parse(script), is_bundle_command)
}

/// [`route`] for a compile already made ([`Plan::parse`] or [`Plan::from_parsed`]).
pub fn route_compiled(
    compiled: &Result<Plan, ShellError>,
    is_bundle_command: &dyn Fn(&str) -> bool,
) -> Route {
    match compiled {
        Ok(plan) => plan.route(is_bundle_command),
        Err(e) => Route::Host { reason: refusal(e) },
    }
}

/// The reason a compile error gives for the host.
fn refusal(e: &ShellError) -> String {
    match e {
        ShellError::Unsupported {
            construct,
            position,
        } => format!("{construct} is outside the portable subset ({position})"),
        other => format!("the portable shell cannot read it: {other}"),
    }
}

impl Plan {
    /// Whether the WASI shell can run every program this plan can start: each command it names
    /// and each one its launchers (`xargs`, `env`, `timeout`, `find -exec`, `command`) start
    /// must be a built-in or a command for which `is_bundle_command` answers yes, with a name
    /// known from the script's text. Runs nothing. The first command that fails the test, in
    /// the script's order, gives the reason (see the module's documentation in `route.rs`).
    pub fn route(&self, is_bundle_command: &dyn Fn(&str) -> bool) -> Route {
        let router = Router {
            has: is_bundle_command,
        };
        match router.list(&self.items) {
            Ok(()) => Route::Wasi,
            Err(reason) => Route::Host { reason },
        }
    }
}

/// One argument as far as the script's text tells.
#[derive(Clone, Debug)]
struct Arg {
    /// The text, with NUL where an expansion's value goes.
    text: String,
    /// Holds an expansion: its value is only known at run time.
    runtime: bool,
    /// May become several words or none (an unquoted expansion, a glob, what `xargs`
    /// appends).
    fields: bool,
    /// One of several words a brace expansion made.
    braced: bool,
    /// As written, for messages.
    source: String,
}

impl Arg {
    fn of(word: &Word) -> Self {
        let mut text = String::new();
        let mut unquoted = String::new();
        let (mut runtime, mut fields) = (false, false);
        for part in &word.parts {
            match part {
                Part::Text { text: t, quoted } => {
                    if !quoted {
                        unquoted.push_str(t);
                    }
                    text.push_str(t);
                }
                Part::Var { quoted, .. }
                | Part::Status { quoted }
                | Part::Arith { quoted, .. }
                | Part::Param { quoted, .. } => {
                    runtime = true;
                    fields |= !quoted;
                    text.push('\0');
                }
            }
        }
        // A glob: `*`, `?`, or a `[` closed later (a lone `[` is itself, as `[ -f x ]`).
        fields |= unquoted.contains(['*', '?'])
            || unquoted
                .find('[')
                .is_some_and(|i| unquoted[i + 1..].contains(']'));
        Self {
            text,
            runtime,
            // Like an assignment: neither split nor globbed.
            fields: fields && !word.assignment_like,
            braced: word.braced,
            source: word.source.clone(),
        }
    }

    /// An argument of unknown text made by a launcher (`{}`, an `-I` replacement).
    fn filled(text: String, source: &str, fields: bool) -> Self {
        Self {
            text,
            runtime: true,
            fields,
            braced: false,
            source: source.to_owned(),
        }
    }

    fn is_known(&self) -> bool {
        !self.runtime && !self.fields
    }

    /// The argument for a message: the word as written, or what a launcher puts there.
    fn shown(&self) -> String {
        if self.source.starts_with("the ") {
            self.source.clone()
        } else {
            format!("`{}`", self.source)
        }
    }
}

/// Who starts a command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum By {
    /// The script: a built-in runs as such.
    Script,
    /// One of the shell's launchers, by name (`xargs`, `env`, `timeout`, `find -exec`): only
    /// its own launchers and bundle commands run (`xargs cd` finds no `cd`).
    Launcher(&'static str),
}

struct Router<'a> {
    has: &'a dyn Fn(&str) -> bool,
}

impl Router<'_> {
    fn list(&self, items: &[AndOr]) -> Result<(), String> {
        for item in items {
            for pipeline in std::iter::once(&item.first).chain(item.rest.iter().map(|(_, p)| p)) {
                for node in &pipeline.stages {
                    self.node(node)?;
                }
            }
        }
        Ok(())
    }

    fn node(&self, node: &Node) -> Result<(), String> {
        let compound = match node {
            Node::Simple(command) => return self.simple(command),
            Node::Compound(compound, _) => compound,
        };
        match compound.as_ref() {
            Compound::Group(body) => self.list(body),
            Compound::If {
                branches,
                otherwise,
            } => {
                for (condition, body) in branches {
                    self.list(condition)?;
                    self.list(body)?;
                }
                otherwise.as_deref().map_or(Ok(()), |body| self.list(body))
            }
            Compound::For { body, .. } | Compound::ArithFor { body, .. } => self.list(body),
            Compound::Loop {
                condition, body, ..
            } => {
                self.list(condition)?;
                self.list(body)
            }
            Compound::Case { arms, .. } => arms.iter().try_for_each(|arm| self.list(&arm.body)),
            Compound::Test(_) | Compound::Arith(_) => Ok(()),
        }
    }

    fn simple(&self, command: &Command) -> Result<(), String> {
        let args: Vec<Arg> = command.words.iter().map(Arg::of).collect();
        self.argv(&args, By::Script)
    }

    /// A command line: its name, then what it starts.
    fn argv(&self, args: &[Arg], by: By) -> Result<(), String> {
        let Some(first) = args.first() else {
            // Assignments and redirects alone.
            return Ok(());
        };
        let name = name(first, by)?;
        let rest = &args[1..];
        if by == By::Script {
            if name == "command" {
                return self.command_builtin(rest);
            }
            if Builtin::lookup(name).is_some() {
                return Ok(());
            }
        }
        match name {
            "xargs" => self.xargs(rest),
            "env" => self.env(rest),
            "timeout" => self.timeout(rest),
            "find" => {
                self.bundle("find", by)?;
                self.find(rest)
            }
            other => self.bundle(other, by),
        }
    }

    fn bundle(&self, name: &str, by: By) -> Result<(), String> {
        if (self.has)(name) {
            return Ok(());
        }
        Err(match by {
            By::Script => format!("`{name}` is not a bundle command"),
            By::Launcher(launcher) => {
                format!("`{name}` (run by `{launcher}`) is not a bundle command")
            }
        })
    }

    /// `command [-pvV] NAME ARGS`: `-v` / `-V` only look names up; otherwise NAME runs as the
    /// script would run it.
    fn command_builtin(&self, args: &[Arg]) -> Result<(), String> {
        let mut i = 0;
        let mut lookup = false;
        while let Some(arg) = args.get(i) {
            if !arg.is_known() {
                return Err(format!(
                    "the command `command` runs is only known at run time: its arguments include {}",
                    arg.shown()
                ));
            }
            let Some(flags) = arg.text.strip_prefix('-').filter(|f| !f.is_empty()) else {
                break;
            };
            i += 1;
            if flags == "-" {
                break;
            }
            lookup |= flags.contains(['v', 'V']);
        }
        if lookup {
            return Ok(());
        }
        self.argv(&args[i.min(args.len())..], By::Script)
    }

    /// A launcher's command line, which starts at `at` in `args`: the arguments before it must
    /// be words whose number is known, then it is routed as a command line of `launcher`.
    fn inner(&self, launcher: &'static str, args: &[Arg], at: usize) -> Result<(), String> {
        unknown_count(launcher, &args[..at.min(args.len())])?;
        self.argv(&args[at.min(args.len())..], By::Launcher(launcher))
    }

    fn env(&self, args: &[Arg]) -> Result<(), String> {
        match env_command::parse(&texts(args)) {
            EnvCall::Run(run) => self.inner("env", args, args.len() - run.argv.len()),
            EnvCall::Bundle => {
                unknown_count("env", args)?;
                self.bundle("env", By::Script)
            }
            EnvCall::Fail(lines, _) => Err(failure("env", args, &lines)),
        }
    }

    fn timeout(&self, args: &[Arg]) -> Result<(), String> {
        match timeout::parse(&texts(args)) {
            Ok(run) => self.inner("timeout", args, args.len() - run.argv.len()),
            Err(lines) => Err(failure("timeout", args, &lines)),
        }
    }

    fn xargs(&self, args: &[Arg]) -> Result<(), String> {
        let parsed =
            xargs::command(&texts(args)).map_err(|lines| failure("xargs", args, &lines))?;
        unknown_count("xargs", &args[..parsed.at.min(args.len())])?;
        let mut line: Vec<Arg> = if parsed.at >= args.len() {
            vec![Arg {
                text: "echo".to_owned(),
                runtime: false,
                fields: false,
                braced: false,
                source: "echo".to_owned(),
            }]
        } else {
            args[parsed.at..].to_vec()
        };
        match &parsed.replace {
            // `-I R`: R in each initial argument (the name included) becomes an item.
            Some(r) => {
                for arg in &mut line {
                    if arg.text.contains(r.as_str()) {
                        *arg = Arg::filled(
                            arg.text.replace(r.as_str(), "\0"),
                            "the items `xargs` reads",
                            false,
                        );
                    }
                }
            }
            // Otherwise the items follow the initial arguments.
            None => line.push(Arg::filled(
                "\0".to_owned(),
                "the items `xargs` reads",
                true,
            )),
        }
        self.argv(&line, By::Launcher("xargs"))
    }

    fn find(&self, args: &[Arg]) -> Result<(), String> {
        match find_exec::parse(&texts(args)) {
            FindCall::Bundle => unknown_count("find", args),
            FindCall::Fail(message) => Err(failure("find", args, &[message])),
            FindCall::Exec(call) => {
                unknown_count("find", &args[..call.command_at.min(args.len())])?;
                let last = call.command.len().saturating_sub(1);
                let line: Vec<Arg> = args
                    .iter()
                    .skip(call.command_at)
                    .take(call.command.len())
                    .enumerate()
                    .map(|(i, arg)| {
                        if call.batch && i == last {
                            // `{} +`: as many paths as fit.
                            Arg::filled("\0".to_owned(), "the paths `find` finds", true)
                        } else if arg.text.contains("{}") {
                            Arg::filled(
                                arg.text.replace("{}", "\0"),
                                "the paths `find` finds",
                                false,
                            )
                        } else {
                            arg.clone()
                        }
                    })
                    .collect();
                self.argv(&line, By::Launcher("find -exec"))
            }
        }
    }
}

/// The name of the command `first` starts, when the text tells it.
fn name(first: &Arg, by: By) -> Result<&str, String> {
    let subject = match by {
        By::Script => "the command name".to_owned(),
        By::Launcher(launcher) => format!("the name of the command `{launcher}` runs"),
    };
    if first.braced {
        return Err(format!(
            "{subject} comes from a brace expansion that makes several words (`{}` is one); write the name out",
            first.source
        ));
    }
    if !first.is_known() {
        return Err(format!(
            "{subject} is only known at run time: it comes from {}",
            first.shown()
        ));
    }
    Ok(&first.text)
}

/// Refuses arguments of a launcher, before its command, whose number of words is only known at
/// run time: they could hold options or the command itself.
fn unknown_count(launcher: &str, before: &[Arg]) -> Result<(), String> {
    match before.iter().find(|a| a.fields) {
        Some(arg) => Err(format!(
            "the command `{launcher}` runs is only known at run time: {} among its arguments may make any number of words (quote an expansion)",
            arg.shown()
        )),
        None => Ok(()),
    }
}

/// Why a launcher whose arguments do not parse goes to the host: the unknown values, or what
/// it would print.
fn failure(launcher: &str, args: &[Arg], lines: &[String]) -> String {
    if let Some(arg) = args.iter().find(|a| a.runtime) {
        return format!(
            "the command `{launcher}` runs is only known at run time: its arguments include {}",
            arg.shown()
        );
    }
    format!(
        "the portable shell refuses this `{launcher}`: {}",
        lines.join("; ")
    )
}

fn texts(args: &[Arg]) -> Vec<String> {
    args.iter().map(|a| a.text.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bundle commands the tests assume (a few of core-utils').
    const BUNDLE: &[&str] = &[
        "ls", "cat", "grep", "sed", "sort", "wc", "head", "find", "rm", "echo", "env", "true",
        "basename", "printf", "test", "[",
    ];

    fn routed(script: &str) -> Route {
        route(script, &|name| BUNDLE.contains(&name))
    }

    fn host(script: &str) -> String {
        match routed(script) {
            Route::Host { reason } => reason,
            Route::Wasi => panic!("{script:?} was routed to the WASI shell"),
        }
    }

    #[test]
    fn scripts_of_builtins_and_bundle_commands_run_in_the_wasi_shell() {
        for script in [
            "ls",
            "ls -la | grep foo | wc -l",
            "grep -rn TODO src | sed 's/x/y/' | sort | head -5 > out.txt",
            "for f in *.txt; do wc -l \"$f\"; done",
            "if [[ -f a && $X == y* ]]; then echo yes; else echo no; fi",
            "while read -r line; do echo \"$line\"; done < f",
            "case $x in a) ls;; *) cat f;; esac",
            "x=1; export Y=2; cd src && pwd; (( x++ )); echo $((x + 1))",
            "A=1 ls; : ; true",
            "[ -f x ] && cat x",
            "find . -name '*.rs' | xargs grep -l TODO",
            "find . -name '*.rs' -exec grep -l TODO {} +",
            "find \"$DIR\" -name x -exec rm {} \\;",
            "find . -type f",
            "xargs -0 -n1 rm < list",
            "xargs",
            "xargs -I{} cat {}",
            "env A=1 B=2 ls",
            "env",
            "env -i PATH=/bin grep x f",
            "timeout 5 grep x f",
            "timeout 5 env A=1 xargs -n1 grep x",
            "command ls; command -v python3; command -V ls",
            "echo a | xargs echo",
            "grep \"$PATTERN\" $FILES",
            "ls {a,b}.txt",
            "{ ls; cat f; } 2>/dev/null",
            "",
        ] {
            assert_eq!(routed(script), Route::Wasi, "{script:?}");
        }
    }

    #[test]
    fn other_programs_go_to_the_host_with_the_reason() {
        for (script, reason) in [
            ("python3 x.py", "`python3` is not a bundle command"),
            ("cargo test", "`cargo` is not a bundle command"),
            ("git status", "`git` is not a bundle command"),
            ("ls && make", "`make` is not a bundle command"),
            ("ls | ./build.sh", "`./build.sh` is not a bundle command"),
            ("/bin/ls", "`/bin/ls` is not a bundle command"),
            (
                "for f in *; do node $f; done",
                "`node` is not a bundle command",
            ),
            ("xargs rm", ""),
            (
                "xargs python3",
                "`python3` (run by `xargs`) is not a bundle command",
            ),
            (
                "find . -exec python3 {} \\;",
                "`python3` (run by `find -exec`) is not a bundle command",
            ),
            (
                "env A=1 node x",
                "`node` (run by `env`) is not a bundle command",
            ),
            (
                "timeout 5 npm test",
                "`npm` (run by `timeout`) is not a bundle command",
            ),
            ("command make", "`make` is not a bundle command"),
            ("xargs cd", "`cd` (run by `xargs`) is not a bundle command"),
            (
                "find . -exec cd {} \\;",
                "`cd` (run by `find -exec`) is not a bundle command",
            ),
        ] {
            if reason.is_empty() {
                assert_eq!(routed(script), Route::Wasi, "{script:?}");
            } else {
                assert_eq!(host(script), reason, "{script:?}");
            }
        }
    }

    #[test]
    fn syntax_outside_the_subset_goes_to_the_host_with_its_position() {
        for (script, reason) in [
            (
                "cat <<EOF\nx\nEOF",
                "here-document (<<) is outside the portable subset (line 1, column 7)",
            ),
            (
                "echo $(ls)",
                "command substitution $(..) is outside the portable subset (line 1, column 6)",
            ),
            (
                "ls\n(cd x; ls)",
                "subshell ( .. ) is outside the portable subset (line 2, column 1)",
            ),
            (
                "f() { ls; }",
                "function definition is outside the portable subset",
            ),
            (
                "sleep 1 &",
                "background job (&) is outside the portable subset",
            ),
            (
                "eval ls",
                "the `eval` builtin is outside the portable subset",
            ),
        ] {
            let got = host(script);
            assert!(got.starts_with(reason), "{script:?}: {got}");
        }
        assert!(host("echo 'unterminated").starts_with("the portable shell cannot read it:"));
    }

    #[test]
    fn names_known_only_at_run_time_go_to_the_host() {
        let late = |subject: &str, from: &str| {
            format!("{subject} is only known at run time: it comes from {from}")
        };
        let runs = |launcher: &str| format!("the name of the command `{launcher}` runs");
        let count = |launcher: &str, word: &str| {
            format!(
                "the command `{launcher}` runs is only known at run time: `{word}` among its arguments may make any number of words (quote an expansion)"
            )
        };
        let args = |launcher: &str, word: &str| {
            format!(
                "the command `{launcher}` runs is only known at run time: its arguments include `{word}`"
            )
        };
        let name = "the command name";
        let items = "the items `xargs` reads";
        for (script, reason) in [
            ("$X args", late(name, "`$X`")),
            ("\"$CMD\" -v", late(name, "`\"$CMD\"`")),
            ("${TOOL:-ls} x", late(name, "`${TOOL:-ls}`")),
            ("*.sh", late(name, "`*.sh`")),
            ("[ab]x", late(name, "`[ab]x`")),
            (
                "{ls,cat} x",
                "the command name comes from a brace expansion that makes several words (`ls` is one); write the name out".to_owned(),
            ),
            ("xargs -I{} {} x", late(&runs("xargs"), items)),
            ("xargs $CMD", late(&runs("xargs"), "`$CMD`")),
            ("find . -exec {} \\;", late(&runs("find -exec"), "the paths `find` finds")),
            ("env A=1 $CMD", late(&runs("env"), "`$CMD`")),
            ("env \"$X\" ls", late(&runs("env"), "`\"$X\"`")),
            ("env $VARS ls", late(&runs("env"), "`$VARS`")),
            ("env -u $V ls", count("env", "$V")),
            ("find $DIR -exec rm {} +", count("find", "$DIR")),
            ("find . $EXPR", count("find", "$EXPR")),
            ("xargs -n $N rm", args("xargs", "$N")),
            ("xargs -0 $OPTS rm", late(&runs("xargs"), "`$OPTS`")),
            ("timeout $T ls", args("timeout", "$T")),
            ("timeout \"$T\" ls", args("timeout", "\"$T\"")),
            ("command $X", args("command", "$X")),
            // What xargs appends becomes the command of a launcher it runs.
            ("xargs env A=1", late(&runs("env"), items)),
            ("xargs timeout 5", late(&runs("timeout"), items)),
        ] {
            assert_eq!(host(script), reason, "{script:?}");
        }
        // With -I nothing is appended: the nested command line is what it says.
        assert_eq!(routed("xargs -I{} env F={} grep x"), Route::Wasi);
        // Quoted expansions after the name are ordinary arguments.
        assert_eq!(routed("env A=\"$X\" grep \"$Y\""), Route::Wasi);
    }

    #[test]
    fn launchers_that_the_shell_refuses_go_to_the_host() {
        assert_eq!(
            host("find . -ok rm {} \\;"),
            "the portable shell refuses this `find`: find: -ok is not supported: commands have no terminal to ask; use -exec"
        );
        assert!(host("env -S 'a b'").starts_with("the portable shell refuses this `env`:"));
        assert!(host("timeout 1x ls").starts_with("the portable shell refuses this `timeout`:"));
        assert!(host("xargs -p rm").starts_with("the portable shell refuses this `xargs`:"));
        // `env` and `find` alone need the bundle's.
        assert_eq!(
            route("env", &|_| false),
            Route::Host {
                reason: "`env` is not a bundle command".to_owned()
            }
        );
        assert_eq!(
            route("find .", &|n| n == "ls"),
            Route::Host {
                reason: "`find` is not a bundle command".to_owned()
            }
        );
        // The shell's own launchers need no bundle.
        assert_eq!(route("xargs -a f true", &|n| n == "true"), Route::Wasi);
    }

    /// The shell's own `xargs`, `env` and `timeout` read their options with agent-core's
    /// tables, so each runs the command the permission checker sees: every example row of
    /// those tables whose words are known from the text.
    #[test]
    fn the_launchers_run_the_command_the_permission_checker_sees() {
        use agent_core::programs::wrappers::{ENV, Expect, TIMEOUT, XARGS};
        for w in [XARGS, ENV, TIMEOUT] {
            for (command, expect) in w.examples {
                if command.contains('$') {
                    continue; // words only known at run time
                }
                let script = agent_core::shell::parse(command).unwrap();
                let args: Vec<String> = script.commands[0].words[1..]
                    .iter()
                    .map(|w| w.text.clone())
                    .collect();
                let runs = match w.name {
                    "xargs" => xargs::command(&args)
                        .ok()
                        .filter(|c| c.at < args.len())
                        .map(|c| c.command[0].clone()),
                    "env" => match env_command::parse(&args) {
                        EnvCall::Run(run) => Some(run.argv[0].clone()),
                        EnvCall::Bundle | EnvCall::Fail(..) => None,
                    },
                    _ => timeout::parse(&args).ok().map(|run| run.argv[0].clone()),
                };
                match expect {
                    Expect::Runs(name) | Expect::RunsWriting(name, _) => {
                        assert_eq!(runs.as_deref(), Some(*name), "{command}");
                    }
                    Expect::Nothing => assert_eq!(runs, None, "{command}"),
                    // A bad option: the checker sees no command, and the shell runs none.
                    Expect::Unknown if w.options.parse(&args).error.is_some() => {
                        assert_eq!(runs, None, "{command}");
                    }
                    Expect::Unknown | Expect::Script(_) => {}
                }
            }
        }
    }
}
