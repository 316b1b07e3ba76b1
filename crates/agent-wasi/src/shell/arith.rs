//! Arithmetic expansion, `$((EXPRESSION))`, as bash evaluates it: 64-bit signed integers that
//! wrap on overflow; the C operators with bash's precedence (`,` `?:` `||` `&&` `|` `^` `&`
//! `==` `!=` `<` `>` `<=` `>=` `<<` `>>` `+` `-` `*` `/` `%` `**` unary `!` `~` `+` `-`,
//! parentheses); numbers in decimal, `0x` hex, `0` octal and `BASE#DIGITS`; `$NAME`, `${NAME}`,
//! `${#NAME}` and `$?` replaced by their values first; a bare `NAME` is its value read as an
//! expression in turn (unset or empty is 0). Division or remainder by zero, a negative
//! exponent, a malformed expression or a value that is not one are errors, which end the
//! script with status 1 (bash does the same in a script).
//!
//! Refused when the script is compiled: assignments (`x=1`, `x+=2`, `i++`, `--i`): the
//! expander reads the shell's variables and never changes them (write `i=$((i+1))`); arrays,
//! quotes, `$(..)` and any other character outside names, numbers, operators and `$NAME` /
//! `${NAME}` / `$?`; an expression over 4 KiB, with more than 64 operator characters or nested
//! deeper than 32 parentheses (the parser is recursive: 3000 `!` overflowed its stack). A
//! variable's value read as an expression passes the same check when it is evaluated.
//!
//! The expression is parsed by `agent_core::shell::arithmetic` (brush-parser's arithmetic
//! grammar, behind agent-core's guards, as an owned tree).

use agent_core::shell::arithmetic::{
    self as parser, BinaryOp, Expr, Target, UnaryAssignOp, UnaryOp,
};

use super::vars::Vars;

/// The longest expression accepted (after `$NAME` replacement too).
pub(crate) const MAX_EXPRESSION_BYTES: usize = 4096;
/// The deepest parentheses nesting accepted.
pub(crate) const MAX_PARENTHESES: usize = 32;
/// The most operator characters an expression may hold: agent-core's bound for its parser
/// (brush's parser recurses for every prefix operator, `**`, `?:` and parenthesis, and 3000 `!`
/// overflowed the thread's stack). The evaluator recurses as deep, and a variable's value read
/// as an expression counts towards the same total.
pub(crate) const MAX_OPERATORS: usize = parser::MAX_OPERATORS;
/// How deep a variable's value may refer to another variable's (bash allows 1024).
const MAX_RECURSION: usize = 32;

/// The construct named when an expression is refused at compile time.
pub(crate) const REFUSED: &str = "arithmetic expansion $((..)) beyond names, numbers, operators and $NAME (no assignments, arrays, quotes or $(..))";

/// Checks the text between `$((` and `))` when the script is compiled: the allowlisted
/// characters, the size and nesting bounds, and no assignment anywhere (the expression parsed
/// with every `$..` replaced by `1`; when that does not parse, the values decide at run time).
/// The error is the message.
pub(crate) fn check(text: &str) -> Result<(), &'static str> {
    checked(text, false).map(|_| ())
}

/// [`check`] for the arithmetic command `((..))` and the parts of `for ((..))`, where
/// assignments are allowed (the interpreter runs them with the shell's variables).
pub(crate) fn check_command(text: &str) -> Result<(), &'static str> {
    checked(text, true).map(|_| ())
}

/// The checks of [`check`], with the expression they parsed (`None` when `$..` in it left the
/// shape to the values).
fn checked(text: &str, assignments: bool) -> Result<Option<Expr>, &'static str> {
    if text.len() > MAX_EXPRESSION_BYTES {
        return Err(REFUSED);
    }
    if operators(text) > MAX_OPERATORS {
        return Err(REFUSED);
    }
    let mut depth = 0usize;
    let b = text.as_bytes();
    let mut probe = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'(' => {
                depth += 1;
                if depth > MAX_PARENTHESES {
                    return Err(REFUSED);
                }
            }
            b')' => depth = depth.saturating_sub(1),
            b'$' => {
                let len = dollar_len(&b[i + 1..]).ok_or(REFUSED)?;
                probe.push('1');
                i += 1 + len;
                continue;
            }
            _ if c.is_ascii_alphanumeric() || b" \t\n_+-*/%<>=!&|^~?:,#@".contains(&c) => {}
            _ => return Err(REFUSED),
        }
        probe.push(char::from(c));
        i += 1;
    }
    let ast = match parse(&probe) {
        Ok(ast) => ast,
        // With `$..` in it the shape is only known once the values are in (`$a $op $b`):
        // evaluation checks it again then.
        Err(_) if probe.len() != text.len() || text.contains('$') => return Ok(None),
        Err(_) => return Err("a malformed arithmetic expansion $((..))"),
    };
    if !assignments && assigns(&ast) {
        return Err(
            "assignment in arithmetic expansion $((..)) (write NAME=$((..)) instead of $((NAME=..)) or $((NAME++)), or use the command ((NAME++)))",
        );
    }
    Ok(Some(ast))
}

