//! Integration tests of agent-workspace, in one binary (one link instead of one per file): import,
//! review and commit, Git inside the shadow, and the memory a review of a large file takes.

mod workspace;
mod workspace_git;
mod workspace_memory;
