//! `cargo xtask bench`: runs the criterion benches and writes `docs/benchmarks.md`, each figure
//! next to a baseline measured in the same run, as a ratio.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::{bench_startup, bench_tokens};

/// What an issue asks of a figure.
#[derive(Clone, Copy)]
enum Target {
    /// A median of at most this many nanoseconds.
    Ns(f64),
    /// A ratio figure / baseline of at most this.
    Ratio(f64),
    /// Both: a median of at most this many nanoseconds, and a ratio of at most this.
    NsAndRatio(f64, f64),
}

/// One row: a figure, its baseline, the target, and what they mean.
struct Row {
    figure: &'static str,
    baseline: &'static str,
    target: Option<Target>,
    /// Items (events) one iteration handles, to report a rate beside the median.
    items: Option<u64>,
    what: &'static str,
}

/// One criterion group: its bench target, heading and rows.
struct Group {
    name: &'static str,
    package: &'static str,
    bench: &'static str,
    heading: &'static str,
    rows: &'static [Row],
    footer: &'static str,
}

const GROUPS: &[Group] = &[
    Group {
        name: "command_echo",
        package: "agent-wasi",
        bench: "runner",
        heading: "WASI runner (`crates/agent-wasi/benches/runner.rs`, a trivial WAT echo module)",
        rows: RUNNER_ROWS,
        footer: "The module is a 400-byte WAT `echo`; each command is the whole `Runtime::run` (WASI context, preopen, store, instantiation from the `InstancePre`, `_start`, output). See docs/wasi.md (Runner performance).",
    },
    Group {
        name: "wasi_shell",
        package: "agent-wasi",
        bench: "shell",
        heading: "WASI commands and scripts with the real core-utils bundle (`crates/agent-wasi/benches/shell.rs`)",
        rows: WASI_SHELL_ROWS,
        footer: "The modules are the project's core-utils bundle from `target/bundles/registry` (`echo` and the other hot trivial commands in the 84 KB `coreutils-lite.wasm`, the rest in the 8.1 MB `coreutils.wasm`), installed and verified, run through `Toolbox` (the Bash tool's `wasi` backend). `wasmtime_cli_echo` is measured only when `WASMTIME_CLI` names a wasmtime 48 CLI (`cargo install wasmtime-cli@48.0.8 --locked`, about 11 minutes; never in CI). See docs/wasi.md.",
    },
    Group {
        name: "wasi_route",
        package: "agent-wasi",
        bench: "route",
        heading: "Routing a Bash script: WASI shell or host bash (`crates/agent-wasi/benches/route.rs`)",
        rows: WASI_ROUTE_ROWS,
        footer: "`Toolbox::route` compiles the script as `Toolbox::shell` would (agent-core's one parse into its lowered tree, then the plan compiler) and checks every command name against the installed core-utils bundle; it runs nothing. See docs/shell.md (Routing).",
    },
    Group {
        name: "bundles",
        package: "agent-bundles",
        bench: "bundles",
        heading: "Bundles (`crates/agent-bundles/benches/bundles.rs`)",
        rows: BUNDLE_ROWS,
        footer: "The installed bundle is the project's core-utils from `target/bundles/registry` (`cargo xtask bundles`), re-signed by a key trusted as official so the whole check runs; the per-command sizes are in docs/guest-coreutils.md. See docs/bundles.md.",
    },
    Group {
        name: "permissions",
        package: "agent-core",
        bench: "permissions",
        heading: "Permission engine (`crates/agent-core/benches/permissions.rs`, 200 rules)",
        rows: PERMISSION_ROWS,
        footer: "See docs/permissions.md (Performance) for what dominates each figure.",
    },
    Group {
        name: "hooks",
        package: "agent-core",
        bench: "hooks",
        heading: "Hooks (`crates/agent-core/benches/hooks.rs`)",
        rows: HOOK_ROWS,
        footer: "See docs/hooks.md (Performance) for what the figures include.",
    },
    Group {
        name: "sandbox",
        package: "agent-sandbox",
        bench: "sandbox",
        heading: "Sandbox (`crates/agent-sandbox/benches/sandbox.rs`)",
        rows: SANDBOX_ROWS,
        footer: "See docs/sandbox.md (Performance).",
    },
    Group {
        name: "outer",
        package: "agent-sandbox",
        bench: "outer",
        heading: "A host command in the OS sandbox (`crates/agent-sandbox/benches/outer.rs`)",
        rows: OUTER_ROWS,
        footer: "The policy is the one the Bash tool uses for a host command (the repository's profile tree, the workspace as the workdir, the command `bash`: 40-odd mounts, no network, an allowlisted environment), run by `outer::run` with its limits trampoline, output capture and containment runner. A script the WASI shell can run never pays it (see the routing figures). See docs/sandbox.md.",
    },
    Group {
        name: "sessions",
        package: "agent-store",
        bench: "sessions",
        heading: "Session store (`crates/agent-store/benches/sessions.rs`)",
        rows: SESSION_ROWS,
        footer: "The baselines do what seed 000's SessionStore does: one `transcript.json` per session (`{\"metadata\", \"messages\"}`), rewritten whole on every save, parsed whole on every load, every file read by `list`. See docs/sessions.md (Performance).",
    },
    Group {
        name: "postgres",
        package: "agent-store",
        bench: "postgres",
        heading: "Session store on PostgreSQL against the local store (`crates/agent-store/benches/postgres.rs`)",
        rows: POSTGRES_ROWS,
        footer: "Both sides through the same async `SessionBackend` calls on a 2-worker tokio runtime: `PgStore` in a database of the bench's own (`TestDatabase`) on the server `AGENT_TEST_POSTGRES_URL` names (`.ci/postgres` starts one), reached over loopback TCP without TLS, against `SessionStore` on the local disk; each ratio is PostgreSQL / local in the same run, pgbench-style: one client, the server on the same machine (no network latency, but its processes share the CPUs with the bench). The sessions were made by `import` (a 100,000-event log; 10,000 logs of 6 events). Not measured without a server (the bench says it skipped them). See docs/sessions.md (PostgreSQL).",
    },
    Group {
        name: "workspace",
        package: "agent-workspace",
        bench: "workspace",
        heading: "Shadow workspace (`crates/agent-workspace/benches/workspace.rs`)",
        rows: WORKSPACE_ROWS,
        footer: "The tree: 100 directories of 100 files of 10,000 bytes, in the page cache for both sides. See docs/workspace.md.",
    },
    Group {
        name: "agent",
        package: "agent-loop",
        bench: "agent",
        heading: "Agent loop (`crates/agent-loop/benches/agent.rs`, 100 tools)",
        rows: AGENT_ROWS,
        footer: "The model is a scripted replay that answers at once and, unlike `ScriptedProvider`, keeps no copy of the requests, so the figures are the loop's own cost. A session is replaced by a fresh one every 20 prompts (the conversation sent stays under ~160 messages).",
    },
    Group {
        name: "exec",
        package: "agent-cli",
        bench: "exec",
        heading: "Outer sandbox (`crates/agent-cli/benches/exec.rs`)",
        rows: EXEC_ROWS,
        footer: "No target (issue 5 asks for the figure). Not measured where bubblewrap cannot run; the table then says so.",
    },
    Group {
        name: "session",
        package: "agent-cli",
        bench: "session",
        heading: "Interactive session latency (`crates/agent-cli/benches/session.rs`)",
        rows: CHAT_ROWS,
        footer: "`agent` (release build) on a pseudo-terminal made its controlling terminal (`setsid -c`), the model a loopback server speaking the OpenAI wire format, `NO_COLOR=1`. Not measured without bubblewrap, `setsid` and `python3`. See docs/cli.md.",
    },
    Group {
        name: "sdk",
        package: "agent-cli",
        bench: "sdk",
        heading: "Claude Agent SDK round trip (`crates/agent-cli/benches/sdk.rs`)",
        rows: SDK_ROWS,
        footer: "The real Python SDK (`claude-agent-sdk` 0.2.189 in `target/sdk-py`, as `.ci/run` installs it) drives the release `agent` through `ClaudeSDKClient`, the model a loopback server speaking the OpenAI wire format. Not measured without the SDK. See docs/sdk.md.",
    },
];

