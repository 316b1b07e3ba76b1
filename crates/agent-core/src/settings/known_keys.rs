//! Unknown settings keys: a key that neither this runtime nor Claude Code reads is most likely
//! a typo (`"permisions"`), which would otherwise be ignored without a word. Settings loading
//! warns once per file, naming the file, each unknown key and the known key nearest to it.
//!
//! Known keys are the trust table's ([`super::trust_table::KEYS`]: every key this runtime
//! reads), [`OUR_MEMBERS`], and [`CLAUDE_CODE_KEYS`] (Claude Code's settings reference, so a
//! `.claude/settings.json` written for Claude Code loads without a warning for each key only
//! Claude Code uses). Members are checked inside the objects whose members are all listed
//! (`permissions`, `sandbox`, `sandbox.network`, `provider`, `sessions`, ...); the objects that
//! map names of the user's choosing (`env`, `hooks`, `mcpServers`, `enabledPlugins`) are not
//! looked into.
//!
//! ```
//! use agent_core::settings::known_keys::unknown_keys;
//! use serde_json::json;
//!
//! let found = unknown_keys(json!({"permisions": {}, "permissions": {"alow": []}}).as_object().unwrap());
//! assert_eq!(found[0].path, "permisions");
//! assert_eq!(found[0].suggestion.as_deref(), Some("permissions"));
//! assert_eq!(found[1].path, "permissions.alow");
//! assert_eq!(found[1].suggestion.as_deref(), Some("permissions.allow"));
//! ```

use serde_json::{Map, Value};

use super::trust_table::KEYS;

/// Keys this runtime reads that the trust table lists only as their object: the members of
/// `provider` (`agent run`'s model provider) and of `sessions` (where sessions are kept).
pub const OUR_MEMBERS: &[&str] = &[
    "provider.name",
    "provider.baseUrl",
    "provider.apiKey",
    "provider.apiKeyEnv",
    "sessions.backend",
    "sessions.url",
    "sessions.passwordEnv",
    "sessions.leaseSeconds",
];

