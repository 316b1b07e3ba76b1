//! The registry: configuration from settings files and plugins, matchers and `if`, merging of
//! several hooks, de-duplication, in-process hooks, environment, caps and extension points.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_core::hooks::{
    Decision, ExtensionHook, HookContext, HookEvent, HookExtension, HookHttpClient, HookInput,
    HookOptions, HookOutput, HookOutputCaps, HookRegistry, HooksConfig, HttpHookReply,
    HttpHookRequest,
};
use agent_core::settings::{Settings, SettingsLoader};
use serde_json::{Value, json};

fn settings(dir: &Path, value: Value) -> Settings {
    Settings::from_value(value, "fixture.json", dir, dir).unwrap()
}

fn registry(dir: &Path, value: Value) -> HookRegistry {
    let mut reg = HookRegistry::new();
    reg.set_project_dir(dir);
    reg.load(&HooksConfig::from_settings(&settings(dir, value)).unwrap())
        .unwrap();
    reg
}

fn cmd(command: &str) -> Value {
    json!({"type": "command", "command": command})
}

fn pre(dir: &Path, command: &str) -> HookInput {
    HookContext::new("s-reg", dir).pre_tool_use(
        "Bash",
        json!({"command": command}),
        Some("t1".into()),
    )
}

fn hso(decision: &str, reason: &str) -> String {
    let v = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": decision, "permissionDecisionReason": reason}});
    format!("echo '{v}'")
}

#[tokio::test]
async fn disagreeing_hooks_merge_deny_defer_ask_allow() {
    let dir = tempfile::tempdir().unwrap();
    let all = ["allow", "ask", "defer", "deny"];
    for n in 1..=all.len() {
        let hooks: Vec<Value> = all[..n].iter().map(|d| cmd(&hso(d, d))).collect();
        let reg = registry(
            dir.path(),
            json!({"hooks": {"PreToolUse": [{"hooks": hooks}]}}),
        );
        let run = reg.execute(pre(dir.path(), "ls")).await;
        assert_eq!(run.runs.len(), n);
        assert_eq!(run.outcome.decision.as_str(), all[n - 1]);
        assert_eq!(run.outcome.reason.as_deref(), Some(all[n - 1]));
    }
}

#[tokio::test]
async fn updated_input_comes_from_the_last_hook_in_registration_order() {
    let dir = tempfile::tempdir().unwrap();
    let upd = |c: &str| {
        json!({"hookSpecificOutput": {"permissionDecision": "allow",
            "updatedInput": {"command": c}, "additionalContext": format!("ctx {c}")}})
        .to_string()
    };
    // The last-registered hook finishes first; it still wins.
    let reg = registry(
        dir.path(),
        json!({"hooks": {"PreToolUse": [{"hooks": [
            cmd(&format!("sleep 0.3; echo '{}'", upd("first"))),
            cmd(&format!("echo '{}'", upd("second"))),
        ]}]}}),
    );
    for _ in 0..2 {
        let run = reg.execute(pre(dir.path(), "ls")).await;
        assert_eq!(
            run.outcome.updated_input,
            Some(json!({"command": "second"}))
        );
        assert_eq!(
            run.outcome.additional_context,
            vec!["ctx first", "ctx second"]
        );
    }
}

#[tokio::test]
async fn identical_handlers_from_two_files_run_once() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let proj = root.path().join("proj");
    std::fs::create_dir_all(home.join(".agent")).unwrap();
    std::fs::create_dir_all(proj.join(".agent")).unwrap();
    let log = root.path().join("log");
    let hook = cmd(&format!("echo ran >> '{}'", log.display()));
    let block = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook.clone()]}]}});
    std::fs::write(home.join(".agent/settings.json"), block.to_string()).unwrap();
    std::fs::write(
        proj.join(".agent/settings.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [hook]}]}}).to_string(),
    )
    .unwrap();
    let s = SettingsLoader::new(&home, &proj, &proj)
        .agent_home(&agent_core::home::AgentHome::new(home.join(".agent")))
        .trusted(true)
        .load()
        .unwrap();
    let cfg = HooksConfig::from_settings(&s).unwrap();
    assert_eq!(cfg.hooks.len(), 2);
    let mut reg = HookRegistry::new();
    reg.load(&cfg).unwrap();
    let listed = reg.hooks(HookEvent::PreToolUse);
    assert_eq!(listed[1].duplicate_of, Some(listed[0].id));
    let run = reg.execute(pre(&proj, "ls")).await;
    assert_eq!(run.runs.len(), 1);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "ran\n");
    // A Read call matches only the project's `*` group: the duplicate then runs, once.
    let run = reg
        .execute(HookContext::new("s", &proj).pre_tool_use(
            "Read",
            json!({"file_path": "/x"}),
            None,
        ))
        .await;
    assert_eq!(run.runs.len(), 1);
}

