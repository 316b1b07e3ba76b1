//! Shell arithmetic (`$((..))`, `((..))`, `for ((..))`, `[[ a -eq b ]]` operands) parsed with
//! brush-parser's arithmetic grammar into an owned expression tree.
//!
//! The shell tree keeps arithmetic as text ([`super::tree::Piece::Arithmetic`],
//! [`super::tree::Compound::Arithmetic`]) because bash parses it only when it evaluates it, after
//! `$NAME` is replaced, and a variable's value can be an expression in turn. Whoever evaluates it
//! (the WASI shell) parses it here, so brush-parser stays behind agent-core's guards.
//!
//! ```
//! use agent_core::shell::arithmetic::{self, BinaryOp, Expr};
//!
//! let expr = arithmetic::parse("1 + x")?;
//! assert!(matches!(expr, Expr::Binary(BinaryOp::Add, _, _)));
//! # Ok::<(), arithmetic::ArithmeticError>(())
//! ```

/// The most operator characters (`( ) ! ~ ? : + - * / % < > = & | ^ ,`) one expression may
/// hold. brush's arithmetic parser recurses for every prefix operator, `**`, `?:` and
/// parenthesis, and 3000 `!` overflowed the stack (an abort no caller can catch); 64 is far
/// above what a script writes and parses in well under 1 MiB of stack (tested).
pub const MAX_OPERATORS: usize = 64;

/// Why an expression could not be parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArithmeticError {
    /// Occurs when the text is not an arithmetic expression.
    #[error("syntax error in expression")]
    Syntax,
    /// Occurs when the expression holds more than [`MAX_OPERATORS`] operator characters.
    #[error("more than {MAX_OPERATORS} operators in one arithmetic expression; split it")]
    TooManyOperators,
    /// Occurs when brush-parser panicked on the text (a parser bug; the text is refused).
    #[error("the arithmetic parser failed")]
    ParserFailed,
}

/// An arithmetic expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// An integer literal (already converted from its base).
    Literal(i64),
    /// A variable or an array element, read.
    Reference(Target),
    /// `+x`, `-x`, `~x`, `!x`.
    Unary(UnaryOp, Box<Expr>),
    /// `x OP y`.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `c ? x : y`.
    Conditional(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `t = x`.
    Assign(Target, Box<Expr>),
    /// `t OP= x`.
    BinaryAssign(BinaryOp, Target, Box<Expr>),
    /// `++t`, `--t`, `t++`, `t--`.
    UnaryAssign(UnaryAssignOp, Target),
}

/// What an assignment or a reference names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A variable.
    Variable(String),
    /// An element of an indexed array, with its subscript.
    Element(String, Box<Expr>),
}

/// The binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `**`
    Power,
    /// `*`
    Multiply,
    /// `/`
    Divide,
    /// `%`
    Modulo,
    /// `,`
    Comma,
    /// `+`
    Add,
    /// `-`
    Subtract,
    /// `<<`
    ShiftLeft,
    /// `>>`
    ShiftRight,
    /// `<`
    LessThan,
    /// `<=`
    LessThanOrEqual,
    /// `>`
    GreaterThan,
    /// `>=`
    GreaterThanOrEqual,
    /// `==`
    Equals,
    /// `!=`
    NotEquals,
    /// `&`
    BitwiseAnd,
    /// `^`
    BitwiseXor,
    /// `|`
    BitwiseOr,
    /// `&&`
    LogicalAnd,
    /// `||`
    LogicalOr,
}

/// The unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `~`
    BitwiseNot,
    /// `!`
    LogicalNot,
}

/// The increment and decrement operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryAssignOp {
    /// `++t`
    PrefixIncrement,
    /// `--t`
    PrefixDecrement,
    /// `t++`
    PostfixIncrement,
    /// `t--`
    PostfixDecrement,
}

/// The operator characters of `text` (what bounds the parser's recursion).
pub fn operator_count(text: &str) -> usize {
    text.bytes()
        .filter(|c| b"()!~?:+-*/%<>=&|^,".contains(c))
        .count()
}

/// Parses an arithmetic expression (the text between `$((` and `))`, with every `$` expansion
/// already replaced).
///
/// # Errors
/// [`ArithmeticError::TooManyOperators`] over [`MAX_OPERATORS`] (checked before parsing),
/// [`ArithmeticError::Syntax`] when it does not parse, [`ArithmeticError::ParserFailed`] when
/// the parser panicked.
pub fn parse(text: &str) -> Result<Expr, ArithmeticError> {
    if operator_count(text) > MAX_OPERATORS {
        return Err(ArithmeticError::TooManyOperators);
    }
    match super::guards::catch_panic(|| brush_parser::arithmetic::parse(text)) {
        Some(Ok(expr)) => Ok(lower(&expr)),
        Some(Err(_)) => Err(ArithmeticError::Syntax),
        None => Err(ArithmeticError::ParserFailed),
    }
}

