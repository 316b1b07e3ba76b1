//! The conversation as the log holds it, rebuilt from the log's events: the transcript the agent
//! loop turns into a provider request when it resumes a session.
//!
//! Each conversation event gives one [`TranscriptMessage`]: `user.message` a user text,
//! `assistant.message` an assistant text, `tool.use` an assistant tool call, `tool.result` a user
//! tool result. A `compaction` event replaces the messages of its `fromSeq..=toSeq` range by one
//! summary message at the place of the range. These are not agent-providers' `Message` and
//! `Role` (a request's turns, content blocks merged per role): each transcript message is one
//! event, with the ordinal, `seq` and id that fork and resume-at name; the agent loop merges
//! neighbouring messages of one speaker into the turns a provider wants.

use agent_core::events::{Event, EventId, EventPayload};
use serde::Serialize;
use serde_json::Value;

/// Who a transcript message is from (the agent loop maps it to agent-providers' `Role`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Speaker {
    /// The user (prompts, tool results, summaries).
    User,
    /// The model.
    Assistant,
}

/// What a message holds.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// A tool call asked for by the model.
    ToolUse {
        /// Pairs the call with its result.
        id: String,
        /// Tool name.
        name: String,
        /// Tool input.
        input: Value,
    },
    /// What a tool returned.
    ToolResult {
        /// The call this answers.
        tool_use_id: String,
        /// The output.
        output: Value,
        /// Whether the call failed.
        is_error: bool,
    },
    /// The summary that replaced earlier messages (a `compaction`).
    Summary {
        /// The summary text.
        text: String,
        /// First replaced `seq`.
        from_seq: u64,
        /// Last replaced `seq`.
        to_seq: u64,
    },
}

/// One message of the conversation as the log holds it: one conversation event (or the summary
/// of a compaction), with where it sits in the log.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptMessage {
    /// Ordinal of the conversation event in the whole log (0-based; what `fork --upto` counts).
    /// A summary carries the ordinal of the first message it replaced.
    pub index: u64,
    /// `seq` of the event the message came from.
    pub seq: u64,
    /// Id of that event (what `resume_at` names).
    pub event_id: EventId,
    /// Who it is from.
    pub role: Speaker,
    /// What it holds.
    pub content: Content,
}