#[tokio::test]
async fn untrusted_project_hooks_do_not_run_and_disable_all_hooks_works() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let proj = root.path().join("proj");
    std::fs::create_dir_all(home.join(".agent")).unwrap();
    std::fs::create_dir_all(proj.join(".agent")).unwrap();
    let marker = root.path().join("ran");
    std::fs::write(
        proj.join(".agent/settings.json"),
        json!({"hooks": {"SessionStart": [{"hooks": [cmd(&format!("touch '{}'", marker.display()))]}]},
               "disableAllHooks": false})
        .to_string(),
    )
    .unwrap();
    let load = |trusted: bool| {
        let s = SettingsLoader::new(&home, &proj, &proj)
            .agent_home(&agent_core::home::AgentHome::new(home.join(".agent")))
            .trusted(trusted)
            .load()
            .unwrap();
        (HooksConfig::from_settings(&s).unwrap(), s.warnings)
    };
    let (untrusted, warnings) = load(false);
    assert!(untrusted.hooks.is_empty());
    // The trust table drops the keys when the file loads, and says so.
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("`hooks` ignored") && w.contains("not trusted")),
        "{warnings:?}"
    );
    assert_eq!(load(true).0.hooks.len(), 1);
    // The user's disableAllHooks, overridden by nothing, turns every hook off.
    std::fs::write(
        home.join(".agent/settings.json"),
        json!({"disableAllHooks": true}).to_string(),
    )
    .unwrap();
    std::fs::write(
        proj.join(".agent/settings.json"),
        json!({"hooks": {"SessionStart": [{"hooks": [cmd(&format!("touch '{}'", marker.display()))]}]}})
            .to_string(),
    )
    .unwrap();
    let (cfg, _) = load(true);
    assert!(cfg.disabled_by.is_some());
    let mut reg = HookRegistry::new();
    reg.load(&cfg).unwrap();
    let input = HookInput::from_json(
        HookEvent::SessionStart,
        json!({"session_id": "s", "cwd": proj.to_str().unwrap(), "source": "startup"}),
    )
    .unwrap();
    assert!(reg.execute(input).await.runs.is_empty());
    assert!(!marker.exists());
}

#[tokio::test]
async fn matchers_and_if_conditions_select_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let reg = registry(
        dir.path(),
        json!({"hooks": {
            "PreToolUse": [
                {"matcher": "Edit|Write", "hooks": [cmd("echo edit-or-write >&2; exit 2")]},
                {"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "echo rm >&2; exit 2", "if": "Bash(rm *)"},
                    {"type": "command", "command": "echo unparseable-if >&2; exit 2", "if": "Bash(("}
                ]},
                {"matcher": "mcp__mem__.*", "hooks": [cmd("echo mcp >&2; exit 2")]}
            ],
            "Stop": [{"matcher": "ignored", "hooks": [
                cmd("echo stop >&2; exit 2"),
                {"type": "command", "command": "echo never >&2; exit 2", "if": "Bash(*)"}
            ]}]
        }}),
    );
    assert!(
        reg.warnings().iter().any(|w| w.contains("does not parse")),
        "{:?}",
        reg.warnings()
    );
    assert!(
        reg.warnings().iter().any(|w| w.contains("never runs")),
        "{:?}",
        reg.warnings()
    );
    let reasons = |run: agent_core::hooks::HookExecution| run.outcome.reason.unwrap_or_default();
    // `rm` inside `$( )` after a `VAR=` prefix still matches the `if` rule.
    let r = reasons(reg.execute(pre(dir.path(), "FOO=1 echo $(rm -rf x)")).await);
    assert_eq!(r, "rm; unparseable-if");
    assert_eq!(
        reasons(reg.execute(pre(dir.path(), "ls")).await),
        "unparseable-if"
    );
    // A command that does not parse runs the `if` hook (fail open).
    assert_eq!(
        reasons(reg.execute(pre(dir.path(), "echo 'unterminated")).await),
        "rm; unparseable-if"
    );
    let ctx = HookContext::new("s", dir.path());
    let edit = reg
        .execute(ctx.pre_tool_use("MultiEdit", json!({"file_path": "/x"}), None))
        .await;
    assert!(edit.runs.is_empty(), "exact names do not match MultiEdit");
    let write = reg
        .execute(ctx.pre_tool_use("Write", json!({"file_path": "/x", "content": ""}), None))
        .await;
    assert_eq!(reasons(write), "edit-or-write");
    let mcp = reg
        .execute(ctx.pre_tool_use("mcp__mem__store", json!({}), None))
        .await;
    assert_eq!(reasons(mcp), "mcp");
    // Stop has no matcher: its matcher is ignored; `if` on Stop never runs.
    let stop = reg
        .execute(
            HookInput::from_json(
                HookEvent::Stop,
                json!({"session_id": "s", "cwd": dir.path().to_str().unwrap()}),
            )
            .unwrap(),
        )
        .await;
    assert_eq!(stop.runs.len(), 1);
    assert_eq!(stop.outcome.decision, Decision::Block);
}

