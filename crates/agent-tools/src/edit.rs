//! `Edit` and `MultiEdit`: exact string replacements in a file the agent has read. An
//! `old_string` must occur, and exactly once unless `replace_all`; a MultiEdit applies its
//! edits in order to the text in memory and writes only if every one succeeds.

use agent_core::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use serde_json::{Value, json};

use super::files::Confined;
use super::input::{object, opt_bool, str_field};
use super::state::ToolState;
use super::write::check_fresh;

/// One replacement.
struct Replace<'a> {
    old: &'a str,
    new: &'a str,
    all: bool,
}

fn parse_edit(v: &Value) -> Result<Replace<'_>, ToolError> {
    let old = str_field(v, "old_string")?;
    let new = str_field(v, "new_string")?;
    if old == new {
        return Err(ToolError::invalid_input(
            "`old_string` and `new_string` are the same; there is nothing to change",
        ));
    }
    Ok(Replace {
        old,
        new,
        all: opt_bool(v, "replace_all")?,
    })
}

/// Applies `edit` to `text`; the number of replacements.
fn apply(text: &mut String, edit: &Replace<'_>, which: &str) -> Result<usize, ToolError> {
    if edit.old.is_empty() {
        return Err(ToolError::invalid_input(format!(
            "{which}: `old_string` is empty; quote the text to replace (an empty `old_string` only creates a new file)"
        )));
    }
    let count = text.matches(edit.old).count();
    match count {
        0 => Err(ToolError::Execution(format!(
            "{which}: `old_string` was not found in the file; Read the file and quote the text exactly (whitespace included)"
        ))),
        n if n > 1 && !edit.all => Err(ToolError::Execution(format!(
            "{which}: `old_string` occurs {n} times; add surrounding lines to make it unique, or set `replace_all`"
        ))),
        n => {
            *text = if edit.all {
                text.replace(edit.old, edit.new)
            } else {
                text.replacen(edit.old, edit.new, 1)
            };
            Ok(n)
        }
    }
}

/// Reads, edits and writes `file`, or creates it when `create` holds the content of a new file.
fn edit_file(
    state: &ToolState,
    ctx: &ToolContext,
    file: &str,
    edits: &[Replace<'_>],
) -> Result<ToolOutput, ToolError> {
    let fs = Confined::for_call(ctx)?;
    let path = fs.path(file);
    if !path.exists() && edits.len() == 1 && edits[0].old.is_empty() {
        fs.write(&path, edits[0].new.as_bytes())?;
        state.saw(&ctx.session_id, &path);
        return Ok(ToolOutput::json(json!({
            "filePath": path, "type": "create", "replacements": 0, "success": true
        })));
    }
    let bytes = fs.read(&path)?;
    check_fresh(state, &ctx.session_id, &path)?;
    let Ok(mut text) = String::from_utf8(bytes) else {
        return Err(ToolError::Execution(format!(
            "{} is not UTF-8 text; it cannot be edited by string replacement",
            path.display()
        )));
    };
    let mut replacements = 0;
    for (i, e) in edits.iter().enumerate() {
        let which = if edits.len() == 1 {
            "edit".to_owned()
        } else {
            format!("edit {}", i + 1)
        };
        replacements += apply(&mut text, e, &which)?;
    }
    fs.write(&path, text.as_bytes())?;
    state.saw(&ctx.session_id, &path);
    Ok(ToolOutput::json(json!({
        "filePath": path, "type": "update", "replacements": replacements, "success": true
    })))
}

/// The `Edit` tool.
#[derive(Clone, Debug, Default)]
pub struct Edit {
    state: ToolState,
}

impl Edit {
    /// An Edit tool sharing `state` with the other tools of the session.
    pub fn new(state: ToolState) -> Self {
        Self { state }
    }
}

#[async_trait::async_trait]
impl Tool for Edit {
    fn name(&self) -> &str {
        "Edit"
    }

    fn description(&self) -> &str {
        "Replaces `old_string` with `new_string` in a file read earlier in this session. \
         `old_string` must occur exactly once unless `replace_all` is true; an empty \
         `old_string` creates a new file."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string"},
                "old_string": {"type": "string", "description": "The exact text to replace"},
                "new_string": {"type": "string", "description": "The text to put instead"},
                "replace_all": {"type": "boolean", "default": false}
            },
            "required": ["file_path", "old_string", "new_string"],
            "additionalProperties": false
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        object(&input)?;
        let file = str_field(&input, "file_path")?;
        let edit = parse_edit(&input)?;
        edit_file(&self.state, ctx, file, &[edit])
    }
}

/// The `MultiEdit` tool.
#[derive(Clone, Debug, Default)]
pub struct MultiEdit {
    state: ToolState,
}

impl MultiEdit {
    /// A MultiEdit tool sharing `state` with the other tools of the session.
    pub fn new(state: ToolState) -> Self {
        Self { state }
    }
}

#[async_trait::async_trait]
impl Tool for MultiEdit {
    fn name(&self) -> &str {
        "MultiEdit"
    }

    fn description(&self) -> &str {
        "Applies several Edit replacements to one file, in order, all or nothing."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string"},
                "edits": {"type": "array", "minItems": 1, "items": {
                    "type": "object",
                    "properties": {
                        "old_string": {"type": "string"},
                        "new_string": {"type": "string"},
                        "replace_all": {"type": "boolean", "default": false}
                    },
                    "required": ["old_string", "new_string"]
                }}
            },
            "required": ["file_path", "edits"],
            "additionalProperties": false
        })
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        object(&input)?;
        let file = str_field(&input, "file_path")?;
        let Some(list) = input.get("edits").and_then(Value::as_array) else {
            return Err(ToolError::invalid_input(
                "`edits` is required: an array of {old_string, new_string, replace_all?}",
            ));
        };
        if list.is_empty() {
            return Err(ToolError::invalid_input(
                "`edits` is empty; give at least one",
            ));
        }
        let edits = list.iter().map(parse_edit).collect::<Result<Vec<_>, _>>()?;
        edit_file(&self.state, ctx, file, &edits)
    }
}