/// The checks of [`check`] on text about to be evaluated, and its expression, parsed once (a
/// `$` that came in with a value cannot be probed: that text is parsed as it is, and fails).
fn checked_expression(text: &str, assignments: bool) -> Result<Expr, String> {
    match checked(text, assignments)? {
        Some(ast) if !text.contains('$') => Ok(ast),
        _ => parse(text),
    }
}

/// The operator characters of an expression (what bounds the parser's recursion).
fn operators(text: &str) -> usize {
    parser::operator_count(text)
}

/// The length of `NAME`, `{NAME}` or `?` after a `$`; `None` for anything else.
fn dollar_len(rest: &[u8]) -> Option<usize> {
    let name_start = |c: &u8| c.is_ascii_alphabetic() || *c == b'_';
    let name = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
    match rest.first()? {
        b'?' => Some(1),
        c if name_start(c) => Some(rest.iter().take_while(|c| name(c)).count()),
        b'{' => {
            let inner = &rest[1..];
            // `${#NAME}`: the length of the value.
            let hash =
                usize::from(inner.first() == Some(&b'#') && inner.get(1).is_some_and(name_start));
            let len = match inner.get(hash)? {
                b'?' if hash == 0 => 1,
                c if name_start(c) => inner[hash..].iter().take_while(|c| name(c)).count(),
                _ => return None,
            };
            (inner.get(hash + len) == Some(&b'}')).then_some(hash + len + 2)
        }
        _ => None,
    }
}

/// Parses with agent-core's arithmetic parser; the error is its message.
fn parse(text: &str) -> Result<Expr, String> {
    parser::parse(text).map_err(|e| e.to_string())
}

/// Whether the expression assigns anywhere.
fn assigns(e: &Expr) -> bool {
    match e {
        Expr::Literal(_) => false,
        Expr::Reference(t) => target_assigns(t),
        Expr::Unary(_, x) => assigns(x),
        Expr::Binary(_, x, y) => assigns(x) || assigns(y),
        Expr::Conditional(x, y, z) => assigns(x) || assigns(y) || assigns(z),
        Expr::Assign(..) | Expr::BinaryAssign(..) | Expr::UnaryAssign(..) => true,
    }
}

/// An array element counts as refused too (reported with assignments: the shell has no
/// arrays).
fn target_assigns(t: &Target) -> bool {
    matches!(t, Target::Element(..))
}

/// Evaluates the text between `$((` and `))` with the shell's variables and `$?`; the error
/// is bash's message without the `bash: ` prefix.
pub(crate) fn evaluate(text: &str, vars: &Vars, status: i32) -> Result<i64, String> {
    let expanded = substitute(text, vars, status);
    if expanded.len() > MAX_EXPRESSION_BYTES {
        return Err(format!(
            "{text}: expression longer than {MAX_EXPRESSION_BYTES} bytes after expansion"
        ));
    }
    let fail = |why: &str| format!("{}: {why}", expanded.trim());
    // The values put in may hold anything: the same bounds as the script's own text.
    let ast = checked_expression(&expanded, false).map_err(|e| fail(&e))?;
    let mut store = ReadOnly(vars);
    Eval {
        store: &mut store,
        depth: 0,
        chain: 0,
    }
    .eval(&ast)
    .map_err(|e| fail(&e))
}

/// Runs the arithmetic command `((TEXT))` (or a part of `for ((..))`): like [`evaluate`], and
/// its assignments (`i++`, `x = 2`, `n += 3`) set the shell's variables.
pub(crate) fn execute(text: &str, vars: &mut Vars, status: i32) -> Result<i64, String> {
    let expanded = substitute(text, vars, status);
    if expanded.len() > MAX_EXPRESSION_BYTES {
        return Err(format!(
            "{text}: expression longer than {MAX_EXPRESSION_BYTES} bytes after expansion"
        ));
    }
    let fail = |why: &str| format!("{}: {why}", expanded.trim());
    let ast = checked_expression(&expanded, true).map_err(|e| fail(&e))?;
    Eval {
        store: vars,
        depth: 0,
        chain: 0,
    }
    .eval(&ast)
    .map_err(|e| fail(&e))
}