const SDK_ROWS: &[Row] = &[Row {
    figure: "can_use_tool_round_trip",
    baseline: "stdio_echo_round_trip",
    target: None,
    items: None,
    what: "the SDK's round trip per `can_use_tool` call, as `agent` times it (`AGENT_SDK_TIMINGS`): from the request line written to the answer taken in (the SDK reads and parses it, runs the callback, which allows at once, and writes its answer), 10 asked Writes per prompt, vs. the same request line sent to a minimal `python3` loop that parses it and writes an answer line back over a pipe",
}];

const CHAT_ROWS: &[Row] = &[
    Row {
        figure: "first_byte_to_screen",
        baseline: "first_byte_baseline_relay",
        target: None,
        items: None,
        what: "from the loopback model server writing an answer (a text chunk) to its text on the terminal `agent` runs on (stream parsing, the loop, the live transcript) vs. the same bytes relayed from a loopback socket to a terminal by a minimal `python3` relay",
    },
    Row {
        figure: "ctrl_c_to_prompt",
        baseline: "ctrl_c_baseline_sleep",
        target: None,
        items: None,
        what: "from Ctrl-C typed while the agent runs `sleep 30` (host Bash in bubblewrap) to the prompt back on screen (interrupt, the tool's processes ended, the cancellation logged, the prompt redrawn) vs. Ctrl-C typed on a terminal running `sleep 30` itself until it is gone",
    },
];

