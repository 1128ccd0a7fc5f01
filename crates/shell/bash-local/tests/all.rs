//! Integration tests of the unconfined provider through the `ShellExecutor` trait and the
//! `dsh-bash-local` plugin.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod suite;
