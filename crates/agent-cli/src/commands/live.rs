//! The live transcript of a running agent (`agent run`, `agent demo`) and the terminal's
//! permission prompt.
//!
//! The assistant's text streams to stdout; tool calls, decisions, results, hook notices and
//! questions go to stderr, so stdout holds only the answer. What the lines say is
//! [`super::transcript`]'s; colour follows [`crate::colour`]'s rules; the spinner and the
//! question share stderr without writing over each other.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use agent_core::permissions::{PermissionRequest, PromptAnswer, Prompter};
use agent_loop::AgentEvent;
use indicatif::{ProgressBar, ProgressStyle};

use super::transcript::{Out, Paths, Transcript};
use crate::colour::{self, Palette};
use crate::output;

/// How long a tool runs before its spinner shows: quick calls never flicker one.
const SPINNER_AFTER: Duration = Duration::from_secs(1);

/// Prints a run's [`AgentEvent`]s for a person ([`Transcript`] decides the text).
#[derive(Debug)]
pub struct Live {
    transcript: Transcript,
    /// The spinner, when stderr is a terminal.
    spinner: Option<&'static Spinner>,
    /// The spinner shows a provider retry (not a tool).
    retrying: bool,
    /// The assistant's text is mid-line on stdout.
    in_text: bool,
}

impl Live {
    /// A renderer showing paths through `paths`; colour by the colour rules for stderr, a
    /// spinner when stderr is a terminal.
    pub fn new(paths: Paths) -> Self {
        Self {
            transcript: Transcript::new(Palette::for_stderr(), paths),
            spinner: colour::stderr_is_terminal().then(Spinner::global),
            retrying: false,
            in_text: false,
        }
    }

    /// The paths it shows (for the permission prompt).
    pub fn paths(&self) -> &Paths {
        self.transcript.paths()
    }

    /// The questions are asked on this terminal ([`TerminalPrompter`]), so the
    /// `permission.question` events that record them are not shown again.
    pub fn questions_asked_here(mut self) -> Self {
        self.transcript.hide_questions();
        self
    }

    fn line(&mut self, text: &str) {
        if self.in_text {
            output::stdout_text("\n");
            let _ = std::io::stdout().lock().flush();
            self.in_text = false;
        }
        match self.spinner {
            Some(s) => s.println(text),
            None => {
                let _ = writeln!(std::io::stderr().lock(), "{text}");
            }
        }
    }

    /// Shows the events that arrived together (see [`Transcript::events`]).
    pub fn show(&mut self, events: &[AgentEvent]) {
        for out in self.transcript.events(events) {
            match out {
                Out::Text(t) => {
                    if let Some(s) = self.spinner {
                        s.clear();
                        self.retrying = false;
                    }
                    output::stdout_text(&t);
                    let _ = std::io::stdout().lock().flush();
                    if !t.is_empty() {
                        self.in_text = !t.ends_with('\n');
                    }
                }
                Out::Line(l) => {
                    if self.retrying
                        && let Some(s) = self.spinner
                    {
                        s.clear();
                        self.retrying = false;
                    }
                    self.line(&l);
                }
                Out::Status(text) => match self.spinner {
                    Some(s) => {
                        s.show(format!("  {text}"), Duration::ZERO);
                        self.retrying = true;
                    }
                    None => self.line(&format!("  ↻ {text}")),
                },
            }
        }
        if let Some(s) = self.spinner
            && !self.retrying
        {
            match self.transcript.waiting_on() {
                Some(label) => s.show(format!("  {label}"), SPINNER_AFTER),
                None => s.clear(),
            }
        }
    }

    /// Ends the transcript (a newline after streamed text, the spinner gone).
    pub fn finish(&mut self) {
        if let Some(s) = self.spinner {
            s.clear();
        }
        if self.in_text {
            output::stdout_text("\n");
            self.in_text = false;
        }
    }
}

impl Drop for Live {
    /// A run that ended early (an error from the session store) leaves no spinner behind.
    fn drop(&mut self) {
        if let Some(s) = self.spinner {
            s.clear();
        }
    }
}

