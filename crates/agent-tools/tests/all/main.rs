//! Integration tests of agent-tools, in one binary (one link instead of one per file): the
//! built-in tools, the Bash tool and its cancellation, WebFetch.

mod bash;
mod bash_cancel;
mod tools;
mod web_fetch;
