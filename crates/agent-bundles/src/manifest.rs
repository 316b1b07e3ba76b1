//! `manifest.json`: what a bundle holds, parsed with errors that name the field.
//!
//! ```json
//! {
//!   "name": "core-utils",
//!   "version": "0.1.0",
//!   "assets": [{ "path": "coreutils.wasm", "sha256": "<64 hex digits>", "size": 4718592 }],
//!   "commands": [{ "name": "cat", "modulePath": "coreutils.wasm",
//!                  "limits": { "wallMs": 10000, "memoryBytes": 268435456, "outputBytes": 1048576 } }],
//!   "signature": { "keyId": "agent-dev", "alg": "ed25519", "sigBase64": "<64 bytes, base64>" }
//! }
//! ```
//!
//! The format is the TypeScript SDK's (seed 004) plus optional per-command `limits`. Unknown
//! fields anywhere are kept (the parsed [`Manifest`] holds the whole document) and are covered by
//! the signature, so nothing can be added to a signed manifest unnoticed. What the signature
//! covers is [`Manifest::signed_payload`].

use serde_json::{Map, Value};

use crate::canonical;
use crate::digest::is_sha256_hex;
use crate::relpath;

/// The largest manifest accepted, in bytes.
pub const MAX_MANIFEST_BYTES: usize = 1024 * 1024;

/// A manifest that parsed and passed every structural check (not yet verified against a key
/// or the asset bytes; see [`crate::verify`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    /// The bundle's name (a path component: letters, digits, `. _ - +`).
    pub name: String,
    /// Its version (same characters as the name).
    pub version: String,
    /// Every file of the bundle, in the manifest's order.
    pub assets: Vec<Asset>,
    /// Every command, in the manifest's order.
    pub commands: Vec<CommandEntry>,
    /// The signature, when the manifest has one.
    pub signature: Option<SignatureBlock>,
    document: Map<String, Value>,
}

/// One file of a bundle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asset {
    /// Bundle-relative path (see [`crate::relpath`]).
    pub path: String,
    /// SHA-256 of its bytes, lowercase hex.
    pub sha256: String,
    /// Its length in bytes.
    pub size: u64,
}

/// One command a bundle provides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandEntry {
    /// The name it is run by (`cat`, `[`).
    pub name: String,
    /// The asset holding its WebAssembly module.
    pub module_path: String,
    /// Recommended limits, when the manifest gives them.
    pub limits: Option<CommandLimits>,
}

/// A command's recommended limits (each optional).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommandLimits {
    /// Wall-clock time, in milliseconds (`wallMs`).
    pub wall_ms: Option<u64>,
    /// Linear memory, in bytes (`memoryBytes`).
    pub memory_bytes: Option<u64>,
    /// Bytes of stdout and of stderr each (`outputBytes`).
    pub output_bytes: Option<u64>,
}

/// A manifest's `signature` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignatureBlock {
    /// Which key signed (looked up in the trust store).
    pub key_id: String,
    /// The algorithm as written (only `ed25519` verifies).
    pub alg: String,
    /// The 64-byte signature, standard base64.
    pub sig_base64: String,
}

/// A manifest that could not be read, naming the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    /// The bytes are not a JSON document.
    #[error(
        "manifest is not valid JSON ({0}); a manifest is a JSON object with name, version, assets and commands"
    )]
    Json(String),
    /// The document is larger than [`MAX_MANIFEST_BYTES`].
    #[error("manifest is {0} bytes; the limit is 1 MiB")]
    TooLarge(usize),
    /// A field is missing or wrong.
    #[error("{field} must {problem}")]
    Field {
        /// Where: `name`, `assets[2].sha256`, `commands[0].modulePath`.
        field: String,
        /// What it must be.
        problem: String,
    },
}

impl ManifestError {
    fn field(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self::Field {
            field: field.into(),
            problem: problem.into(),
        }
    }
}

