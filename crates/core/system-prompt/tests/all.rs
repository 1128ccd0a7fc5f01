//! Integration tests of dsh-system-prompt, in one test binary: the built-in sections,
//! registration and ownership, assembly and its waterfall, rendering, and tool order.

// Test helpers outside #[test] functions may unwrap and index too.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod suite;
