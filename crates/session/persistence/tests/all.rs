//! Integration tests of the shared storage codecs: packed chunk rows, the line decoder, the
//! legacy upgrades, the log file, and the protocol's vocabulary read from dsh 0.1.1's own logs.

#![expect(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