/// The one spinner line at the bottom of stderr, with the elapsed time: on a tool that runs
/// longer than [`SPINNER_AFTER`] and on a provider retry. Process-wide because the terminal
/// is: the transcript sets it, and the permission prompt hides it while it asks.
#[derive(Debug, Default)]
pub struct Spinner {
    state: Mutex<SpinnerState>,
}

#[derive(Debug, Default)]
struct SpinnerState {
    /// What it shows and since when (it may not be drawn yet).
    wanted: Option<(String, Instant)>,
    bar: Option<ProgressBar>,
    /// A question is being asked: nothing is drawn.
    paused: bool,
    /// Bumped by every change, so a delayed start that is out of date does nothing.
    generation: u64,
}

impl Spinner {
    /// The process's spinner.
    pub fn global() -> &'static Self {
        static SPINNER: OnceLock<Spinner> = OnceLock::new();
        SPINNER.get_or_init(Self::default)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SpinnerState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Shows `label` after `delay` (unless something else is shown by then). The same label
    /// again keeps its clock.
    pub fn show(&'static self, label: String, delay: Duration) {
        let generation = {
            let mut st = self.state();
            if st.wanted.as_ref().is_some_and(|(l, _)| *l == label) {
                return;
            }
            if let Some(bar) = st.bar.take() {
                bar.finish_and_clear();
            }
            st.wanted = Some((label, Instant::now()));
            st.generation += 1;
            st.generation
        };
        if delay.is_zero() {
            self.draw(generation);
        } else {
            std::thread::spawn(move || {
                std::thread::sleep(delay);
                self.draw(generation);
            });
        }
    }

