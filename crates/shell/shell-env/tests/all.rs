//! Integration tests of the `DSH_*` registry: built-ins, contributors and their validation,
//! disposal, and the plugin with its session-persistence contributor.

#![expect(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
