//! Lowering `${...}`: brush's parameter expressions into the tree's [`ParameterExpansion`],
//! their operand words lowered one level deeper.

use brush_parser::word::{self as bw, ParameterExpr};

use super::pieces;
use crate::shell::tree::{
    Parameter, ParameterExpansion, ParameterTest, ReplaceMode, SpecialParameter, Transform, Word,
};

/// Lowers one `${...}` expansion at operand depth `depth`; the forms that share a shape (the
/// tests, the trims and the case changes) are built by `test`, `trim` and `case`.
pub(super) fn expansion(expr: &ParameterExpr, depth: usize) -> ParameterExpansion {
    use ParameterExpansion as P;
    match expr {
        ParameterExpr::Parameter {
            parameter,
            indirect,
        } => P::Plain {
            parameter: lower_parameter(parameter),
            indirect: *indirect,
        },
        ParameterExpr::ParameterLength {
            parameter,
            indirect,
        } => P::Length {
            parameter: lower_parameter(parameter),
            indirect: *indirect,
        },
        ParameterExpr::UseDefaultValues {
            parameter,
            indirect,
            test_type,
            default_value: word,
        }
        | ParameterExpr::AssignDefaultValues {
            parameter,
            indirect,
            test_type,
            default_value: word,
        }
        | ParameterExpr::IndicateErrorIfNullOrUnset {
            parameter,
            indirect,
            test_type,
            error_message: word,
        }
        | ParameterExpr::UseAlternativeValue {
            parameter,
            indirect,
            test_type,
            alternative_value: word,
        } => test(expr, parameter, *indirect, test_type, word, depth),
        ParameterExpr::RemoveSmallestSuffixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::RemoveLargestSuffixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::RemoveSmallestPrefixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::RemoveLargestPrefixPattern {
            parameter,
            indirect,
            pattern,
        } => trim(expr, parameter, *indirect, pattern, depth),
        ParameterExpr::Substring {
            parameter,
            indirect,
            offset,
            length,
        } => P::Substring {
            parameter: lower_parameter(parameter),
            indirect: *indirect,
            offset: offset.value.clone(),
            length: length.as_ref().map(|l| l.value.clone()),
        },
        ParameterExpr::Transform {
            parameter,
            indirect,
            op,
        } => P::Transform {
            parameter: lower_parameter(parameter),
            indirect: *indirect,
            op: transform(op),
        },
        ParameterExpr::UppercaseFirstChar {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::UppercasePattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::LowercaseFirstChar {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::LowercasePattern {
            parameter,
            indirect,
            pattern,
        } => case(expr, parameter, *indirect, pattern, depth),
        ParameterExpr::ReplaceSubstring {
            parameter,
            indirect,
            pattern,
            replacement,
            match_kind,
        } => P::Replace {
            parameter: lower_parameter(parameter),
            indirect: *indirect,
            mode: replace_mode(match_kind),
            pattern: operand(pattern, depth),
            replacement: optional_operand(replacement, depth),
        },
        ParameterExpr::VariableNames {
            prefix,
            concatenate,
        } => P::VariableNames {
            prefix: prefix.clone(),
            concatenate: *concatenate,
        },
        ParameterExpr::MemberKeys {
            variable_name,
            concatenate,
        } => P::MemberKeys {
            name: variable_name.clone(),
            concatenate: *concatenate,
        },
    }
}

/// `${x-w}`, `${x=w}`, `${x?w}`, `${x+w}` (which one is `expr`), and with a colon (`${x:-w}`)
/// a null `x` counts as unset.
fn test(
    expr: &ParameterExpr,
    parameter: &bw::Parameter,
    indirect: bool,
    test_type: &bw::ParameterTestType,
    word: &Option<String>,
    depth: usize,
) -> ParameterExpansion {
    ParameterExpansion::Test {
        parameter: lower_parameter(parameter),
        indirect,
        test: match expr {
            ParameterExpr::UseDefaultValues { .. } => ParameterTest::UseDefault,
            ParameterExpr::AssignDefaultValues { .. } => ParameterTest::AssignDefault,
            ParameterExpr::IndicateErrorIfNullOrUnset { .. } => ParameterTest::Error,
            _ => ParameterTest::Alternative,
        },
        null_too: matches!(test_type, bw::ParameterTestType::UnsetOrNull),
        word: optional_operand(word, depth),
    }
}

/// `${x%p}`, `${x%%p}`, `${x#p}`, `${x##p}` (which one is `expr`): a suffix or prefix
/// removed, the shortest or the longest match.
fn trim(
    expr: &ParameterExpr,
    parameter: &bw::Parameter,
    indirect: bool,
    pattern: &Option<String>,
    depth: usize,
) -> ParameterExpansion {
    ParameterExpansion::Trim {
        parameter: lower_parameter(parameter),
        indirect,
        suffix: matches!(
            expr,
            ParameterExpr::RemoveSmallestSuffixPattern { .. }
                | ParameterExpr::RemoveLargestSuffixPattern { .. }
        ),
        longest: matches!(
            expr,
            ParameterExpr::RemoveLargestSuffixPattern { .. }
                | ParameterExpr::RemoveLargestPrefixPattern { .. }
        ),
        pattern: optional_operand(pattern, depth),
    }
}

/// `${x^p}`, `${x^^p}`, `${x,p}`, `${x,,p}` (which one is `expr`): upper or lower case, the
/// first character or every match.
fn case(
    expr: &ParameterExpr,
    parameter: &bw::Parameter,
    indirect: bool,
    pattern: &Option<String>,
    depth: usize,
) -> ParameterExpansion {
    ParameterExpansion::Case {
        parameter: lower_parameter(parameter),
        indirect,
        upper: matches!(
            expr,
            ParameterExpr::UppercaseFirstChar { .. } | ParameterExpr::UppercasePattern { .. }
        ),
        all: matches!(
            expr,
            ParameterExpr::UppercasePattern { .. } | ParameterExpr::LowercasePattern { .. }
        ),
        pattern: optional_operand(pattern, depth),
    }
}

/// An operand word of a parameter expansion, one level deeper.
fn operand(text: &str, depth: usize) -> Word {
    Word {
        raw: text.to_owned(),
        at: None,
        pieces: pieces(text, false, depth + 1),
    }
}

/// An operand brush may leave out, lowered when present.
fn optional_operand(text: &Option<String>, depth: usize) -> Option<Word> {
    text.as_deref().map(|s| operand(s, depth))
}

/// `${x@op}`'s operator.
fn transform(op: &bw::ParameterTransformOp) -> Transform {
    match op {
        bw::ParameterTransformOp::CapitalizeInitial => Transform::CapitalizeInitial,
        bw::ParameterTransformOp::ExpandEscapeSequences => Transform::ExpandEscapes,
        bw::ParameterTransformOp::PossiblyQuoteWithArraysExpanded { separate_words } => {
            Transform::QuoteWithArraysExpanded {
                separate_words: *separate_words,
            }
        }
        bw::ParameterTransformOp::PromptExpand => Transform::PromptExpand,
        bw::ParameterTransformOp::Quoted => Transform::Quoted,
        bw::ParameterTransformOp::ToAssignmentLogic => Transform::AssignmentForm,
        bw::ParameterTransformOp::ToAttributeFlags => Transform::AttributeFlags,
        bw::ParameterTransformOp::ToLowerCase => Transform::LowerCase,
        bw::ParameterTransformOp::ToUpperCase => Transform::UpperCase,
    }
}

/// Which match `${x/pattern/replacement}` replaces (`/#`, `/%`, `/`, `//`).
fn replace_mode(kind: &bw::SubstringMatchKind) -> ReplaceMode {
    match kind {
        bw::SubstringMatchKind::Prefix => ReplaceMode::Prefix,
        bw::SubstringMatchKind::Suffix => ReplaceMode::Suffix,
        bw::SubstringMatchKind::FirstOccurrence => ReplaceMode::First,
        bw::SubstringMatchKind::Anywhere => ReplaceMode::All,
    }
}

/// A parameter as the tree names it.
fn lower_parameter(p: &bw::Parameter) -> Parameter {
    match p {
        bw::Parameter::Positional(n) => Parameter::Positional(*n),
        bw::Parameter::Special(s) => Parameter::Special(match s {
            bw::SpecialParameter::AllPositionalParameters { concatenate } => {
                SpecialParameter::AllPositional {
                    concatenate: *concatenate,
                }
            }
            bw::SpecialParameter::PositionalParameterCount => SpecialParameter::PositionalCount,
            bw::SpecialParameter::LastExitStatus => SpecialParameter::LastExitStatus,
            bw::SpecialParameter::CurrentOptionFlags => SpecialParameter::OptionFlags,
            bw::SpecialParameter::ProcessId => SpecialParameter::ProcessId,
            bw::SpecialParameter::LastBackgroundProcessId => {
                SpecialParameter::LastBackgroundProcessId
            }
            bw::SpecialParameter::ShellName => SpecialParameter::ShellName,
        }),
        bw::Parameter::Named(name) => Parameter::Named(name.clone()),
        bw::Parameter::NamedWithIndex { name, index } => Parameter::NamedWithIndex {
            name: name.clone(),
            index: index.clone(),
        },
        bw::Parameter::NamedWithAllIndices { name, concatenate } => {
            Parameter::NamedWithAllIndices {
                name: name.clone(),
                concatenate: *concatenate,
            }
        }
    }
}
