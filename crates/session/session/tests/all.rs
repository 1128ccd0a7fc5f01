//! Integration tests of the session log through its public API: envelopes, headers, seed
//! checks, the log and its store, the relational invariants, crash closers and the typed views.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod suite;