const POSTGRES_ROWS: &[Row] = &[
    Row {
        figure: "pg_append_one_event",
        baseline: "local_append_one_event",
        target: None,
        items: None,
        what: "append one event to a 10,000-event session, returning once it is durable: one statement and its commit (`synchronous_commit = on`, the writer's lease renewed in the same statement) vs. the local store's default `Durability::Fsync` (one `write` and one `fdatasync`)",
    },
    Row {
        figure: "pg_last_50_messages_100k",
        baseline: "local_last_50_messages_100k",
        target: None,
        items: None,
        what: "the last 50 messages of a 100,000-event session, the store open: the session row, then the tail read by `seq` from the end of the primary key vs. the local log read backwards from its end",
    },
    Row {
        figure: "pg_open_and_last_50_messages_100k",
        baseline: "local_open_and_last_50_messages_100k",
        target: None,
        items: None,
        what: "the same with the store opened first, what `agent sessions show` pays: `PgStore::connect` (connections with SCRAM-SHA-256 authentication, the schema version checked, the presence connection) vs. `SessionStore::open` (index checks)",
    },
    Row {
        figure: "pg_list_10k_first_20",
        baseline: "local_list_10k_first_20",
        target: None,
        items: None,
        what: "`list` of 10,000 sessions, the 20 most recently updated (an indexed query on both sides: PostgreSQL's `agent_sessions` vs. the local SQLite index)",
    },
];

const WORKSPACE_ROWS: &[Row] = &[
    Row {
        figure: "import_10k_files_100mb",
        baseline: "import_baseline_cp_a_10k_files_100mb",
        target: Some(Target::Ratio(1.5)),
        items: None,
        what: "`Workspace::import` of 10,000 files / 100 MB (walk with ignore rules, copy, sha256 of every file, the base snapshot written) vs. `cp -a` of the same tree; the target is ≤ 1.5× `cp -a`",
    },
    Row {
        figure: "status_unchanged_10k_files",
        baseline: "status_baseline_stat_walk_10k_files",
        target: Some(Target::Ns(50_000_000.0)),
        items: None,
        what: "`Workspace::status` of the unchanged 10,000-file shadow (walk with ignore rules, one `lstat` per file, nothing hashed) vs. a bare recursive `lstat` walk; the target is ≤ 50 ms",
    },
    Row {
        figure: "status_10k_files_one_2gb_sparse",
        baseline: "status_unchanged_10k_files",
        target: None,
        items: None,
        what: "`Workspace::status` of the same shadow holding one more file, a 2 GB sparse one the agent made (`truncate -s 2G`): it is not in the base, so each status hashes its 2 GB by streaming (64 KiB at a time) and reads 8 KiB for the binary check, vs. `status` of the unchanged shadow; peak memory below",
    },
    Row {
        figure: "review_commit_1000_changed_files",
        baseline: "commit_baseline_cp_r_1000_changed_files",
        target: None,
        items: None,
        what: "`Workspace::review` + `commit_review` of 1,000 changed files of 6 KB (issue 25: each staged in the state directory and hashed against the review, each real file read and backed up, a synced journal, each applied beneath the root without following links, one `syncfs`) vs. `cp -r` of the same 1,000 changed files over a copy of the real folder",
    },
    Row {
        figure: "grep_tool_10k_files",
        baseline: "grep_baseline_rg_or_grep_r_10k_files",
        target: Some(Target::Ratio(1.0)),
        items: None,
        what: "the Grep tool (`files_with_matches`, a literal that 100 files hold) over the 10,000-file / 100 MB shadow, flushed first (`sync`), walked in parallel and every file opened beneath the search directory's capability handle (`openat2`), searched by grep-searcher, vs. `rg -l` when installed, else `grep -rl`, started as a process on the same tree; the target (issue 28) is ≤ 1× rg",
    },
];

const AGENT_ROWS: &[Row] = &[
    Row {
        figure: "turn_overhead_os",
        baseline: "turn_baseline_direct_calls_and_appends_os",
        target: Some(Target::Ns(1_000_000.0)),
        items: None,
        what: "one `Agent::prompt` = 2 provider calls (the first asks for 3 tool calls, the second answers) + the 3 calls through the gate (hooks, permission engine, a cheap read-only tool) + 12 events logged in 7 appends (`Durability::Os`), 100 tools registered, vs. the 3 `Tool::call`s made directly and the same 12 events appended straight to the store in the same batches; the target (≤ 1 ms per turn) is met when the whole prompt, two turns, takes ≤ 1 ms",
    },
    Row {
        figure: "turn_overhead_fsync",
        baseline: "turn_baseline_direct_calls_and_appends_fsync",
        target: None,
        items: None,
        what: "the same with the default durability (`fdatasync` per append: 7 per prompt) vs. the same baseline with it; what this adds to the row above is the disk's time, not the loop's",
    },
    Row {
        figure: "first_event_latency",
        baseline: "first_event_baseline_bare_stream",
        target: Some(Target::Ns(1_000_000.0)),
        items: None,
        what: "from the provider's stream yielding its first text delta (stamped right before) to the caller of `Agent::query` receiving it as `AgentEvent::TextDelta`, the stream then waiting for more bytes as a network stream does, vs. the caller reading the same stream directly",
    },
    Row {
        figure: "first_event_latency_answer_ready",
        baseline: "first_event_baseline_bare_stream",
        target: Some(Target::Ns(1_000_000.0)),
        items: None,
        what: "the stream holds the whole answer at once (a fast local server): the loop yields after each fragment it passes on, so the caller sees the first one before the rest is read",
    },
];

