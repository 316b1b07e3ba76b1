//! `--explain`: the effective inputs of a policy, in words (document 001's explain mode).

use std::fmt::Write as _;

use super::selection::{ProfilePlan, Reason};
use super::tree::ProfileStage;

/// The explanation of `plan`; `destination` says where the policy went (stdout, a file, the
/// backend that ran it).
pub fn explain(plan: &ProfilePlan, destination: &str) -> String {
    let mut out = String::from("agent sandbox explain:\n");
    let _ = writeln!(out, "  profile tree: {}", plan.tree_root.display());
    let _ = writeln!(out, "  home directory: {}", plan.home.display());
    match &plan.workdir {
        Some((g, source)) => {
            let _ = writeln!(
                out,
                "  effective workdir: {} (source: {source})",
                g.path.display()
            );
        }
        None => out.push_str("  effective workdir: none (disabled by an empty --workdir)\n"),
    }
    let dirs = |grants: &[super::selection::DirGrant]| {
        grants
            .iter()
            .map(|g| g.path.display().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let _ = writeln!(
        out,
        "  add-dirs-ro (normalized): {}",
        dirs(&plan.add_dirs_ro)
    );
    let _ = writeln!(out, "  add-dirs (normalized): {}", dirs(&plan.add_dirs));
    let optional = |want: &dyn Fn(&Reason) -> bool| {
        plan.parts
            .iter()
            .filter(|p| p.profile.stage == ProfileStage::OptionalIntegrations && want(&p.reason))
            .map(|p| match &p.reason {
                Reason::RequiredBy(by) => format!("{} (required by {by})", p.profile.name),
                _ => p.profile.name.clone(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let _ = writeln!(
        out,
        "  optional integrations explicitly enabled: {}",
        optional(&|r| matches!(r, Reason::Enabled))
    );
    let _ = writeln!(
        out,
        "  optional integrations implicitly injected: {}",
        optional(&|r| matches!(r, Reason::RequiredBy(_)))
    );
    let _ = writeln!(
        out,
        "  optional integrations not included: {}",
        plan.excluded.join(" ")
    );
    let _ = writeln!(
        out,
        "  network: {}",
        if plan.network() {
            "on (a selected profile allows it)"
        } else {
            "off (enable the network integration to allow it)"
        }
    );
    for (stage, label) in [(ProfileStage::Agents, "agent"), (ProfileStage::Apps, "app")] {
        let chosen: Vec<String> = plan
            .parts
            .iter()
            .filter(|p| p.profile.stage == stage)
            .map(|p| {
                let why = match &p.reason {
                    Reason::Command(c) => format!("command `{c}`"),
                    Reason::All => format!("--enable=all-{label}s"),
                    Reason::Enabled => "--enable".to_owned(),
                    Reason::RequiredBy(by) => format!("required by {by}"),
                    Reason::Always => "always".to_owned(),
                };
                format!("{} ({why})", p.profile.rel)
            })
            .collect();
        let _ = writeln!(
            out,
            "  selected {label} profiles: {}",
            if chosen.is_empty() {
                "(none)".to_owned()
            } else {
                chosen.join(", ")
            }
        );
    }
    if let Some(c) = &plan.command {
        let _ = writeln!(out, "  command: {c}");
    }
    let _ = writeln!(
        out,
        "  appended profiles: {}",
        plan.appended
            .iter()
            .map(|a| a.path.display().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    );
    if !plan.ignored.is_empty() {
        let _ = writeln!(out, "  ignored tree entries: {}", plan.ignored.join(" "));
    }
    let _ = writeln!(
        out,
        "  profiles in order: {}",
        plan.parts
            .iter()
            .map(|p| p.profile.rel.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let _ = writeln!(out, "  policy: {destination}");
    out
}