impl Manifest {
    /// Parses and checks a manifest.
    ///
    /// # Errors
    /// The first problem found, naming its field (`assets[2].sha256 must be a non-empty hex
    /// string of 64 digits (a sha256)`).
    pub fn parse(bytes: &[u8]) -> Result<Self, ManifestError> {
        if bytes.len() > MAX_MANIFEST_BYTES {
            return Err(ManifestError::TooLarge(bytes.len()));
        }
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| ManifestError::Json(e.to_string()))?;
        Self::from_value(value)
    }

    /// Checks a manifest already read as JSON.
    ///
    /// # Errors
    /// As [`Manifest::parse`].
    pub fn from_value(value: Value) -> Result<Self, ManifestError> {
        let Value::Object(document) = value else {
            return Err(ManifestError::field("the manifest", "be a JSON object"));
        };
        let name = component(&document, "name", "name")?;
        let version = component(&document, "version", "version")?;

        let assets_value = document
            .get("assets")
            .ok_or_else(|| ManifestError::field("assets", "be an array (it is missing)"))?;
        let Value::Array(raw_assets) = assets_value else {
            return Err(ManifestError::field("assets", "be an array"));
        };
        let mut assets = Vec::with_capacity(raw_assets.len());
        for (i, raw) in raw_assets.iter().enumerate() {
            let at = format!("assets[{i}]");
            let Value::Object(obj) = raw else {
                return Err(ManifestError::field(at, "be an object"));
            };
            let path = string(obj, "path", &format!("{at}.path"))?;
            relpath::check_path(&path)
                .map_err(|why| ManifestError::field(format!("{at}.path"), why))?;
            if assets.iter().any(|a: &Asset| a.path == path) {
                return Err(ManifestError::field(
                    format!("{at}.path"),
                    format!("be unique (`{path}` is listed twice)"),
                ));
            }
            let sha256 = match obj.get("sha256") {
                Some(Value::String(s)) if is_sha256_hex(s) => s.to_ascii_lowercase(),
                _ => {
                    return Err(ManifestError::field(
                        format!("{at}.sha256"),
                        "be a non-empty hex string of 64 digits (a sha256)",
                    ));
                }
            };
            let size = match obj.get("size") {
                Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64().unwrap_or(0),
                _ => {
                    return Err(ManifestError::field(
                        format!("{at}.size"),
                        "be a non-negative integer (the asset's length in bytes)",
                    ));
                }
            };
            assets.push(Asset { path, sha256, size });
        }

        let commands_value = document
            .get("commands")
            .ok_or_else(|| ManifestError::field("commands", "be an array (it is missing)"))?;
        let Value::Array(raw_commands) = commands_value else {
            return Err(ManifestError::field("commands", "be an array"));
        };
        let mut commands: Vec<CommandEntry> = Vec::with_capacity(raw_commands.len());
        for (i, raw) in raw_commands.iter().enumerate() {
            let at = format!("commands[{i}]");
            let Value::Object(obj) = raw else {
                return Err(ManifestError::field(at, "be an object"));
            };
            let name = string(obj, "name", &format!("{at}.name"))?;
            relpath::check_command_name(&name)
                .map_err(|why| ManifestError::field(format!("{at}.name"), why))?;
            if commands.iter().any(|c| c.name == name) {
                return Err(ManifestError::field(
                    format!("{at}.name"),
                    format!("be unique (`{name}` is listed twice)"),
                ));
            }
            let module_path = string(obj, "modulePath", &format!("{at}.modulePath"))?;
            relpath::check_path(&module_path)
                .map_err(|why| ManifestError::field(format!("{at}.modulePath"), why))?;
            if !assets.iter().any(|a| a.path == module_path) {
                return Err(ManifestError::field(
                    format!("{at}.modulePath"),
                    format!("name one of the listed assets (`{module_path}` is not in assets)"),
                ));
            }
            let limits = match obj.get("limits") {
                None => None,
                Some(value) => Some(limits(value, &format!("{at}.limits"))?),
            };
            commands.push(CommandEntry {
                name,
                module_path,
                limits,
            });
        }

        let signature = match document.get("signature") {
            None => None,
            Some(Value::Object(obj)) => Some(SignatureBlock {
                key_id: string(obj, "keyId", "signature.keyId")?,
                alg: string(obj, "alg", "signature.alg")?,
                sig_base64: string(obj, "sigBase64", "signature.sigBase64")?,
            }),
            Some(_) => return Err(ManifestError::field("signature", "be an object")),
        };

        Ok(Self {
            name,
            version,
            assets,
            commands,
            signature,
            document,
        })
    }

    /// The whole document, unknown fields included.
    pub fn document(&self) -> &Map<String, Value> {
        &self.document
    }

    /// The bytes the signature covers: the manifest without `signature`, `assets` sorted by
    /// `path` and `commands` sorted by `name` (UTF-16 code-unit order, as canonical JSON sorts
    /// keys), as canonical JSON ([`crate::canonical`]). Unknown fields are included.
    pub fn signed_payload(&self) -> Vec<u8> {
        let mut doc = self.document.clone();
        doc.remove("signature");
        for (key, sort_key) in [("assets", "path"), ("commands", "name")] {
            if let Some(Value::Array(items)) = doc.get_mut(key) {
                items.sort_by(|a, b| {
                    let ka = a.get(sort_key).and_then(Value::as_str).unwrap_or("");
                    let kb = b.get(sort_key).and_then(Value::as_str).unwrap_or("");
                    ka.encode_utf16().cmp(kb.encode_utf16())
                });
            }
        }
        canonical::to_vec(&Value::Object(doc))
    }

    /// The payload with the arrays in the order the manifest lists them. The TypeScript SDK
    /// sorts with `localeCompare`, which can order mixed-case or punctuated names differently
    /// from code units; its generators write the arrays already sorted, so a signature over this
    /// form is accepted too. Order carries no meaning (names and paths are unique), so both forms
    /// attest the same content.
    pub fn payload_as_listed(&self) -> Vec<u8> {
        let mut doc = self.document.clone();
        doc.remove("signature");
        canonical::to_vec(&Value::Object(doc))
    }

    /// This manifest with `signature` set (or replaced).
    pub fn with_signature(&self, signature: SignatureBlock) -> Self {
        let mut document = self.document.clone();
        let mut block = Map::new();
        block.insert("keyId".into(), Value::String(signature.key_id.clone()));
        block.insert("alg".into(), Value::String(signature.alg.clone()));
        block.insert(
            "sigBase64".into(),
            Value::String(signature.sig_base64.clone()),
        );
        document.insert("signature".into(), Value::Object(block));
        Self {
            signature: Some(signature),
            document,
            ..self.clone()
        }
    }

    /// The manifest as pretty JSON (the form written to registries and caches).
    pub fn to_pretty_json(&self) -> Vec<u8> {
        let mut out =
            serde_json::to_vec_pretty(&Value::Object(self.document.clone())).unwrap_or_default();
        out.push(b'\n');
        out
    }

    /// `name@version`.
    pub fn label(&self) -> String {
        format!("{}@{}", self.name, self.version)
    }

    /// The command named `name`.
    pub fn command(&self, name: &str) -> Option<&CommandEntry> {
        self.commands.iter().find(|c| c.name == name)
    }

    /// The asset at `path`.
    pub fn asset(&self, path: &str) -> Option<&Asset> {
        self.assets.iter().find(|a| a.path == path)
    }
}