#[tokio::test]
async fn command_hooks_get_stdin_json_environment_and_exec_form() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("seen");
    let script = format!(
        "cat > '{o}.json'; env | grep -E '^(HOOK_|CLAUDE_)' | sort > '{o}.env'; [ -t 0 ] && echo tty >> '{o}.env'; exit 0",
        o = out.display()
    );
    let reg = registry(
        dir.path(),
        json!({"hooks": {"PreToolUse": [{"hooks": [
            cmd(&script),
            {"type": "command", "command": "sh", "args": ["-c", "echo \"$0\" > \"$1\"", "${CLAUDE_PROJECT_DIR}", format!("{}.args", out.display())]}
        ]}]}}),
    );
    let mut input = pre(dir.path(), "ls");
    input.transcript_path = Some(dir.path().join("t.jsonl"));
    input.permission_mode = Some(agent_core::permissions::PermissionMode::Plan);
    let run = reg.execute(input).await;
    assert!(
        run.runs.iter().all(|r| r.exit_code == Some(0)),
        "{:?}",
        run.runs
    );
    let stdin: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{}.json", out.display())).unwrap())
            .unwrap();
    let d = dir.path().to_str().unwrap();
    assert_eq!(
        stdin,
        json!({"session_id": "s-reg", "transcript_path": format!("{d}/t.jsonl"), "cwd": d,
               "permission_mode": "plan", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "ls"}, "tool_use_id": "t1"})
    );
    let env = std::fs::read_to_string(format!("{}.env", out.display())).unwrap();
    for line in [
        "CLAUDE_CODE_SESSION_ID=s-reg".to_owned(),
        format!("CLAUDE_PROJECT_DIR={d}"),
        format!("HOOK_CWD={d}"),
        "HOOK_EVENT=PreToolUse".into(),
        "HOOK_SESSION_ID=s-reg".into(),
        "HOOK_TOOL_NAME=Bash".into(),
    ] {
        assert!(env.lines().any(|l| l == line), "{line} missing in {env}");
    }
    assert!(!env.contains("tty"));
    assert_eq!(
        std::fs::read_to_string(format!("{}.args", out.display()))
            .unwrap()
            .trim(),
        d
    );
}

