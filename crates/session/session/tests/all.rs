//! Integration tests of the session log through its public API: envelopes, headers, seed
//! checks, the log and its store, the relational invariants, crash closers and the typed views.

#![expect(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
