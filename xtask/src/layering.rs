//! The layering check: a workspace crate may depend only on crates before it in DESIGN.md's
//! order, the bottom crates must not pull in heavy dependencies, and a dependency that one crate
//! owns (the shell parser) is a direct dependency of that crate alone.

use std::collections::BTreeSet;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// DESIGN.md's order: each crate may depend only on crates before it.
pub const ORDER: &[&str] = &[
    "agent-core",
    "agent-sandbox",
    "agent-bundles",
    "agent-wasi",
    "agent-providers",
    "agent-mcp",
    "agent-store",
    "agent-workspace",
    "agent-tools",
    "agent-loop",
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
        &[
            "wasmtime",
            "wasmtime-wasi",
            "reqwest",
            "hyper",
            "rusqlite",
            "libsqlite3-sys",
        ],
    ),
    // Bundles are verified without a WebAssembly engine (reqwest is its default `http` feature).
    (
        "agent-bundles",
        &[
            "wasmtime",
            "wasmtime-wasi",
            "cranelift-codegen",
            "rusqlite",
            "libsqlite3-sys",
        ],
    ),
    // The session store alone: an embedder keeping, listing or exporting sessions gets SQLite
    // and agent-core, no provider, sandbox, WebAssembly engine or HTTP client. The PostgreSQL
    // backend is its cargo feature `postgres` (issue 29): the local store pulls in none of it
    // (`cargo tree -p` resolves the default features, so the feature's own tree is allowed).
    (
        "agent-store",
        &[
            "wasmtime",
            "wasmtime-wasi",
            "cranelift-codegen",
            "reqwest",
            "hyper",
            "agent-providers",
            "agent-sandbox",
            "agent-wasi",
            "tokio-postgres",
            "postgres-protocol",
            "tokio-postgres-rustls",
            "rustls",
        ],
    ),
    // The shadow workspace alone: plain files, not even the session store's SQLite.
    (
        "agent-workspace",
        &[
            "wasmtime",
            "wasmtime-wasi",
            "cranelift-codegen",
            "reqwest",
            "hyper",
            "agent-providers",
            "agent-sandbox",
            "agent-wasi",
            "rusqlite",
            "libsqlite3-sys",
        ],
    ),
];

/// Dependencies only one workspace crate may depend on directly, and why: every other crate
/// goes through that crate's API, so there is one reading of what they parse.
const OWNED: &[(&str, &str, &str)] = &[(
    "brush-parser",
    "agent-core",
    "the shell is parsed once, by agent_core::shell (its lowered tree and ParsedScript); read those instead of parsing again",
)];

pub fn check() -> Result<()> {
    let out = crate::cargo_command()
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
    let mut problems = violations(&meta)?;
    let members: BTreeSet<&str> = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["name"].as_str())
        .collect();
    for (krate, heavy) in HEAVY {
        if !members.contains(krate) {
            continue;
        }
        // `cargo tree -p` resolves features for this crate alone (its default features), which
        // is what an embedder depending on it gets; the workspace-wide metadata would include
        // features other members turn on.
        let out = crate::cargo_command()
            .args(["tree", "--locked", "-p", krate, "-e", "normal,build"])
            .args(["--prefix", "depth", "-f", "{p}"])
            .output()
            .context("cannot run cargo tree")?;
        if !out.status.success() {
            bail!(
                "cargo tree -p {krate} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        problems.extend(heavy_violations(
            krate,
            &String::from_utf8_lossy(&out.stdout),
            heavy,
        ));
    }
    if !problems.is_empty() {
        bail!("layering check failed:\n  {}", problems.join("\n  "));
    }
    eprintln!("xtask: layering ok ({})", ORDER.join(" -> "));
    Ok(())
}

/// Every ordering violation in a `cargo metadata` document (heavy dependencies are checked
/// per crate with `cargo tree`, see [`heavy_violations`]).
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
            if let Some((_, owner, why)) = OWNED.iter().find(|(d, ..)| *d == dep_name)
                && *owner != name
            {
                problems.push(format!(
                    "`{name}` depends on `{dep_name}`, which only `{owner}` may use: {why}"
                ));
            }
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
    Ok(problems)
}