const SESSION_ROWS: &[Row] = &[
    Row {
        figure: "append_one_event_10k",
        baseline: "append_baseline_rewrite_transcript_10k",
        target: Some(Target::NsAndRatio(50_000.0, 0.01)),
        items: None,
        what: "append one event to a session of 10,000 events without fsync (`Durability::Os`: one `write`; the index row follows at most every 50 ms) vs. rewriting the 10,000-message `transcript.json`; the target is ≤ 50 µs and ≥ 100× faster",
    },
    Row {
        figure: "append_one_event_10k_fsync",
        baseline: "append_baseline_rewrite_transcript_10k",
        target: None,
        items: None,
        what: "the same append with the default durability (`fdatasync` per batch) vs. the same baseline (which does not sync at all)",
    },
    Row {
        figure: "open_100k_last_50_messages",
        baseline: "open_baseline_parse_transcript_100k_last_50",
        target: Some(Target::Ns(20_000_000.0)),
        items: None,
        what: "open the store (index checks included) and build the last 50 messages of a 100,000-event session, reading the log backwards from its end, vs. parsing a 100,000-message transcript and taking its last 50",
    },
    Row {
        figure: "list_10k_first_20",
        baseline: "list_baseline_read_10k_transcripts",
        target: Some(Target::Ns(10_000_000.0)),
        items: None,
        what: "`list` of 10,000 sessions, the 20 most recently updated (an indexed SQLite query) vs. reading every session's transcript, sorting, taking 20",
    },
    Row {
        figure: "open_and_list_10k_first_20",
        baseline: "list_baseline_read_10k_transcripts",
        target: None,
        items: None,
        what: "the same with the store opened first (what `agent sessions list --limit 20` does)",
    },
    Row {
        figure: "load_whole_100k",
        baseline: "load_baseline_parse_transcript_100k",
        target: None,
        items: Some(100_000),
        what: "load all 100,000 events of a session, each decoded into a typed event (envelope checked, timestamp parsed, unknown fields kept) vs. parsing the 100,000-message transcript into untyped JSON; the rate is events per second",
    },
];

const EXEC_ROWS: &[Row] = &[Row {
    figure: "exec_bwrap_true",
    baseline: "exec_baseline_bare_true",
    target: None,
    items: None,
    what: "`agent sandbox exec --backend bwrap -- true` (the agent process, policy assembly, the limits trampoline, bubblewrap's namespaces and mounts) vs. spawning `true` directly",
}];

const OUTER_ROWS: &[Row] = &[
    Row {
        figure: "host_sandboxed",
        baseline: "host_bare",
        target: None,
        items: None,
        what: "`bash -c true` through the OS sandbox (bubblewrap) as the Bash tool runs a host command vs. the same command spawned bare (`std::process::Command`)",
    },
    Row {
        figure: "host_runner_none",
        baseline: "host_bare",
        target: None,
        items: None,
        what: "`bash -c true` through the same runner without an OS sandbox (limits trampoline, capture, process containment) vs. bare: the runner's own share",
    },
    Row {
        figure: "host_sandboxed_read_only",
        baseline: "host_sandboxed",
        target: None,
        items: None,
        what: "the cost of enforcing a read-only approval on the host: `bash -c true` in the OS sandbox with the workspace bound read-only vs. read-write",
    },
];

const SANDBOX_ROWS: &[Row] = &[
    Row {
        figure: "command_check_5_parts",
        baseline: "command_baseline_parse_only",
        target: Some(Target::Ns(25_000.0)),
        items: None,
        what: "command check of a 5-part compound command, parse included (22 denied names, path arguments checked) vs. the parse alone (the plain-script fast path)",
    },
    Row {
        figure: "command_check_5_parts_brush",
        baseline: "command_baseline_brush_parse_only",
        target: None,
        items: None,
        what: "the same check for a 5-part command the fast path leaves to brush-parser (`\"$N\"`, `$(date)`, `2> err.txt`) vs. its parse alone",
    },
    Row {
        figure: "parse_plain_fast_path",
        baseline: "parse_plain_baseline_brush_only",
        target: None,
        items: None,
        what: "the parse of the plain 5-part command through the fast path vs. through brush-parser (`shell::parse_with_brush_only`): same result, the ratio is the saving",
    },
    Row {
        figure: "path_check_resolved",
        baseline: "path_baseline_lexical",
        target: Some(Target::Ns(2_000.0)),
        items: None,
        what: "path check without I/O (an already-resolved path against 21 grants and 20 denials) vs. lexical normalisation of the same path",
    },
    Row {
        figure: "profile_assemble_full_tree_5_add_dirs",
        baseline: "profile_baseline_read_tree_files",
        target: Some(Target::Ns(2_000_000.0)),
        items: None,
        what: "OS sandbox policy: load the whole `profiles/` tree from disk, resolve a selection (all agents and apps, docker, ssh, 5 add-dirs), render the Seatbelt policy vs. reading the tree's files alone",
    },
];

