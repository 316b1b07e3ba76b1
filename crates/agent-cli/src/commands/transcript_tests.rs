//! The transcript's text, colour off: events in, lines out.

use std::path::Path;
use std::time::Duration;

use agent_core::events::{
    ErrorEvent, Event, EventPayload, PermissionDecisionEvent, ToolResultEvent, ToolUse,
};
use agent_core::view::PathView;
use agent_loop::{AgentEvent, RunResult, RunStopReason};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::{FOLD_KEEP, Out, Paths, SCREENFUL, Transcript};
use crate::colour::Palette;

const REAL: &str = "/work/app";
const SHADOW: &str = "/home/me/.agent/workspaces/1f2e/tree";

fn transcript() -> Transcript {
    Transcript::new(
        Palette::new(false),
        Paths::new(Path::new(REAL), Some(PathView::new(REAL, SHADOW))),
    )
}

fn logged(payload: EventPayload) -> AgentEvent {
    AgentEvent::Logged(Event::new(1, None, payload))
}

fn use_(id: &str, name: &str, input: Value) -> AgentEvent {
    logged(EventPayload::ToolUse(ToolUse {
        tool_use_id: id.into(),
        name: name.into(),
        input,
        ..ToolUse::default()
    }))
}

fn result(id: &str, output: Value, is_error: bool) -> AgentEvent {
    logged(EventPayload::ToolResult(ToolResultEvent {
        tool_use_id: id.into(),
        output,
        is_error,
        error_type: None,
        error_message: None,
    }))
}

fn finished(error: Option<&str>) -> AgentEvent {
    AgentEvent::Finished(RunResult {
        session_id: "s1".into(),
        final_text: String::new(),
        stop_reason: if error.is_some() {
            RunStopReason::Error
        } else {
            RunStopReason::EndTurn
        },
        turns: 1,
        usage: agent_providers::Usage::default(),
        is_error: error.is_some(),
        error: error.map(str::to_owned),
    })
}

/// The stderr lines of `events` fed one batch each.
fn lines(t: &mut Transcript, batches: &[Vec<AgentEvent>]) -> Vec<String> {
    batches
        .iter()
        .flat_map(|b| t.events(b))
        .filter_map(|o| match o {
            Out::Line(l) | Out::Status(l) => Some(l),
            Out::Text(_) => None,
        })
        .collect()
}

#[test]
fn bash_output_is_shown_as_lines_under_its_exit_status() {
    let mut t = transcript();
    let got = lines(
        &mut t,
        &[
            vec![use_("c1", "Bash", json!({"command": "make test"}))],
            vec![result(
                "c1",
                json!({"stdout": "ok 1\nok 2\n", "stderr": "warning: slow\n", "exitCode": 2,
                       "interrupted": false, "isImage": false, "backend": "host"}),
                true,
            )],
        ],
    );
    assert_eq!(
        got,
        [
            "● Bash(make test)",
            "  ⎿ exit 2",
            "    ok 1",
            "    ok 2",
            "    stderr:",
            "    warning: slow",
        ]
    );
}

#[test]
fn a_stopped_or_interrupted_command_says_so_and_no_output_is_named() {
    let mut t = transcript();
    let got = lines(
        &mut t,
        &[
            vec![use_("c1", "Bash", json!({"command": "sleep 30"}))],
            vec![result(
                "c1",
                json!({"stdout": "", "stderr": "", "exitCode": null, "interrupted": true,
                       "stoppedBy": "timeout"}),
                true,
            )],
        ],
    );
    assert_eq!(
        got[1],
        "  ⎿ no exit status · stopped by timeout · interrupted · no output"
    );
}

#[test]
fn output_past_a_screenful_is_folded_naming_the_spill_file() {
    let mut t = transcript();
    let n = SCREENFUL + 30;
    let mut stdout: String = (1..=n).map(|i| format!("line {i}\n")).collect();
    stdout.push_str(&format!(
        "[output cut: 99999 bytes in all; the full output is in {REAL}/.agent/output/o.txt (read it page by page with offset/limit)]"
    ));
    let got = lines(
        &mut t,
        &[
            vec![use_("c1", "Bash", json!({"command": "seq 1000"}))],
            vec![result(
                "c1",
                json!({"stdout": stdout, "stderr": "", "exitCode": 0,
                       "stdoutFile": format!("{REAL}/.agent/output/o.txt")}),
                false,
            )],
        ],
    );
    assert_eq!(got[1], "  ⎿ exit 0");
    assert_eq!(got[2], "    line 1");
    assert_eq!(got[1 + FOLD_KEEP], format!("    line {FOLD_KEEP}"));
    assert_eq!(
        got[2 + FOLD_KEEP],
        format!(
            "    … {} lines folded; all of it is in {SHADOW}/.agent/output/o.txt …",
            n - 2 * FOLD_KEEP
        )
    );
    assert_eq!(got.last().unwrap(), &format!("    line {n}"));
    assert_eq!(got.len(), 3 + 2 * FOLD_KEEP);
    // A short output that was cut (one long line) still names the file.
    let mut t = transcript();
    let got = lines(
        &mut t,
        &[
            vec![use_("c2", "Bash", json!({"command": "cat big"}))],
            vec![result(
                "c2",
                json!({"stdout": "x\n[output cut: 5 bytes]", "stderr": "", "exitCode": 0,
                       "stdoutFile": format!("{REAL}/.agent/output/p.txt")}),
                false,
            )],
        ],
    );
    assert_eq!(
        got[2..],
        [
            "    x".to_owned(),
            format!("    … output cut; all of it is in {SHADOW}/.agent/output/p.txt …")
        ]
    );
}

