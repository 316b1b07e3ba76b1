//! Reading tool inputs: one clear error per missing or mistyped field.

use agent_core::tools::ToolError;
use serde_json::Value;

/// A required string field.
pub fn str_field<'a>(input: &'a Value, name: &str) -> Result<&'a str, ToolError> {
    match input.get(name) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(ToolError::invalid_input(format!(
            "`{name}` must be a string, got {other}"
        ))),
        None => Err(ToolError::invalid_input(format!(
            "`{name}` is required (a string)"
        ))),
    }
}

/// An optional string field.
pub fn opt_str<'a>(input: &'a Value, name: &str) -> Result<Option<&'a str>, ToolError> {
    match input.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(ToolError::invalid_input(format!(
            "`{name}` must be a string, got {other}"
        ))),
    }
}

/// An optional non-negative integer field.
pub fn opt_usize(input: &Value, name: &str) -> Result<Option<usize>, ToolError> {
    match input.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| {
                ToolError::invalid_input(format!(
                    "`{name}` must be a non-negative integer, got {v}"
                ))
            }),
    }
}

/// An optional boolean field.
pub fn opt_bool(input: &Value, name: &str) -> Result<bool, ToolError> {
    match input.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(ToolError::invalid_input(format!(
            "`{name}` must be true or false, got {other}"
        ))),
    }
}

/// Input must be an object.
pub fn object(input: &Value) -> Result<(), ToolError> {
    if input.is_object() {
        Ok(())
    } else {
        Err(ToolError::invalid_input(format!(
            "the input must be a JSON object, got {input}"
        )))
    }
}
