//! `agent bundles build`, `sign` and `verify`: writing and checking manifests.

use std::path::Path;

use agent_bundles::keys::{KeyPair, PublicKey};
use agent_bundles::manifest::Manifest;
use agent_bundles::verify::{self, SignatureStatus};
use agent_bundles::{digest, pack};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::{signature_json, signature_text};
use crate::cli::bundles::{BundleBuildArgs, BundleSignArgs, BundleVerifyArgs};
use crate::commands::absolute;
use crate::commands::toolbox::trust_store;
use crate::exit::Exit;
use crate::output;

fn read_manifest(path: &Path) -> Result<(Vec<u8>, Manifest)> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let manifest = Manifest::parse(&bytes)
        .with_context(|| format!("{} is not a bundle manifest", path.display()))?;
    Ok((bytes, manifest))
}

pub(super) fn build(args: &BundleBuildArgs) -> Result<Exit> {
    let spec = pack::read_spec(&absolute(args.spec.clone())?)?;
    let modules = absolute(args.modules.clone())?;
    let mut manifest = pack::build_manifest(&spec, &modules)?;
    if let Some(key) = &args.key {
        let key = KeyPair::load(&absolute(key.clone())?)?;
        manifest = verify::sign_manifest(&manifest, &key);
    }
    let mut written = Vec::new();
    if let Some(registry) = &args.registry {
        let path = pack::publish(&manifest, &modules, &absolute(registry.clone())?)?;
        written.push(path);
    }
    if let Some(out) = &args.out {
        let out = absolute(out.clone())?;
        std::fs::write(&out, manifest.to_pretty_json())
            .with_context(|| format!("cannot write {}", out.display()))?;
        written.push(out);
    }
    if args.json {
        output::stdout_line(
            &json!({
                "bundle": manifest.label(),
                "manifest": Value::Object(manifest.document().clone()),
                "written": written,
            })
            .to_string(),
        );
    } else if written.is_empty() {
        output::stdout_text(&String::from_utf8_lossy(&manifest.to_pretty_json()));
    } else {
        let size: u64 = manifest.assets.iter().map(|a| a.size).sum();
        output::stdout_line(&format!(
            "built {}: {} commands, {} assets, {} bytes{}",
            manifest.label(),
            manifest.commands.len(),
            manifest.assets.len(),
            size,
            match &manifest.signature {
                Some(s) => format!(", signed by {}", s.key_id),
                None => ", unsigned".into(),
            }
        ));
        for path in written {
            output::stdout_line(&format!("  wrote {}", path.display()));
        }
    }
    Ok(Exit::Success)
}

pub(super) fn sign(args: &BundleSignArgs) -> Result<Exit> {
    let path = absolute(args.manifest.clone())?;
    let (_, manifest) = read_manifest(&path)?;
    let key = KeyPair::load(&absolute(args.key.clone())?)?;
    let signed = verify::sign_manifest(&manifest, &key);
    let out = match &args.out {
        Some(o) => absolute(o.clone())?,
        None => path,
    };
    std::fs::write(&out, signed.to_pretty_json())
        .with_context(|| format!("cannot write {}", out.display()))?;
    if args.json {
        output::stdout_line(
            &json!({"bundle": signed.label(), "keyId": key.key_id, "manifest": out}).to_string(),
        );
    } else {
        output::stdout_line(&format!(
            "signed {} with {} -> {}",
            signed.label(),
            key.key_id,
            out.display()
        ));
    }
    Ok(Exit::Success)
}

pub(super) fn verify_cmd(args: &BundleVerifyArgs) -> Result<Exit> {
    let path = absolute(args.manifest.clone())?;
    let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let keys: Vec<PublicKey> = args
        .keys
        .iter()
        .map(|k| PublicKey::from_assignment(k).with_context(|| format!("bad --key {k:?}")))
        .collect::<Result<_>>()?;
    if serde_json::from_slice::<Value>(&bytes).is_err() {
        bail!(
            "{} is not JSON; a manifest is a JSON object with name, version, assets and commands",
            path.display()
        );
    }
    let report = |valid: bool,
                  label: &str,
                  signature: Value,
                  assets: Value,
                  reason: Option<String>| {
        if args.json {
            output::stdout_line(
                &json!({"valid": valid, "bundle": label, "signature": signature, "assets": assets, "reason": reason})
                    .to_string(),
            );
        } else if let Some(reason) = &reason {
            output::error(&format!("invalid: {}: {reason}", path.display()));
        }
    };
    let manifest = match Manifest::parse(&bytes) {
        Ok(m) => m,
        Err(e) => {
            report(false, "", Value::Null, Value::Null, Some(e.to_string()));
            return Ok(Exit::Denied);
        }
    };
    let label = manifest.label();
    let keys = if keys.is_empty() {
        trust_store()?.all_keys()
    } else {
        keys
    };
    let must_sign = !args.keys.is_empty() || args.signature_only || manifest.signature.is_some();
    let signature = if must_sign {
        match verify::verify_signature_with(&manifest, &keys, &path.display().to_string()) {
            Ok(s) => s,
            Err(e) => {
                report(false, &label, Value::Null, Value::Null, Some(e.to_string()));
                return Ok(Exit::Denied);
            }
        }
    } else {
        SignatureStatus::NotRequired { present: false }
    };
    let mut checked = Vec::new();
    if !args.signature_only {
        let dir = path.parent().unwrap_or(Path::new("."));
        for asset in &manifest.assets {
            let file = dir.join(&asset.path);
            let outcome = match digest::sha256_file(&file) {
                Ok((sha, size)) => {
                    verify::check_digest(asset, &sha, size).map_err(|e| e.to_string())
                }
                Err(e) => Err(format!(
                    "`{}`: cannot read {}: {e}",
                    asset.path,
                    file.display()
                )),
            };
            if let Err(reason) = outcome {
                report(
                    false,
                    &label,
                    signature_json(&signature),
                    Value::Null,
                    Some(reason),
                );
                return Ok(Exit::Denied);
            }
            checked.push(asset.path.clone());
        }
    }
    report(
        true,
        &label,
        signature_json(&signature),
        json!(checked),
        None,
    );
    if !args.json {
        output::stdout_line(&format!(
            "valid: {label} ({}{})",
            signature_text(&signature),
            if args.signature_only {
                String::new()
            } else {
                format!("; {} assets match their size and sha256", checked.len())
            }
        ));
    }
    Ok(Exit::Success)
}
