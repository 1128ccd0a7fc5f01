//! Integration tests of dsh-test-support, in one test binary: the fake DeepSeek server seen
//! from a raw TCP client.

// Test helpers outside #[test] functions may unwrap and index too.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod suite;
