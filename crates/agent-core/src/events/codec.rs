//! The JSONL codec: one event per line.

use std::io::BufRead;

use serde_json::{Map, Value};

use super::envelope::{Event, EventId};
use super::payload::EventPayload;

/// Envelope keys, in the order they are written.
const ENVELOPE_KEYS: [&str; 6] = ["v", "seq", "id", "parent", "ts", "type"];

/// Errors while reading or writing event lines.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EventError {
    /// Occurs when a line is not valid JSON (for example a line torn by a crash).
    #[error("not valid JSON: {0}; a log line must be one JSON object")]
    Json(#[source] serde_json::Error),
    /// Occurs when a line is valid JSON but not an object.
    #[error("expected a JSON object, got {0}")]
    NotAnObject(&'static str),
    /// Occurs when an envelope field is missing.
    #[error("envelope field `{0}` is missing; every event needs v, seq, id, ts and type")]
    MissingField(&'static str),
    /// Occurs when an envelope field has the wrong type or format.
    #[error("envelope field `{field}` must be {expected}")]
    InvalidField {
        /// The field name.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// Occurs when a known event type lacks a required field or has a field of the wrong type.
    #[error("event type `{type_name}`: {source}")]
    Payload {
        /// The event's type.
        type_name: String,
        /// What serde found wrong.
        #[source]
        source: serde_json::Error,
    },
    /// Occurs when an error above happened on a numbered line of a log.
    #[error("line {line}: {source}")]
    AtLine {
        /// 1-based line number.
        line: usize,
        /// The error on that line.
        #[source]
        source: Box<EventError>,
    },
    /// Occurs when the underlying reader fails.
    #[error("reading the log failed: {0}")]
    Io(#[from] std::io::Error),
}

impl EventError {
    /// The 1-based line number, when the error is tied to one.
    pub fn line(&self) -> Option<usize> {
        match self {
            Self::AtLine { line, .. } => Some(*line),
            _ => None,
        }
    }
}

/// Encodes one event as a single JSON line (without the trailing newline).
///
/// Known fields come first in a fixed order (envelope, then payload), followed by the unknown
/// fields kept from decoding, in their original order.
///
/// # Errors
/// Fails only if a payload value cannot be serialised (never for values built from JSON).
pub fn encode_line(event: &Event) -> Result<String, EventError> {
    let mut map = Map::with_capacity(8 + event.extra.len());
    map.insert("v".into(), Value::from(event.v));
    map.insert("seq".into(), Value::from(event.seq));
    map.insert("id".into(), Value::String(event.id.0.clone()));
    map.insert(
        "parent".into(),
        event
            .parent
            .as_ref()
            .map_or(Value::Null, |p| Value::String(p.0.clone())),
    );
    map.insert("ts".into(), Value::String(event.ts.clone()));
    map.insert("type".into(), Value::String(event.type_name().to_owned()));
    let fields = event
        .payload
        .to_fields()
        .map_err(|source| EventError::Payload {
            type_name: event.type_name().to_owned(),
            source,
        })?;
    for (k, v) in fields {
        map.insert(k, v);
    }
    for (k, v) in &event.extra {
        if !map.contains_key(k) {
            map.insert(k.clone(), v.clone());
        }
    }
    serde_json::to_string(&Value::Object(map)).map_err(EventError::Json)
}

/// Decodes one JSON line into an [`Event`].
///
/// An unknown `type` gives [`EventPayload::Unknown`]; unknown fields go to [`Event::extra`].
///
/// # Errors
/// Invalid JSON, a missing or malformed envelope field, or a known type whose required fields
/// are missing.
pub fn decode_line(line: &str) -> Result<Event, EventError> {
    let value: Value = serde_json::from_str(line).map_err(EventError::Json)?;
    let Value::Object(mut map) = value else {
        return Err(EventError::NotAnObject(json_kind(&value)));
    };
    let v = take_u64(&mut map, "v")?;
    let seq = take_u64(&mut map, "seq")?;
    let id = match map.shift_remove("id") {
        Some(Value::String(s)) if !s.is_empty() => EventId(s),
        Some(_) => return Err(invalid("id", "a non-empty string")),
        None => return Err(EventError::MissingField("id")),
    };
    let parent = match map.shift_remove("parent") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(EventId(s)),
        Some(_) => return Err(invalid("parent", "a string or null")),
    };
    let ts = match map.shift_remove("ts") {
        Some(Value::String(s)) => {
            if super::envelope::parse_rfc3339(&s).is_err() {
                return Err(invalid("ts", "an RFC 3339 timestamp"));
            }
            s
        }
        Some(_) => return Err(invalid("ts", "an RFC 3339 timestamp string")),
        None => return Err(EventError::MissingField("ts")),
    };
    let type_name = match map.shift_remove("type") {
        Some(Value::String(s)) if !s.is_empty() => s,
        Some(_) => return Err(invalid("type", "a non-empty string")),
        None => return Err(EventError::MissingField("type")),
    };
    let payload =
        EventPayload::from_fields(&type_name, &map).map_err(|source| EventError::Payload {
            type_name: type_name.clone(),
            source,
        })?;
    // Whatever the typed payload does not render back is unknown to this version: keep it.
    let known = payload.to_fields().map_err(|source| EventError::Payload {
        type_name: type_name.clone(),
        source,
    })?;
    map.retain(|k, _| !known.contains_key(k) && !ENVELOPE_KEYS.contains(&k.as_str()));
    Ok(Event {
        v,
        seq,
        id,
        parent,
        ts,
        payload,
        extra: map,
    })
}

fn take_u64(map: &mut Map<String, Value>, field: &'static str) -> Result<u64, EventError> {
    match map.shift_remove(field) {
        Some(v) => v
            .as_u64()
            .ok_or_else(|| invalid(field, "a non-negative integer")),
        None => Err(EventError::MissingField(field)),
    }
}

fn invalid(field: &'static str, expected: &'static str) -> EventError {
    EventError::InvalidField { field, expected }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Reads events from a JSONL stream, one per line, numbering errors by line.
///
/// Blank lines are skipped. The reader does not decide what a bad line means: a session store
/// treats a bad *last* line as torn by a crash and a bad line in the middle as corruption.
#[derive(Debug)]
pub struct JsonlReader<R> {
    reader: R,
    line_no: usize,
    buf: String,
}

impl<R: BufRead> JsonlReader<R> {
    /// Wraps a buffered reader.
    pub fn new(reader: R) -> Self {
        Self {
            reader,
            line_no: 0,
            buf: String::new(),
        }
    }

    /// The number of the last line read (1-based; 0 before the first).
    pub fn line_number(&self) -> usize {
        self.line_no
    }
}

impl<R: BufRead> Iterator for JsonlReader<R> {
    type Item = Result<Event, EventError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            self.buf.clear();
            match self.reader.read_line(&mut self.buf) {
                Ok(0) => return None,
                Ok(_) => {
                    self.line_no += 1;
                    let line = self.buf.trim_end_matches(['\n', '\r']);
                    if line.trim().is_empty() {
                        continue;
                    }
                    return Some(decode_line(line).map_err(|e| EventError::AtLine {
                        line: self.line_no,
                        source: Box::new(e),
                    }));
                }
                Err(e) => return Some(Err(EventError::Io(e))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{ToolUse, UserMessage};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn line(v: Value) -> String {
        v.to_string()
    }

    #[test]
    fn known_event_round_trips_byte_for_byte() {
        let l = line(
            json!({"v":1,"seq":3,"id":"a","parent":"p","ts":"2026-01-01T00:00:00Z",
            "type":"tool.use","toolUseId":"t1","name":"Bash","input":{"command":"ls"}}),
        );
        let e = decode_line(&l).unwrap();
        assert_eq!(
            e.payload,
            EventPayload::ToolUse(ToolUse {
                tool_use_id: "t1".into(),
                name: "Bash".into(),
                input: json!({"command":"ls"}),
                ..ToolUse::default()
            })
        );
        assert!(e.extra.is_empty());
        assert_eq!(encode_line(&e).unwrap(), l);
    }

    #[test]
    fn unknown_type_keeps_every_field() {
        let l = line(
            json!({"v":2,"seq":9,"id":"x","parent":null,"ts":"2026-01-01T00:00:00.5Z",
            "type":"tool.progress","percent":50,"nested":{"a":[1,2,{"b":null}]}}),
        );
        let e = decode_line(&l).unwrap();
        assert_eq!(
            e.payload,
            EventPayload::Unknown {
                type_name: "tool.progress".into()
            }
        );
        assert_eq!(e.extra.len(), 2);
        assert_eq!(encode_line(&e).unwrap(), l);
    }

    #[test]
    fn unknown_fields_of_known_type_are_kept_and_written_back() {
        let l = line(
            json!({"v":1,"seq":1,"id":"x","parent":null,"ts":"2026-01-01T00:00:00Z",
            "type":"user.message","text":"hi","attachments":[{"name":"f.png"}],"lang":"en"}),
        );
        let e = decode_line(&l).unwrap();
        assert_eq!(
            e.payload,
            EventPayload::UserMessage(UserMessage { text: "hi".into() })
        );
        assert_eq!(e.extra.keys().collect::<Vec<_>>(), ["attachments", "lang"]);
        assert_eq!(encode_line(&e).unwrap(), l);
    }

    #[test]
    fn unknown_fields_survive_in_value_even_when_reordered() {
        let original = json!({"lang":"en","type":"user.message","text":"hi","v":1,"seq":1,
            "id":"x","parent":null,"ts":"2026-01-01T00:00:00Z"});
        let e = decode_line(&line(original.clone())).unwrap();
        let back: Value = serde_json::from_str(&encode_line(&e).unwrap()).unwrap();
        assert_eq!(back, original);
    }

    #[test]
    fn null_optional_field_is_written_back() {
        let original = json!({"v":1,"seq":1,"id":"x","parent":null,"ts":"2026-01-01T00:00:00Z",
            "type":"tool.result","toolUseId":"t","output":"ok","isError":false,"errorType":null});
        let e = decode_line(&line(original.clone())).unwrap();
        let back: Value = serde_json::from_str(&encode_line(&e).unwrap()).unwrap();
        assert_eq!(back, original);
    }

    #[test]
    fn errors_name_what_is_wrong() {
        let cases = [
            ("{\"v\":1", "not valid JSON"),
            ("[1]", "expected a JSON object, got an array"),
            (
                r#"{"seq":1,"id":"x","ts":"2026-01-01T00:00:00Z","type":"a"}"#,
                "`v` is missing",
            ),
            (
                r#"{"v":1,"seq":-1,"id":"x","ts":"2026-01-01T00:00:00Z","type":"a"}"#,
                "`seq` must be a non-negative integer",
            ),
            (
                r#"{"v":1,"seq":1,"id":"x","ts":"yesterday","type":"a"}"#,
                "RFC 3339",
            ),
            (
                r#"{"v":1,"seq":1,"id":"x","ts":"2026-01-01T00:00:00Z","type":"tool.use","name":"Bash"}"#,
                "event type `tool.use`: missing field `toolUseId`",
            ),
        ];
        for (input, want) in cases {
            let err = decode_line(input).unwrap_err().to_string();
            assert!(err.contains(want), "{input}: {err}");
        }
    }

    #[test]
    fn reader_numbers_lines_and_skips_blank_ones() {
        let good = r#"{"v":1,"seq":1,"id":"x","parent":null,"ts":"2026-01-01T00:00:00Z","type":"user.message","text":"a"}"#;
        let input = format!("{good}\n\n{good}\n{{\"v\":1,\"se");
        let results: Vec<_> = JsonlReader::new(input.as_bytes()).collect();
        assert_eq!(results.len(), 3);
        assert!(results[0].is_ok() && results[1].is_ok());
        let err = results[2].as_ref().unwrap_err();
        assert_eq!(err.line(), Some(4));
        assert!(err.to_string().starts_with("line 4: not valid JSON"));
    }

    #[test]
    fn offsets_are_rfc3339_too() {
        use crate::events::envelope::parse_rfc3339;
        let z = parse_rfc3339("2026-01-01T10:00:00Z").unwrap();
        assert_eq!(parse_rfc3339("2026-01-01T12:00:00+02:00").unwrap(), z);
        assert_eq!(parse_rfc3339("2026-01-01T07:30:00-02:30").unwrap(), z);
        assert!(parse_rfc3339("2026-01-01T12:00:00+2:00").is_err());
    }

    #[test]
    fn new_events_have_v7_ids_and_valid_timestamps() {
        let e = Event::new(
            1,
            None,
            EventPayload::UserMessage(UserMessage { text: "x".into() }),
        );
        assert_eq!(
            uuid::Uuid::parse_str(e.id.as_str())
                .unwrap()
                .get_version_num(),
            7
        );
        assert!(e.timestamp().is_ok());
        let back = decode_line(&encode_line(&e).unwrap()).unwrap();
        assert_eq!(back, e);
    }
}
