//! Integration tests of dsh-llm, in one test binary: the vocabulary against dsh's own logs,
//! the registry, the stream boundary and its contract, the assembler, and retries.

#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers outside #[test] functions unwrap and panic too"
)]

mod suite;
