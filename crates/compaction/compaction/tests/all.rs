//! Integration tests of the compaction seam through its public API: tool-pairing balance
//! over a real session, and range selection's "no split tool pair" property.

#![expect(
    clippy::unwrap_used,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
