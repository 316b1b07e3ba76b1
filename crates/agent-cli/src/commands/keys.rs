//! `agent keys generate | list | trust | untrust`.

use agent_bundles::keys::{KeyPair, PublicKey};
use agent_bundles::trust::{BUILTIN_KEYS, TrustStore, registry_id};
use anyhow::{Context, Result};
use serde_json::{Value, json};

use super::toolbox::trust_path;
use super::{absolute, agent_home};
use crate::cli::keys::{
    KeysCommand, KeysGenerateArgs, KeysListArgs, KeysTrustArgs, KeysUntrustArgs,
};
use crate::exit::Exit;
use crate::output;

pub fn run(cmd: KeysCommand) -> Result<Exit> {
    match cmd {
        KeysCommand::Generate(args) => generate(&args),
        KeysCommand::List(args) => list(&args),
        KeysCommand::Trust(args) => trust(&args),
        KeysCommand::Untrust(args) => untrust(&args),
    }
}

fn generate(args: &KeysGenerateArgs) -> Result<Exit> {
    let dir = match &args.out {
        Some(d) => absolute(d.clone())?,
        None => agent_home()?.keys(),
    };
    let pair = KeyPair::generate(&args.id)?;
    let private = dir.join(format!("{}.jwk", args.id));
    let public = dir.join(format!("{}.pub.jwk", args.id));
    pair.save(&private)?;
    let mut text = serde_json::to_string_pretty(&pair.public().to_jwk())?;
    text.push('\n');
    std::fs::write(&public, text).with_context(|| format!("cannot write {}", public.display()))?;
    let official: Vec<String> = args.official_for.iter().map(|r| registry_id(r)).collect();
    if args.trust {
        let mut store = TrustStore::load(&trust_path()?)?;
        store.trust(&pair.public(), &official, &[]);
        store.save()?;
    }
    if args.json {
        output::stdout_line(
            &json!({
                "keyId": pair.key_id,
                "publicKey": pair.public().to_base64url(),
                "privateKeyFile": private,
                "publicKeyFile": public,
                "trusted": args.trust,
                "officialFor": official,
            })
            .to_string(),
        );
    } else {
        output::stdout_line(&format!(
            "generated {}: public key {}\n  private key {} (0600; keep it secret)\n  public key  {}{}",
            pair.key_id,
            pair.public().to_base64url(),
            private.display(),
            public.display(),
            if args.trust {
                format!(
                    "\n  trusted{}",
                    if official.is_empty() {
                        String::new()
                    } else {
                        format!(", official for {}", official.join(", "))
                    }
                )
            } else {
                String::new()
            }
        ));
    }
    Ok(Exit::Success)
}

fn list(args: &KeysListArgs) -> Result<Exit> {
    let store = TrustStore::load(&trust_path()?)?;
    let mut rows: Vec<Value> = BUILTIN_KEYS
        .iter()
        .map(|k| {
            json!({"keyId": k.key_id, "publicKey": k.public_key, "officialFor": k.official_for, "registries": [], "builtin": true})
        })
        .collect();
    rows.extend(store.entries().iter().map(|k| {
        json!({"keyId": k.key_id, "publicKey": k.public_key, "officialFor": k.official_for, "registries": k.registries, "builtin": false})
    }));
    if args.json {
        output::stdout_line(&Value::Array(rows).to_string());
        return Ok(Exit::Success);
    }
    if rows.is_empty() {
        output::stdout_line(
            "no trusted keys (add one with `agent keys trust ID=BASE64URL --official-for REGISTRY`)",
        );
    }
    for row in rows {
        let list = |v: &Value| {
            v.as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default()
        };
        output::stdout_line(&format!(
            "{} {}{}{}{}",
            row["keyId"].as_str().unwrap_or(""),
            row["publicKey"].as_str().unwrap_or(""),
            if row["builtin"] == json!(true) {
                " (built in)"
            } else {
                ""
            },
            match list(&row["officialFor"]) {
                s if s.is_empty() => String::new(),
                s => format!("\n  official for: {s}"),
            },
            match list(&row["registries"]) {
                s if s.is_empty() => String::new(),
                s => format!("\n  required by: {s}"),
            },
        ));
    }
    Ok(Exit::Success)
}

/// Reads `ID=BASE64URL` or a JWK file (public or private).
fn read_key(text: &str) -> Result<PublicKey> {
    if text.contains('=') && !std::path::Path::new(text).exists() {
        return Ok(PublicKey::from_assignment(text)?);
    }
    let path = absolute(text.into())?;
    let bytes = std::fs::read(&path)
        .with_context(|| format!("{text} is neither ID=BASE64URL nor a readable JWK file"))?;
    let jwk: Value = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not a JWK (JSON)", path.display()))?;
    let kid = jwk["kid"]
        .as_str()
        .with_context(|| format!("{}: the JWK has no `kid` (key id)", path.display()))?;
    let x = jwk["x"]
        .as_str()
        .with_context(|| format!("{}: the JWK has no `x` (public key)", path.display()))?;
    Ok(PublicKey::from_base64url(kid, x)?)
}

fn trust(args: &KeysTrustArgs) -> Result<Exit> {
    let key = read_key(&args.key)?;
    let official: Vec<String> = args.official_for.iter().map(|r| registry_id(r)).collect();
    let registries: Vec<String> = args.registries.iter().map(|r| registry_id(r)).collect();
    let mut store = TrustStore::load(&trust_path()?)?;
    store.trust(&key, &official, &registries);
    store.save()?;
    if args.json {
        output::stdout_line(
            &json!({"keyId": key.key_id, "publicKey": key.to_base64url(), "officialFor": official, "registries": registries})
                .to_string(),
        );
    } else {
        output::stdout_line(&format!(
            "trusted {} ({}){}{}",
            key.key_id,
            key.to_base64url(),
            if official.is_empty() {
                String::new()
            } else {
                format!("; official for {}", official.join(", "))
            },
            if registries.is_empty() {
                String::new()
            } else {
                format!("; required by {}", registries.join(", "))
            }
        ));
    }
    Ok(Exit::Success)
}

fn untrust(args: &KeysUntrustArgs) -> Result<Exit> {
    let mut store = TrustStore::load(&trust_path()?)?;
    let removed = store.untrust(&args.id);
    if removed {
        store.save()?;
    }
    if args.json {
        output::stdout_line(&json!({"keyId": args.id, "removed": removed}).to_string());
    } else if removed {
        output::stdout_line(&format!("untrusted {}", args.id));
    } else {
        output::error(&format!(
            "no trusted key `{}` (see `agent keys list`)",
            args.id
        ));
    }
    Ok(if removed { Exit::Success } else { Exit::Denied })
}
