//! Integration tests of the confining provider through the `ShellExecutor` trait, with the
//! crate's own runner binary (`dsh-sandbox-run`), and of the `dsh-bash-sandbox` plugin.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod suite;