#[test]
fn paths_are_relative_to_the_folder_and_the_shadow_never_shows() {
    let mut t = transcript();
    let got = lines(
        &mut t,
        &[
            vec![use_(
                "c1",
                "Read",
                json!({"file_path": format!("{REAL}/src/lib.rs")}),
            )],
            vec![result(
                "c1",
                json!("     1\tfn main() {}\n     2\t}\n"),
                false,
            )],
            vec![use_(
                "c2",
                "Bash",
                json!({"command": format!("ls {SHADOW}/src {REAL} /work/app2")}),
            )],
            vec![result(
                "c2",
                json!({"stdout": format!("{SHADOW}/src/lib.rs\n{REAL}/src/main.rs\n"), "stderr": "",
                       "exitCode": 0}),
                false,
            )],
        ],
    );
    assert_eq!(
        got,
        [
            "● Read(src/lib.rs)",
            "  ⎿ src/lib.rs · 2 lines",
            "● Bash(ls src . /work/app2)",
            "  ⎿ exit 0",
            "    src/lib.rs",
            "    src/main.rs",
        ]
    );
}

#[test]
fn paths_outside_the_folder_and_lookalikes_stay_whole() {
    let p = Paths::new(Path::new("/work/app"), None);
    assert_eq!(p.text("/work/app"), ".");
    assert_eq!(
        p.text("'/work/app/x' and /work/app, /work/app.bak"),
        "'x' and ., /work/app.bak"
    );
    assert_eq!(
        p.text("/work/app2/x /other/work/app/y"),
        "/work/app2/x /other/work/app/y"
    );
    assert_eq!(p.text("/work/apple"), "/work/apple");
    assert_eq!(p.text("in /work/app: done"), "in .: done");
    let root = Paths::new(Path::new("/"), None);
    assert_eq!(root.text("/etc/hosts"), "/etc/hosts");
}

#[test]
fn the_calls_of_one_answer_are_numbered_and_each_result_names_its_call() {
    let mut t = transcript();
    let got = lines(
        &mut t,
        &[
            vec![
                use_("a", "Read", json!({"file_path": "src/a.rs"})),
                use_("b", "Grep", json!({"pattern": "fn main"})),
            ],
            vec![result(
                "b",
                json!(format!("{REAL}/src/a.rs:1:fn main() {{}}")),
                false,
            )],
            vec![result("a", json!("     1\tfn main() {}\n"), false)],
        ],
    );
    assert_eq!(
        got,
        [
            "● [1] Read(src/a.rs)",
            "● [2] Grep(fn main)",
            "  ⎿ [2] Grep 1 line",
            "    src/a.rs:1:fn main() {}",
            "  ⎿ [1] Read src/a.rs · 1 line",
        ]
    );
}

#[test]
fn while_calls_run_the_first_one_waiting_is_named_for_the_spinner() {
    let mut t = transcript();
    assert_eq!(t.waiting_on(), None);
    t.events(&[
        use_("a", "Bash", json!({"command": "sleep 5"})),
        use_("b", "Read", json!({"file_path": "x"})),
    ]);
    assert_eq!(
        t.waiting_on().as_deref(),
        Some("[1] Bash(sleep 5) (+1 more)")
    );
    t.events(&[result(
        "a",
        json!({"stdout": "", "stderr": "", "exitCode": 0}),
        false,
    )]);
    assert_eq!(t.waiting_on().as_deref(), Some("[2] Read(x)"));
    t.events(&[finished(None)]);
    assert_eq!(t.waiting_on(), None);
}

