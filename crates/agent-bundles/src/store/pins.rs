//! Pins: a command name bound to the bundle that provides it (`<root>/pins.json`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{BundleError, BundleStore, PINS_FILE, check, io};
use crate::relpath;

impl BundleStore {
    /// The pins: command name → bundle name (`<root>/pins.json`; none when the file is absent).
    ///
    /// # Errors
    /// [`BundleError::Pins`] when the file is not a valid pins file (commands are then not
    /// resolved: a pin decides which code runs, so a damaged file is not ignored).
    pub fn pins(&self) -> Result<BTreeMap<String, String>, BundleError> {
        let path = self.root.join(PINS_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(io(&path)(e)),
        };
        let bad = |why: String| BundleError::Pins {
            path: path.clone(),
            why,
        };
        let file: PinsFile =
            serde_json::from_slice(&bytes).map_err(|e| bad(format!("not a pins file ({e})")))?;
        for (command, bundle) in &file.pins {
            relpath::check_command_name(command)
                .map_err(|why| bad(format!("the command name `{command}` must {why}")))?;
            relpath::check_component(bundle)
                .map_err(|why| bad(format!("the bundle name `{bundle}` must {why}")))?;
        }
        Ok(file.pins)
    }

    pub(super) fn write_pins(&self, pins: &BTreeMap<String, String>) -> Result<(), BundleError> {
        let path = self.root.join(PINS_FILE);
        let mut text = serde_json::to_vec_pretty(&PinsFile { pins: pins.clone() })
            .map_err(|e| io(&path)(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        text.push(b'\n');
        let mut tmp = tempfile::Builder::new()
            .prefix(".pins-")
            .tempfile_in(&self.root)
            .map_err(io(&self.root))?;
        std::io::Write::write_all(&mut tmp, &text).map_err(io(tmp.path()))?;
        tmp.as_file().sync_all().map_err(io(&path))?;
        tmp.persist(&path).map_err(|e| io(&path)(e.error))?;
        Ok(())
    }

    /// Pins `command` to bundle `bundle` (its newest installed version): that bundle's
    /// command is used whatever else provides it, official bundles included. The bundle must
    /// be installed and provide the command. Returns the bundle it was pinned to before, if
    /// any.
    ///
    /// # Errors
    /// [`BundleError::BadName`], [`BundleError::NotInstalled`], [`BundleError::NotProvided`],
    /// and file errors.
    pub fn pin(&self, command: &str, bundle: &str) -> Result<Option<String>, BundleError> {
        relpath::check_command_name(command).map_err(|why| BundleError::BadName {
            value: command.to_string(),
            why,
        })?;
        check(bundle)?;
        let _lock = self.lock()?;
        let resolver = self.resolver(&[])?;
        let Some(target) = resolver
            .bundles()
            .iter()
            .find(|b| b.manifest.name == bundle)
        else {
            return Err(BundleError::NotInstalled(bundle.to_string()));
        };
        if target.manifest.command(command).is_none() {
            let providers: Vec<String> = resolver
                .providers(command)
                .iter()
                .map(|b| b.label())
                .collect();
            return Err(BundleError::NotProvided {
                command: command.to_string(),
                bundle: target.label(),
                providers: if providers.is_empty() {
                    "none".into()
                } else {
                    providers.join(", ")
                },
            });
        }
        let mut pins = self.pins()?;
        let before = pins.insert(command.to_string(), bundle.to_string());
        self.write_pins(&pins)?;
        tracing::info!(command, bundle, "pinned");
        Ok(before)
    }

    /// Removes the pin of `command`; the bundle it named.
    ///
    /// # Errors
    /// [`BundleError::NotPinned`] when it had none; file errors.
    pub fn unpin(&self, command: &str) -> Result<String, BundleError> {
        let _lock = self.lock()?;
        let mut pins = self.pins()?;
        let bundle = pins
            .remove(command)
            .ok_or_else(|| BundleError::NotPinned(command.to_string()))?;
        self.write_pins(&pins)?;
        tracing::info!(command, bundle, "unpinned");
        Ok(bundle)
    }
}

/// The pins file's content.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PinsFile {
    #[serde(default)]
    pins: BTreeMap<String, String>,
}
