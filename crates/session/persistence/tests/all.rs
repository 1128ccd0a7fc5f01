//! Integration tests of the shared storage codecs: packed chunk rows, the line decoder and the
//! legacy upgrades.

#![expect(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
