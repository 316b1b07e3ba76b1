//! Routing each Bash script to what can run it: the WASI shell when every program it runs is
//! a bundle command or a shell builtin and its syntax is inside the portable subset (agent-wasi
//! decides, with the same compile the shell runs: [`agent_wasi::toolbox::Toolbox::route`]),
//! otherwise the host's bash inside the OS sandbox ([`NativeBackend`]). Both sit behind the same
//! permission gate and command checker; the result says which ran and why.

use agent_core::tools::ToolError;

use super::backend::{BashBackend, BashOutcome, BashRequest};
use super::native::NativeBackend;
#[cfg(feature = "wasi")]
use super::wasi::WasiBackend;

/// Why the WASI shell cannot run anything: no bundle.
#[cfg(feature = "wasi")]
const NO_BUNDLE: &str =
    "no bundle is installed (`cargo xtask bundles`, or `agent bundles install`)";

/// Where scripts may run (`bash.backend` in the settings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Each script where it can run: the WASI shell when it can, else the OS sandbox.
    Auto,
    /// Only the WASI shell: a script it cannot run is refused, naming why.
    WasiOnly,
    /// Only the host's bash (inside the OS sandbox).
    HostOnly,
}

/// The Bash backend that routes each script (see the module docs).
pub struct RoutedBackend {
    #[cfg(feature = "wasi")]
    wasi: Option<WasiBackend>,
    host: NativeBackend,
    choice: Choice,
}

impl std::fmt::Debug for RoutedBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoutedBackend")
            .field("choice", &self.choice)
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

/// Where one script goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// The in-process WASI shell.
    Wasi,
    /// The host's bash, for this reason.
    Host(String),
    /// Nowhere: the settings allow only the WASI shell and it cannot run this.
    Refused(String),
}

impl RoutedBackend {
    /// Routes between `wasi` (when a bundle is installed) and `host`, as `choice` says.
    #[cfg(feature = "wasi")]
    pub fn new(wasi: Option<WasiBackend>, host: NativeBackend, choice: Choice) -> Self {
        Self { wasi, host, choice }
    }

    /// Runs everything on `host` (no WASI shell in this build).
    #[cfg(not(feature = "wasi"))]
    pub fn new(host: NativeBackend, choice: Choice) -> Self {
        Self { host, choice }
    }

    /// Where `command` would run.
    pub fn route(&self, command: &str) -> Route {
        if self.choice == Choice::HostOnly {
            return Route::Host("bash.backend is \"native\"".into());
        }
        #[cfg(feature = "wasi")]
        let wasi = match &self.wasi {
            Some(w) => w.route(command),
            None => Err(NO_BUNDLE.to_owned()),
        };
        #[cfg(not(feature = "wasi"))]
        let wasi: Result<(), String> = {
            let _ = command;
            Err("this build has no WASI shell".to_owned())
        };
        self.decide(wasi)
    }

    /// The route, given whether the WASI shell can run the script.
    fn decide(&self, wasi: Result<(), String>) -> Route {
        match (wasi, self.choice) {
            (Ok(()), _) => Route::Wasi,
            (Err(why), Choice::WasiOnly) => Route::Refused(format!(
                "{why}; bash.backend is \"wasi\", so only the WASI shell may run commands"
            )),
            (Err(why), _) => Route::Host(why),
        }
    }
}

impl BashBackend for RoutedBackend {
    fn where_it_runs(&self, command: &str) -> Option<String> {
        Some(match self.route(command) {
            Route::Wasi => {
                "in the WASI shell (bundle commands; only the workspace is visible)".into()
            }
            Route::Host(why) => match self.host.uncontained() {
                None => format!(
                    "in the host's bash inside the OS sandbox ({}): {why}",
                    self.host.outer_name()
                ),
                Some(how) => format!("in the host's bash WITHOUT an OS sandbox ({how}): {why}"),
            },
            Route::Refused(why) => format!("nowhere: {why}"),
        })
    }

    fn name(&self) -> &'static str {
        match self.choice {
            Choice::Auto => "auto",
            Choice::WasiOnly => "wasi",
            Choice::HostOnly => "native",
        }
    }

    fn run(&self, request: &BashRequest) -> Result<BashOutcome, ToolError> {
        // One compile, from the parse the decision was made on: it routes the script and,
        // when the WASI shell can run it, is what runs.
        #[cfg(feature = "wasi")]
        if self.choice != Choice::HostOnly
            && let Some(w) = &self.wasi
        {
            let plan = w.compile(request);
            return match self.decide(w.route_compiled(&plan)) {
                Route::Wasi => match plan {
                    Ok(plan) => w.run_plan(request, &plan),
                    Err(e) => Err(super::wasi::refused(e)),
                },
                Route::Refused(why) => Err(ToolError::Sandbox(why)),
                Route::Host(why) => {
                    let mut out = self.host.run(request)?;
                    out.notes.insert(0, format!("routed to the host: {why}"));
                    Ok(out)
                }
            };
        }
        match self.route(&request.command) {
            #[cfg(feature = "wasi")]
            Route::Wasi => match &self.wasi {
                Some(w) => w.run(request),
                None => Err(ToolError::Execution("no WASI shell".into())),
            },
            #[cfg(not(feature = "wasi"))]
            Route::Wasi => Err(ToolError::Execution("no WASI shell".into())),
            Route::Refused(why) => Err(ToolError::Sandbox(why)),
            Route::Host(why) => {
                let mut out = self.host.run(request)?;
                out.notes.insert(0, format!("routed to the host: {why}"));
                Ok(out)
            }
        }
    }

    fn unsandboxed(&self, command: &str) -> Option<String> {
        // The host's answer costs nothing; the route compiles the script, so it is asked only
        // when a host command would run unsandboxed (the permission policy asks this on every
        // Bash call).
        let warning = self.host.unsandboxed(command)?;
        match self.route(command) {
            Route::Host(_) => Some(warning),
            Route::Wasi | Route::Refused(_) => None,
        }
    }

    fn placement(&self) -> String {
        let host = self.host.placement();
        if self.choice == Choice::HostOnly {
            return format!("Every script runs in {host} (bash.backend is \"native\").");
        }
        #[cfg(feature = "wasi")]
        if let Some(w) = &self.wasi {
            let wasi = w.placement();
            return match self.choice {
                Choice::WasiOnly => format!(
                    "Scripts whose every program is a shell builtin or a bundle command run in {wasi}; any other script is refused (bash.backend is \"wasi\")."
                ),
                Choice::Auto | Choice::HostOnly => format!(
                    "Scripts whose every program is a shell builtin or a bundle command run in {wasi}; any other script runs in {host}."
                ),
            };
        }
        #[cfg(feature = "wasi")]
        let why = NO_BUNDLE;
        #[cfg(not(feature = "wasi"))]
        let why = "this build has no WASI shell";
        match self.choice {
            Choice::WasiOnly => {
                format!("Every script is refused: {why}, and bash.backend is \"wasi\".")
            }
            Choice::Auto | Choice::HostOnly => {
                format!("Every script runs in {host}; the WASI shell is not available: {why}.")
            }
        }
    }

    fn describe(&self) -> String {
        let mut out = String::new();
        #[cfg(feature = "wasi")]
        if let Some(w) = &self.wasi
            && self.choice != Choice::HostOnly
        {
            out.push_str(&w.describe());
            out.push(' ');
        }
        match self.choice {
            Choice::WasiOnly => out.push_str(
                "Only those run: a script that needs another program is refused (bash.backend is \"wasi\").",
            ),
            Choice::Auto | Choice::HostOnly => out.push_str(&self.host.describe()),
        }
        out
    }
}
