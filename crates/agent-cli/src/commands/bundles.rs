//! `agent bundles build | sign | verify | install | list | remove | which | pin | unpin | gc`.

use std::path::{Path, PathBuf};

use agent_bundles::keys::{KeyPair, PublicKey};
use agent_bundles::manifest::Manifest;
use agent_bundles::registry::Registry;
use agent_bundles::store::{BundleError, BundleStore, InstallStatus, InstalledBundle, Resolver};
use agent_bundles::trust::TrustStore;
use agent_bundles::verify::{self, SignatureStatus};
use agent_bundles::{digest, pack};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::{absolute, agent_home};
use crate::cli::{
    BundleBuildArgs, BundleInstallArgs, BundlePinArgs, BundleRemoveArgs, BundleSignArgs,
    BundleUnpinArgs, BundleVerifyArgs, BundleWhichArgs, BundlesCommand, StoreArgs,
};
use crate::exit::Exit;
use crate::output;

pub fn run(cmd: BundlesCommand) -> Result<Exit> {
    match cmd {
        BundlesCommand::Build(args) => build(&args),
        BundlesCommand::Sign(args) => sign(&args),
        BundlesCommand::Verify(args) => verify_cmd(&args),
        BundlesCommand::Install(args) => install(&args),
        BundlesCommand::List(args) => list(&args),
        BundlesCommand::Remove(args) => remove(&args),
        BundlesCommand::Which(args) => which(&args),
        BundlesCommand::Pin(args) => pin(&args),
        BundlesCommand::Unpin(args) => unpin(&args),
        BundlesCommand::Gc(args) => gc(&args),
    }
}

/// The default bundle cache: `$AGENT_HOME/bundles`.
pub fn default_store() -> Result<PathBuf> {
    Ok(agent_home()?.bundles())
}

/// Where the user's trust store is: `$AGENT_HOME/keys/trusted.json`.
pub fn trust_path() -> Result<PathBuf> {
    Ok(agent_home()?.trusted_keys())
}

/// The user's trust store.
pub fn trust_store() -> Result<TrustStore> {
    Ok(TrustStore::load(&trust_path()?)?)
}

fn store(args: &StoreArgs) -> Result<BundleStore> {
    Ok(BundleStore::new(match &args.store {
        Some(dir) => absolute(dir.clone())?,
        None => default_store()?,
    }))
}

/// `NAME` or `NAME@VERSION`.
fn split_label(label: &str) -> (&str, Option<&str>) {
    match label.split_once('@') {
        Some((name, version)) => (name, Some(version)),
        None => (label, None),
    }
}

fn read_manifest(path: &Path) -> Result<(Vec<u8>, Manifest)> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let manifest = Manifest::parse(&bytes)
        .with_context(|| format!("{} is not a bundle manifest", path.display()))?;
    Ok((bytes, manifest))
}

fn signature_json(status: &SignatureStatus) -> Value {
    match status {
        SignatureStatus::Verified { key_id } => json!({"verified": true, "keyId": key_id}),
        SignatureStatus::NotRequired { present } => {
            json!({"verified": false, "required": false, "present": present})
        }
    }
}

fn signature_text(status: &SignatureStatus) -> String {
    match status {
        SignatureStatus::Verified { key_id } => format!("signed by {key_id}"),
        SignatureStatus::NotRequired { present: true } => {
            "signature present but not required here (no key configured)".into()
        }
        SignatureStatus::NotRequired { present: false } => "unsigned (not required here)".into(),
    }
}

