//! Integration tests of the JSONL backend: the shared persistence contracts, dsh 0.1.1's own
//! files, the torn-tail and corruption rules, property tests, crash tests and live wiring.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod suite;
