//! Integration tests of dsh-tools, in one test binary: the registry and its scoping, the
//! pipeline stage by stage, the `tools/result` notification and batches.

// Test helpers outside #[test] functions may unwrap and index too.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod suite;
