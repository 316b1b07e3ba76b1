//! What a run or a session cost: its tokens and an estimate in US dollars at the model's list
//! price (`agent_providers::pricing`), for the line `agent run` ends with, its `--json`
//! output, and `/cost` in `agent chat`.

use std::io::Write as _;

use agent_providers::{Usage, pricing};

use crate::colour::{Ink, Palette};

/// One line: the tokens of each kind, and the cost when the model's price is known.
pub(crate) fn summary(usage: &Usage, model: &str) -> String {
    let tokens = format!(
        "tokens: {} in, {} out, {} cache written, {} cache read",
        usage.input_tokens,
        usage.output_tokens,
        usage.cache_creation_input_tokens,
        usage.cache_read_input_tokens
    );
    match cost_usd(usage, model) {
        Some(cost) => format!("{tokens}; about ${cost:.4} at {model}'s list price"),
        None => format!("{tokens}; no price is known for {model} (agent_providers::pricing)"),
    }
}

/// The estimated cost in US dollars, `None` for a model without a listed price.
pub(crate) fn cost_usd(usage: &Usage, model: &str) -> Option<f64> {
    pricing::price(model).map(|p| p.cost(usage))
}

/// Prints [`summary`] on stderr, dimmed like the transcript's other summary lines.
pub(crate) fn print_summary(usage: &Usage, model: &str) {
    let line = Palette::for_stderr().paint(Ink::Dim, &format!("── {}", summary(usage, model)));
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_names_every_kind_of_token_and_a_price_when_one_is_known() {
        let usage = Usage {
            input_tokens: 2_000_000,
            output_tokens: 0,
            ..Usage::default()
        };
        assert_eq!(
            summary(&usage, "gpt-4.1"),
            "tokens: 2000000 in, 0 out, 0 cache written, 0 cache read; about $4.0000 at gpt-4.1's list price"
        );
        assert!(summary(&usage, "local-model").contains("no price is known for local-model"));
    }
}
