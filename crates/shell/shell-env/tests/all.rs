//! Integration tests of the `DSH_*` registry: built-ins, contributors and their validation,
//! disposal, and the plugin with its session-persistence contributor.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod suite;
