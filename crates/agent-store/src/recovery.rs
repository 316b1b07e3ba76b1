//! How a run picks up an earlier session (seed 000's three recovery modes, Claude Agent SDK
//! options `resume`, `continue`, `forkSession`, `resumeSessionAt`).
//!
//! Applied in this order when combined:
//! 1. **Which session**: an explicit id ([`ResumeOptions::session_id`]), or with
//!    [`ResumeOptions::continue_recent`] the most recently updated session of the working
//!    directory. Giving both is an error. Neither: nothing is resumed (a new session starts).
//! 2. **Fork**: with [`ResumeOptions::fork`], the history is copied into a new session (whose
//!    `session.fork` event names its parent) and the run writes there; the original is never
//!    changed.
//! 3. **Resume at**: with [`ResumeOptions::resume_at`], the history stops at (and includes) that
//!    event. A log is append-only and is never cut, so `resume_at` always forks, with or without
//!    `fork`: the new session holds the history up to that event.
//!
//! ```
//! use agent_store::recovery::{ResumeOptions, resume};
//! use agent_store::{NewSession, SessionBackend, SessionStore, StoreOptions};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let store = SessionStore::open(StoreOptions::new(dir.path())).await?;
//! let first = store.create(NewSession { cwd: Some("/proj".into()), ..Default::default() }).await?;
//! store.close(&first.id).await?;
//!
//! let options = ResumeOptions { continue_recent: true, cwd: Some("/proj".into()), fork: true, ..Default::default() };
//! let resumed = resume(&store, &options).await?.expect("a session to continue");
//! assert_eq!(resumed.forked_from.as_ref(), Some(&first.id));
//! assert_ne!(resumed.session.id, first.id);
//! # Ok(()) }
//! ```

use agent_core::events::EventId;

use crate::{
    ForkAt, ForkOptions, ListQuery, Result, SessionBackend, SessionId, SessionMetadata, StoreError,
    TranscriptMessage,
};

/// What the caller asked for.
#[derive(Clone, Debug, Default)]
pub struct ResumeOptions {
    /// Resume this session.
    pub session_id: Option<SessionId>,
    /// Resume the most recently updated session of `cwd` (of any directory when `cwd` is `None`).
    pub continue_recent: bool,
    /// The working directory for `continue_recent`.
    pub cwd: Option<String>,
    /// Copy the history into a new session instead of writing to the old one.
    pub fork: bool,
    /// Keep the history up to and including this event (implies a fork).
    pub resume_at: Option<EventId>,
    /// The id of the forked session (`None`: a new UUID v7).
    pub fork_id: Option<SessionId>,
}

/// What a run resumes with.
#[derive(Clone, Debug)]
pub struct Resumption {
    /// The session the run writes to from now on.
    pub session: SessionMetadata,
    /// The conversation so far, to put before the new prompt.
    pub messages: Vec<TranscriptMessage>,
    /// The session the history was forked from, when forked.
    pub forked_from: Option<SessionId>,
}

impl Resumption {
    /// The `source` of the `SessionStart` hook input: `resume`, or `fork` for a fork.
    pub fn hook_source(&self) -> &'static str {
        if self.forked_from.is_some() {
            "fork"
        } else {
            "resume"
        }
    }
}

/// Step 1: which session to resume, if any.
///
/// # Errors
/// Both an id and `continue_recent`; `fork` or `resume_at` without a session to apply them to;
/// an explicit id that does not exist; store errors.
pub async fn pick_session(
    backend: &dyn SessionBackend,
    options: &ResumeOptions,
) -> Result<Option<SessionMetadata>> {
    let picked = match (&options.session_id, options.continue_recent) {
        (Some(_), true) => {
            return Err(StoreError::BadInput(
                "give a session id or continue the most recent session, not both".into(),
            ));
        }
        (Some(id), false) => Some(backend.metadata(id).await?),
        (None, true) => most_recent(backend, options.cwd.as_deref()).await?,
        (None, false) => None,
    };
    if picked.is_none() && (options.fork || options.resume_at.is_some()) && !options.continue_recent
    {
        return Err(StoreError::BadInput(
            "fork and resume-at need a session: give its id, or continue the most recent one"
                .into(),
        ));
    }
    Ok(picked)
}

/// The most recently updated session of `cwd` (or of any directory).
///
/// # Errors
/// Store errors.
pub async fn most_recent(
    backend: &dyn SessionBackend,
    cwd: Option<&str>,
) -> Result<Option<SessionMetadata>> {
    let query = ListQuery {
        limit: Some(1),
        cwd: cwd.map(str::to_owned),
        ..ListQuery::default()
    };
    Ok(backend.list(query).await?.into_iter().next())
}

/// Steps 2 and 3: forks `session` when asked (whole, or up to `resume_at`), and returns what the
/// run continues with.
///
/// # Errors
/// An unknown `resume_at` event; store errors.
pub async fn fork_and_resume_at(
    backend: &dyn SessionBackend,
    session: SessionMetadata,
    options: &ResumeOptions,
) -> Result<Resumption> {
    if !options.fork && options.resume_at.is_none() {
        let messages = backend.messages(&session.id, None).await?;
        return Ok(Resumption {
            session,
            messages,
            forked_from: None,
        });
    }
    let at = options
        .resume_at
        .clone()
        .map_or(ForkAt::Whole, ForkAt::Event);
    let child = backend
        .fork(
            &session.id,
            ForkOptions {
                at,
                new_id: options.fork_id.clone(),
            },
        )
        .await?;
    let messages = backend.messages(&child.id, None).await?;
    Ok(Resumption {
        session: child,
        messages,
        forked_from: Some(session.id),
    })
}

/// All three steps. `Ok(None)` means there is nothing to resume: start a new session.
///
/// # Errors
/// As [`pick_session`] and [`fork_and_resume_at`].
pub async fn resume(
    backend: &dyn SessionBackend,
    options: &ResumeOptions,
) -> Result<Option<Resumption>> {
    match pick_session(backend, options).await? {
        Some(session) => Ok(Some(fork_and_resume_at(backend, session, options).await?)),
        None => Ok(None),
    }
}
