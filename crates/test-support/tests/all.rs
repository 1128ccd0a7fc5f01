//! Integration tests of dsh-test-support, in one test binary: the fake DeepSeek server seen
//! from a raw TCP client.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
