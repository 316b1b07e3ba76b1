//! The conversation the provider sees, and how big it is.
//!
//! The loop keeps the provider-facing history in memory ([`History`]) and appends to it as it
//! logs; on resume it is rebuilt from the log's messages (compactions applied). Token counts
//! come from the provider's usage when it reports them; otherwise, and for what was added
//! since, from [`estimate_tokens`] (about four bytes a token, the usual rule for English and
//! code; it errs on the large side for dense text, which only makes compaction come earlier).

use agent_providers::{ContentBlock, Message, Role, ToolSpec};

use agent_store::{Content, Speaker, TranscriptMessage};

/// How compacted history is introduced to the model.
pub const SUMMARY_PREFIX: &str =
    "This session continues from an earlier conversation that was compacted. Summary of it:\n\n";

/// Estimated tokens of `text`: one per four bytes, rounded up.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

pub use agent_store::output_text;

/// Wraps runtime-injected context (hook output, the max-turns notice) the way the model
/// recognises it as not typed by the user.
pub fn reminder(text: &str) -> String {
    format!("<system-reminder>\n{text}\n</system-reminder>")
}

/// The provider-facing history of a session.
#[derive(Clone, Debug, Default)]
pub struct History {
    messages: Vec<Message>,
    /// Estimated tokens of each message, kept in step with `messages`.
    sizes: Vec<u64>,
    /// Tokens the provider counted at its last call, and how many messages that call saw.
    measured: Option<(u64, usize)>,
}

impl History {
    /// The history of a resumed log's messages (compaction summaries become a user text).
    pub fn from_messages(messages: &[TranscriptMessage]) -> Self {
        let mut h = Self::default();
        for m in messages {
            let role = match m.role {
                Speaker::User => Role::User,
                Speaker::Assistant => Role::Assistant,
            };
            let block = match &m.content {
                Content::Text { text } => ContentBlock::text(text),
                Content::ToolUse { id, name, input } => ContentBlock::ToolUse {
                    id: id.clone(),
                    name: name.clone(),
                    input: input.clone(),
                },
                Content::ToolResult {
                    tool_use_id,
                    output,
                    is_error,
                } => ContentBlock::ToolResult {
                    tool_use_id: tool_use_id.clone(),
                    content: output_text(output),
                    is_error: *is_error,
                },
                Content::Summary { text, .. } => {
                    ContentBlock::text(format!("{SUMMARY_PREFIX}{text}"))
                }
            };
            h.push(role, block);
        }
        h
    }

    /// Adds a block; neighbouring blocks of one role form one message.
    pub fn push(&mut self, role: Role, block: ContentBlock) {
        let size = block_tokens(&block);
        match self.messages.last_mut() {
            Some(last) if last.role == role => {
                last.content.push(block);
                if let Some(s) = self.sizes.last_mut() {
                    *s += size;
                }
            }
            _ => {
                self.messages.push(Message {
                    role,
                    content: vec![block],
                });
                self.sizes.push(size);
            }
        }
    }

    /// The messages.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Records the provider's count of the prompt it was just sent (the whole history then),
    /// plus its answer.
    pub fn measured(&mut self, prompt_tokens: u64, answer_tokens: u64, messages_seen: usize) {
        if prompt_tokens > 0 {
            self.measured = Some((prompt_tokens + answer_tokens, messages_seen));
        }
    }

    /// The number of messages.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// Tokens of the history plus the fixed part of a request (system prompt, tool specs): the
    /// provider's last count plus estimates for what came after, or estimates alone.
    pub fn tokens(&self, fixed: u64) -> u64 {
        match self.measured {
            Some((counted, seen)) if seen <= self.sizes.len() => {
                // The last message seen may have grown since (blocks merged into it); count
                // it again rather than miss it.
                let from = seen.saturating_sub(1);
                counted + self.sizes[from..].iter().sum::<u64>()
            }
            _ => fixed + self.sizes.iter().sum::<u64>(),
        }
    }

    /// Replaces everything by one summary message.
    pub fn replace_with_summary(&mut self, summary: &str) {
        self.messages.clear();
        self.sizes.clear();
        self.measured = None;
        self.push(
            Role::User,
            ContentBlock::text(format!("{SUMMARY_PREFIX}{summary}")),
        );
    }
}

/// Estimated tokens of one block.
fn block_tokens(block: &ContentBlock) -> u64 {
    match block {
        ContentBlock::Text { text } => estimate_tokens(text),
        ContentBlock::ToolUse { name, input, .. } => {
            estimate_tokens(name) + estimate_tokens(&input.to_string()) + 8
        }
        ContentBlock::ToolResult { content, .. } => estimate_tokens(content) + 8,
    }
}

/// Estimated tokens of a system prompt and tool specs.
pub fn fixed_tokens(system: &str, tools: &[ToolSpec]) -> u64 {
    estimate_tokens(system)
        + tools
            .iter()
            .map(|t| {
                estimate_tokens(&t.name)
                    + estimate_tokens(&t.description)
                    + estimate_tokens(&t.input_schema.to_string())
            })
            .sum::<u64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_of_one_role_merge_and_sizes_follow() {
        let mut h = History::default();
        h.push(Role::User, ContentBlock::text("abcd"));
        h.push(Role::User, ContentBlock::text("efgh"));
        h.push(Role::Assistant, ContentBlock::text("x"));
        assert_eq!(h.len(), 2);
        assert_eq!(h.messages()[0].content.len(), 2);
        assert_eq!(h.tokens(10), 10 + 2 + 1);
        h.measured(100, 5, 2);
        h.push(Role::User, ContentBlock::text("12345678"));
        // Counted 105, the last seen message again (1), and the new one (2).
        assert_eq!(h.tokens(10), 105 + 1 + 2);
        h.replace_with_summary("s");
        assert_eq!(h.len(), 1);
    }
}
