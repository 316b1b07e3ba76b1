//! The layering check: a workspace crate may depend only on crates before it in DESIGN.md's
//! order, and the bottom crates must not pull in heavy dependencies.

use std::collections::{BTreeSet, HashMap};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// DESIGN.md's order: each crate may depend only on crates before it.
pub const ORDER: &[&str] = &[
    "agent-core",
    "agent-sandbox",
    "agent-bundles",
    "agent-wasi",
    "agent-sessions",
    "agent-cli",
];

/// Dependencies a crate must not reach (directly or transitively, normal and build edges, with
/// default features), so that embedders can use it alone.
const HEAVY: &[(&str, &[&str])] = &[
    (
        "agent-core",
        &[
            "wasmtime",
            "wasmtime-wasi",
            "cranelift-codegen",
            "reqwest",
            "hyper",
            "rusqlite",
            "libsqlite3-sys",
        ],
    ),
    (
        "agent-sandbox",
        &["wasmtime", "wasmtime-wasi", "rusqlite", "libsqlite3-sys"],
    ),
];

pub fn check() -> Result<()> {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["metadata", "--format-version", "1", "--locked"])
        .output()
        .context("cannot run cargo metadata")?;
    if !out.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let meta: Value =
        serde_json::from_slice(&out.stdout).context("cargo metadata printed invalid JSON")?;
    let problems = violations(&meta)?;
    if !problems.is_empty() {
        bail!("layering check failed:\n  {}", problems.join("\n  "));
    }
    eprintln!("xtask: layering ok ({})", ORDER.join(" -> "));
    Ok(())
}

/// Every violation in a `cargo metadata` document.
pub fn violations(meta: &Value) -> Result<Vec<String>> {
    let packages = meta["packages"]
        .as_array()
        .context("metadata has no packages")?;
    let members: BTreeSet<&str> = meta["workspace_members"]
        .as_array()
        .context("metadata has no workspace_members")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let name_of: HashMap<&str, &str> = packages
        .iter()
        .filter_map(|p| Some((p["id"].as_str()?, p["name"].as_str()?)))
        .collect();
    let mut problems = Vec::new();
    for p in packages {
        let (Some(id), Some(name)) = (p["id"].as_str(), p["name"].as_str()) else {
            continue;
        };
        if !members.contains(id) || name == "xtask" {
            continue;
        }
        let Some(rank) = ORDER.iter().position(|n| *n == name) else {
            problems.push(format!(
                "workspace crate `{name}` is not in the layering order; add it to xtask/src/layering.rs ORDER and DESIGN.md"
            ));
            continue;
        };
        for dep in p["dependencies"].as_array().into_iter().flatten() {
            let Some(dep_name) = dep["name"].as_str() else {
                continue;
            };
            let is_dev = dep["kind"].as_str() == Some("dev");
            if let Some(dep_rank) = ORDER.iter().position(|n| *n == dep_name)
                && dep_rank >= rank
                && !is_dev
            {
                problems.push(format!(
                        "`{name}` depends on `{dep_name}`, which comes at or after it in the order {}; move the shared code down into an earlier crate",
                        ORDER.join(" -> ")
                    ));
            }
        }
    }
    // Heavy dependencies, transitively through normal and build edges.
    let nodes: HashMap<&str, &Value> = meta["resolve"]["nodes"]
        .as_array()
        .context("metadata has no resolve graph")?
        .iter()
        .filter_map(|n| Some((n["id"].as_str()?, n)))
        .collect();
    for (krate, heavy) in HEAVY {
        let Some(root) = name_of
            .iter()
            .find(|(id, n)| *n == krate && members.contains(**id))
            .map(|(id, _)| *id)
        else {
            continue;
        };
        let mut seen = BTreeSet::new();
        let mut stack = vec![(root, vec![*krate])];
        while let Some((id, path)) = stack.pop() {
            let Some(node) = nodes.get(id) else { continue };
            for dep in node["deps"].as_array().into_iter().flatten() {
                let runtime = dep["dep_kinds"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|k| k["kind"].as_str() != Some("dev"));
                let Some(dep_id) = dep["pkg"].as_str() else {
                    continue;
                };
                if !runtime || !seen.insert(dep_id) {
                    continue;
                }
                let dep_name = name_of.get(dep_id).copied().unwrap_or("?");
                let mut p = path.clone();
                p.push(dep_name);
                if heavy.contains(&dep_name) {
                    problems.push(format!(
                        "`{krate}` must stay light but reaches `{dep_name}` ({}); put it behind an optional cargo feature or in a later crate",
                        p.join(" -> ")
                    ));
                }
                stack.push((dep_id, p));
            }
        }
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(deps: &[(&str, &[&str])]) -> Value {
        let packages: Vec<Value> = deps
            .iter()
            .map(|(n, ds)| json!({"id": format!("{n} 0.1"), "name": n,
                "dependencies": ds.iter().map(|d| json!({"name": d, "kind": null})).collect::<Vec<_>>()}))
            .collect();
        let nodes: Vec<Value> = deps
            .iter()
            .map(|(n, ds)| json!({"id": format!("{n} 0.1"),
                "deps": ds.iter().map(|d| json!({"pkg": format!("{d} 0.1"), "dep_kinds": [{"kind": null}]})).collect::<Vec<_>>()}))
            .collect();
        let members: Vec<Value> = deps
            .iter()
            .filter(|(n, _)| n.starts_with("agent") || *n == "xtask")
            .map(|(n, _)| json!(format!("{n} 0.1")))
            .collect();
        json!({"packages": packages, "workspace_members": members, "resolve": {"nodes": nodes}})
    }

    #[test]
    fn accepts_the_order() {
        let m = meta(&[
            ("agent-core", &["serde"]),
            ("agent-cli", &["agent-core"]),
            ("serde", &[]),
        ]);
        assert!(violations(&m).unwrap().is_empty());
    }

    #[test]
    fn refuses_an_upward_edge() {
        let m = meta(&[("agent-core", &["agent-cli"]), ("agent-cli", &[])]);
        let v = violations(&m).unwrap();
        assert!(
            v[0].contains("`agent-core` depends on `agent-cli`"),
            "{v:?}"
        );
    }

    #[test]
    fn refuses_heavy_deps_in_core_even_transitively() {
        let m = meta(&[
            ("agent-core", &["helper"]),
            ("helper", &["reqwest"]),
            ("reqwest", &[]),
        ]);
        let v = violations(&m).unwrap();
        assert!(
            v[0].contains("reaches `reqwest` (agent-core -> helper -> reqwest)"),
            "{v:?}"
        );
    }

    #[test]
    fn refuses_unknown_workspace_crates() {
        let m = meta(&[("agent-extra", &[])]);
        assert!(violations(&m).unwrap()[0].contains("not in the layering order"));
    }
}
