//! The common envelope every event carries.

use std::fmt;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::payload::EventPayload;

/// The envelope version written by this crate (`"v"`). Readers accept any version and keep what
/// they do not understand.
pub const EVENT_FORMAT_VERSION: u64 = 1;

/// The identity of one event: a UUID string (version 7 when this crate creates it, so ids sort by
/// creation time). Ids read from a log are kept verbatim, whatever their shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EventId(pub String);

impl EventId {
    /// A new, time-ordered (UUID v7) id.
    pub fn new() -> Self {
        Self(uuid::Uuid::now_v7().to_string())
    }

    /// The id as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for EventId {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for EventId {
    fn from(s: &str) -> Self {
        Self(s.to_owned())
    }
}

/// One entry of a session log.
///
/// The envelope fields are typed; the payload is an [`EventPayload`]; any field this version does
/// not know (at the top level of the line) is kept in [`Event::extra`] and written back after the
/// known fields, so a log written by a newer version survives a read-modify-write by this one.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Envelope version (`"v"`); [`EVENT_FORMAT_VERSION`] for events created here.
    pub v: u64,
    /// Position in the log, starting at 1 and increasing by one per event.
    pub seq: u64,
    /// Unique id of this event.
    pub id: EventId,
    /// The event this one follows in the conversation tree (`null` for a root).
    pub parent: Option<EventId>,
    /// RFC 3339 timestamp, kept verbatim as read.
    pub ts: String,
    /// The typed payload, including its `type` name.
    pub payload: EventPayload,
    /// Fields of the line that this version does not know, in their original order.
    pub extra: Map<String, Value>,
}

impl Event {
    /// A new event with a fresh id and the current time.
    pub fn new(seq: u64, parent: Option<EventId>, payload: EventPayload) -> Self {
        Self {
            v: EVENT_FORMAT_VERSION,
            seq,
            id: EventId::new(),
            parent,
            ts: now_rfc3339(),
            payload,
            extra: Map::new(),
        }
    }

    /// The wire name of this event's type, e.g. `"tool.use"`.
    pub fn type_name(&self) -> &str {
        self.payload.type_name()
    }

    /// The timestamp parsed as a [`SystemTime`].
    ///
    /// # Errors
    /// Returns the parse error when `ts` is not RFC 3339 (possible only for events built by hand;
    /// decoding already validates it).
    pub fn timestamp(&self) -> Result<SystemTime, humantime::TimestampError> {
        parse_rfc3339(&self.ts)
    }
}

/// Parses an RFC 3339 timestamp, `Z` or with a numeric offset (`+02:00`), into a [`SystemTime`].
///
/// # Errors
/// When the text is not RFC 3339.
pub fn parse_rfc3339(ts: &str) -> Result<SystemTime, humantime::TimestampError> {
    let bytes = ts.as_bytes();
    let n = bytes.len();
    let has_offset = n > 6
        && matches!(bytes[n - 6], b'+' | b'-')
        && bytes[n - 3] == b':'
        && [n - 5, n - 4, n - 2, n - 1]
            .iter()
            .all(|&i| bytes[i].is_ascii_digit());
    if !has_offset {
        return humantime::parse_rfc3339_weak(ts);
    }
    let utc = humantime::parse_rfc3339_weak(&format!("{}Z", &ts[..n - 6]))?;
    let hours = u64::from(bytes[n - 5] - b'0') * 10 + u64::from(bytes[n - 4] - b'0');
    let minutes = u64::from(bytes[n - 2] - b'0') * 10 + u64::from(bytes[n - 1] - b'0');
    let offset = std::time::Duration::from_secs(hours * 3600 + minutes * 60);
    // Local time = UTC + offset, so UTC = local - offset for `+`, + offset for `-`.
    let shifted = if bytes[n - 6] == b'+' {
        utc.checked_sub(offset)
    } else {
        utc.checked_add(offset)
    };
    shifted.ok_or(humantime::TimestampError::OutOfRange)
}

/// `ts` (RFC 3339, as [`parse_rfc3339`] reads it) in UTC with millisecond precision
/// (`2026-11-26T21:45:01.123Z`), the form Claude Code writes in its transcripts; `None` when
/// `ts` is not RFC 3339.
pub fn rfc3339_millis(ts: &str) -> Option<String> {
    parse_rfc3339(ts)
        .ok()
        .map(|t| humantime::format_rfc3339_millis(t).to_string())
}

/// The current time as an RFC 3339 string with microsecond precision, in UTC.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_micros(SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rewritten_in_utc_milliseconds() {
        for (ts, want) in [
            ("2026-11-26T21:45:01.123456Z", "2026-11-26T21:45:01.123Z"),
            ("2026-11-26T21:45:01Z", "2026-11-26T21:45:01.000Z"),
            ("2026-11-26T22:45:01.5+01:00", "2026-11-26T21:45:01.500Z"),
        ] {
            assert_eq!(rfc3339_millis(ts).as_deref(), Some(want), "{ts}");
        }
        assert_eq!(rfc3339_millis("yesterday"), None);
    }
}