fn lower(e: &brush_parser::ast::ArithmeticExpr) -> Expr {
    use brush_parser::ast::ArithmeticExpr as E;
    match e {
        E::Literal(n) => Expr::Literal(*n),
        E::Reference(t) => Expr::Reference(target(t)),
        E::UnaryOp(op, x) => Expr::Unary(unary(*op), Box::new(lower(x))),
        E::BinaryOp(op, x, y) => Expr::Binary(binary(*op), Box::new(lower(x)), Box::new(lower(y))),
        E::Conditional(c, x, y) => {
            Expr::Conditional(Box::new(lower(c)), Box::new(lower(x)), Box::new(lower(y)))
        }
        E::Assignment(t, x) => Expr::Assign(target(t), Box::new(lower(x))),
        E::BinaryAssignment(op, t, x) => {
            Expr::BinaryAssign(binary(*op), target(t), Box::new(lower(x)))
        }
        E::UnaryAssignment(op, t) => {
            use brush_parser::ast::UnaryAssignmentOperator as U;
            let op = match op {
                U::PrefixIncrement => UnaryAssignOp::PrefixIncrement,
                U::PrefixDecrement => UnaryAssignOp::PrefixDecrement,
                U::PostfixIncrement => UnaryAssignOp::PostfixIncrement,
                U::PostfixDecrement => UnaryAssignOp::PostfixDecrement,
            };
            Expr::UnaryAssign(op, target(t))
        }
    }
}

fn target(t: &brush_parser::ast::ArithmeticTarget) -> Target {
    use brush_parser::ast::ArithmeticTarget as T;
    match t {
        T::Variable(name) => Target::Variable(name.clone()),
        T::ArrayElement(name, index) => Target::Element(name.clone(), Box::new(lower(index))),
    }
}

fn unary(op: brush_parser::ast::UnaryOperator) -> UnaryOp {
    use brush_parser::ast::UnaryOperator as U;
    match op {
        U::UnaryPlus => UnaryOp::Plus,
        U::UnaryMinus => UnaryOp::Minus,
        U::BitwiseNot => UnaryOp::BitwiseNot,
        U::LogicalNot => UnaryOp::LogicalNot,
    }
}

fn binary(op: brush_parser::ast::BinaryOperator) -> BinaryOp {
    use brush_parser::ast::BinaryOperator as B;
    match op {
        B::Power => BinaryOp::Power,
        B::Multiply => BinaryOp::Multiply,
        B::Divide => BinaryOp::Divide,
        B::Modulo => BinaryOp::Modulo,
        B::Comma => BinaryOp::Comma,
        B::Add => BinaryOp::Add,
        B::Subtract => BinaryOp::Subtract,
        B::ShiftLeft => BinaryOp::ShiftLeft,
        B::ShiftRight => BinaryOp::ShiftRight,
        B::LessThan => BinaryOp::LessThan,
        B::LessThanOrEqualTo => BinaryOp::LessThanOrEqual,
        B::GreaterThan => BinaryOp::GreaterThan,
        B::GreaterThanOrEqualTo => BinaryOp::GreaterThanOrEqual,
        B::Equals => BinaryOp::Equals,
        B::NotEquals => BinaryOp::NotEquals,
        B::BitwiseAnd => BinaryOp::BitwiseAnd,
        B::BitwiseXor => BinaryOp::BitwiseXor,
        B::BitwiseOr => BinaryOp::BitwiseOr,
        B::LogicalAnd => BinaryOp::LogicalAnd,
        B::LogicalOr => BinaryOp::LogicalOr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_are_lowered() {
        assert_eq!(parse("0x10"), Ok(Expr::Literal(16)));
        assert_eq!(
            parse("a[1] += -b"),
            Ok(Expr::BinaryAssign(
                BinaryOp::Add,
                Target::Element("a".to_owned(), Box::new(Expr::Literal(1))),
                Box::new(Expr::Unary(
                    UnaryOp::Minus,
                    Box::new(Expr::Reference(Target::Variable("b".to_owned())))
                ))
            ))
        );
        assert_eq!(
            parse("i++"),
            Ok(Expr::UnaryAssign(
                UnaryAssignOp::PostfixIncrement,
                Target::Variable("i".to_owned())
            ))
        );
        assert!(matches!(parse("c ? 1 : 2"), Ok(Expr::Conditional(..))));
        assert_eq!(parse("1 +"), Err(ArithmeticError::Syntax));
    }

    /// 3000 `!` overflowed the parser's stack; more than [`MAX_OPERATORS`] are refused before
    /// parsing, and the most accepted, in their worst shapes, parse in a 1 MiB stack.
    #[test]
    fn operators_are_bounded_before_the_recursive_parser_runs() {
        assert_eq!(
            parse(&format!("{}1", "!".repeat(3000))),
            Err(ArithmeticError::TooManyOperators)
        );
        let shapes = [
            format!("{}1", "!".repeat(MAX_OPERATORS)),
            format!("{}1", "- ".repeat(MAX_OPERATORS)),
            format!("{}2", "2**".repeat(MAX_OPERATORS / 2)),
            format!("{}1{}", "1?".repeat(32), ":1".repeat(32)),
            format!("{}1{}", "(".repeat(32), ")".repeat(32)),
        ];
        std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || {
                for shape in &shapes {
                    assert!(parse(shape).is_ok(), "{shape}");
                }
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
