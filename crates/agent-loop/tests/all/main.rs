//! Integration tests of agent-loop, in one binary (one link instead of one per file): the loop
//! against the scripted provider.

mod agent;