const HOOK_ROWS: &[Row] = &[
    Row {
        figure: "dispatch_50_registered_5_match",
        baseline: "dispatch_baseline_direct_calls",
        target: Some(Target::Ns(5_000.0)),
        items: None,
        what: "in-process dispatch: `execute` with 50 registered PreToolUse hooks of which 5 match (matching, concurrent run, per-hook results, merge) vs. awaiting the 5 matching closures directly",
    },
    Row {
        figure: "command_hook_round_trip",
        baseline: "command_baseline_bare_spawn",
        target: Some(Target::Ratio(1.5)),
        items: None,
        what: "a command hook running a `true`-like script (stdin JSON, own process group, captured output, protocol) vs. a bare spawn-and-wait of the same `sh -c` command",
    },
    Row {
        figure: "four_100ms_hooks",
        baseline: "four_baseline_one_100ms_hook",
        target: Some(Target::Ratio(1.5)),
        items: None,
        what: "four matching command hooks of 100 ms each vs. one: they run concurrently, so the ratio is ≈ 1 (4 if they ran one after another)",
    },
];

const PERMISSION_ROWS: &[Row] = &[
    Row {
        figure: "a_match_parsed_compound",
        baseline: "a_baseline_linear_scan",
        target: Some(Target::Ns(2_000.0)),
        items: None,
        what: "(a) decide an already-parsed 5-part compound command against 200 rules (every step, every part matched) vs. testing the 5 parts against every Bash rule in turn",
    },
    Row {
        figure: "b_decide_command_string",
        baseline: "b_baseline_parse_only",
        target: Some(Target::Ns(25_000.0)),
        items: None,
        what: "(b) the whole decision from the command string, parse included vs. the parse alone (`shell::parse`: the plain command takes the fast path, then our walk)",
    },
    Row {
        figure: "c_decide_edit_path",
        baseline: "c_baseline_resolve_path",
        target: Some(Target::Ns(2_000.0)),
        items: None,
        what: "(c) an Edit file-path decision (allowed by a rule) vs. resolving the path alone (3 `lstat`s)",
    },
    Row {
        figure: "c_decide_read_path",
        baseline: "c_baseline_one_lstat",
        target: Some(Target::Ns(2_000.0)),
        items: None,
        what: "(c) a Read file-path decision (denied by a rule) vs. one `lstat` system call",
    },
];

const RUNNER_ROWS: &[Row] = &[
    Row {
        figure: "pooling",
        baseline: "native_bin_echo_spawn",
        target: Some(Target::NsAndRatio(50e3, 1.0 / 15.0)),
        items: None,
        what: "`Runtime::run` of the WAT echo with the pooling allocator, warm caches (`InstancePre`), vs. spawning `/bin/echo hi` with `std::process::Command::output`",
    },
    Row {
        figure: "on_demand",
        baseline: "pooling",
        target: None,
        items: None,
        what: "the same with the on-demand allocator, vs. pooling (why pooling is the default)",
    },
];

const WASI_ROUTE_ROWS: &[Row] = &[
    Row {
        figure: "route_pipeline",
        baseline: "core_parse_pipeline",
        target: None,
        items: None,
        what: "`Toolbox::route` of a typical agent command (`grep -rn .. | sort | head && find . -name '*.rs' -exec wc -l {} + | tail -1; ls \"$PWD\"/*.toml | xargs -n1 basename`: 9 command names, two launchers) vs. `agent_core::shell::parse` of the same script, the parse the permission checker runs on every Bash call",
    },
    Row {
        figure: "route_and_chain_20",
        baseline: "core_parse_and_chain_20",
        target: None,
        items: None,
        what: "`Toolbox::route` of a 20-command `&&` script vs. `agent_core::shell::parse` of it",
    },
    Row {
        figure: "plan_parse_pipeline",
        baseline: "core_parse_pipeline",
        target: None,
        items: None,
        what: "`Plan::parse` of the typical agent command (agent-core's one parse, its lowered tree compiled into the WASI plan) vs. `agent_core::shell::parse` of it",
    },
    Row {
        figure: "plan_parse_and_chain_20",
        baseline: "core_parse_and_chain_20",
        target: None,
        items: None,
        what: "`Plan::parse` of the 20-command `&&` script vs. `agent_core::shell::parse` of it",
    },
    Row {
        figure: "plan_parse_compound",
        baseline: "core_parse_compound",
        target: None,
        items: None,
        what: "`Plan::parse` of a script with `for`, `if`, `case`, `while [[ .. ]]`, `${..}` operators and `$((..))` vs. `agent_core::shell::parse` of it",
    },
    Row {
        figure: "decision_parsed_once_pipeline",
        baseline: "decision_parsed_each_time_pipeline",
        target: None,
        items: None,
        what: "the whole decision from the command string to the plan that runs, for the typical pipeline: the permission engine's decision, the sandbox's command checker, the route and the plan, with the decision's one parse carried to the checker and one compile from it (issue 24) vs. each reading the text anew (the engine's parse, the checker's, the route's compile, the run's compile: four parses)",
    },
    Row {
        figure: "route_host_python",
        baseline: "spawn_bin_true",
        target: None,
        items: None,
        what: "`Toolbox::route` of a script it sends to the host (`cd tools && python3 gen.py .. | tee gen.log`) vs. spawning `/bin/true` (the least running it on the host costs)",
    },
];

