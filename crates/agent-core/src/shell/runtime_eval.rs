//! Text that bash evaluates as code at run time, out of the parser's sight.
//!
//! Bash evaluates more than the commands a parse shows. An array subscript is an arithmetic
//! expression, and arithmetic on a variable evaluates the variable's *value* as an expression
//! again, so `x='a[$(cmd)]'; echo $((x))` runs `cmd` although no substitution is visible in the
//! text. The same happens wherever bash takes a variable *name* from a word (`test -v NAME`,
//! `printf -v NAME`, `read NAME`, `declare NAME=…`, `unset NAME`, `wait -p NAME`, …): a name
//! with a subscript is evaluated. `${x@P}` runs the substitutions in `x`'s value, `${!x}`
//! dereferences a name held in a value, `trap`'s action and `complete -C` are scripts, and some
//! variables (`PS4`, `BASH_ENV`, `PROMPT_COMMAND`, …) are code bash runs later.
//!
//! Deciding what such text does would mean knowing every variable's value, so the rule is an
//! allowlist of what is known to be inert, and everything else is an [`IssueKind::RuntimeEval`]
//! issue (never auto-approved, refused by the sandbox's checker):
//!
//! | form | inert when |
//! |------|-----------|
//! | `$(( e ))`, `$[ e ]`, `(( e ))`, `for (( … ))`, `let e` | `e` is digits, operators, parentheses and spaces only |
//! | `${a[i]}`, `${x:o:l}`, `a[i]=v`, `a=([i]=v)` | `i`, `o`, `l` as above (or `@` / `*`) |
//! | `${!x}`, `${!x[i]}` (indirection) | never (`${!prefix*}` and `${!a[@]}` list names and are inert) |
//! | `${x@P}` (prompt expansion) | never |
//! | `test -v N`, `[ -v N ]`, `[[ -v N ]]`, `printf -v N`, `read N`, `mapfile N`, `getopts s N`, `wait -p N`, `unset N`, `declare`/`typeset`/`local`/`export`/`readonly N[=v]` | `N` is a static plain name (`[A-Za-z_][A-Za-z0-9_]*`) |
//! | `[[ a -eq b ]]` (and `-ne -lt -le -gt -ge`) | `a` and `b` are integer literals |
//! | `[ a -eq b ]`, `test a -eq b` | a static operand is an integer literal (bash's `test` does not evaluate dynamic operands) |
//! | `declare -i` / `-n`, `mapfile -C`, `complete`/`compgen -C -F -W`, `enable -f`, `alias N=…` | never |
//! | `PS0`–`PS4`, `PROMPT_COMMAND`, `BASH_ENV`, `ENV`, `SHELLOPTS`, `BASHOPTS` assigned | never |
//!
//! `trap ACTION SIGNAL` is not listed: its action is walked as a nested script, like `eval`'s.

use super::tree::{Parameter, ParameterExpansion, Transform};

use super::wrappers::basename;
use super::{Issue, IssueKind, Word};

/// Variables whose value bash itself runs or expands as code later on.
pub(crate) const CODE_VARIABLES: &[&str] = &[
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "PROMPT_COMMAND",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
];

fn issue(detail: String) -> Issue {
    Issue {
        kind: IssueKind::RuntimeEval,
        detail,
    }
}

/// Whether an arithmetic expression names nothing: digits, operators, parentheses and blanks
/// only, so evaluating it cannot reach a variable's value.
pub(crate) fn arithmetic_is_literal(text: &str) -> bool {
    text.chars().all(|c| {
        c.is_ascii_digit()
            || c.is_ascii_whitespace()
            || matches!(
                c,
                '+' | '-'
                    | '*'
                    | '/'
                    | '%'
                    | '('
                    | ')'
                    | '<'
                    | '>'
                    | '='
                    | '!'
                    | '&'
                    | '|'
                    | '^'
                    | '~'
                    | '?'
                    | ':'
                    | ','
            )
    })
}

/// Whether `s` is a plain shell variable name.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_integer(s: &str) -> bool {
    let t = s.trim();
    let t = t.strip_prefix(['-', '+']).unwrap_or(t);
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
}

/// An arithmetic context (`what` names it in the issue) that is not literal.
pub(crate) fn arithmetic(text: &str, what: &str) -> Option<Issue> {
    (!arithmetic_is_literal(text)).then(|| {
        issue(format!(
            "{what} `{text}` is evaluated as arithmetic at run time, and a variable in it can hold a subscript that runs commands"
        ))
    })
}