/// Where evaluation reads and writes variables.
trait Store {
    fn get(&self, name: &str) -> Option<&str>;
    fn set(&mut self, name: &str, value: i64) -> Result<(), String>;
}

/// The expander's view: reading only.
struct ReadOnly<'a>(&'a Vars);

impl Store for ReadOnly<'_> {
    fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name)
    }

    fn set(&mut self, _name: &str, _value: i64) -> Result<(), String> {
        Err("assignment in arithmetic expansion is not supported by the agent's shell".to_owned())
    }
}

impl Store for Vars {
    fn get(&self, name: &str) -> Option<&str> {
        Vars::get(self, name)
    }

    fn set(&mut self, name: &str, value: i64) -> Result<(), String> {
        Vars::set(self, name, value.to_string()).map_err(|_| {
            format!(
                "{name}: the shell's variables would exceed {} bytes",
                super::vars::MAX_VARIABLE_BYTES
            )
        })
    }
}

/// Replaces `$NAME`, `${NAME}` and `$?` with their values (unset is empty).
fn substitute(text: &str, vars: &Vars, status: i32) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$'
            && let Some(len) = dollar_len(&b[i + 1..])
        {
            let token = &text[i + 1..i + 1 + len];
            let name = token.trim_start_matches('{').trim_end_matches('}');
            if name == "?" {
                out.push_str(&status.to_string());
            } else if let Some(name) = name.strip_prefix('#') {
                let length = vars.get(name).unwrap_or_default().chars().count();
                out.push_str(&length.to_string());
            } else {
                out.push_str(vars.get(name).unwrap_or_default());
            }
            i += 1 + len;
            continue;
        }
        // A whole character: `[[ é -eq 1 ]]` brings text check() never saw (it refuses it
        // after the substitution).
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        out.push(c);
        i += c.len_utf8();
    }
    out
}

struct Eval<'a> {
    store: &'a mut dyn Store,
    /// Variables being evaluated inside each other.
    depth: usize,
    /// Their operators, summed: the parser and the evaluator recurse once per level of each,
    /// so the sum (at most [`MAX_OPERATORS`]) bounds the stack as one expression's count does.
    chain: usize,
}

