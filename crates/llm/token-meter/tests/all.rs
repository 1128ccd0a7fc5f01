//! Integration tests of the token meter: realistic dsh logs folded whole and in batches, and
//! the `tokenMeter` service behind its plugin over live sessions.

#![expect(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
