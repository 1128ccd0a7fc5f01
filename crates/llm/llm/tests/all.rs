//! Integration tests of dsh-llm, in one test binary: the registry, the stream boundary and its
//! contract, the assembler, and retries.

#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