impl Eval<'_> {
    fn eval(&mut self, e: &Expr) -> Result<i64, String> {
        let array = || "arrays are not supported by the agent's shell".to_owned();
        Ok(match e {
            Expr::Literal(n) => *n,
            Expr::Reference(Target::Variable(name)) => self.variable(name)?,
            Expr::Reference(Target::Element(..)) => {
                return Err(array());
            }
            Expr::Unary(op, x) => {
                let x = self.eval(x)?;
                match op {
                    UnaryOp::Plus => x,
                    UnaryOp::Minus => x.wrapping_neg(),
                    UnaryOp::BitwiseNot => !x,
                    UnaryOp::LogicalNot => i64::from(x == 0),
                }
            }
            Expr::Binary(op, x, y) => self.binary(*op, x, y)?,
            Expr::Conditional(c, y, z) => {
                if self.eval(c)? != 0 {
                    self.eval(y)?
                } else {
                    self.eval(z)?
                }
            }
            Expr::Assign(Target::Variable(name), x) => {
                let value = self.eval(x)?;
                self.store.set(name, value)?;
                value
            }
            Expr::BinaryAssign(op, Target::Variable(name), x) => {
                let current = self.variable(name)?;
                let operand = self.eval(x)?;
                let value = apply(*op, current, operand)?;
                self.store.set(name, value)?;
                value
            }
            Expr::UnaryAssign(op, Target::Variable(name)) => {
                let current = self.variable(name)?;
                let (value, result) = match op {
                    UnaryAssignOp::PrefixIncrement => {
                        (current.wrapping_add(1), current.wrapping_add(1))
                    }
                    UnaryAssignOp::PrefixDecrement => {
                        (current.wrapping_sub(1), current.wrapping_sub(1))
                    }
                    UnaryAssignOp::PostfixIncrement => (current.wrapping_add(1), current),
                    UnaryAssignOp::PostfixDecrement => (current.wrapping_sub(1), current),
                };
                self.store.set(name, value)?;
                result
            }
            Expr::Assign(Target::Element(..), _)
            | Expr::BinaryAssign(_, Target::Element(..), _)
            | Expr::UnaryAssign(_, Target::Element(..)) => {
                return Err(array());
            }
        })
    }

    fn binary(&mut self, op: BinaryOp, x: &Expr, y: &Expr) -> Result<i64, String> {
        // `&&` and `||` short-circuit, as in bash (the right side's errors do not count).
        match op {
            BinaryOp::LogicalAnd => {
                return Ok(i64::from(self.eval(x)? != 0 && self.eval(y)? != 0));
            }
            BinaryOp::LogicalOr => {
                return Ok(i64::from(self.eval(x)? != 0 || self.eval(y)? != 0));
            }
            _ => {}
        }
        let a = self.eval(x)?;
        let b = self.eval(y)?;
        apply(op, a, b)
    }

    /// A bare name: its value read as an expression (bash's recursive evaluation).
    fn variable(&mut self, name: &str) -> Result<i64, String> {
        let owned = self.store.get(name).unwrap_or_default().trim().to_owned();
        let value = owned.as_str();
        if value.is_empty() {
            return Ok(0);
        }
        // Plain decimal (no leading 0, which is octal): no parse needed.
        if (value == "0" || !value.starts_with('0'))
            && value.bytes().all(|b| b.is_ascii_digit())
            && let Ok(n) = value.parse::<i64>()
        {
            return Ok(n);
        }
        let ops = operators(value);
        if self.depth >= MAX_RECURSION || self.chain + ops > MAX_OPERATORS {
            return Err("expression recursion level exceeded".to_owned());
        }
        let ast = match checked(value, false) {
            Ok(Some(ast)) if !value.contains('$') => ast,
            Ok(_) => parse(value).map_err(|e| format!("{value}: {e}"))?,
            Err(_) => return Err(format!("{value}: syntax error in expression")),
        };
        self.depth += 1;
        self.chain += ops;
        let result = self.eval(&ast);
        self.depth -= 1;
        self.chain -= ops;
        result
    }
}