#[test]
fn a_denied_call_shows_its_denial_once() {
    let mut t = transcript();
    let got = lines(
        &mut t,
        &[
            vec![use_("c1", "Bash", json!({"command": "rm -rf /"}))],
            vec![
                logged(EventPayload::PermissionDecision(PermissionDecisionEvent {
                    question_id: "c1".into(),
                    allowed: false,
                    decision: Some("deny".into()),
                    step: Some("deny_rule".into()),
                    rule: Some("Bash(rm *)".into()),
                    rule_source: None,
                    reason: Some("rm is denied".into()),
                })),
                logged(EventPayload::ToolResult(ToolResultEvent {
                    tool_use_id: "c1".into(),
                    output: json!("Permission denied: rm is denied"),
                    is_error: true,
                    error_type: Some("permission_denied".into()),
                    error_message: Some("Permission denied: rm is denied".into()),
                })),
            ],
        ],
    );
    assert_eq!(
        got,
        [
            "● Bash(rm -rf /)",
            "  ✗ denied (deny_rule: Bash(rm *)): rm is denied",
        ]
    );
}

#[test]
fn the_runs_error_is_shown_once() {
    let mut t = transcript();
    let got = lines(
        &mut t,
        &[vec![
            logged(EventPayload::Error(ErrorEvent {
                message: "openai-compatible: HTTP 500".into(),
                error_type: Some("provider_http_status".into()),
            })),
            finished(Some("openai-compatible: HTTP 500")),
        ]],
    );
    let errors = got.iter().filter(|l| l.contains("HTTP 500")).count();
    assert_eq!(errors, 1, "{got:#?}");
    assert!(got[0].starts_with("  error: "), "{got:#?}");
}

#[test]
fn a_failed_tool_shows_its_error_line() {
    let mut t = transcript();
    let got = lines(
        &mut t,
        &[
            vec![use_("c1", "Read", json!({"file_path": "nope"}))],
            vec![result(
                "c1",
                json!(format!("{SHADOW}/nope does not exist\nsecond line")),
                true,
            )],
        ],
    );
    assert_eq!(got[1], "  ⎿ error: nope does not exist (+1 lines)");
}

#[test]
fn edits_writes_and_searches_are_summarised() {
    let mut t = transcript();
    let got = lines(
        &mut t,
        &[
            vec![use_(
                "e",
                "Edit",
                json!({"file_path": format!("{REAL}/a.py"), "old_string": "one\n", "new_string": "two\n"}),
            )],
            vec![result(
                "e",
                json!({"filePath": format!("{REAL}/a.py"), "type": "update", "replacements": 1, "success": true}),
                false,
            )],
            vec![use_(
                "w",
                "Write",
                json!({"file_path": "b.txt", "content": "x\ny\n"}),
            )],
            vec![result("w", json!({"type": "create", "bytes": 4}), false)],
            vec![use_("g", "Glob", json!({"pattern": "**/*.rs"}))],
            vec![result(
                "g",
                json!(format!(
                    "{REAL}/a.rs\n{REAL}/b.rs\n{REAL}/c.rs\n{REAL}/d.rs\n… (7 more; narrow the pattern or the path)"
                )),
                false,
            )],
            vec![use_("n", "Grep", json!({"pattern": "zzz"}))],
            vec![result("n", json!("No matches found"), false)],
        ],
    );
    assert_eq!(
        got,
        [
            "● Edit(a.py)",
            "  ⎿ a.py · 1 replacement",
            "    - one",
            "    + two",
            "● Write(b.txt)",
            "  ⎿ b.txt · created · 2 lines, 4 bytes",
            "● Glob(**/*.rs)",
            "  ⎿ 11 files",
            "    a.rs",
            "    b.rs",
            "    c.rs",
            "    … and 8 more",
            "● Grep(zzz)",
            "  ⎿ No matches found",
        ]
    );
}

#[test]
fn a_retry_is_a_passing_status_with_its_wait_and_reason() {
    let mut t = transcript();
    let out = t.events(&[AgentEvent::Retry(agent_providers::Retry {
        attempt: 1,
        max_retries: 4,
        delay: Duration::from_secs(2),
        reason: "HTTP 503".into(),
    })]);
    assert_eq!(
        out,
        [Out::Status(
            "retrying in 2 s after HTTP 503 (retry 1 of 4)".into()
        )]
    );
}

#[test]
fn the_models_text_streams_as_is_but_sanitised() {
    let mut t = transcript();
    let out = t.events(&[AgentEvent::TextDelta("hi \u{1b}[31m".into())]);
    assert_eq!(out, [Out::Text("hi \\u{1b}[31m".into())]);
}

#[test]
fn a_question_asked_on_the_terminal_is_not_shown_again() {
    let question = || {
        logged(EventPayload::PermissionQuestion(
            agent_core::events::PermissionQuestion {
                question_id: "q1".into(),
                tool_name: "Edit".into(),
                prompt: format!("Edit {SHADOW}/a.py?"),
            },
        ))
    };
    let mut t = transcript();
    assert_eq!(
        lines(&mut t, &[vec![question()]]),
        ["  ? Edit asks: Edit a.py?"]
    );
    let mut t = transcript();
    t.hide_questions();
    assert!(lines(&mut t, &[vec![question()]]).is_empty());
}
