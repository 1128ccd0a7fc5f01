//! Integration tests of the SQLite backend: the shared persistence contract (run against the
//! JSONL backend too), a differential test against JSONL, dsh 0.1.1's own database, the
//! schema refusals, the row format, torn tails and a killed writer.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
