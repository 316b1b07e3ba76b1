//! What a model's tokens cost: the one price table of the runtime (`/cost` in a session).
//!
//! Prices are US dollars per million tokens, as the providers list them for their public APIs
//! (checked 2025-11; they change: edit [`PRICES`], nothing else). A model is matched by the
//! longest listed name its own name starts with, so dated snapshots
//! (`claude-sonnet-4-5-20250929`, `gpt-4.1-2025-04-14`) find their family. An unlisted model
//! has no price; its tokens are still counted.
//!
//! ```
//! use agent_providers::{Usage, pricing};
//! let usage = Usage { input_tokens: 1_000_000, output_tokens: 100_000, ..Usage::default() };
//! let price = pricing::price("claude-sonnet-4-5-20250929").unwrap();
//! assert!((price.cost(&usage) - 4.5).abs() < 1e-9); // $3 in + $1.50 out
//! assert!(pricing::price("my-local-llama").is_none());
//! ```

use crate::types::Usage;

/// US dollars per million tokens of each kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Price {
    /// Prompt tokens (not cached).
    pub input: f64,
    /// Answer tokens.
    pub output: f64,
    /// Prompt tokens written to the cache.
    pub cache_write: f64,
    /// Prompt tokens read from the cache.
    pub cache_read: f64,
}

impl Price {
    /// The cost in US dollars of `usage` at this price.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let per = |tokens: u64, dollars: f64| tokens as f64 * dollars / 1_000_000.0;
        per(usage.input_tokens, self.input)
            + per(usage.output_tokens, self.output)
            + per(usage.cache_creation_input_tokens, self.cache_write)
            + per(usage.cache_read_input_tokens, self.cache_read)
    }
}

const fn p(input: f64, output: f64, cache_write: f64, cache_read: f64) -> Price {
    Price {
        input,
        output,
        cache_write,
        cache_read,
    }
}

/// Model name prefix → price. OpenAI bills no cache writes (they are plain input).
pub const PRICES: &[(&str, Price)] = &[
    ("claude-opus-4", p(15.0, 75.0, 18.75, 1.50)),
    ("claude-sonnet-4", p(3.0, 15.0, 3.75, 0.30)),
    ("claude-3-7-sonnet", p(3.0, 15.0, 3.75, 0.30)),
    ("claude-3-5-sonnet", p(3.0, 15.0, 3.75, 0.30)),
    ("claude-haiku-4-5", p(1.0, 5.0, 1.25, 0.10)),
    ("claude-3-5-haiku", p(0.80, 4.0, 1.0, 0.08)),
    ("gpt-4.1-nano", p(0.10, 0.40, 0.10, 0.025)),
    ("gpt-4.1-mini", p(0.40, 1.60, 0.40, 0.10)),
    ("gpt-4.1", p(2.0, 8.0, 2.0, 0.50)),
    ("gpt-4o-mini", p(0.15, 0.60, 0.15, 0.075)),
    ("gpt-4o", p(2.50, 10.0, 2.50, 1.25)),
    ("o4-mini", p(1.10, 4.40, 1.10, 0.275)),
    ("o3", p(2.0, 8.0, 2.0, 0.50)),
];

/// The price of `model`: the entry with the longest name `model` starts with.
pub fn price(model: &str) -> Option<Price> {
    PRICES
        .iter()
        .filter(|(name, _)| model.starts_with(name))
        .max_by_key(|(name, _)| name.len())
        .map(|(_, price)| *price)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_listed_name_wins() {
        assert_eq!(price("gpt-4.1-mini-2025-04-14"), price("gpt-4.1-mini"));
        assert_ne!(price("gpt-4.1-mini"), price("gpt-4.1"));
        assert_eq!(price("gpt-4o-2024-08-06").map(|p| p.input), Some(2.50));
        assert_eq!(price("llama3.1"), None);
    }

    #[test]
    fn every_kind_of_token_is_billed() {
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            cache_creation_input_tokens: 1_000_000,
            cache_read_input_tokens: 1_000_000,
        };
        let cost = price("claude-opus-4-1").unwrap().cost(&usage);
        assert!((cost - (15.0 + 75.0 + 18.75 + 1.50)).abs() < 1e-9);
    }
}
