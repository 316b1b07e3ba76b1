//! Integration tests of agent-store, in one binary (one link instead of one per file): the store
//! through its public API, the recovery modes, and the store across processes.

#[cfg(feature = "postgres")]
mod postgres;
mod processes;
mod recovery;
mod rng;
mod store;