const WASI_SHELL_ROWS: &[Row] = &[
    Row {
        figure: "coreutils_echo_warm",
        baseline: "native_bin_echo_spawn",
        target: Some(Target::NsAndRatio(50e3, 1.0 / 15.0)),
        items: None,
        what: "`echo hi` from the real core-utils bundle with warm caches (`Toolbox::exec`: lookup, limits, `Runtime::run` of the prepared `coreutils-lite.wasm`, captured stdout) vs. fork/exec of native `/bin/echo hi`",
    },
    Row {
        figure: "coreutils_echo_warm",
        baseline: "wasmtime_cli_echo",
        target: Some(Target::Ratio(0.01)),
        items: None,
        what: "the same vs. one `wasmtime run --allow-precompiled` process per command on the same module (the wasmtime 48 CLI)",
    },
    Row {
        figure: "pipeline_1mb",
        baseline: "bash_pipeline_1mb",
        target: None,
        items: None,
        what: "`cat big.txt | grep x | wc -l` on a 1 MiB file, three modules running concurrently joined by in-memory pipes, vs. `bash -c` with the host's GNU tools (fork/exec of each)",
    },
    Row {
        figure: "pipeline_1mb_read_only",
        baseline: "pipeline_1mb",
        target: None,
        items: None,
        what: "the cost of enforcing a read-only approval in the WASI shell: the same pipeline with a read-only workspace (redirects and preopens), no network and the launcher held to `cat grep wc`, vs. unrestricted",
    },
    Row {
        figure: "and_chain_20",
        baseline: "bash_and_chain_20",
        target: None,
        items: None,
        what: "a 20-command `&&` script (echo, test, cat, wc, ls, head, tail, printf, seq, sort, uniq, cut, tr, grep, ...) vs. the same script with `bash -c`",
    },
    Row {
        figure: "cold_first_run",
        baseline: "warm_first_run_disk_cache",
        target: None,
        items: None,
        what: "the first-ever command on a machine: a fresh runtime and an empty module cache (verify both modules of the bundle, compile them with Cranelift, write the cache, run `echo hi`: what `agent bundles install` does once), vs. a fresh runtime whose disk cache holds the compiled module (what every later `agent` process pays once)",
    },
];

const BUNDLE_ROWS: &[Row] = &[
    Row {
        figure: "load_all_verified",
        baseline: "read_modules_baseline",
        target: Some(Target::Ns(20e6)),
        items: None,
        what: "`Resolver::load_all` on the installed core-utils bundle, warm cache: the manifest's ed25519 signature under an official registry's policy, every module read with its size and sha256 checked, one verified module per command; vs. reading the same module files with `std::fs::read` and checking nothing",
    },
    Row {
        figure: "sha256_4mib",
        baseline: "copy_4mib_baseline",
        target: None,
        items: None,
        what: "sha2 0.11's SHA-256 of 4 MiB in memory vs. copying the same 4 MiB (the hash's share of a load)",
    },
];