#[tokio::test]
async fn plugin_hooks_load_with_and_without_the_outer_key() {
    let dir = tempfile::tempdir().unwrap();
    for (name, wrap) in [("wrapped", true), ("bare", false)] {
        let root = dir.path().join(name);
        std::fs::create_dir_all(root.join("hooks")).unwrap();
        let events = json!({"PreToolUse": [{"matcher": "Write", "hooks": [
            cmd("echo \"$CLAUDE_PLUGIN_ROOT\" >&2; exit 2")]}]});
        let file = if wrap {
            json!({"description": "guard", "hooks": events})
        } else {
            events
        };
        std::fs::write(root.join("hooks/hooks.json"), file.to_string()).unwrap();
        let mut cfg = HooksConfig::default();
        cfg.add_plugin(&root).unwrap();
        assert_eq!(cfg.hooks.len(), 1, "{name}");
        assert!(cfg.hooks[0].source.to_string().ends_with(if wrap {
            "hooks.json#hooks.PreToolUse[0].hooks[0]"
        } else {
            "hooks.json#PreToolUse[0].hooks[0]"
        }));
        let mut reg = HookRegistry::new();
        reg.load(&cfg).unwrap();
        let run = reg
            .execute(HookContext::new("s", dir.path()).pre_tool_use(
                "Write",
                json!({"file_path": "/x", "content": ""}),
                None,
            ))
            .await;
        assert_eq!(run.outcome.decision, Decision::Deny);
        assert_eq!(run.outcome.reason.as_deref(), root.to_str());
    }
    // A folder without hooks/hooks.json adds nothing; a malformed one is an error naming it.
    let mut cfg = HooksConfig::default();
    cfg.add_plugin(dir.path()).unwrap();
    assert!(cfg.hooks.is_empty());
    let bad = dir.path().join("bad");
    std::fs::create_dir_all(bad.join("hooks")).unwrap();
    std::fs::write(bad.join("hooks/hooks.json"), "{\"PreToolUse\": [").unwrap();
    let e = cfg.add_plugin(&bad).unwrap_err();
    assert!(e.to_string().contains("hooks.json"), "{e}");
}

#[tokio::test]
async fn in_process_hooks_fail_closed_on_pre_tool_use_and_prompts_only() {
    let mut reg = HookRegistry::new();
    for event in [
        HookEvent::PreToolUse,
        HookEvent::UserPromptSubmit,
        HookEvent::PostToolUse,
    ] {
        reg.register_fn(event, HookOptions::default().name("errs"), |_| async {
            Err("database down".into())
        })
        .unwrap();
        reg.register_fn(event, HookOptions::default().name("panics"), |_| async {
            if true {
                panic!("bug in hook");
            }
            Ok(HookOutput::default())
        })
        .unwrap();
        reg.register_fn(
            event,
            HookOptions::default()
                .name("slow")
                .timeout(Duration::from_millis(50)),
            |_| async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                Ok(HookOutput::default())
            },
        )
        .unwrap();
    }
    let ctx = HookContext::new("s", "/");
    let run = reg
        .execute(ctx.pre_tool_use("Bash", json!({"command": "ls"}), None))
        .await;
    assert_eq!(run.outcome.decision, Decision::Deny);
    let reason = run.outcome.reason.unwrap();
    for part in [
        "`errs` returned an error: database down",
        "`panics` panicked",
        "`slow` timed out",
    ] {
        assert!(reason.contains(part), "{reason}");
    }
    assert!(run.runs[2].timed_out);
    let run = reg.execute(ctx.user_prompt_submit("hi")).await;
    assert_eq!(run.outcome.decision, Decision::Block);
    let post = HookInput::from_json(
        HookEvent::PostToolUse,
        json!({"session_id": "s", "cwd": "/", "tool_name": "Bash", "tool_input": {}, "tool_response": {}}),
    )
    .unwrap();
    let run = reg.execute(post).await;
    assert_eq!(run.outcome.decision, Decision::None);
    assert_eq!(run.outcome.notices.len(), 3, "{:?}", run.outcome.notices);
}

struct Echo;

#[async_trait::async_trait]
impl HookExtension for Echo {
    async fn run(&self, hook: &ExtensionHook, input: &HookInput) -> Result<HookOutput, String> {
        let prompt = hook.fields["prompt"]
            .as_str()
            .unwrap_or("")
            .replace("$ARGUMENTS", &input.to_json().to_string());
        Ok(HookOutput::block(format!("model says: {}", prompt.len())))
    }
}

