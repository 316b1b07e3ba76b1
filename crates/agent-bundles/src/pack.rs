//! Making bundles: a manifest from a spec and a directory of modules, and a registry tree to
//! publish it in.
//!
//! A spec (`bundle.json`) names the bundle and its commands; the assets are the modules the
//! commands use, hashed from the directory:
//!
//! ```json
//! { "name": "core-utils", "version": "0.1.0",
//!   "commands": [ { "name": "cat", "modulePath": "coreutils.wasm" },
//!                 { "name": "sleep", "modulePath": "coreutils.wasm", "limits": { "wallMs": 60000 } } ] }
//! ```

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::digest::sha256_file;
use crate::manifest::{Manifest, ManifestError};
use crate::registry::Index;
use crate::store::MANIFEST_FILE;

/// Something that stopped a build or publish.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    /// The spec is malformed.
    #[error("{path}: {why}")]
    Spec {
        /// The spec file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// The manifest it makes is invalid.
    #[error("the bundle's manifest would be invalid: {0}")]
    Manifest(#[from] ManifestError),
    /// A file operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> PackError + '_ {
    move |source| PackError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Builds an unsigned manifest from `spec` (a JSON object: `name`, `version`, `commands`, and
/// any other fields, which are kept), hashing each module the commands name from `module_dir`.
///
/// # Errors
/// A malformed spec, a missing module, or a manifest that fails [`Manifest::from_value`].
pub fn build_manifest(spec: &Value, module_dir: &Path) -> Result<Manifest, PackError> {
    let spec_error = |why: &str| PackError::Spec {
        path: module_dir.to_path_buf(),
        why: why.to_string(),
    };
    let Value::Object(spec) = spec else {
        return Err(spec_error("the spec must be a JSON object"));
    };
    let mut doc: Map<String, Value> = spec.clone();
    doc.remove("signature");
    let commands = doc
        .get("commands")
        .and_then(Value::as_array)
        .ok_or_else(|| spec_error("`commands` must be an array of {name, modulePath}"))?;
    let mut modules: Vec<String> = commands
        .iter()
        .filter_map(|c| {
            c.get("modulePath")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect();
    modules.sort();
    modules.dedup();
    let mut assets = Vec::new();
    for module in modules {
        crate::relpath::check_path(&module).map_err(|why| PackError::Spec {
            path: module_dir.to_path_buf(),
            why: format!("modulePath `{module}` must {why}"),
        })?;
        let path = module_dir.join(&module);
        let (sha, size) = sha256_file(&path).map_err(io(&path))?;
        assets.push(json!({"path": module, "sha256": sha, "size": size}));
    }
    doc.insert("assets".into(), Value::Array(assets));
    Ok(Manifest::from_value(Value::Object(doc))?)
}

/// Reads a spec file.
///
/// # Errors
/// When it cannot be read or is not JSON.
pub fn read_spec(path: &Path) -> Result<Value, PackError> {
    let bytes = std::fs::read(path).map_err(io(path))?;
    serde_json::from_slice(&bytes).map_err(|e| PackError::Spec {
        path: path.to_path_buf(),
        why: format!("not JSON: {e}"),
    })
}

/// Lays `manifest` and its assets (copied from `module_dir`) out in the registry directory
/// `registry` (`bundles/<name>/<version>/`) and adds it to `index.json`; the manifest's path.
///
/// # Errors
/// When a file cannot be copied or written.
pub fn publish(
    manifest: &Manifest,
    module_dir: &Path,
    registry: &Path,
) -> Result<PathBuf, PackError> {
    let dir = registry
        .join("bundles")
        .join(&manifest.name)
        .join(&manifest.version);
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    for asset in &manifest.assets {
        let from = module_dir.join(&asset.path);
        let to = dir.join(&asset.path);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::copy(&from, &to).map_err(io(&from))?;
    }
    let manifest_path = dir.join(MANIFEST_FILE);
    std::fs::write(&manifest_path, manifest.to_pretty_json()).map_err(io(&manifest_path))?;
    let index_path = registry.join("index.json");
    let mut index: Index = match std::fs::read(&index_path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| PackError::Spec {
            path: index_path.clone(),
            why: format!("not a registry index: {e}"),
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Index::default(),
        Err(e) => return Err(io(&index_path)(e)),
    };
    index.add(&manifest.name, &manifest.version);
    let mut text = serde_json::to_vec_pretty(&index).unwrap_or_default();
    text.push(b'\n');
    std::fs::write(&index_path, text).map_err(io(&index_path))?;
    Ok(manifest_path)
}
