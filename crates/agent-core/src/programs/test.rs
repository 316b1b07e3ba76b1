//! `test EXPR` and `[ EXPR ]` in the read-only set.
//!
//! Operators must be written out (static): a word only known at run time may stand only as
//! the operand of a static operator (`[ -n "$x" ]`, `[ "$a" = b ]`) or alone (`[ "$x" ]`),
//! because anywhere else its value could be an operator such as `-v`. The operands of file
//! tests (`-f F`, `A -nt B`) are files the command looks at, checked like reads; `-v NAME`
//! takes a plain name only (a subscript in it is evaluated); numeric comparisons take integer
//! literals or values known only at run time (bash's `test` does not evaluate those as
//! arithmetic; `[[ ]]` does, see [`crate::shell::runtime_eval`]).

use crate::shell::Word;
use crate::shell::runtime_eval::is_identifier;

const FILE_UNARY: &[&str] = &[
    "-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r", "-s", "-u", "-w", "-x", "-G",
    "-L", "-N", "-O", "-S",
];
const TEXT_UNARY: &[&str] = &["-n", "-z", "-o", "-t"];
const FILE_BINARY: &[&str] = &["-ef", "-nt", "-ot"];
const TEXT_BINARY: &[&str] = &["=", "==", "!=", "<", ">"];
const NUMERIC_BINARY: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

fn op(w: &Word, set: &[&str]) -> bool {
    w.is_static() && set.contains(&w.text.as_str())
}

fn is_integer(s: &str) -> bool {
    let t = s.trim();
    let t = t.strip_prefix(['-', '+']).unwrap_or(t);
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
}

/// The files the expression looks at, or why it is not read-only.
pub(crate) fn classify(name: &str, args: &[Word]) -> Result<Vec<Word>, String> {
    let args = if name == "[" {
        match args.split_last() {
            Some((last, rest)) if last.is_static() && last.text == "]" => rest,
            _ => return Err("`[` without a closing `]`".to_owned()),
        }
    } else {
        args
    };
    if args.iter().any(|w| w.splits) {
        return Err(format!(
            "`{name}` has an unquoted expansion, which could split into operators"
        ));
    }
    if args.len() == 1 {
        return Ok(Vec::new()); // a non-empty-string test, whatever the word is
    }
    let mut files = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if op(w, &["!", "(", ")"]) || (i > 0 && op(w, &["-a", "-o"])) {
            i += 1;
            continue;
        }
        if let Some(b) = args
            .get(i + 1)
            .filter(|b| op(b, FILE_BINARY) || op(b, TEXT_BINARY) || op(b, NUMERIC_BINARY))
        {
            let Some(rhs) = args.get(i + 2) else {
                return Err(format!("`{name}`: `{}` needs a right operand", b.raw));
            };
            if op(b, FILE_BINARY) {
                files.push(w.clone());
                files.push(rhs.clone());
            } else if op(b, NUMERIC_BINARY) {
                for o in [w, rhs] {
                    if o.is_static() && !is_integer(&o.text) {
                        return Err(format!("`{}` is not an integer", o.raw));
                    }
                }
            }
            i += 3;
            continue;
        }
        if op(w, &["-v", "-R"]) {
            match args.get(i + 1) {
                Some(n) if n.is_static() && is_identifier(&n.text) => {
                    i += 2;
                    continue;
                }
                _ => {
                    return Err(format!(
                        "`{name} {}` evaluates a name at run time; only a plain name is read-only",
                        w.raw
                    ));
                }
            }
        }
        if op(w, FILE_UNARY) || op(w, TEXT_UNARY) {
            let Some(operand) = args.get(i + 1) else {
                i += 1; // a lone `-f` is a non-empty string test
                continue;
            };
            if op(w, FILE_UNARY) {
                files.push(operand.clone());
            }
            i += 2;
            continue;
        }
        if !w.is_static() {
            return Err(format!(
                "`{}` is only known at run time where `{name}` reads an operator",
                w.raw
            ));
        }
        if w.text.starts_with('-') && w.text.len() > 1 {
            return Err(format!("`{name}`: `{}` is not a known operator", w.raw));
        }
        i += 1;
    }
    Ok(files)
}