#[tokio::test]
async fn prompt_hooks_need_a_host_extension() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = HooksConfig::from_settings(&settings(
        dir.path(),
        json!({"hooks": {"Stop": [{"hooks": [{"type": "prompt", "prompt": "done? $ARGUMENTS"}]}]}}),
    ))
    .unwrap();
    let e = HookRegistry::new().load(&cfg).unwrap_err();
    assert!(e.to_string().contains("not supported by this host"), "{e}");
    assert!(
        e.to_string()
            .contains("fixture.json#hooks.Stop[0].hooks[0]"),
        "{e}"
    );
    let mut reg = HookRegistry::new();
    reg.set_extension("prompt", Arc::new(Echo));
    reg.load(&cfg).unwrap();
    let run = reg
        .execute(
            HookInput::from_json(HookEvent::Stop, json!({"session_id": "s", "cwd": "/"})).unwrap(),
        )
        .await;
    assert_eq!(run.outcome.decision, Decision::Block);
    assert!(run.outcome.reason.unwrap().starts_with("model says: "));
}

type Seen = Vec<(String, Vec<(String, String)>)>;

struct Recorder(std::sync::Mutex<Seen>, u16);

#[async_trait::async_trait]
impl HookHttpClient for Recorder {
    async fn post(&self, r: HttpHookRequest<'_>) -> Result<HttpHookReply, String> {
        self.0
            .lock()
            .unwrap()
            .push((r.url.to_owned(), r.headers.to_vec()));
        Ok(HttpHookReply {
            status: self.1,
            body: br#"{"decision": "block", "reason": "from http"}"#.to_vec(),
        })
    }
}

#[tokio::test]
async fn http_hooks_interpolate_only_allowed_env_vars() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = HooksConfig::from_settings(&settings(
        dir.path(),
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "http", "url": "http://hooks.invalid/h",
            "headers": {"Authorization": "Bearer ${HOME}", "X-Leak": "$PATH"},
            "allowedEnvVars": ["HOME"]}]}]}}),
    ))
    .unwrap();
    for (status, want) in [(200, Decision::Block), (500, Decision::None)] {
        let rec = Arc::new(Recorder(std::sync::Mutex::new(Vec::new()), status));
        let mut reg = HookRegistry::new();
        reg.set_http_client(rec.clone());
        reg.load(&cfg).unwrap();
        let run = reg
            .execute(HookContext::new("s", "/").user_prompt_submit("hello"))
            .await;
        assert_eq!(run.outcome.decision, want);
        let seen = rec.0.lock().unwrap();
        let headers = &seen[0].1;
        assert_eq!(
            headers[0],
            (
                "Authorization".into(),
                format!("Bearer {}", std::env::var("HOME").unwrap())
            )
        );
        assert_eq!(headers[1], ("X-Leak".into(), String::new()));
        if status == 500 {
            assert!(
                run.outcome.notices[0].contains("HTTP 500"),
                "{:?}",
                run.outcome.notices
            );
        }
    }
}

#[tokio::test]
async fn long_context_is_capped_and_saved() {
    let dir = tempfile::tempdir().unwrap();
    let mut reg = HookRegistry::new();
    reg.set_output_caps(HookOutputCaps {
        max_chars: 10_000,
        dir: dir.path().join("spill"),
    });
    reg.load(
        &HooksConfig::from_settings(&settings(
            dir.path(),
            json!({"hooks": {"UserPromptSubmit": [{"hooks": [cmd("head -c 25000 /dev/zero | tr '\\0' x")]}]}}),
        ))
        .unwrap(),
    )
    .unwrap();
    let run = reg
        .execute(HookContext::new("s", dir.path()).user_prompt_submit("hi"))
        .await;
    let ctx = &run.outcome.additional_context[0];
    assert!(ctx.chars().count() <= 10_000, "{}", ctx.len());
    assert!(ctx.contains("truncated: 25000 characters"), "{ctx}");
    let path = ctx.rsplit("is in ").next().unwrap().trim_end_matches(']');
    assert_eq!(std::fs::read_to_string(path).unwrap().len(), 25_000);
}

#[tokio::test]
async fn async_hooks_run_in_the_background_and_cannot_block() {
    let dir = tempfile::tempdir().unwrap();
    let reg = registry(
        dir.path(),
        json!({"hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": "sleep 0.2; echo late >&2; exit 2", "async": true}]}]}}),
    );
    let run = reg.execute(pre(dir.path(), "ls")).await;
    assert!(run.runs.is_empty());
    assert_eq!(run.outcome.decision, Decision::None);
    let bg = reg.wait_async().await;
    assert_eq!(bg.len(), 1);
    assert!(bg[0].is_async);
    assert_eq!(bg[0].exit_code, Some(2));
    assert_eq!(bg[0].outcome.decision, Decision::None);
}

