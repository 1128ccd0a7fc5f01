//! Integration tests of dsh-kernel, in one test binary.

#![expect(
    clippy::unwrap_used,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
