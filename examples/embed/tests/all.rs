//! Integration tests of `dsh-embed-example`, in one test binary: the built binary run against
//! the fake DeepSeek server on loopback.

// Test helpers outside #[test] functions may unwrap and index too.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod suite;