/// Claude Code's settings keys (its settings reference, code.claude.com/docs/en/settings,
/// Claude Code 2.1.x; claude-code.md §1-2, §7), dotted for members.
pub const CLAUDE_CODE_KEYS: &[&str] = &[
    "advisorModel",
    "agent",
    "agentPushNotifEnabled",
    "allowAllClaudeAiMcps",
    "allowedChannelPlugins",
    "allowedHttpHookUrls",
    "allowedMcpServers",
    "allowManagedHooksOnly",
    "allowManagedMcpServersOnly",
    "allowManagedPermissionRulesOnly",
    "alwaysThinkingEnabled",
    "apiKeyHelper",
    "askUserQuestionTimeout",
    "attribution",
    "attribution.commit",
    "attribution.pr",
    "attribution.sessionUrl",
    "autoCompactEnabled",
    "autoCompactWindow",
    "autoConnectIde",
    "autoInstallIdeExtension",
    "autoMemoryDirectory",
    "autoMemoryEnabled",
    "autoMode",
    "autoMode.classifyAllShell",
    "autoScrollEnabled",
    "autoUpdatesChannel",
    "availableModels",
    "awaySummaryEnabled",
    "awsAuthRefresh",
    "awsCredentialExport",
    "axScreenReader",
    "blockedMarketplaces",
    "browserExternalPageTools",
    "channelsEnabled",
    "claudeMd",
    "claudeMdExcludes",
    "cleanupPeriodDays",
    "companyAnnouncements",
    "crossSessionInbound",
    "defaultShell",
    "deniedMcpServers",
    "dialogExpiry",
    "diffTool",
    "disableAgentView",
    "disableAllHooks",
    "disableArtifact",
    "disableAutoMode",
    "disableBrowserExternalNavigation",
    "disableBundledSkills",
    "disableClaudeAiConnectors",
    "disableCommandPluginSources",
    "disableDeepLinkRegistration",
    "disabledMcpjsonServers",
    "disableMobileSimulatorTools",
    "disableRemoteControl",
    "disableSideloadFlags",
    "disableSkillShellExecution",
    "disableWorkflows",
    "editorMode",
    "effortLevel",
    "emojiCompletionEnabled",
    "enableAllProjectMcpServers",
    "enableArtifact",
    "enabledMcpjsonServers",
    "enabledPlugins",
    "enableWorkflows",
    "enforceAvailableModels",
    "env",
    "externalEditorContext",
    "extraKnownMarketplaces",
    "fallbackModel",
    "fastMode",
    "fastModePerSessionOptIn",
    "feedbackSurveyRate",
    "fileCheckpointingEnabled",
    "fileSuggestion",
    "footerLinksRegexes",
    "forceLoginGatewayUrl",
    "forceLoginMethod",
    "forceLoginOrgUUID",
    "forceRemoteSettingsRefresh",
    "gcpAuthRefresh",
    "hooks",
    "httpHookAllowedEnvVars",
    "includeCoAuthoredBy",
    "includeGitInstructions",
    "inputNeededNotifEnabled",
    "isolatePeerMachines",
    "keybindingFlavor",
    "language",
    "minimumVersion",
    "model",
    "modelOverrides",
    "otelHeadersHelper",
    "outputStyle",
    "parentSettingsBehavior",
    "permissionExplainerEnabled",
    "permissions",
    "permissions.additionalDirectories",
    "permissions.allow",
    "permissions.ask",
    "permissions.defaultMode",
    "permissions.deny",
    "permissions.disableBypassPermissionsMode",
    "permissions.ignorePatterns",
    "plansDirectory",
    "pluginConfigs",
    "pluginSuggestionMarketplaces",
    "pluginTrustMessage",
    "policyHelper",
    "policyHelper.path",
    "policyHelper.refreshIntervalMs",
    "policyHelper.timeoutMs",
    "prefersReducedMotion",
    "preferredNotifChannel",
    "processWrapper",
    "promptSuggestionEnabled",
    "prUrlTemplate",
    "remote",
    "remote.defaultEnvironmentId",
    "remoteControlAtStartup",
    "requiredMaximumVersion",
    "requiredMinimumVersion",
    "respectGitignore",
    "respondToBashCommands",
    "sandbox",
    "sandbox.allowAppleEvents",
    "sandbox.allowUnsandboxedCommands",
    "sandbox.autoAllowBashIfSandboxed",
    "sandbox.bwrapPath",
    "sandbox.credentials",
    "sandbox.credentials.allowPlaintextInject",
    "sandbox.credentials.awsPairs",
    "sandbox.credentials.envVars",
    "sandbox.credentials.files",
    "sandbox.credentials.sigv4",
    "sandbox.enabled",
    "sandbox.enableWeakerNestedSandbox",
    "sandbox.enableWeakerNetworkIsolation",
    "sandbox.excludedCommands",
    "sandbox.failIfUnavailable",
    "sandbox.filesystem",
    "sandbox.filesystem.allowManagedReadPathsOnly",
    "sandbox.filesystem.allowRead",
    "sandbox.filesystem.allowWrite",
    "sandbox.filesystem.denyRead",
    "sandbox.filesystem.denyWrite",
    "sandbox.filesystem.disabled",
    "sandbox.ignoreViolations",
    "sandbox.network",
    "sandbox.network.allowAllUnixSockets",
    "sandbox.network.allowedDomains",
    "sandbox.network.allowLocalBinding",
    "sandbox.network.allowMachLookup",
    "sandbox.network.allowManagedDomainsOnly",
    "sandbox.network.allowUnixSockets",
    "sandbox.network.deniedDomains",
    "sandbox.network.httpProxyPort",
    "sandbox.network.socksProxyPort",
    "sandbox.network.strictAllowlist",
    "sandbox.network.tlsTerminate",
    "sandbox.ripgrep",
    "sandbox.socatPath",
    "showClearContextOnPlanAccept",
    "showThinkingSummaries",
    "showTurnDuration",
    "skillListingBudgetFraction",
    "skillListingMaxDescChars",
    "skillOverrides",
    "skipAutoPermissionPrompt",
    "skipDangerousModePermissionPrompt",
    "skipWebFetchPreflight",
    "spellcheck",
    "spinnerTipsEnabled",
    "spinnerTipsOverride",
    "spinnerVerbs",
    "sshConfigs",
    "sshHostAllowlist",
    "statusLine",
    "strictKnownMarketplaces",
    "strictPluginOnlyCustomization",
    "strictPluginOnlyCustomization.agents",
    "strictPluginOnlyCustomization.hooks",
    "strictPluginOnlyCustomization.mcp",
    "strictPluginOnlyCustomization.skills",
    "subagentStatusLine",
    "switchModelsOnFlag",
    "syncClaudeAiSkills",
    "syntaxHighlightingDisabled",
    "teammateDefaultModel",
    "teammateMode",
    "terminalProgressBarEnabled",
    "terminalTitleFromRename",
    "theme",
    "tui",
    "ultracode",
    "useAutoModeDuringPlan",
    "verbose",
    "viewMode",
    "vimInsertModeRemaps",
    "voice",
    "voiceEnabled",
    "wheelScrollAccelerationEnabled",
    "workflowKeywordTriggerEnabled",
    "workflowSizeGuideline",
    "worktree",
    "worktree.baseRef",
    "worktree.bgIsolation",
    "worktree.sparsePaths",
    "worktree.symlinkDirectories",
    "wslInheritsWindowsSettings",
];

