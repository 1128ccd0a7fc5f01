//! Integration tests of dsh-tools, in one test binary: the registry and its scoping, the
//! pipeline stage by stage, the `tools/result` notification and batches.

#![expect(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
