//! `agent bundles build | sign | verify | install | list | remove | which | pin | unpin | gc`.

mod clashes;
mod manifest;

use agent_bundles::registry::Registry;
use agent_bundles::store::{BundleError, BundleStore, InstallStatus, InstalledBundle, Resolver};
use agent_bundles::verify::SignatureStatus;
use anyhow::Result;
use serde_json::{Value, json};

use self::clashes::{Clash, clash_warnings, install_clashes};
use self::manifest::{build, sign, verify_cmd};
use super::absolute;
use super::toolbox::{default_store, open_toolbox, trust_store};
use crate::cli::bundles::{
    BundleInstallArgs, BundlePinArgs, BundleRemoveArgs, BundleUnpinArgs, BundleWhichArgs,
    BundlesCommand, StoreArgs,
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

/// A signature's status, as JSON.
fn signature_json(status: &SignatureStatus) -> Value {
    match status {
        SignatureStatus::Verified { key_id } => json!({"verified": true, "keyId": key_id}),
        SignatureStatus::NotRequired { present } => {
            json!({"verified": false, "required": false, "present": present})
        }
    }
}

/// A signature's status, in words.
fn signature_text(status: &SignatureStatus) -> String {
    match status {
        SignatureStatus::Verified { key_id } => format!("signed by {key_id}"),
        SignatureStatus::NotRequired { present: true } => {
            "signature present but not required here (no key configured)".into()
        }
        SignatureStatus::NotRequired { present: false } => "unsigned (not required here)".into(),
    }
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

/// Verifies and compiles every installed command's module into the runner's cache; a warning
/// (not a failure) when one cannot be prepared.
fn warm_up(args: &StoreArgs) -> bool {
    let toolbox = match open_toolbox(args.store.clone(), &[], agent_wasi::Limits::default()) {
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
