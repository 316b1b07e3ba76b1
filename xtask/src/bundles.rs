//! `cargo xtask bundles`: builds the project's core-utils bundle and lays out a signed local
//! registry.
//!
//! 1. Builds `guest/` for wasm32-wasip1 in release (adding the target with rustup if it is
//!    missing).
//! 2. Picks the signing key: `--key FILE`, else `$AGENT_BUNDLE_KEY` (a path), else the local
//!    development key `$AGENT_HOME/keys/agent-dev-local.jwk`, generated on first run and added
//!    to the trust store as official for the registry it signs.
//! 3. Writes the manifest (hashes and sizes) from `guest/bundle.json`, signs it, and lays out
//!    `target/bundles/registry` (`index.json`, `bundles/core-utils/<version>/`), then verifies
//!    it with `agent bundles verify`.
//! 4. Installs it into `$AGENT_HOME/bundles` (`agent bundles install`, which also compiles the
//!    modules), so `agent shell 'ls | wc -l'` works right after.
//!
//! Other homes: `agent bundles install core-utils --registry target/bundles/registry`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The development key's id.
const DEV_KEY_ID: &str = "agent-dev-local";
/// The guest's target.
const TARGET: &str = "wasm32-wasip1";

pub(crate) fn root() -> Result<PathBuf> {
    Ok(Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("xtask has no parent directory")?
        .to_path_buf())
}

pub(crate) fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

/// Where the built registry lands.
pub fn registry_dir() -> Result<PathBuf> {
    let root = root()?;
    Ok(target_dir(&root).join("bundles").join("registry"))
}

fn agent_home() -> Result<PathBuf> {
    if let Some(h) = std::env::var_os("AGENT_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(h));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .context("$HOME is not set")?;
    Ok(PathBuf::from(home).join(".agent"))
}

pub fn ensure_target() -> Result<()> {
    let out = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output();
    match out {
        Ok(out)
            if String::from_utf8_lossy(&out.stdout)
                .lines()
                .any(|l| l.trim() == TARGET) =>
        {
            Ok(())
        }
        Ok(_) => {
            eprintln!("xtask: adding the {TARGET} target (rustup target add {TARGET})");
            let status = Command::new("rustup")
                .args(["target", "add", TARGET])
                .status()
                .context("cannot run rustup")?;
            if !status.success() {
                bail!("`rustup target add {TARGET}` failed ({status})");
            }
            Ok(())
        }
        // No rustup: the toolchain may still have the target; the build will say if not.
        Err(_) => Ok(()),
    }
}

fn run(program: &Path, args: &[&str]) -> Result<String> {
    eprintln!("xtask: agent {}", args.join(" "));
    let out = Command::new(program)
        .args(args)
        .output()
        .with_context(|| format!("cannot run {}", program.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    if !out.status.success() {
        bail!(
            "`agent {}` failed ({}): {}{}",
            args.join(" "),
            out.status,
            stdout,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(stdout)
}

/// `cargo xtask bundles [--key FILE]`.
pub fn run_bundles(args: &[String]) -> Result<()> {
    let mut key: Option<PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--key" => key = Some(PathBuf::from(it.next().context("--key needs a FILE")?)),
            other => bail!("unknown argument {other:?}; usage: cargo xtask bundles [--key FILE]"),
        }
    }
    let root = root()?;
    ensure_target()?;
    let guest = root.join("guest");
    eprintln!("xtask: (guest/) cargo build --release --locked --target {TARGET}");
    let status = crate::cargo_command()
        .args(["build", "--release", "--locked", "--target", TARGET])
        .current_dir(&guest)
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .context("cannot run cargo in guest/")?;
    if !status.success() {
        bail!("building guest/ for {TARGET} failed ({status})");
    }
    let modules = guest.join("target").join(TARGET).join("release");

    // The CLI does the bundle work, so xtask and users go through the same code.
    crate::cargo(&["build", "--locked", "-p", "agent-cli"])?;
    let agent = target_dir(&root).join("debug").join("agent");

    let registry = registry_dir()?;
    let spec_path = guest.join("bundle.json");
    let spec: serde_json::Value = serde_json::from_slice(
        &std::fs::read(&spec_path)
            .with_context(|| format!("cannot read {}", spec_path.display()))?,
    )
    .with_context(|| format!("{} is not JSON", spec_path.display()))?;
    let (name, version) = (
        spec["name"].as_str().context("bundle.json has no name")?,
        spec["version"]
            .as_str()
            .context("bundle.json has no version")?,
    );
    let bundle_dir = registry.join("bundles").join(name).join(version);
    if bundle_dir.exists() {
        std::fs::remove_dir_all(&bundle_dir)
            .with_context(|| format!("cannot clear {}", bundle_dir.display()))?;
    }
    std::fs::create_dir_all(&registry)
        .with_context(|| format!("cannot create {}", registry.display()))?;

    let key = match key.or_else(|| std::env::var_os("AGENT_BUNDLE_KEY").map(PathBuf::from)) {
        Some(k) => k,
        None => {
            let keys = agent_home()?.join("keys");
            let private = keys.join(format!("{DEV_KEY_ID}.jwk"));
            let registry_arg = registry.to_string_lossy().to_string();
            if !private.exists() {
                run(
                    &agent,
                    &[
                        "keys",
                        "generate",
                        "--id",
                        DEV_KEY_ID,
                        "--trust",
                        "--official-for",
                        &registry_arg,
                    ],
                )?;
            } else {
                // Keep the trust store in step (it may have been reset since the key was made).
                let public = keys.join(format!("{DEV_KEY_ID}.pub.jwk"));
                run(
                    &agent,
                    &[
                        "keys",
                        "trust",
                        &public.to_string_lossy(),
                        "--official-for",
                        &registry_arg,
                    ],
                )?;
            }
            private
        }
    };
    let (spec_s, modules_s, registry_s, key_s) = (
        spec_path.to_string_lossy().to_string(),
        modules.to_string_lossy().to_string(),
        registry.to_string_lossy().to_string(),
        key.to_string_lossy().to_string(),
    );
    let built = run(
        &agent,
        &[
            "bundles",
            "build",
            "--spec",
            &spec_s,
            "--modules",
            &modules_s,
            "--registry",
            &registry_s,
            "--key",
            &key_s,
        ],
    )?;
    eprint!("{built}");
    let manifest = bundle_dir.join("manifest.json");
    let verified = run(
        &agent,
        &[
            "bundles",
            "verify",
            "--manifest",
            &manifest.to_string_lossy(),
        ],
    )?;
    eprint!("{verified}");
    // Install it for this user too, so `agent shell` / `agent exec` work right away.
    let installed = run(
        &agent,
        &["bundles", "install", name, "--registry", &registry_s],
    )?;
    eprint!("{installed}");
    eprintln!(
        "xtask: registry ready: {} (installed in $AGENT_HOME/bundles; elsewhere: agent bundles install {name} --registry {})",
        registry.display(),
        registry.display()
    );
    Ok(())
}
