//! Replaying dsh 0.1.1's own session log through the LLM runtime.

#![expect(
    clippy::unwrap_used,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
