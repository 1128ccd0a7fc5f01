//! Integration tests of dsh-compose, in one test binary.

// Test helpers outside #[test] functions may unwrap and index too.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod suite;
