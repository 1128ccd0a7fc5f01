//! Integration tests of the unconfined provider through the `ShellExecutor` trait and the
//! `dsh-bash-local` plugin.

#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
