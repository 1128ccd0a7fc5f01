//! Integration tests of `dsh-embed-example`, in one test binary: the built binary run against
//! the fake DeepSeek server on loopback.

#![expect(
    clippy::unwrap_used,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