/// Heavy dependencies `krate` reaches, from `cargo tree --prefix depth -f {p}` output (one
/// line per package: its depth, then `name version`).
pub fn heavy_violations(krate: &str, tree: &str, heavy: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut path: Vec<&str> = Vec::new();
    let mut reported = BTreeSet::new();
    for line in tree.lines() {
        let digits = line.chars().take_while(char::is_ascii_digit).count();
        let Ok(depth) = line[..digits].parse::<usize>() else {
            continue;
        };
        let name = line[digits..].split_whitespace().next().unwrap_or("");
        path.truncate(depth);
        path.push(name);
        if heavy.contains(&name) && reported.insert(name) {
            problems.push(format!(
                "`{krate}` must stay light but reaches `{name}` ({}); put it behind an optional cargo feature or in a later crate",
                path.join(" -> ")
            ));
        }
    }
    problems
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
        let tree = "0agent-core v0.1.0 (/w)\n1helper v1.0.0\n2reqwest v0.13.0\n3hyper v1.0.0\n1serde v1.0.0\n";
        let v = heavy_violations("agent-core", tree, &["reqwest", "hyper"]);
        assert_eq!(v.len(), 2, "{v:?}");
        assert!(
            v[0].contains("reaches `reqwest` (agent-core -> helper -> reqwest)"),
            "{v:?}"
        );
        assert!(
            v[1].contains("(agent-core -> helper -> reqwest -> hyper)"),
            "{v:?}"
        );
        assert!(
            heavy_violations(
                "agent-core",
                "0agent-core v0.1.0\n1serde v1\n",
                &["reqwest"]
            )
            .is_empty()
        );
    }

    fn heavy_for(krate: &str) -> &'static [&'static str] {
        HEAVY
            .iter()
            .find(|(c, _)| *c == krate)
            .map(|(_, h)| *h)
            .unwrap()
    }

    /// The session store and the shadow workspace are usable alone (issue 28): the store may
    /// use SQLite but not reach a provider (nor, through it, an HTTP client); the workspace may
    /// not even reach SQLite.
    #[test]
    fn the_store_and_the_workspace_stay_light() {
        let store = "0agent-store v0.1.0\n1agent-core v0.1.0\n1rusqlite v0.41.0\n2libsqlite3-sys v0.37.0\n1agent-providers v0.1.0\n2reqwest v0.13.0\n";
        let v = heavy_violations("agent-store", store, heavy_for("agent-store"));
        assert_eq!(v.len(), 2, "{v:?}");
        assert!(
            v[0].contains("reaches `agent-providers` (agent-store -> agent-providers)"),
            "{v:?}"
        );
        assert!(
            v[1].contains("(agent-store -> agent-providers -> reqwest)"),
            "{v:?}"
        );
        let workspace = "0agent-workspace v0.1.0\n1agent-core v0.1.0\n1rusqlite v0.41.0\n2libsqlite3-sys v0.37.0\n";
        let v = heavy_violations("agent-workspace", workspace, heavy_for("agent-workspace"));
        assert_eq!(v.len(), 2, "{v:?}");
        assert!(
            v[0].contains("reaches `rusqlite` (agent-workspace -> rusqlite)"),
            "{v:?}"
        );
        for krate in ["agent-store", "agent-workspace"] {
            assert!(ORDER.contains(&krate), "{krate} is not in ORDER");
        }
    }

    /// The local session store pulls in nothing of the PostgreSQL backend (issue 29): the
    /// driver and its wire protocol are reached only through agent-store's `postgres` feature,
    /// which `cargo tree -p agent-store` (default features) leaves off.
    #[test]
    fn the_local_store_does_not_reach_the_postgres_driver() {
        let with_feature = "0agent-store v0.1.0\n1agent-core v0.1.0\n1rusqlite v0.41.0\n1tokio-postgres v0.7.18\n2postgres-protocol v0.6.12\n2postgres-types v0.2.14\n3postgres-protocol v0.6.12\n";
        let v = heavy_violations("agent-store", with_feature, heavy_for("agent-store"));
        assert_eq!(v.len(), 2, "{v:?}");
        assert!(
            v[0].contains("reaches `tokio-postgres` (agent-store -> tokio-postgres)"),
            "{v:?}"
        );
        assert!(
            v[1].contains("(agent-store -> tokio-postgres -> postgres-protocol)"),
            "{v:?}"
        );
        assert!(v[0].contains("optional cargo feature"), "{v:?}");
        let local = "0agent-store v0.1.0\n1agent-core v0.1.0\n1rusqlite v0.41.0\n2libsqlite3-sys v0.37.0\n1tokio v1.0.0\n";
        assert!(heavy_violations("agent-store", local, heavy_for("agent-store")).is_empty());
    }

    /// Only agent-core parses shell text (issue 24: one lowered shell tree); the WASI shell and
    /// every other crate read its tree.
    #[test]
    fn only_agent_core_depends_on_the_shell_parser() {
        let ok = meta(&[
            ("agent-core", &["brush-parser"]),
            ("agent-wasi", &["agent-core"]),
            ("brush-parser", &[]),
        ]);
        assert!(violations(&ok).unwrap().is_empty());
        for other in ["agent-wasi", "agent-sandbox", "agent-cli"] {
            let m = meta(&[
                ("agent-core", &["brush-parser"]),
                (other, &["agent-core", "brush-parser"]),
                ("brush-parser", &[]),
            ]);
            let v = violations(&m).unwrap();
            assert_eq!(v.len(), 1, "{v:?}");
            assert!(
                v[0].contains(&format!(
                    "`{other}` depends on `brush-parser`, which only `agent-core` may use"
                )),
                "{v:?}"
            );
        }
    }

    #[test]
    fn refuses_unknown_workspace_crates() {
        let m = meta(&[("agent-extra", &[])]);
        assert!(violations(&m).unwrap()[0].contains("not in the layering order"));
    }
}