    /// Draws what is wanted, when `generation` is still current and no question is open.
    fn draw(&self, generation: u64) {
        let mut st = self.state();
        if st.generation != generation || st.paused || st.bar.is_some() {
            return;
        }
        let Some((label, since)) = st.wanted.clone() else {
            return;
        };
        let style = ProgressStyle::with_template("{msg} {spinner} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let bar = ProgressBar::new_spinner()
            .with_style(style)
            .with_message(label)
            .with_elapsed(since.elapsed());
        bar.enable_steady_tick(Duration::from_millis(120));
        st.bar = Some(bar);
    }

    /// Takes the spinner away.
    pub fn clear(&self) {
        let mut st = self.state();
        st.wanted = None;
        st.generation += 1;
        if let Some(bar) = st.bar.take() {
            bar.finish_and_clear();
        }
    }

    /// Prints `text` as a line above the spinner.
    pub fn println(&self, text: &str) {
        let st = self.state();
        let write = || {
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        };
        match &st.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    /// Hides the spinner until the returned guard is dropped (a question is being asked).
    pub fn pause(&'static self) -> Paused {
        let mut st = self.state();
        st.paused = true;
        if let Some(bar) = st.bar.take() {
            bar.finish_and_clear();
        }
        Paused(self)
    }
}

/// Shows the spinner again when dropped ([`Spinner::pause`]).
#[derive(Debug)]
pub struct Paused(&'static Spinner);

impl Drop for Paused {
    fn drop(&mut self) {
        let generation = {
            let mut st = self.0.state();
            st.paused = false;
            st.generation += 1;
            if let Some((_, since)) = &mut st.wanted {
                // The time spent answering is not the tool's.
                *since = Instant::now();
            }
            st.generation
        };
        let spinner = self.0;
        std::thread::spawn(move || {
            std::thread::sleep(SPINNER_AFTER);
            spinner.draw(generation);
        });
    }
}

/// Ctrl-C presses seen while a run was driven (`drive::drive`), so a permission question being
/// asked gives up at once instead of swallowing the next line typed.
static CTRL_C: AtomicU64 = AtomicU64::new(0);

/// Records a Ctrl-C (called by the run's signal handler).
pub fn ctrl_c_pressed() {
    CTRL_C.fetch_add(1, Ordering::SeqCst);
}

/// A line from standard input, or `None` when Ctrl-C was pressed since `since` (or the input
/// ended): standard input is polled, so a question never blocks past a Ctrl-C.
fn read_line_unless_interrupted(since: u64) -> Option<String> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdin = rustix::stdio::stdin();
    loop {
        if CTRL_C.load(Ordering::SeqCst) != since {
            return None;
        }
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        let tick = Timespec {
            tv_sec: 0,
            tv_nsec: 100_000_000,
        };
        match poll(&mut fds, Some(&tick)) {
            Ok(0) => continue,
            Ok(_) => break,
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break,
        }
    }
    if CTRL_C.load(Ordering::SeqCst) != since {
        return None;
    }
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .ok()
        .filter(|n| *n > 0)
        .map(|_| line)
}

/// Asks on the terminal (`super::approve`: what will happen, then once, this session,
/// always, no, or no with a reason). Paths in the question are shown as the transcript shows
/// them; a Ctrl-C while it waits denies the call and interrupts the run.
#[derive(Debug)]
pub struct TerminalPrompter {
    paths: Paths,
    /// The real folder whose `.agent/settings.local.json` an "always" answer writes.
    project_dir: std::path::PathBuf,
    /// The Bash tool, to say where a command would run.
    bash: Option<std::sync::Arc<agent_tools::Bash>>,
}

impl TerminalPrompter {
    /// A prompter showing paths through `paths`, for the project at `project_dir`.
    pub fn new(paths: Paths, project_dir: &std::path::Path) -> Self {
        Self {
            paths,
            project_dir: project_dir.to_path_buf(),
            bash: None,
        }
    }

    /// Says, for a Bash call, where its command would run (`bash`'s routing).
    pub fn with_bash(mut self, bash: std::sync::Arc<agent_tools::Bash>) -> Self {
        self.bash = Some(bash);
        self
    }
}

#[async_trait::async_trait]
impl Prompter for TerminalPrompter {
    async fn prompt(&self, request: &PermissionRequest) -> PromptAnswer {
        // The transcript is printed by the task that runs the agent, which takes every event
        // already sent before it polls the agent again (`drive`): at most two polls pass
        // between the headers of this call being sent and being printed, so yielding twice
        // lets them reach the screen before the question does.
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
        let request = request.clone();
        let paths = self.paths.clone();
        let project_dir = self.project_dir.clone();
        let runs_where = match (&self.bash, request.tool_name.as_str()) {
            (Some(b), "Bash") => request
                .input
                .get("command")
                .and_then(serde_json::Value::as_str)
                .and_then(|c| b.where_it_runs(c)),
            _ => None,
        };
        let asked = tokio::task::spawn_blocking(move || {
            let _hidden = Spinner::global().pause();
            ask(&request, &paths, &project_dir, runs_where)
        })
        .await;
        asked.unwrap_or(PromptAnswer::Deny {
            message: "the permission prompt failed".into(),
            interrupt: false,
        })
    }
}

fn ask(
    request: &PermissionRequest,
    paths: &Paths,
    project_dir: &std::path::Path,
    runs_where: Option<String>,
) -> PromptAnswer {
    let palette = Palette::for_stderr();
    let choices = super::approve::Choices::new(request, paths, project_dir);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "\n  {}\n  {}",
        palette.paint(
            colour::Ink::Ask,
            &format!(
                "Allow {}({})?",
                request.tool_name,
                output::sanitize(&paths.brief(&request.input))
            )
        ),
        output::sanitize(&paths.text(&request.reason))
    );
    for line in super::approve::preview(request, paths, palette, runs_where) {
        let _ = writeln!(err, "    {line}");
    }
    let _ = write!(err, "  {}", choices.line());
    let _ = err.flush();
    drop(err);
    let since = CTRL_C.load(Ordering::SeqCst);
    let read = || read_line_unless_interrupted(since);
    let Some(answer) = read() else {
        let interrupted = CTRL_C.load(Ordering::SeqCst) != since;
        let _ = writeln!(std::io::stderr().lock());
        return PromptAnswer::Deny {
            message: if interrupted {
                "the user interrupted at the permission question".into()
            } else {
                "no answer could be read".into()
            },
            interrupt: interrupted,
        };
    };
    choices.answer(&answer, || {
        let _ = write!(std::io::stderr().lock(), "  why (the model reads it): ");
        let _ = std::io::stderr().lock().flush();
        read()
    })
}