#[test]
fn registration_errors_are_clear() {
    let mut reg = HookRegistry::new();
    let e = reg
        .register_fn(
            HookEvent::PreToolUse,
            HookOptions::matching("(?<=x)y"),
            |_| async { Ok(HookOutput::default()) },
        )
        .unwrap_err();
    assert!(
        e.to_string().starts_with("registered in code: matcher"),
        "{e}"
    );
}

#[cfg(not(feature = "http"))]
#[test]
fn http_hooks_without_a_client_are_a_load_error() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = HooksConfig::from_settings(&settings(
        dir.path(),
        json!({"hooks": {"Stop": [{"hooks": [{"type": "http", "url": "http://127.0.0.1:9/h"}]}]}}),
    ))
    .unwrap();
    let e = HookRegistry::new().load(&cfg).unwrap_err();
    assert!(
        e.to_string().contains("enable agent-core's `http` feature"),
        "{e}"
    );
}

#[tokio::test]
async fn runs_become_hook_run_events() {
    let dir = tempfile::tempdir().unwrap();
    let reg = registry(
        dir.path(),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            cmd("echo no >&2; exit 2"),
            {"type": "command", "command": "sleep 5", "timeout": 0.1}
        ]}]}}),
    );
    let run = reg.execute(pre(dir.path(), "ls")).await;
    let events: Vec<_> = run
        .runs
        .iter()
        .map(|r| r.to_event(HookEvent::PreToolUse))
        .collect();
    assert_eq!(events[0].event, "PreToolUse");
    assert_eq!(events[0].matcher.as_deref(), Some("Bash"));
    assert_eq!(events[0].outcome, "deny");
    assert_eq!(events[0].command.as_deref(), Some("echo no >&2; exit 2"));
    assert_eq!(events[1].outcome, "timeout");
}

#[test]
fn hook_environment_comes_from_the_settings_and_warns_about_withheld_header_vars() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = HooksConfig::from_settings(&settings(
        dir.path(),
        json!({"hookEnvironment": {"scrubSecrets": true, "passthrough": ["B_TOKEN"]},
               "hooks": {"Stop": [{"hooks": [{"type": "http", "url": "http://hooks.invalid/h",
                   "headers": {"A": "$A_TOKEN", "B": "$B_TOKEN", "H": "$HOME"},
                   "allowedEnvVars": ["A_TOKEN", "B_TOKEN", "HOME"]}]}]}}),
    ))
    .unwrap();
    assert!(cfg.environment.scrub_secrets);
    assert_eq!(cfg.environment.passthrough, ["B_TOKEN"]);
    assert_eq!(
        cfg.environment.set_by.as_deref(),
        Some(Path::new("fixture.json"))
    );
    let mut reg = HookRegistry::new();
    reg.set_http_client(Arc::new(Recorder(std::sync::Mutex::new(Vec::new()), 200)));
    reg.load(&cfg).unwrap();
    assert!(reg.environment().withholds("A_TOKEN"));
    assert!(!reg.environment().withholds("B_TOKEN"));
    let warned: Vec<&String> = reg
        .warnings()
        .iter()
        .filter(|w| w.contains("hookEnvironment.passthrough"))
        .collect();
    assert_eq!(warned.len(), 1, "{:?}", reg.warnings());
    assert!(warned[0].contains("names A_TOKEN"), "{warned:?}");
    // Settings that say nothing leave an environment set in code alone.
    let mut reg = HookRegistry::new();
    reg.set_environment(agent_core::hooks::HookEnvironment::scrubbing(["X_KEY"]));
    reg.load(&HooksConfig::from_settings(&settings(dir.path(), json!({}))).unwrap())
        .unwrap();
    assert!(reg.environment().scrub_secrets);
    // A malformed block is a settings error naming the key.
    let e = Settings::from_value(
        json!({"hookEnvironment": {"passthrough": "A_TOKEN"}}),
        "fixture.json",
        dir.path(),
        dir.path(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "fixture.json: `hookEnvironment.passthrough` must be an array of environment variable names; the whole file is ignored until this is fixed"
    );
}
