//! Canonical JSON (RFC 8785, the JSON Canonicalization Scheme): the exact bytes a manifest
//! signature covers.
//!
//! Objects have their keys sorted by UTF-16 code units, no whitespace is written, strings are
//! escaped as ECMAScript's `JSON.stringify` does (only `"`, `\` and control characters; `\b \t
//! \n \f \r` by name, the rest as lowercase `\u00xx`), and numbers are written as ECMAScript's
//! `Number.prototype.toString` writes them (shortest round-trip digits, `1e+21` from 10^21 up,
//! `1e-7` below 10^-6, `-0` as `0`). That is what the TypeScript SDK's `canonicalJsonBytes`
//! produces for the values a manifest holds, so a signature made there verifies here.
//!
//! ```
//! let value: serde_json::Value =
//!     serde_json::from_str(r#"{"b":2,"a":1,"nested":{"z":1,"y":[3,2,1]}}"#)?;
//! assert_eq!(
//!     agent_bundles::canonical::to_string(&value),
//!     r#"{"a":1,"b":2,"nested":{"y":[3,2,1],"z":1}}"#
//! );
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::fmt::Write as _;

use serde_json::{Number, Value};

/// The canonical form of `value` as a string.
pub fn to_string(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

/// The canonical form of `value` as bytes (UTF-8).
pub fn to_vec(value: &Value) -> Vec<u8> {
    to_string(value).into_bytes()
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write_number(out: &mut String, n: &Number) {
    // Integers that an f64 holds exactly print the same either way; larger ones go through
    // f64, as they would in ECMAScript (JSON.parse reads every number as a double).
    if let Some(i) = n.as_i64()
        && i.unsigned_abs() <= (1u64 << 53)
    {
        let _ = write!(out, "{i}");
        return;
    }
    if let Some(u) = n.as_u64()
        && u <= (1u64 << 53)
    {
        let _ = write!(out, "{u}");
        return;
    }
    match n.as_f64() {
        Some(f) => write_f64(out, f),
        None => out.push_str("null"),
    }
}

/// ECMAScript `Number::toString(10)` for a finite double (serde_json never holds NaN or
/// infinities).
fn write_f64(out: &mut String, f: f64) {
    if f == 0.0 {
        out.push('0');
        return;
    }
    if !f.is_finite() {
        out.push_str("null");
        return;
    }
    if f < 0.0 {
        out.push('-');
    }
    // `{:e}` gives the shortest digits that round-trip, as d[.ddd]e[-]x.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exp: i32 = exponent.parse().unwrap_or(0);
    // ECMAScript: value = 0.digits × 10^n, with k = number of digits.
    let k = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    let n = exp + 1;
    if k <= n && n <= 21 {
        out.push_str(&digits);
        for _ in 0..(n - k) {
            out.push('0');
        }
    } else if 0 < n && n <= 21 {
        let split = usize::try_from(n).unwrap_or(0);
        out.push_str(&digits[..split]);
        out.push('.');
        out.push_str(&digits[split..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        for _ in 0..(-n) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let e = n - 1;
        let sign = if e < 0 { '-' } else { '+' };
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{sign}{}", e.unsigned_abs());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn canon(text: &str) -> String {
        to_string(&serde_json::from_str(text).unwrap())
    }

    #[test]
    fn the_issue_vector() {
        assert_eq!(
            canon(r#"{"b":2,"a":1,"nested":{"z":1,"y":[3,2,1]}}"#),
            r#"{"a":1,"b":2,"nested":{"y":[3,2,1],"z":1}}"#
        );
    }

    #[test]
    fn whitespace_goes_and_literals_stay() {
        assert_eq!(
            canon("{ \"t\" : true , \"f\":false,\"n\" : null, \"a\": [ ] , \"o\": { } }"),
            r#"{"a":[],"f":false,"n":null,"o":{},"t":true}"#
        );
    }

    #[test]
    fn strings_escape_like_json_stringify() {
        assert_eq!(
            canon(r#"["\u0000\u0007\b\t\n\u000b\f\r\u001f", "\"\\/", "é€😀", "\u2028"]"#),
            "[\"\\u0000\\u0007\\b\\t\\n\\u000b\\f\\r\\u001f\",\"\\\"\\\\/\",\"é€😀\",\"\u{2028}\"]"
        );
    }

    #[test]
    fn keys_sort_by_utf16_code_units() {
        // RFC 8785 §3.2.3's example: U+20AC (€) sorts before U+1F600 (😀) in UTF-16, though
        // not in UTF-8 or by code point... and "\r" before "1" before "é".
        assert_eq!(
            canon(r#"{"😀":1,"€":2,"é":3,"1":4,"\r":5,"A":6,"a":7}"#),
            "{\"\\r\":5,\"1\":4,\"A\":6,\"a\":7,\"é\":3,\"€\":2,\"😀\":1}"
        );
    }

    #[test]
    fn numbers_print_as_ecmascript_does() {
        // RFC 8785 appendix B examples and the edges of the fixed/exponent forms.
        let cases = [
            ("0", "0"),
            ("-0.0", "0"),
            ("1", "1"),
            ("-1", "-1"),
            ("1.5", "1.5"),
            ("0.000001", "0.000001"),
            ("0.0000001", "1e-7"),
            ("1e21", "1e+21"),
            ("1e20", "100000000000000000000"),
            ("123456789012345680000", "123456789012345680000"),
            ("9007199254740993", "9007199254740992"),
            ("333333333.3333333", "333333333.3333333"),
            ("1e23", "1e+23"),
            ("5e-324", "5e-324"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("295147905179352830000", "295147905179352830000"),
            ("4.50", "4.5"),
            ("2e-3", "0.002"),
            ("-1.25e-10", "-1.25e-10"),
        ];
        for (input, expected) in cases {
            assert_eq!(canon(input), expected, "{input}");
        }
    }
}