/// A binary operator on two numbers (`&&` and `||` short-circuit in the caller).
fn apply(op: BinaryOp, a: i64, b: i64) -> Result<i64, String> {
    Ok(match op {
        BinaryOp::Power => {
            let exp = u32::try_from(b).map_err(|_| {
                if b < 0 {
                    "exponent less than 0"
                } else {
                    "exponent too large"
                }
            })?;
            a.wrapping_pow(exp)
        }
        BinaryOp::Multiply => a.wrapping_mul(b),
        BinaryOp::Divide | BinaryOp::Modulo if b == 0 => {
            return Err("division by 0".to_owned());
        }
        BinaryOp::Divide => a.wrapping_div(b),
        BinaryOp::Modulo => a.wrapping_rem(b),
        BinaryOp::Comma => b,
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Subtract => a.wrapping_sub(b),
        // bash shifts by the count as the C compiler does on x86-64: modulo 64.
        BinaryOp::ShiftLeft => a.wrapping_shl((b & 63) as u32),
        BinaryOp::ShiftRight => a.wrapping_shr((b & 63) as u32),
        BinaryOp::LessThan => i64::from(a < b),
        BinaryOp::LessThanOrEqual => i64::from(a <= b),
        BinaryOp::GreaterThan => i64::from(a > b),
        BinaryOp::GreaterThanOrEqual => i64::from(a >= b),
        BinaryOp::Equals => i64::from(a == b),
        BinaryOp::NotEquals => i64::from(a != b),
        BinaryOp::BitwiseAnd => a & b,
        BinaryOp::BitwiseXor => a ^ b,
        BinaryOp::BitwiseOr => a | b,
        BinaryOp::LogicalAnd | BinaryOp::LogicalOr => 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str, vars: &[(&str, &str)]) -> Result<i64, String> {
        let mut v = Vars::default();
        for (k, val) in vars {
            v.set(k, (*val).to_owned()).unwrap();
        }
        check(text).map_err(str::to_owned)?;
        evaluate(text, &v, 3)
    }

    #[test]
    fn operators_and_numbers_as_bash() {
        let x = [("x", "3")];
        for (text, want) in [
            ("x*2", 6),
            (" x + 1 ", 4),
            ("x<5", 1),
            ("-x", -3),
            ("2**10", 1024),
            ("7%3", 1),
            ("-7/2", -3),
            ("-7%2", -1),
            ("x?10:20", 10),
            ("0x10", 16),
            ("010", 8),
            ("2#101", 5),
            ("(1+2)*3", 9),
            ("9223372036854775807+1", i64::MIN),
            ("1<<65", 2),
            ("!0 && 2 || 0", 1),
            ("0 && 1/0", 0),
            ("1, 2", 2),
            ("$x + ${x} + $?", 9),
            ("~0", -1),
            ("5 & 3 | 8 ^ 1", 9),
            ("", 0),
        ] {
            assert_eq!(eval(text, &x), Ok(want), "{text}");
        }
    }

    #[test]
    fn variables_are_expressions_in_turn() {
        assert_eq!(eval("y+1", &[("y", "x"), ("x", "4")]), Ok(5));
        assert_eq!(eval("z*2", &[("z", "1+2")]), Ok(6));
        assert_eq!(eval("e+1", &[("e", "")]), Ok(1));
        assert_eq!(eval("u+1", &[]), Ok(1));
        assert_eq!(eval("o+0", &[("o", "010")]), Ok(8));
        assert!(eval("a", &[("a", "a")]).unwrap_err().contains("recursion"));
        assert!(eval("x", &[("x", "a b")]).is_err());
    }

    #[test]
    fn errors_and_refusals() {
        assert!(eval("1/0", &[]).unwrap_err().contains("division by 0"));
        assert!(eval("1%0", &[]).unwrap_err().contains("division by 0"));
        assert!(
            eval("2**-1", &[])
                .unwrap_err()
                .contains("exponent less than 0")
        );
        for refused in [
            "i++", "x=1", "x+=2", "--i", "a[1]", "'1'", "$(ls)", "`ls`", "1\\",
        ] {
            assert!(check(refused).is_err(), "{refused}");
        }
        assert!(check("1+").is_err());
        assert!(check("$a $op $b").is_ok(), "known once the values are in");
        let deep = format!("{}1{}", "(".repeat(33), ")".repeat(33));
        assert!(check(&deep).is_err());
        let ok = format!("{}1{}", "(".repeat(32), ")".repeat(32));
        assert!(check(&ok).is_ok());
        assert!(check(&"1+".repeat(3000)).is_err());
        assert!(check(&format!("{}1", "!".repeat(65))).is_err());
    }

    /// The worst shapes the bounds allow parse in a 1 MiB stack (a pipeline stage's thread has
    /// 2 MiB; a variable's value is checked the same way before it is parsed).
    #[test]
    fn the_deepest_accepted_expressions_fit_a_small_stack() {
        let shapes = [
            format!("{}1", "!".repeat(64)),
            format!("{}1", "- ".repeat(64)),
            format!("{}1", "~".repeat(64)),
            format!("{}2", "2**".repeat(32)),
            format!("{}1{}", "1?".repeat(32), ":1".repeat(32)),
            format!("{}1{}", "(".repeat(32), ")".repeat(32)),
            format!("{}1{}", "(-".repeat(21), ")".repeat(21)),
        ];
        let handle = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || {
                for shape in &shapes {
                    check(shape).unwrap_or_else(|e| panic!("{shape}: {e}"));
                    let _ = evaluate(shape, &Vars::default(), 0);
                }
                // Values that are expressions naming the next, as deep as evaluation goes.
                let mut vars = Vars::default();
                for i in 0..40 {
                    let value = format!("{}v{}", "- ".repeat(2), i + 1);
                    vars.set(&format!("v{i}"), value).unwrap();
                }
                let deep = evaluate("v0", &vars, 0).unwrap_err();
                assert!(deep.contains("recursion"), "{deep}");
                let mut vars = Vars::default();
                vars.set("w", format!("{}1", "!".repeat(64))).unwrap();
                let top = format!("{}w", "!".repeat(64));
                check(&top).unwrap();
                assert_eq!(evaluate(&top, &vars, 0), Ok(1));
                assert!(
                    evaluate("é + 1", &vars, 0).is_err(),
                    "refused, never garbled"
                );
                // `$x` is put in before parsing: its value is bounded like the text.
                vars.set("x", "!".repeat(3000)).unwrap();
                assert!(evaluate("$x 1", &vars, 0).is_err());
            })
            .unwrap();
        handle.join().unwrap();
    }
}