pub fn run(args: &[String]) -> Result<()> {
    let quick = args.iter().any(|a| a == "--quick");
    // `--only NAME` runs one group and rewrites only its section; the others keep theirs.
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(String::as_str);
    if let Some(name) = only
        && !GROUPS.iter().any(|g| g.name == name)
        && name != bench_tokens::NAME
        && name != bench_startup::NAME
    {
        anyhow::bail!(
            "no bench group `{name}`; groups: {}, {}, {}",
            GROUPS.iter().map(|g| g.name).collect::<Vec<_>>().join(", "),
            bench_tokens::NAME,
            bench_startup::NAME
        );
    }
    let root = workspace_root()?;
    let previous = std::fs::read_to_string(root.join("docs/benchmarks.md")).unwrap_or_default();
    for g in GROUPS {
        if only.is_some_and(|n| n != g.name) {
            continue;
        }
        let mut bench_args = vec!["bench", "-p", g.package, "--bench", g.bench, "--"];
        if quick {
            bench_args.extend(["--warm-up-time", "1", "--measurement-time", "2"]);
        }
        crate::cargo(&bench_args)?;
    }
    let tokens = only.is_none_or(|n| n == bench_tokens::NAME);
    if tokens {
        crate::cargo(&[
            "bench",
            "-p",
            bench_tokens::PACKAGE,
            "--bench",
            bench_tokens::BENCH,
        ])?;
    }
    let startup = if only.is_none_or(|n| n == bench_startup::NAME) {
        Some(bench_startup::section(&root)?)
    } else {
        None
    };
    let mut out = String::new();
    writeln!(out, "# Benchmarks\n")?;
    writeln!(
        out,
        "Written by `cargo xtask bench`{}; do not edit by hand. Medians of criterion runs; each figure \
         is shown next to a baseline measured in the same run, and the ratio is figure / baseline. \
         The machine is shared and noisy (figures move by up to ±60 % between runs), so compare \
         ratios rather than absolute times across machines.\n",
        if quick { " (quick mode)" } else { "" }
    )?;
    writeln!(
        out,
        "Machine: {} CPUs, {}, `{}`.\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        std::env::consts::ARCH,
        rustc_version()
    )?;
    for g in GROUPS {
        if only.is_some_and(|n| n != g.name)
            && let Some(section) = section(&previous, g.heading)
        {
            writeln!(out, "{}\n", section.trim_end())?;
            continue;
        }
        let criterion = root.join("target/criterion").join(g.name);
        writeln!(out, "## {}\n", g.heading)?;
        writeln!(
            out,
            "| figure | median | baseline | baseline median | ratio | target | meets target |"
        )?;
        writeln!(out, "|---|---:|---|---:|---:|---:|---|")?;
        for row in g.rows {
            let (Ok(f), Ok(b)) = (
                median_ns(&criterion.join(row.figure)),
                median_ns(&criterion.join(row.baseline)),
            ) else {
                writeln!(
                    out,
                    "| `{}` | not measured | `{}` | — | — | — | — |",
                    row.figure, row.baseline
                )?;
                continue;
            };
            let ratio = f / b;
            let (target, meets) = match row.target {
                None => ("—".to_owned(), "—"),
                Some(Target::Ns(t)) => (fmt_ns(t), if f <= t { "yes" } else { "no" }),
                Some(Target::Ratio(r)) => (
                    format!("≤ {}× baseline", fmt_ratio(r)),
                    if ratio <= r { "yes" } else { "no" },
                ),
                Some(Target::NsAndRatio(t, r)) => (
                    format!("{} and ≤ {}× baseline", fmt_ns(t), fmt_ratio(r)),
                    if f <= t && ratio <= r { "yes" } else { "no" },
                ),
            };
            let median = match row.items {
                #[allow(clippy::cast_precision_loss, reason = "a count of events")]
                Some(n) => format!("{} ({:.0} events/s)", fmt_ns(f), n as f64 / (f / 1e9)),
                None => fmt_ns(f),
            };
            writeln!(
                out,
                "| `{}` | {} | `{}` | {} | {} | {} | {} |",
                row.figure,
                median,
                row.baseline,
                fmt_ns(b),
                if ratio < 0.1 {
                    format!("{ratio:.4}")
                } else {
                    format!("{ratio:.2}")
                },
                target,
                meets
            )?;
        }
        writeln!(out)?;
        for row in g.rows {
            writeln!(out, "- `{}`: {}", row.figure, row.what)?;
        }
        if let Some(peaks) = peak_memory(&criterion) {
            writeln!(out, "\n{peaks}")?;
        }
        if let Some(server) = postgres_server(&criterion) {
            writeln!(out, "\n{server}")?;
        }
        writeln!(out, "\n{}\n", g.footer)?;
    }
    if tokens {
        out.push_str(&bench_tokens::section(&root)?);
    } else if let Some(section) = section(&previous, bench_tokens::HEADING) {
        writeln!(out, "{}\n", section.trim_end())?;
    }
    match startup {
        Some(section) => out.push_str(&section),
        None => {
            if let Some(section) = section(&previous, bench_startup::HEADING) {
                writeln!(out, "{}\n", section.trim_end())?;
            }
        }
    }
    if let Some(sizes) = bundle_sizes(&root) {
        out.push_str(&sizes);
    } else if let Some(section) = section(&previous, BUNDLE_SIZES) {
        writeln!(out, "{}\n", section.trim_end())?;
    }
    // Measured by hand (two whole release builds), kept as written.
    if let Some(section) = section(&previous, RELEASE_BINARY) {
        writeln!(out, "{}\n", section.trim_end())?;
    }
    // Measured by hand (test builds before and after one binary per crate), kept as written.
    if let Some(section) = section(&previous, TEST_BUILD) {
        writeln!(out, "{}\n", section.trim_end())?;
    }
    let path = root.join("docs/benchmarks.md");
    std::fs::write(&path, out.trim_end().to_owned() + "\n")
        .with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!("xtask: wrote {}", path.display());
    Ok(())
}

const BUNDLE_SIZES: &str = "Bundle sizes (`target/bundles/registry`, `cargo xtask bundles`)";

/// The section on the release binary's size and build time, which `cargo xtask bench` keeps as
/// it is (measuring it takes two whole release builds).
const RELEASE_BINARY: &str = "Release binary (`cargo build --release -p agent-cli`)";

/// The section on how long the integration tests take to build, which `cargo xtask bench`
/// keeps as it is (measured by hand, before and after one test binary per crate).
const TEST_BUILD: &str = "Test build (`cargo nextest run -p CRATE --no-run`)";

