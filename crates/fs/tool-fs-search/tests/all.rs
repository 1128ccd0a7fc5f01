//! Integration tests of `glob` and `grep` through the whole tool pipeline: dsh's exact texts,
//! values and cards, spill files, timeouts and cancellation, config checks, and agreement with
//! the real ripgrep (`rg`, which must be installed) on trees with ignore files, hidden and
//! binary files, nested directories and include globs.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