/// A subscript of an indexed array (`a[i]`): arithmetic unless `@` or `*`.
pub(crate) fn subscript(index: &str, whole: &str) -> Option<Issue> {
    if matches!(index, "@" | "*") {
        return None;
    }
    arithmetic(index, &format!("the array subscript in `{whole}`"))
}

/// Parameter expansions whose evaluation reaches text the parser cannot see: indirection,
/// prompt expansion, and non-literal subscripts, offsets and lengths.
pub(crate) fn parameter(expr: &ParameterExpansion, slice: &str) -> Vec<Issue> {
    let mut out = Vec::new();
    let (param, indirect) = expr.parameter().unzip();
    if indirect == Some(true) {
        out.push(issue(format!(
            "`{slice}` expands the variable named by another variable's value, which can hold a subscript that runs commands"
        )));
    }
    if let ParameterExpansion::Transform {
        op: Transform::PromptExpand,
        ..
    } = expr
    {
        out.push(issue(format!(
            "`{slice}` applies prompt expansion, which runs the command substitutions in the value"
        )));
    }
    if let ParameterExpansion::Substring { offset, length, .. } = expr {
        out.extend(arithmetic(offset, &format!("the offset in `{slice}`")));
        if let Some(l) = length {
            out.extend(arithmetic(l, &format!("the length in `{slice}`")));
        }
    }
    if let Some(Parameter::NamedWithIndex { index, .. }) = param {
        out.extend(subscript(index, slice));
    }
    out
}

/// `[[ -v N ]]` and arithmetic comparisons in `[[ ]]` (whose operands are evaluated as
/// arithmetic, dynamic ones included).
pub(crate) fn extended_unary_name(op_is_var_test: bool, operand: &Word) -> Option<Issue> {
    (op_is_var_test && !(operand.is_static() && is_identifier(&operand.text))).then(|| {
        issue(format!(
            "`-v {}` evaluates a variable name at run time; only a plain name is safe",
            operand.raw
        ))
    })
}

/// Operands of `[[ a -eq b ]]`: integer literals only.
pub(crate) fn extended_arithmetic_operand(operand: &Word) -> Option<Issue> {
    (!(operand.is_static() && is_integer(&operand.text))).then(|| {
        issue(format!(
            "`{}` in an arithmetic comparison inside `[[ ]]` is evaluated as arithmetic at run time",
            operand.raw
        ))
    })
}

/// Assignments to variables bash runs as code.
pub(crate) fn code_variable(name: &str) -> Option<Issue> {
    CODE_VARIABLES.contains(&name).then(|| {
        issue(format!(
            "assigning `{name}` gives bash code it runs or expands later, out of the parser's sight"
        ))
    })
}

