//! Integration tests of `dsh-tool-fs`: the tools through the real registry pipeline, over the
//! real local and sandboxed disks and the observation policy.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
