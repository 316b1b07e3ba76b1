//! A model of Anthropic prompt caching, for loopback servers that report usage as the real
//! Messages API would: given each request body in turn, it says how many prompt tokens were
//! read from the cache, written to it, and billed at the full rate.
//!
//! The rules it follows (the API's documented behaviour, prompt-caching guide):
//! - the cached prefix is, in this order, the tools, the system blocks, then the message
//!   blocks; a block with `cache_control` is a breakpoint, and the prefix up to and including
//!   it is what gets cached;
//! - a request reads the longest prefix that an earlier request cached, looking at each
//!   breakpoint and at the [`LOOKBACK_BLOCKS`] block boundaries before it;
//! - it writes the prefix up to its last breakpoint (every breakpoint's prefix becomes a cache
//!   entry); `cache_creation_input_tokens` is what that prefix has beyond the part read;
//! - a prefix shorter than [`MIN_CACHEABLE_TOKENS`] is neither written nor read;
//! - `input_tokens` is the rest of the prompt: everything after the last breakpoint (or the
//!   whole prompt when nothing is cached).
//!
//! Tokens are counted as one per four bytes of each block's compact JSON (without its
//! `cache_control`), rounded up: not the real tokenizer, but deterministic, and the same
//! count for the same bytes, which is all the accounting needs. Not modelled: the 5-minute
//! lifetime (a loopback session is seconds long), 1-hour entries, and invalidation by a
//! changed `tool_choice` or images.
//!
//! Included with `#[path]` by the provider tests, the CLI's loopback model server and the
//! caching bench, so there is one of it.

#![allow(
    dead_code,
    reason = "each test or bench that includes this uses part of it"
)]

use std::collections::HashSet;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use serde_json::Value;

/// Prefixes shorter than this are not cached (the API's minimum for Sonnet and Opus models).
pub const MIN_CACHEABLE_TOKENS: u64 = 1024;

/// How many block boundaries before a breakpoint are also checked for a hit.
pub const LOOKBACK_BLOCKS: usize = 20;

/// The prompt tokens of one request, split as the API reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheUsage {
    /// Billed at the full rate.
    pub input_tokens: u64,
    /// Written to the cache (billed ×1.25).
    pub cache_creation_input_tokens: u64,
    /// Read from the cache (billed ×0.1).
    pub cache_read_input_tokens: u64,
}

impl CacheUsage {
    /// Every prompt token of the request.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens
    }

    /// The prompt's cost in full-rate input tokens: writes ×1.25, reads ×0.1.
    pub fn billed_equivalent(&self) -> f64 {
        self.input_tokens as f64
            + self.cache_creation_input_tokens as f64 * 1.25
            + self.cache_read_input_tokens as f64 * 0.1
    }
}

/// Tokens of `text`: one per four bytes, rounded up.
pub fn tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

/// The cache of one API key: the prefixes written so far.
#[derive(Debug, Default)]
pub struct PromptCache {
    written: HashSet<u64>,
}

/// One block of the cached order: the hash of the prefix ending with it, the prefix's
/// tokens, and whether it is a breakpoint.
struct Boundary {
    prefix: u64,
    tokens: u64,
    breakpoint: bool,
}

impl PromptCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The usage of the request `body` (a Messages API request as JSON), and the cache
    /// entries it writes.
    pub fn usage(&mut self, body: &Value) -> CacheUsage {
        let boundaries = boundaries(body);
        let total = boundaries.last().map_or(0, |b| b.tokens);
        let breakpoints: Vec<usize> = (0..boundaries.len())
            .filter(|&i| boundaries[i].breakpoint)
            .collect();
        let Some(&last) = breakpoints.last() else {
            return CacheUsage {
                input_tokens: total,
                ..CacheUsage::default()
            };
        };
        let cacheable = |i: usize| boundaries[i].tokens >= MIN_CACHEABLE_TOKENS;
        let read = breakpoints
            .iter()
            .flat_map(|&b| (b.saturating_sub(LOOKBACK_BLOCKS)..=b).rev())
            .filter(|&i| cacheable(i) && self.written.contains(&boundaries[i].prefix))
            .map(|i| boundaries[i].tokens)
            .max()
            .unwrap_or(0);
        let written = if cacheable(last) {
            boundaries[last].tokens.saturating_sub(read)
        } else {
            0
        };
        for &b in &breakpoints {
            if cacheable(b) {
                self.written.insert(boundaries[b].prefix);
            }
        }
        CacheUsage {
            input_tokens: total - read - written,
            cache_creation_input_tokens: written,
            cache_read_input_tokens: read,
        }
    }
}

/// The blocks of `body` in the cached order (tools, system, messages), each with its prefix.
fn boundaries(body: &Value) -> Vec<Boundary> {
    let mut blocks: Vec<(String, bool)> = Vec::new();
    let mut push = |kind: &str, block: &Value| {
        let mut block = block.clone();
        let breakpoint = block
            .as_object_mut()
            .and_then(|o| o.remove("cache_control"))
            .is_some();
        blocks.push((format!("{kind}:{block}"), breakpoint));
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        push("tool", tool);
    }
    match &body["system"] {
        Value::String(text) => push("system", &serde_json::json!({"type": "text", "text": text})),
        Value::Array(list) => list.iter().for_each(|b| push("system", b)),
        _ => {}
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or("user");
        match &message["content"] {
            Value::String(text) => push(role, &serde_json::json!({"type": "text", "text": text})),
            Value::Array(list) => list.iter().for_each(|b| push(role, b)),
            _ => {}
        }
    }
    let mut hasher = DefaultHasher::new();
    let mut sum = 0;
    blocks
        .into_iter()
        .map(|(text, breakpoint)| {
            text.hash(&mut hasher);
            sum += tokens(&text);
            Boundary {
                prefix: hasher.finish(),
                tokens: sum,
                breakpoint,
            }
        })
        .collect()
}
