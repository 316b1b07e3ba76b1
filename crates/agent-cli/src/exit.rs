//! Exit codes, mapped in one place.

/// How `agent` exits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// 0: the command did what was asked (for `permissions check`, a decision was printed,
    /// whatever it is).
    Success,
    /// 1: a `sandbox check-*` verdict was "denied" (the verdict is still printed).
    Denied,
    /// 1: a verb that works through many items finished, but some were not done (`sessions
    /// migrate`: a conflict or a failed copy; each is listed).
    Partial,
    /// 2: bad arguments, bad input or bad settings; one line on stderr says what and where.
    Usage,
    /// The exit code of a command run by `sandbox exec`.
    Code(u8),
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        match e {
            Exit::Success => Self::SUCCESS,
            Exit::Denied | Exit::Partial => Self::from(1),
            Exit::Usage => Self::from(2),
            Exit::Code(c) => Self::from(c),
        }
    }
}