/// A tool result as the text the model is sent (and a Claude Code transcript holds): a string
/// output as it is, any other JSON as its compact text.
pub fn output_text(output: &Value) -> String {
    match output {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The message of one conversation event (`None` for other events).
fn message_of(event: &Event, index: u64) -> Option<TranscriptMessage> {
    let (role, content) = match &event.payload {
        EventPayload::UserMessage(m) => (
            Speaker::User,
            Content::Text {
                text: m.text.clone(),
            },
        ),
        EventPayload::AssistantMessage(m) => (
            Speaker::Assistant,
            Content::Text {
                text: m.text.clone(),
            },
        ),
        EventPayload::ToolUse(t) => (
            Speaker::Assistant,
            Content::ToolUse {
                id: t.tool_use_id.clone(),
                name: t.name.clone(),
                input: t.input.clone(),
            },
        ),
        EventPayload::ToolResult(r) => (
            Speaker::User,
            Content::ToolResult {
                tool_use_id: r.tool_use_id.clone(),
                output: r.output.clone(),
                is_error: r.is_error,
            },
        ),
        _ => return None,
    };
    Some(TranscriptMessage {
        index,
        seq: event.seq,
        event_id: event.id.clone(),
        role,
        content,
    })
}

fn summary_of(event: &Event, index: u64) -> Option<TranscriptMessage> {
    let EventPayload::Compaction(c) = &event.payload else {
        return None;
    };
    Some(TranscriptMessage {
        index,
        seq: event.seq,
        event_id: event.id.clone(),
        role: Speaker::User,
        content: Content::Summary {
            text: c.summary.clone(),
            from_seq: c.from_seq,
            to_seq: c.to_seq,
        },
    })
}

/// Where a message sits in seq order (a summary sits where its range started).
fn position(m: &TranscriptMessage) -> u64 {
    match m.content {
        Content::Summary { from_seq, .. } => from_seq,
        _ => m.seq,
    }
}

/// The whole conversation of a log, compactions applied.
pub fn conversation<'a>(events: impl IntoIterator<Item = &'a Event>) -> Vec<TranscriptMessage> {
    let mut out: Vec<TranscriptMessage> = Vec::new();
    // Seqs of every conversation event so far, for a summary's ordinal.
    let mut seqs: Vec<u64> = Vec::new();
    for event in events {
        if let Some(m) = message_of(event, seqs.len() as u64) {
            seqs.push(event.seq);
            out.push(m);
        } else if let EventPayload::Compaction(c) = &event.payload {
            let (from, to) = (c.from_seq, c.to_seq);
            let replaced_index = seqs.iter().filter(|&&s| s < from).count() as u64;
            out.retain(|m| !(from..=to).contains(&position(m)));
            let at = out.partition_point(|m| position(m) < from);
            if let Some(s) = summary_of(event, replaced_index) {
                out.insert(at, s);
            }
        }
    }
    out
}

/// Builds the last messages of a log from its events read backwards (newest first), without
/// looking further back than needed.
#[derive(Debug)]
pub struct TailMessages {
    want: usize,
    /// Conversation events in the whole log (from the index), for the message ordinals.
    total_messages: u64,
    /// Seqs of the conversation events seen so far (newest first), replaced or not.
    seen: Vec<u64>,
    /// Ranges replaced by compactions seen so far.
    replaced: Vec<(u64, u64)>,
    collected: Vec<TranscriptMessage>,
    /// The smallest seq looked at.
    low_seq: u64,
}

impl TailMessages {
    /// Wants the last `want` messages of a log holding `total_messages` conversation events.
    pub fn new(want: usize, total_messages: u64) -> Self {
        Self {
            want,
            total_messages,
            seen: Vec::new(),
            replaced: Vec::new(),
            collected: Vec::new(),
            low_seq: u64::MAX,
        }
    }

    fn is_replaced(&self, seq: u64) -> bool {
        self.replaced.iter().any(|&(a, b)| (a..=b).contains(&seq))
    }

    /// Takes the previous event; returns `true` when enough messages are known.
    pub fn push(&mut self, event: &Event) -> bool {
        self.low_seq = event.seq;
        if crate::metadata::is_conversation(event) {
            self.seen.push(event.seq);
            if !self.is_replaced(event.seq) {
                let index = self.total_messages.saturating_sub(self.seen.len() as u64);
                if let Some(m) = message_of(event, index) {
                    self.collected.push(m);
                }
            }
        } else if let EventPayload::Compaction(c) = &event.payload
            && !self.is_replaced(event.seq)
        {
            self.replaced.push((c.from_seq, c.to_seq));
            // The ordinal is known once the range's start is reached; see `finish`.
            if let Some(s) = summary_of(event, 0) {
                self.collected.push(s);
            }
        }
        self.done()
    }

    /// Enough messages sit at or after the lowest seq looked at, so nothing older can come
    /// between them.
    fn done(&self) -> bool {
        self.collected
            .iter()
            .filter(|m| position(m) >= self.low_seq)
            .count()
            >= self.want
    }

    /// The messages, oldest first.
    pub fn finish(mut self) -> Vec<TranscriptMessage> {
        // A summary's ordinal is the number of conversation events before its range; the
        // events at or after the range's start have all been seen when it is kept.
        for m in &mut self.collected {
            if let Content::Summary { from_seq, .. } = m.content {
                let after = self.seen.iter().filter(|&&s| s >= from_seq).count() as u64;
                m.index = self.total_messages.saturating_sub(after);
            }
        }
        self.collected.sort_by_key(position);
        let skip = self.collected.len().saturating_sub(self.want);
        self.collected.split_off(skip)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::events::{AssistantMessage, Compaction, ToolResultEvent, ToolUse, UserMessage};
    use serde_json::json;

    fn log() -> Vec<Event> {
        let payloads = vec![
            EventPayload::UserMessage(UserMessage { text: "u1".into() }),
            EventPayload::AssistantMessage(AssistantMessage::text("a1")),
            EventPayload::ToolUse(ToolUse {
                tool_use_id: "t".into(),
                name: "Bash".into(),
                input: json!({}),
                ..ToolUse::default()
            }),
            EventPayload::ToolResult(ToolResultEvent {
                tool_use_id: "t".into(),
                output: json!("ok"),
                is_error: false,
                error_type: None,
                error_message: None,
            }),
            EventPayload::UserMessage(UserMessage { text: "u2".into() }),
            EventPayload::Compaction(Compaction {
                summary: "S".into(),
                from_seq: 1,
                to_seq: 4,
            }),
            EventPayload::AssistantMessage(AssistantMessage::text("a2")),
        ];
        payloads
            .into_iter()
            .enumerate()
            .map(|(i, p)| Event::new(i as u64 + 1, None, p))
            .collect()
    }

    fn texts(ms: &[TranscriptMessage]) -> Vec<String> {
        ms.iter()
            .map(|m| match &m.content {
                Content::Text { text } | Content::Summary { text, .. } => text.clone(),
                Content::ToolUse { name, .. } => format!("use {name}"),
                Content::ToolResult { .. } => "result".into(),
            })
            .collect()
    }

    #[test]
    fn compaction_replaces_its_range_in_place() {
        let ms = conversation(&log());
        assert_eq!(texts(&ms), ["S", "u2", "a2"]);
        assert_eq!(ms.iter().map(|m| m.index).collect::<Vec<_>>(), [0, 4, 5]);
    }

    #[test]
    fn tail_agrees_with_the_whole_conversation_for_every_length() {
        let events = log();
        let whole = conversation(&events);
        for want in 0..6 {
            let mut tail = TailMessages::new(want, 6);
            for e in events.iter().rev() {
                if tail.push(e) {
                    break;
                }
            }
            let got = tail.finish();
            let skip = whole.len().saturating_sub(want);
            assert_eq!(got, whole[skip..], "want {want}");
        }
    }
}
