//! URLs (SSRF): http and https only; odd host spellings normalised; every address a host
//! resolves to must be public; domain allow and deny lists; the connection pinned to the
//! checked addresses; every redirect hop checked again (see `urls::fetch`, with the `fetch` feature).

mod check;
#[cfg(feature = "fetch")]
pub mod fetch;
pub mod ip;

pub(crate) use check::entry_problem;
pub use check::{
    Resolver, StaticResolver, SystemResolver, UrlPolicy, UrlVerdict, domain_matches,
    normalize_domain_entry,
};