/// One key no reader knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownKey {
    /// The dotted path (`permissions.alow`).
    pub path: String,
    /// The known key nearest to it, if one is near enough to be what was meant.
    pub suggestion: Option<String>,
}

impl std::fmt::Display for UnknownKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.suggestion {
            Some(s) => write!(f, "`{}` (did you mean `{s}`?)", self.path),
            None => write!(f, "`{}`", self.path),
        }
    }
}

/// Whether `path` is a known key.
pub fn is_known(path: &str) -> bool {
    known().any(|k| k == path)
}

fn known() -> impl Iterator<Item = &'static str> {
    KEYS.iter()
        .map(|k| k.path)
        .chain(OUR_MEMBERS.iter().copied())
        .chain(CLAUDE_CODE_KEYS.iter().copied())
}

/// The unknown keys of one settings object, in the object's order, each with the nearest
/// known key at the same level when one is close (an edit distance of at most a third of the
/// key's length, and at least 1; a difference of case alone always counts).
pub fn unknown_keys(map: &Map<String, Value>) -> Vec<UnknownKey> {
    let mut out = Vec::new();
    walk(map, "", &mut out);
    out
}

fn walk(map: &Map<String, Value>, prefix: &str, out: &mut Vec<UnknownKey>) {
    for (name, value) in map {
        let path = format!("{prefix}{name}");
        if !is_known(&path) {
            out.push(UnknownKey {
                suggestion: nearest(prefix, name),
                path,
            });
            continue;
        }
        let inner = format!("{path}.");
        if let Value::Object(members) = value
            && known().any(|k| k.starts_with(&inner))
        {
            walk(members, &inner, out);
        }
    }
}

/// The known key under `prefix` nearest to `name`, when near enough.
fn nearest(prefix: &str, name: &str) -> Option<String> {
    let lower = name.to_lowercase();
    let limit = (name.chars().count() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for k in known() {
        let Some(member) = k.strip_prefix(prefix) else {
            continue;
        };
        if member.contains('.') {
            continue;
        }
        let d = if member.to_lowercase() == lower {
            0
        } else {
            crate::spelling::edit_distance(&lower, &member.to_lowercase())
        };
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, k));
        }
    }
    best.map(|(_, k)| k.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn found(v: Value) -> Vec<String> {
        unknown_keys(v.as_object().unwrap())
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_misspelt_key_is_named_with_the_key_meant() {
        assert_eq!(
            found(json!({"permisions": {"allow": []}})),
            ["`permisions` (did you mean `permissions`?)"]
        );
        assert_eq!(
            found(json!({"Sandbox": {}})),
            ["`Sandbox` (did you mean `sandbox`?)"]
        );
        assert_eq!(
            found(json!({"mcpServer": {}})),
            ["`mcpServer` (did you mean `mcpServers`?)"]
        );
    }

    #[test]
    fn members_of_known_objects_are_checked_and_suggested_at_their_level() {
        assert_eq!(
            found(json!({
                "permissions": {"alow": [], "deny": []},
                "sandbox": {"network": {"allowedDomain": []}, "enabled": true},
                "provider": {"baseURL": "x", "name": "openai"}
            })),
            [
                "`permissions.alow` (did you mean `permissions.allow`?)",
                "`sandbox.network.allowedDomain` (did you mean `sandbox.network.allowedDomains`?)",
                "`provider.baseURL` (did you mean `provider.baseUrl`?)",
            ]
        );
    }

    #[test]
    fn a_key_far_from_every_known_key_gets_no_suggestion() {
        assert_eq!(found(json!({"colourScheme": 1})), ["`colourScheme`"]);
    }

    #[test]
    fn claude_code_keys_and_ours_are_known_and_user_named_maps_are_not_looked_into() {
        assert!(
            found(json!({
                "$schema": "x",
                "statusLine": {"type": "command", "command": "x"},
                "enabledPlugins": {"anything@market": true},
                "env": {"WHATEVER": "1"},
                "hooks": {"PreToolUse": []},
                "mcpServers": {"srv": {"command": "x"}},
                "model": "m",
                "bash": {"backend": "wasi"},
                "hookEnvironment": {"scrubSecrets": true},
                "permissions": {"ignorePatterns": []},
                "sandbox": {"filesystem": {"denyRead": []}, "ripgrep": {"command": "rg"}}
            }))
            .is_empty()
        );
    }

    #[test]
    fn every_trust_table_key_is_known() {
        for k in KEYS {
            assert!(is_known(k.path), "{}", k.path);
        }
    }
}
