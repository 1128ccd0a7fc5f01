//! Integration tests of the local disk: resolution, versions, guarded writes and edits,
//! diff bases, and concurrent mutations of one file.

#![expect(
    clippy::unwrap_used,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