fn string(obj: &Map<String, Value>, key: &str, field: &str) -> Result<String, ManifestError> {
    match obj.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(ManifestError::field(field, "be a non-empty string")),
        None => Err(ManifestError::field(
            field,
            "be a non-empty string (it is missing)",
        )),
        Some(_) => Err(ManifestError::field(field, "be a non-empty string")),
    }
}

fn component(obj: &Map<String, Value>, key: &str, field: &str) -> Result<String, ManifestError> {
    let value = string(obj, key, field)?;
    relpath::check_component(&value).map_err(|why| ManifestError::field(field, why))?;
    Ok(value)
}

fn limits(value: &Value, at: &str) -> Result<CommandLimits, ManifestError> {
    let Value::Object(obj) = value else {
        return Err(ManifestError::field(at, "be an object"));
    };
    let get = |key: &str| -> Result<Option<u64>, ManifestError> {
        match obj.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) if n.as_u64().is_some_and(|v| v > 0) => Ok(n.as_u64()),
            Some(_) => Err(ManifestError::field(
                format!("{at}.{key}"),
                "be a positive integer",
            )),
        }
    };
    Ok(CommandLimits {
        wall_ms: get("wallMs")?,
        memory_bytes: get("memoryBytes")?,
        output_bytes: get("outputBytes")?,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

    use super::*;
    use serde_json::json;

    const SHA: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    fn good() -> Value {
        json!({
            "name": "core-utils",
            "version": "0.1.0",
            "assets": [
                {"path": "b.wasm", "sha256": SHA, "size": 0},
                {"path": "a.wasm", "sha256": SHA, "size": 0},
                {"path": "c.wasm", "sha256": SHA, "size": 0}
            ],
            "commands": [
                {"name": "ls", "modulePath": "b.wasm"},
                {"name": "cat", "modulePath": "a.wasm", "limits": {"wallMs": 5}}
            ],
            "x-extra": {"kept": true}
        })
    }

    fn error_of(mutate: impl FnOnce(&mut Value)) -> String {
        let mut v = good();
        mutate(&mut v);
        Manifest::from_value(v).unwrap_err().to_string()
    }

    #[test]
    fn a_good_manifest_parses_and_keeps_unknown_fields() {
        let m = Manifest::from_value(good()).unwrap();
        assert_eq!(m.name, "core-utils");
        assert_eq!(m.assets.len(), 3);
        assert_eq!(m.command("cat").unwrap().limits.unwrap().wall_ms, Some(5));
        assert!(m.document().contains_key("x-extra"));
        let payload = String::from_utf8(m.signed_payload()).unwrap();
        assert!(
            payload.starts_with(r#"{"assets":[{"path":"a.wasm""#),
            "{payload}"
        );
        assert!(payload.contains(r#""commands":[{"limits":{"wallMs":5},"modulePath":"a.wasm","name":"cat"},{"modulePath":"b.wasm","name":"ls"}]"#), "{payload}");
        assert!(
            payload.ends_with(r#""x-extra":{"kept":true}}"#),
            "{payload}"
        );
    }

    #[test]
    fn every_field_error_names_its_field() {
        type Edit = Box<dyn FnOnce(&mut Value)>;
        let cases: Vec<(Edit, &str)> = vec![
            (
                Box::new(|v| *v = json!([])),
                "the manifest must be a JSON object",
            ),
            (
                Box::new(|v| {
                    v.as_object_mut().unwrap().remove("name");
                }),
                "name must be a non-empty string (it is missing)",
            ),
            (
                Box::new(|v| v["name"] = json!("")),
                "name must be a non-empty string",
            ),
            (
                Box::new(|v| v["name"] = json!(3)),
                "name must be a non-empty string",
            ),
            (
                Box::new(|v| v["name"] = json!("../x")),
                "name must use only",
            ),
            (
                Box::new(|v| v["version"] = json!(" ")),
                "version must be a non-empty string",
            ),
            (
                Box::new(|v| v["version"] = json!("..")),
                "version must stay inside",
            ),
            (
                Box::new(|v| {
                    v.as_object_mut().unwrap().remove("assets");
                }),
                "assets must be an array (it is missing)",
            ),
            (
                Box::new(|v| v["assets"] = json!({})),
                "assets must be an array",
            ),
            (
                Box::new(|v| v["assets"][1] = json!("x")),
                "assets[1] must be an object",
            ),
            (
                Box::new(|v| {
                    v["assets"][2].as_object_mut().unwrap().remove("path");
                }),
                "assets[2].path must be a non-empty string",
            ),
            (
                Box::new(|v| v["assets"][2]["sha256"] = json!("")),
                "assets[2].sha256 must be a non-empty hex string",
            ),
            (
                Box::new(|v| v["assets"][2]["sha256"] = json!("xyz")),
                "assets[2].sha256 must be a non-empty hex string",
            ),
            (
                Box::new(|v| v["assets"][2]["sha256"] = json!(7)),
                "assets[2].sha256 must be a non-empty hex string",
            ),
            (
                Box::new(|v| v["assets"][0]["size"] = json!(-1)),
                "assets[0].size must be a non-negative integer",
            ),
            (
                Box::new(|v| v["assets"][0]["size"] = json!(1.5)),
                "assets[0].size must be a non-negative integer",
            ),
            (
                Box::new(|v| v["assets"][0]["size"] = json!("1")),
                "assets[0].size must be a non-negative integer",
            ),
            (
                Box::new(|v| v["assets"][1]["path"] = json!("b.wasm")),
                "assets[1].path must be unique",
            ),
            (
                Box::new(|v| v["commands"] = json!(null)),
                "commands must be an array",
            ),
            (
                Box::new(|v| v["commands"][0] = json!(1)),
                "commands[0] must be an object",
            ),
            (
                Box::new(|v| v["commands"][1]["name"] = json!("")),
                "commands[1].name must be a non-empty string",
            ),
            (
                Box::new(|v| v["commands"][1]["name"] = json!("ls")),
                "commands[1].name must be unique",
            ),
            (
                Box::new(|v| v["commands"][1]["name"] = json!("a/b")),
                "commands[1].name must use only",
            ),
            (
                Box::new(|v| v["commands"][0]["modulePath"] = json!("missing.wasm")),
                "commands[0].modulePath must name one of the listed assets",
            ),
            (
                Box::new(|v| v["commands"][1]["limits"] = json!(3)),
                "commands[1].limits must be an object",
            ),
            (
                Box::new(|v| v["commands"][1]["limits"] = json!({"memoryBytes": 0})),
                "commands[1].limits.memoryBytes must be a positive integer",
            ),
            (
                Box::new(|v| v["signature"] = json!("x")),
                "signature must be an object",
            ),
            (
                Box::new(|v| v["signature"] = json!({"alg": "ed25519", "sigBase64": "AA=="})),
                "signature.keyId must be a non-empty string",
            ),
            (
                Box::new(|v| v["signature"] = json!({"keyId": "k", "sigBase64": "AA=="})),
                "signature.alg must be a non-empty string",
            ),
            (
                Box::new(|v| v["signature"] = json!({"keyId": "k", "alg": "ed25519"})),
                "signature.sigBase64 must be a non-empty string",
            ),
        ];
        for (mutate, expected) in cases {
            let message = error_of(mutate);
            assert!(
                message.starts_with(expected),
                "{message:?} should start with {expected:?}"
            );
        }
    }

    #[test]
    fn traversal_in_asset_and_module_paths_is_refused() {
        for bad in [
            "../x.wasm",
            "/abs.wasm",
            "a/../../b",
            "a\\..\\b",
            "C:\\x",
            "x\0y",
            "./x",
            "a//b",
            "..",
            "a/b/",
        ] {
            let message = error_of(|v| v["assets"][0]["path"] = json!(bad));
            assert!(
                message.starts_with("assets[0].path must"),
                "{bad:?}: {message}"
            );
            let message = error_of(|v| v["commands"][0]["modulePath"] = json!(bad));
            assert!(
                message.starts_with("commands[0].modulePath must"),
                "{bad:?}: {message}"
            );
        }
    }

    #[test]
    fn not_json_and_too_large() {
        assert!(
            Manifest::parse(b"{")
                .unwrap_err()
                .to_string()
                .starts_with("manifest is not valid JSON")
        );
        let big = vec![b' '; MAX_MANIFEST_BYTES + 1];
        assert!(matches!(
            Manifest::parse(&big),
            Err(ManifestError::TooLarge(_))
        ));
    }
}
