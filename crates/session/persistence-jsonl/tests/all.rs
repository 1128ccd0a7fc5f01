//! Integration tests of the JSONL backend: the shared persistence contracts, dsh 0.1.1's own
//! files, the torn-tail and corruption rules, property tests, crash tests and live wiring.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