/// The builtin forms that take variable names or scripts from their arguments. `words` starts
/// at the command name (after any wrapper).
pub(crate) fn builtin(words: &[Word]) -> Vec<Issue> {
    let Some(head) = words.first().filter(|w| w.is_static()) else {
        return Vec::new();
    };
    let name = basename(&head.text);
    let args = &words[1..];
    let mut out = Vec::new();
    let need_name = |w: &Word, role: &str, out: &mut Vec<Issue>| {
        // Only the name matters: a value only known at run time (`PATH=$PATH:/x`) is a plain
        // value, which the parse walks like any other word.
        let n = w.text.split_once('=').map_or(w.text.as_str(), |(n, _)| n);
        let n = n.strip_suffix('+').unwrap_or(n);
        let raw_name = w.raw.split_once('=').map_or(w.raw.as_str(), |(n, _)| n);
        if raw_name.contains(['$', '`']) || !is_identifier(n) {
            out.push(issue(format!(
                "`{name}` takes {role} `{}` as a variable name; bash evaluates a subscript in it at run time (only a plain static name is safe)",
                w.raw
            )));
        }
    };
    match name {
        "test" | "[" => {
            let args = if name == "[" {
                args.split_last().map_or(args, |(_, a)| a)
            } else {
                args
            };
            for (i, w) in args.iter().enumerate() {
                if (w.text == "-v" || w.text == "-R")
                    && let Some(n) = args.get(i + 1)
                {
                    need_name(n, "the operand of -v", &mut out);
                }
                if matches!(
                    w.text.as_str(),
                    "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"
                ) {
                    for o in [i.checked_sub(1).and_then(|j| args.get(j)), args.get(i + 1)]
                        .into_iter()
                        .flatten()
                    {
                        if o.is_static() && !is_integer(&o.text) {
                            out.push(issue(format!(
                                "`{}` is not an integer in a numeric comparison",
                                o.raw
                            )));
                        }
                    }
                }
            }
        }
        "printf" => {
            for_option_values(args, "v", |v| need_name(v, "the -v target", &mut out));
        }
        "read" => {
            let (opts, names) = builtin_options(args, "adinNptu");
            for (o, v) in opts {
                if o == 'a' {
                    need_name(&v, "the -a target", &mut out);
                }
            }
            for n in names {
                need_name(n, "the target", &mut out);
            }
        }
        "mapfile" | "readarray" => {
            let (opts, names) = builtin_options(args, "dnOsuCc");
            if opts.iter().any(|(o, _)| *o == 'C') {
                out.push(issue(format!(
                    "`{name} -C` runs a callback command at run time"
                )));
            }
            for n in names {
                need_name(n, "the target array", &mut out);
            }
        }
        "getopts" => {
            if let Some(n) = args.get(1) {
                need_name(n, "the target", &mut out);
            }
        }
        "wait" => {
            for_option_values(args, "p", |v| need_name(v, "the -p target", &mut out));
        }
        "unset" | "export" | "readonly" | "declare" | "typeset" | "local" => {
            let mut operands_only = false;
            for w in args {
                if !operands_only && w.text == "--" {
                    operands_only = true;
                    continue;
                }
                if !operands_only && (w.text.starts_with('-') || w.text.starts_with('+')) {
                    let flags = &w.text[1..];
                    if matches!(name, "declare" | "typeset" | "local")
                        && (flags.contains('i') || flags.contains('n'))
                    {
                        out.push(issue(format!(
                            "`{name} {}` makes later assignments evaluate arithmetic or names at run time",
                            w.raw
                        )));
                    }
                    continue;
                }
                need_name(w, "the operand", &mut out);
            }
        }
        "let" => {
            for w in args {
                if !(w.is_static() && arithmetic_is_literal(&w.text)) {
                    out.push(issue(format!(
                        "`let {}` evaluates arithmetic at run time",
                        w.raw
                    )));
                }
            }
        }
        "complete" | "compgen" => {
            for (o, v) in builtin_options(args, "CFWAGPSXo").0 {
                if matches!(o, 'C' | 'F' | 'W') {
                    out.push(issue(format!(
                        "`{name} -{o}` is given a command, function or word list (`{}`) that bash runs or expands at run time",
                        v.raw
                    )));
                }
            }
        }
        "enable"
            if args
                .iter()
                .any(|w| w.text.starts_with('-') && w.text.contains('f')) =>
        {
            out.push(issue(
                "`enable -f` loads builtins from a shared object".to_owned(),
            ));
        }
        "alias" if args.iter().any(|w| w.text.contains('=') || !w.is_static()) => {
            out.push(issue(
                "`alias` defines a command whose body the parser does not follow".to_owned(),
            ));
        }
        _ => {}
    }
    out
}

/// Splits a builtin's arguments (bash's `internal_getopt`: clustered flags, attached or
/// separate values for the letters in `with_value`) into option values and operands. An
/// attached value keeps its word's raw text and flags.
fn builtin_options<'a>(args: &'a [Word], with_value: &str) -> (Vec<(char, Word)>, Vec<&'a Word>) {
    let mut opts = Vec::new();
    let mut operands = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        if w.text == "--" {
            operands.extend(args[i..].iter());
            break;
        }
        if !(w.text.len() > 1 && w.text.starts_with('-')) || w.dynamic {
            operands.push(w);
            operands.extend(args[i..].iter());
            break;
        }
        for (at, c) in w.text.char_indices().skip(1) {
            if with_value.contains(c) {
                let rest = &w.text[at + c.len_utf8()..];
                if rest.is_empty() {
                    if let Some(v) = args.get(i) {
                        opts.push((c, v.clone()));
                        i += 1;
                    }
                } else {
                    opts.push((
                        c,
                        Word {
                            text: rest.to_owned(),
                            ..w.clone()
                        },
                    ));
                }
                break;
            }
        }
    }
    (opts, operands)
}

/// Calls `f` on the value of every option letter in `letters` (attached or separate).
fn for_option_values(args: &[Word], letters: &str, mut f: impl FnMut(&Word)) {
    for (_, v) in builtin_options(args, letters).0 {
        f(&v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_arithmetic() {
        assert!(arithmetic_is_literal("1 + (2*3) % 4"));
        assert!(!arithmetic_is_literal("x"));
        assert!(!arithmetic_is_literal("$x+1"));
        assert!(!arithmetic_is_literal("a[$(id)]"));
        assert!(!arithmetic_is_literal("0x1f"));
        assert!(is_identifier("_a1") && !is_identifier("a[1]") && !is_identifier("1a"));
    }
}