/// The size of each module of the built core-utils bundle and of each command (the module it
/// runs, shared by every command of that module), read from the registry's manifest; `None`
/// when the registry has not been built.
fn bundle_sizes(root: &Path) -> Option<String> {
    let registry = root.join("target/bundles/registry");
    let index: Value =
        serde_json::from_slice(&std::fs::read(registry.join("index.json")).ok()?).ok()?;
    let mut out = String::new();
    let _ = writeln!(out, "## {BUNDLE_SIZES}\n");
    for bundle in index["bundles"].as_array()? {
        let name = bundle["name"].as_str()?;
        let version = bundle["versions"].as_array()?.last()?.as_str()?;
        let manifest: Value = serde_json::from_slice(
            &std::fs::read(
                registry
                    .join("bundles")
                    .join(name)
                    .join(version)
                    .join("manifest.json"),
            )
            .ok()?,
        )
        .ok()?;
        let _ = writeln!(out, "`{name}@{version}`:\n");
        let _ = writeln!(
            out,
            "| module | bytes | commands | bytes per command (shared module / commands) |"
        );
        let _ = writeln!(out, "|---|---:|---|---:|");
        let commands = manifest["commands"].as_array()?;
        for asset in manifest["assets"].as_array()? {
            let path = asset["path"].as_str()?;
            let size = asset["size"].as_u64()?;
            let names: Vec<&str> = commands
                .iter()
                .filter(|c| c["modulePath"].as_str() == Some(path))
                .filter_map(|c| c["name"].as_str())
                .collect();
            let per = if names.is_empty() {
                0
            } else {
                size / names.len() as u64
            };
            let _ = writeln!(
                out,
                "| `{path}` | {size} | {} ({}) | {per} |",
                names.join(" "),
                names.len()
            );
        }
        let _ = writeln!(
            out,
            "\nEach command's module is loaded, verified and compiled once per process and shared by every command it holds; what a command costs to start is in the WASI tables above.\n"
        );
    }
    Some(out)
}

/// A target ratio: `1/15` below 0.1 (a speed-up), else one decimal.
fn fmt_ratio(r: f64) -> String {
    if r < 0.1 {
        format!("1/{:.0}", 1.0 / r)
    } else {
        format!("{r:.1}")
    }
}

/// The section of `doc` under `## heading`, up to the next `## ` heading.
fn section(doc: &str, heading: &str) -> Option<String> {
    let start = doc.find(&format!("## {heading}\n"))?;
    let rest = &doc[start..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 4);
    Some(rest[..end].to_owned())
}

/// The peak-memory line of a group whose bench wrote `peak_memory.json` (figure name →
/// `{"vmRssBeforeKb", "vmHwmKb"}`: the RSS before one run and the peak during it, `VmHWM`
/// reset before it), e.g. the workspace
/// group's `status` with and without a 2 GB sparse file.
fn peak_memory(criterion: &Path) -> Option<String> {
    let v: Value =
        serde_json::from_slice(&std::fs::read(criterion.join("peak_memory.json")).ok()?).ok()?;
    let mut parts = Vec::new();
    for (name, figure) in v.as_object()? {
        let kb = figure["vmHwmKb"].as_u64()?;
        let before = figure["vmRssBeforeKb"].as_u64()?;
        #[allow(clippy::cast_precision_loss, reason = "memory sizes in kB")]
        parts.push(format!(
            "`{name}` {:.1} MB ({:+.1} MB over the {:.1} MB resident before it)",
            kb as f64 / 1024.0,
            (kb as f64 - before as f64) / 1024.0,
            before as f64 / 1024.0
        ));
    }
    Some(format!(
        "Peak memory of one run (the process's `VmHWM`, reset just before it, so it includes the bench process itself): {}.",
        parts.join(", ")
    ))
}

/// The PostgreSQL group's server line, from the `server.json` its bench writes (the server's
/// version, address and the settings that decide what a commit costs, and the local store's
/// durability and file system), so the comparison can be judged fair; `None` for other groups
/// and when the PostgreSQL figures were skipped.
fn postgres_server(criterion: &Path) -> Option<String> {
    let v: Value =
        serde_json::from_slice(&std::fs::read(criterion.join("server.json")).ok()?).ok()?;
    let s = |k: &str| v[k].as_str().unwrap_or("?").to_owned();
    Some(format!(
        "Server: PostgreSQL {} at {}, `synchronous_commit = {}`, `fsync = {}`, `wal_sync_method = {}`; the local store: `Durability::{}` on {}.",
        s("serverVersion"),
        s("address"),
        s("synchronousCommit"),
        s("fsync"),
        s("walSyncMethod"),
        s("localDurability"),
        s("localFilesystem"),
    ))
}

fn median_ns(dir: &Path) -> Result<f64> {
    let file = dir.join("new/estimates.json");
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("cannot read {}; did the bench run?", file.display()))?;
    let v: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", file.display()))?;
    v["median"]["point_estimate"]
        .as_f64()
        .with_context(|| format!("{} has no median", file.display()))
}

fn fmt_ns(ns: f64) -> String {
    if ns >= 1_000_000.0 {
        format!("{:.2} ms", ns / 1_000_000.0)
    } else if ns >= 1_000.0 {
        format!("{:.2} µs", ns / 1_000.0)
    } else {
        format!("{ns:.0} ns")
    }
}

fn rustc_version() -> String {
    std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or_else(|| "rustc ?".into(), |s| s.trim().to_owned())
}

fn workspace_root() -> Result<std::path::PathBuf> {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").context("run through `cargo xtask`")?;
    Path::new(&manifest)
        .parent()
        .map(Path::to_path_buf)
        .context("xtask has no parent directory")
}