fn build(args: &BundleBuildArgs) -> Result<Exit> {
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

fn sign(args: &BundleSignArgs) -> Result<Exit> {
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

fn verify_cmd(args: &BundleVerifyArgs) -> Result<Exit> {
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

fn bundle_json(bundle: &InstalledBundle) -> Value {
    json!({
        "name": bundle.manifest.name,
        "version": bundle.manifest.version,
        "dir": bundle.dir,
        "registry": bundle.origin.registry,
        "official": bundle.origin.official,
        "signedBy": bundle.origin.signed_by,
        "commands": bundle.manifest.commands.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
        "bytes": bundle.manifest.assets.iter().map(|a| a.size).sum::<u64>(),
    })
}

/// Whether an error is the bundle's fault (exit 1) rather than the input's (exit 2).
fn is_refusal(e: &BundleError) -> bool {
    matches!(
        e,
        BundleError::Verify { .. }
            | BundleError::Tampered { .. }
            | BundleError::Manifest { .. }
            | BundleError::Mismatch { .. }
            | BundleError::UnknownCommand { .. }
            | BundleError::Shadowed { .. }
            | BundleError::PinBroken { .. }
            | BundleError::NotProvided { .. }
            | BundleError::NotPinned(_)
            | BundleError::NoLongerOfficial { .. }
            | BundleError::NotInstalled(_)
            | BundleError::NotInIndex(_)
            | BundleError::Registry(
                agent_bundles::registry::RegistryError::NotFound(_)
                    | agent_bundles::registry::RegistryError::Status { .. }
                    | agent_bundles::registry::RegistryError::Transfer { .. }
                    | agent_bundles::registry::RegistryError::TooLarge { .. }
                    | agent_bundles::registry::RegistryError::BadIndex(..)
            )
    )
}

fn refuse(e: BundleError) -> Result<Exit> {
    if is_refusal(&e) {
        output::error(&e.to_string());
        Ok(Exit::Denied)
    } else {
        Err(e.into())
    }
}

fn install(args: &BundleInstallArgs) -> Result<Exit> {
    let (name, version) = split_label(&args.bundle);
    let registry = Registry::open(&args.registry)?;
    let trust = trust_store()?;
    let store = store(&args.store)?;
    let outcome = match store.install(&registry, &trust, name, version) {
        Ok(o) => o,
        Err(e) => return refuse(e),
    };
    // Compile the modules now, into the cache the runner reads, so the first command is fast.
    let prepared = warm_up(&args.store);
    let clashes = install_clashes(&store, &outcome.bundle);
    if args.store.json {
        let mut value = bundle_json(&outcome.bundle);
        value["prepared"] = json!(prepared);
        value["clashes"] = json!(clashes.iter().map(Clash::to_json).collect::<Vec<_>>());
        value["status"] = json!(match outcome.status {
            InstallStatus::Installed => "installed",
            InstallStatus::AlreadyInstalled => "already-installed",
            InstallStatus::Replaced => "replaced",
        });
        value["signature"] = signature_json(&outcome.signature);
        value["bytesFetched"] = json!(outcome.bytes_fetched);
        output::stdout_line(&value.to_string());
    } else {
        let verb = match outcome.status {
            InstallStatus::Installed => "installed",
            InstallStatus::AlreadyInstalled => "already installed",
            InstallStatus::Replaced => "reinstalled",
        };
        output::stdout_line(&format!(
            "{verb} {} from {} ({}, {}; sha256 and size of {} assets verified): {} commands in {}",
            outcome.bundle.label(),
            outcome.bundle.origin.registry,
            if outcome.bundle.origin.official {
                "official registry"
            } else {
                "third-party registry"
            },
            signature_text(&outcome.signature),
            outcome.bundle.manifest.assets.len(),
            outcome.bundle.manifest.commands.len(),
            outcome.bundle.dir.display()
        ));
    }
    for warning in clash_warnings(&outcome.bundle, &clashes) {
        output::warning(&warning);
    }
    Ok(Exit::Success)
}

/// A command the installed bundle shares with a bundle of the other class (official or
/// third-party).
struct Clash {
    command: String,
    /// The official bundle that wins it (`name@version`).
    official: String,
    /// The third-party bundles that provide it too (`name@version`).
    third_party: Vec<String>,
    /// The bundle name it is pinned to, if any.
    pinned: Option<String>,
}

impl Clash {
    fn to_json(&self) -> Value {
        json!({
            "command": self.command,
            "official": self.official,
            "thirdParty": self.third_party,
            "pinned": self.pinned,
            "resolvesTo": self.pinned.clone().unwrap_or_else(|| self.official.clone()),
        })
    }
}

/// The commands of `bundle` that a bundle of the other class also provides. A damaged pins
/// file or unreadable cache gives none here (the resolver reports it where it matters).
fn install_clashes(store: &BundleStore, bundle: &InstalledBundle) -> Vec<Clash> {
    let Ok(resolver) = store.resolver(&[]) else {
        return Vec::new();
    };
    let name = &bundle.manifest.name;
    resolver
        .clashes()
        .into_iter()
        .filter(|c| bundle.manifest.command(&c.command).is_some())
        .filter(|c| {
            let ours = |label: &String| label.split_once('@').is_some_and(|(n, _)| n == name);
            ours(&c.official) || c.third_party.iter().any(ours)
        })
        .map(|c| Clash {
            command: c.command,
            official: c.official,
            third_party: c.third_party,
            pinned: c.pinned,
        })
        .collect()
}

/// What `install` says on stderr about clashes: the commands that stay official, and how to
/// pin a third-party one.
fn clash_warnings(bundle: &InstalledBundle, clashes: &[Clash]) -> Vec<String> {
    let label = bundle.label();
    let name = &bundle.manifest.name;
    let mut out = Vec::new();
    if clashes.is_empty() {
        return out;
    }
    if bundle.origin.official {
        // Group by the third-party bundle.
        let mut by_other: Vec<(String, Vec<&Clash>)> = Vec::new();
        for c in clashes {
            for other in &c.third_party {
                match by_other.iter_mut().find(|(o, _)| o == other) {
                    Some((_, list)) => list.push(c),
                    None => by_other.push((other.clone(), vec![c])),
                }
            }
        }
        for (other, list) in by_other {
            let other_name = other.split_once('@').map_or(other.as_str(), |(n, _)| n);
            let pinned: Vec<&Clash> = list
                .iter()
                .copied()
                .filter(|c| c.pinned.as_deref() == Some(other_name))
                .collect();
            // Pinned to a third bundle: that bundle's group says so.
            let official: Vec<&Clash> = list
                .iter()
                .copied()
                .filter(|c| c.pinned.is_none() || c.pinned.as_deref() == Some(name.as_str()))
                .collect();
            if !official.is_empty() {
                let names: Vec<&str> = official.iter().map(|c| c.command.as_str()).collect();
                out.push(format!(
                    "{label} is official and provides {}, which third-party {other} also provides: official bundles win every name clash, so these stay official and {other_name}'s are refused unless pinned (`agent bundles pin {} {other_name}`)",
                    names.join(", "),
                    names[0],
                ));
            }
            if !pinned.is_empty() {
                let names: Vec<&str> = pinned.iter().map(|c| c.command.as_str()).collect();
                out.push(format!(
                    "{} stay pinned to third-party {other}, so {label}'s are not used (`agent bundles unpin {}` to use the official one)",
                    names.join(", "),
                    names[0],
                ));
            }
        }
    } else {
        // Group by the official bundle that wins.
        let mut by_official: Vec<(String, Vec<&Clash>)> = Vec::new();
        for c in clashes {
            match by_official.iter_mut().find(|(o, _)| *o == c.official) {
                Some((_, list)) => list.push(c),
                None => by_official.push((c.official.clone(), vec![c])),
            }
        }
        for (official, list) in by_official {
            let official_name = official
                .split_once('@')
                .map_or(official.as_str(), |(n, _)| n);
            let pinned: Vec<&Clash> = list
                .iter()
                .copied()
                .filter(|c| c.pinned.as_deref() == Some(name.as_str()))
                .collect();
            // Pinned to another third-party bundle: neither runs, and `which` says which does.
            let kept: Vec<&Clash> = list
                .iter()
                .copied()
                .filter(|c| c.pinned.is_none() || c.pinned.as_deref() == Some(official_name))
                .collect();
            if !kept.is_empty() {
                let names: Vec<&str> = kept.iter().map(|c| c.command.as_str()).collect();
                out.push(format!(
                    "{label} is third-party and provides {}, which the official {official} already provides: these stay official, and {name}'s are refused unless you pin them (`agent bundles pin {} {name}`)",
                    names.join(", "),
                    names[0],
                ));
            }
            if !pinned.is_empty() {
                let names: Vec<&str> = pinned.iter().map(|c| c.command.as_str()).collect();
                out.push(format!(
                    "{} are pinned to {name}, so {label}'s replace the official {official}'s (`agent bundles unpin {}` to undo)",
                    names.join(", "),
                    names[0],
                ));
            }
        }
    }
    out
}

/// Verifies and compiles every installed command's module into the runner's cache; a warning
/// (not a failure) when one cannot be prepared.
fn warm_up(args: &StoreArgs) -> bool {
    let toolbox =
        match super::exec::open_toolbox(args.store.clone(), &[], agent_wasi::Limits::default()) {
            Ok(t) => t,
            Err(e) => {
                output::warning(&format!(
                    "installed, but the modules were not prepared: {e:#}"
                ));
                return false;
            }
        };
    let failed = toolbox.warm_up();
    for (command, why) in &failed {
        output::warning(&format!(
            "{command}: its module cannot be prepared for the WASI runner: {why}"
        ));
    }
    failed.is_empty()
}

/// The commands of `bundle` pinned to it, and those refused because an official bundle
/// provides them (and they are not pinned to it).
fn pinned_and_refused(
    resolver: Option<&Resolver>,
    bundle: &InstalledBundle,
) -> (Vec<String>, Vec<String>) {
    let Some(resolver) = resolver else {
        return (Vec::new(), Vec::new());
    };
    let name = &bundle.manifest.name;
    let pinned: Vec<String> = resolver
        .pins()
        .iter()
        .filter(|(_, b)| *b == name)
        .map(|(c, _)| c.clone())
        .collect();
    let refused = if bundle.origin.official {
        Vec::new()
    } else {
        bundle
            .manifest
            .commands
            .iter()
            .map(|c| c.name.clone())
            .filter(|c| {
                !pinned.contains(c)
                    && resolver
                        .providers(c)
                        .iter()
                        .any(|b| b.origin.official && b.manifest.name != *name)
            })
            .collect()
    };
    (pinned, refused)
}

fn list(args: &StoreArgs) -> Result<Exit> {
    let store = store(args)?;
    let bundles = store.list()?;
    // Pins and clashes are shown when the pins file is readable; listing still works when it is
    // not (it is how one finds out what is installed), with a warning saying what to fix.
    let resolver = match store.resolver(&[]) {
        Ok(r) => Some(r),
        Err(e) => {
            output::warning(&format!("{e} (pins are not shown)"));
            None
        }
    };
    if args.json {
        let all: Vec<Value> = bundles
            .iter()
            .map(|b| {
                let (pinned, refused) = pinned_and_refused(resolver.as_ref(), b);
                let mut v = bundle_json(b);
                v["pinned"] = json!(pinned);
                v["refused"] = json!(refused);
                v
            })
            .collect();
        output::stdout_line(&Value::Array(all).to_string());
        return Ok(Exit::Success);
    }
    if bundles.is_empty() {
        output::stdout_line(
            "no bundles installed (install one with `agent bundles install NAME --registry DIR|URL`)",
        );
    }
    for b in &bundles {
        let names: Vec<&str> = b
            .manifest
            .commands
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        output::stdout_line(&format!(
            "{}  {} commands  {}{}  from {}\n  {}",
            b.label(),
            names.len(),
            if b.origin.official {
                "official"
            } else {
                "third-party"
            },
            match &b.origin.signed_by {
                Some(k) => format!(", signed by {k}"),
                None => ", unsigned".into(),
            },
            b.origin.registry,
            names.join(" ")
        ));
        let (pinned, refused) = pinned_and_refused(resolver.as_ref(), b);
        if !pinned.is_empty() {
            output::stdout_line(&format!("  pinned here: {}", pinned.join(" ")));
        }
        if !refused.is_empty() {
            output::stdout_line(&format!(
                "  refused (an official bundle provides them; `agent bundles pin COMMAND {}` to use one): {}",
                b.manifest.name,
                refused.join(" ")
            ));
        }
    }
    if let Some(resolver) = &resolver
        && !resolver.pins().is_empty()
    {
        output::stdout_line("pins:");
        for (command, bundle) in resolver.pins() {
            let state = match resolver.which(command) {
                Ok(r) => r.bundle.label(),
                Err(e) => format!("broken: {e}"),
            };
            output::stdout_line(&format!("  {command} -> {bundle} ({state})"));
        }
    }
    Ok(Exit::Success)
}

fn remove(args: &BundleRemoveArgs) -> Result<Exit> {
    let (name, version) = split_label(&args.bundle);
    let store = store(&args.store)?;
    let pins_before = store.pins().unwrap_or_default();
    match store.remove(name, version) {
        Ok(removed) => {
            let pins_after = store.pins().unwrap_or_default();
            let unpinned: Vec<&String> = pins_before
                .keys()
                .filter(|c| !pins_after.contains_key(*c))
                .collect();
            if args.store.json {
                output::stdout_line(&json!({"removed": removed, "unpinned": unpinned}).to_string());
            } else {
                for r in removed {
                    output::stdout_line(&format!("removed {r}"));
                }
                for c in unpinned {
                    output::stdout_line(&format!(
                        "unpinned {c} (it named {name}); it resolves as usual again"
                    ));
                }
            }
            Ok(Exit::Success)
        }
        Err(e) => refuse(e),
    }
}

fn which(args: &BundleWhichArgs) -> Result<Exit> {
    let trust = trust_store()?;
    let resolver = store(&args.store)?.resolver(&args.prefer)?;
    let resolved = match resolver.which(&args.command) {
        Ok(r) => r,
        Err(e) => return refuse(e),
    };
    let loaded = match resolver.load(&args.command, &trust, false) {
        Ok(l) => l,
        Err(e) => return refuse(e),
    };
    if args.store.json {
        let others: Vec<Value> = resolved
            .others
            .iter()
            .map(|(b, status)| {
                json!({
                    "bundle": b.label(),
                    "official": b.origin.official,
                    "status": status.as_str(),
                    "pin": format!("agent bundles pin {} {}", args.command, b.manifest.name),
                })
            })
            .collect();
        output::stdout_line(
            &json!({
                "command": loaded.command,
                "bundle": loaded.bundle,
                "version": loaded.version,
                "official": resolved.bundle.origin.official,
                "reason": resolved.reason.as_str(),
                "others": others,
                "module": loaded.path,
                "sha256": loaded.sha256,
                "size": loaded.bytes.len(),
                "signature": signature_json(&loaded.signature),
                "repaired": loaded.repaired,
                "limits": loaded.limits.map(|l| json!({"wallMs": l.wall_ms, "memoryBytes": l.memory_bytes, "outputBytes": l.output_bytes})),
            })
            .to_string(),
        );
    } else {
        output::stdout_line(&format!(
            "{}: {}@{} {} (sha256 {} verified; {}{})\n  why: {}",
            loaded.command,
            loaded.bundle,
            loaded.version,
            loaded.path.display(),
            loaded.sha256,
            signature_text(&loaded.signature),
            if loaded.repaired {
                "; the cached copy had changed and was re-fetched"
            } else {
                ""
            },
            resolved.explain()
        ));
    }
    Ok(Exit::Success)
}

fn pin(args: &BundlePinArgs) -> Result<Exit> {
    let store = store(&args.store)?;
    let previous = match store.pin(&args.command, &args.bundle) {
        Ok(p) => p,
        Err(e) => return refuse(e),
    };
    let resolver = store.resolver(&[])?;
    let resolved = resolver.which(&args.command)?;
    let replaced: Vec<String> = resolved
        .others
        .iter()
        .filter(|(b, _)| b.origin.official && !resolved.bundle.origin.official)
        .map(|(b, _)| b.label())
        .collect();
    if args.store.json {
        output::stdout_line(
            &json!({
                "command": args.command,
                "bundle": resolved.bundle.label(),
                "official": resolved.bundle.origin.official,
                "previous": previous,
                "replacesOfficial": replaced,
            })
            .to_string(),
        );
    } else {
        output::stdout_line(&format!(
            "pinned {} to {} ({}){}{}; `agent bundles unpin {}` to undo",
            args.command,
            resolved.bundle.label(),
            if resolved.bundle.origin.official {
                "official"
            } else {
                "third-party"
            },
            match &previous {
                Some(p) if *p != args.bundle => format!(", was pinned to {p}"),
                _ => String::new(),
            },
            if replaced.is_empty() {
                String::new()
            } else {
                format!(
                    "; it now runs instead of the official {}",
                    replaced.join(", ")
                )
            },
            args.command
        ));
    }
    Ok(Exit::Success)
}

fn unpin(args: &BundleUnpinArgs) -> Result<Exit> {
    let store = store(&args.store)?;
    let was = match store.unpin(&args.command) {
        Ok(b) => b,
        Err(e) => return refuse(e),
    };
    let now = store
        .resolver(&[])
        .ok()
        .and_then(|r| r.which(&args.command).ok().map(|x| x.bundle.label()));
    if args.store.json {
        output::stdout_line(
            &json!({"command": args.command, "was": was, "resolvesTo": now}).to_string(),
        );
    } else {
        output::stdout_line(&format!(
            "unpinned {} (was {was}); {}",
            args.command,
            match &now {
                Some(label) => format!("it now resolves to {label}"),
                None => "no installed bundle resolves it now".into(),
            }
        ));
    }
    Ok(Exit::Success)
}

fn gc(args: &StoreArgs) -> Result<Exit> {
    let report = store(args)?.gc()?;
    if args.json {
        output::stdout_line(
            &json!({
                "tempDirs": report.temp_dirs,
                "broken": report.broken,
                "superseded": report.superseded,
            })
            .to_string(),
        );
    } else {
        output::stdout_line(&format!(
            "removed {} temp directories, {} broken directories, {} superseded versions{}",
            report.temp_dirs.len(),
            report.broken.len(),
            report.superseded.len(),
            if report.superseded.is_empty() {
                String::new()
            } else {
                format!(" ({})", report.superseded.join(", "))
            }
        ));
    }
    Ok(Exit::Success)
}
