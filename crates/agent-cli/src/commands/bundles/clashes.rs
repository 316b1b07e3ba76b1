//! What `agent bundles install` says about name clashes between official and third-party
//! bundles.

use agent_bundles::store::{BundleStore, InstalledBundle};
use serde_json::{Value, json};

/// A command the installed bundle shares with a bundle of the other class (official or
/// third-party).
pub(super) struct Clash {
    command: String,
    /// The official bundle that wins it (`name@version`).
    official: String,
    /// The third-party bundles that provide it too (`name@version`).
    third_party: Vec<String>,
    /// The bundle name it is pinned to, if any.
    pinned: Option<String>,
}

impl Clash {
    pub(super) fn to_json(&self) -> Value {
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
pub(super) fn install_clashes(store: &BundleStore, bundle: &InstalledBundle) -> Vec<Clash> {
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
pub(super) fn clash_warnings(bundle: &InstalledBundle, clashes: &[Clash]) -> Vec<String> {
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
