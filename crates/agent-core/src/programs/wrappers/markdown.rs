//! The wrapper tables as Markdown, for docs/permissions.md.

use super::{Layout, WRAPPERS};
use crate::programs::getopt::Arity;
use crate::programs::getopt_long::{Opt, OptionRole};

/// One option in the compact form of the read-only set's tables: `a|--arg-file=R`.
fn compact(o: &Opt) -> String {
    let mut names: Vec<String> = o.short.map(String::from).into_iter().collect();
    names.extend(o.long.iter().map(|l| format!("--{l}")));
    let mut s = names.join("|");
    let marker = match o.role {
        OptionRole::WritesFile => "W",
        OptionRole::ReadsFile => "R",
        OptionRole::RunsString | OptionRole::SplitString => "S",
        OptionRole::Replace => "X",
        OptionRole::Chdir => "D",
        OptionRole::Plain | OptionRole::RunsNothing => "",
    };
    match o.arity {
        Arity::None if !marker.is_empty() => {
            s.push(':');
            s.push_str(marker);
        }
        Arity::None => {}
        Arity::Required => {
            s.push('=');
            s.push_str(marker);
        }
        Arity::Optional => {
            s.push('?');
            s.push_str(marker);
        }
    }
    if o.role == OptionRole::RunsNothing {
        s.push('!');
    }
    s
}

fn layout_text(l: Layout) -> &'static str {
    match l {
        Layout::Command => "the command",
        Layout::Assignments { dash: true, .. } => "`-`, `NAME=VALUE`..., the command",
        Layout::Assignments { dash: false, .. } => "`NAME=VALUE`..., the command",
        Layout::Operand => "one operand, the command",
        Layout::Priority => "a priority (a number, when more follow), the command",
        Layout::LockFile => "FILE (written), the command or `-c STRING`; with `--fd`, the command",
        Layout::Watch => "the command (joined for `sh -c` unless `-x`)",
        Layout::Xargs => "the command, which gets the input's items",
    }
}

/// The wrapper tables as Markdown (docs/permissions.md holds them; a test keeps the two
/// equal): each wrapper with its options in the compact form, what follows them, whether allow
/// rules see through it, and its example rows.
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| wrapper | options | after the options | allow rules | source |\n|---|---|---|---|---|\n",
    );
    for w in WRAPPERS {
        let opts: Vec<String> = w.options.opts.iter().map(compact).collect();
        let mut opts = if opts.is_empty() {
            "none".to_owned()
        } else {
            format!("`{}`", opts.join(" ").replace('|', "\\|"))
        };
        if w.options.numeric.is_some() {
            opts.push_str(" and `-NUM`");
        }
        let allow = match (w.transparent, w.exact_only) {
            (_, true) => "exact rule only",
            (true, _) if w.layout == Layout::Xargs => "see through (without options)",
            (true, _) => "see through",
            (false, _) => "must name it",
        };
        out.push_str(&format!(
            "| `{}` | {opts} | {} | {allow} | {} |\n",
            w.name,
            layout_text(w.layout),
            w.source.replace('|', "\\|")
        ));
    }
    out.push_str("\n| example | the checker sees |\n|---|---|\n");
    for w in WRAPPERS {
        for (command, expect) in w.examples {
            out.push_str(&format!(
                "| `{}` | {expect} |\n",
                command.replace('|', "\\|")
            ));
        }
    }
    out
}
