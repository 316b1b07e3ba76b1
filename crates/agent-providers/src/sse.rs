//! An incremental Server-Sent-Events parser ([WHATWG HTML, "Server-sent events"][spec]).
//!
//! Feed it the response body's chunks as they arrive, whatever their boundaries: a line, a
//! CRLF pair or a multi-byte UTF-8 character may be split across two chunks. Lines end in
//! `\n`, `\r\n` or `\r`; `event:`, `data:` (several lines joined with `\n`), `id:` and
//! `retry:` fields are understood, other fields and `:` comments are ignored, and an event is
//! dispatched on a blank line. As the spec says, an event still open when the body ends is
//! discarded.
//!
//! Ours rather than sse-stream (which rmcp brings in): that one ends the stream with an error on
//! lines the spec says to ignore (an unknown field, a bare `data`, a bad `retry:`); the cases
//! are in docs/dependencies.md.
//!
//! [spec]: https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation

use std::time::Duration;

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, or `message` when there was none.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last event id seen on the stream so far (the `id:` field persists across events).
    pub id: Option<String>,
}

/// The incremental parser: [`SseParser::feed`] each chunk, collect the events it returns.
#[derive(Clone, Debug, Default)]
pub struct SseParser {
    /// The bytes of the line being read (no terminator yet).
    line: Vec<u8>,
    /// The last byte fed was a `\r`: a `\n` right after it belongs to the same terminator.
    after_cr: bool,
    /// Whether the start of the stream (and a possible BOM) is behind us.
    started: bool,
    event: String,
    data: String,
    last_id: Option<String>,
    retry: Option<Duration>,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses the next chunk of the body and returns the events it completed, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        let mut rest = chunk;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if let Some((b'\n', tail)) = rest.split_first() {
                rest = tail;
            }
        }
        while let Some(pos) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&rest[..pos]);
            let terminator = rest[pos];
            rest = &rest[pos + 1..];
            if terminator == b'\r' {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            let line = std::mem::take(&mut self.line);
            if let Some(event) = self.process_line(&line) {
                events.push(event);
            }
        }
        self.line.extend_from_slice(rest);
        events
    }

    /// The reconnection time the stream asked for with `retry:`, if any.
    pub fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// Whether an event has been started (a `data:` line or an unterminated line was read)
    /// but not dispatched: what is left when a body ends mid-event.
    pub fn has_pending(&self) -> bool {
        !self.line.is_empty() || !self.data.is_empty()
    }

    fn process_line(&mut self, raw: &[u8]) -> Option<SseEvent> {
        let decoded = String::from_utf8_lossy(raw);
        let mut line: &str = &decoded;
        if !self.started {
            self.started = true;
            line = line.strip_prefix('\u{feff}').unwrap_or(line);
        }
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = std::mem::take(&mut self.event);
        if self.data.is_empty() {
            return None;
        }
        let mut data = std::mem::take(&mut self.data);
        if data.ends_with('\n') {
            data.pop();
        }
        Some(SseEvent {
            event: if event.is_empty() {
                "message".to_owned()
            } else {
                event
            },
            data,
            id: self.last_id.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn ev(event: &str, data: &str, id: Option<&str>) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
            id: id.map(Into::into),
        }
    }

    /// Parses `input` whole, then split at every offset, then byte by byte; all must agree.
    fn parse_every_way(input: &[u8]) -> Vec<SseEvent> {
        let mut whole = SseParser::new();
        let expected = whole.feed(input);
        for cut in 0..=input.len() {
            let mut p = SseParser::new();
            let mut got = p.feed(&input[..cut]);
            got.extend(p.feed(&input[cut..]));
            assert_eq!(got, expected, "split at byte {cut}");
        }
        for a in 0..=input.len() {
            for b in a..=input.len() {
                let mut p = SseParser::new();
                let mut got = p.feed(&input[..a]);
                got.extend(p.feed(&input[a..b]));
                got.extend(p.feed(&input[b..]));
                assert_eq!(got, expected, "split at bytes {a} and {b}");
            }
        }
        let mut p = SseParser::new();
        let got: Vec<_> = input.iter().flat_map(|b| p.feed(&[*b])).collect();
        assert_eq!(got, expected, "byte by byte");
        expected
    }

    #[test]
    fn events_fields_and_comments() {
        let input = b": a comment\nevent: message_start\ndata: {\"a\":1}\n\n\
            data: first\ndata:second\ndata\n\nid: 7\nevent: x\nunknown: field\ndata: y\n\n";
        assert_eq!(
            parse_every_way(input),
            vec![
                ev("message_start", "{\"a\":1}", None),
                ev("message", "first\nsecond\n", None),
                ev("x", "y", Some("7")),
            ]
        );
    }

    #[test]
    fn every_line_ending_and_a_split_crlf() {
        let input = b"event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\rdata: 3\n\n";
        assert_eq!(
            parse_every_way(input),
            vec![
                ev("a", "1", None),
                ev("b", "2", None),
                ev("message", "3", None)
            ]
        );
    }

    #[test]
    fn utf8_split_across_chunks() {
        let input = "data: héllo wörld 🎉 日本\n\n".as_bytes();
        assert_eq!(
            parse_every_way(input),
            vec![ev("message", "héllo wörld 🎉 日本", None)]
        );
    }

    #[test]
    fn bom_is_stripped_only_at_the_start() {
        let input = "\u{feff}data: a\n\n\u{feff}data: b\n\n".as_bytes();
        let events = parse_every_way(input);
        assert_eq!(events[0], ev("message", "a", None));
        // A BOM later in the stream is part of a field name, which is then unknown.
        assert_eq!(events.len(), 1);
    }

    #[test]
    fn retry_and_id_rules() {
        let mut p = SseParser::new();
        let events = p.feed(b"retry: 1500\nretry: x1\nid: a\0b\nid: ok\ndata\n\nid\ndata: z\n\n");
        assert_eq!(p.retry(), Some(Duration::from_millis(1500)));
        assert_eq!(
            events,
            vec![ev("message", "", Some("ok")), ev("message", "z", Some(""))]
        );
    }

    #[test]
    fn blank_line_without_data_dispatches_nothing_and_resets_the_type() {
        let mut p = SseParser::new();
        assert_eq!(
            p.feed(b"event: lone\n\ndata: d\n\n"),
            vec![ev("message", "d", None)]
        );
    }

    #[test]
    fn an_unfinished_event_is_pending_not_dispatched() {
        let mut p = SseParser::new();
        assert!(p.feed(b"data: complete\n\ndata: cut").len() == 1);
        assert!(p.has_pending());
        let mut q = SseParser::new();
        assert_eq!(q.feed(b"data: x\n").len(), 0);
        assert!(q.has_pending());
        let mut r = SseParser::new();
        r.feed(b"data: x\n\n");
        assert!(!r.has_pending());
    }
}
