//! Integration tests of the shared storage codecs: packed chunk rows, the line decoder and the
//! legacy upgrades.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod suite;
