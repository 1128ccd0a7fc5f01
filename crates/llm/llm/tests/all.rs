//! Integration tests of dsh-llm, in one test binary: the vocabulary against dsh's own logs,
//! the registry, the stream boundary and its contract, the assembler, and retries.

// Test helpers outside #[test] functions may unwrap and index too.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod suite;
