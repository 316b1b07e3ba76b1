//! One key casing in every verb's JSON output: camelCase, as the session log (docs/cli.md,
//! "JSON output"). Objects this CLI does not own the shape of, such as the provider's token
//! usage (`input_tokens`, as the APIs report it), are recased on the way out.

use serde_json::{Map, Value};

/// `value` with every object key turned from snake_case into camelCase (`input_tokens` →
/// `inputTokens`), at every depth. Use it only on values whose keys are names, never on user
/// data or tool inputs, whose keys are someone else's.
pub(crate) fn camel_case(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (camel(&k), camel_case(v)))
                .collect::<Map<String, Value>>(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(camel_case).collect()),
        other => other,
    }
}

/// `snake_case` → `snakeCase` (a key without `_` is unchanged).
fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn snake_case_keys_become_camel_case_at_every_depth_and_values_stay() {
        assert_eq!(
            camel_case(json!({
                "input_tokens": 1,
                "cache_read_input_tokens": 2,
                "already": {"nested_key": ["a_value"]},
                "_private": 3
            })),
            json!({
                "inputTokens": 1,
                "cacheReadInputTokens": 2,
                "already": {"nestedKey": ["a_value"]},
                "_private": 3
            })
        );
    }
}
