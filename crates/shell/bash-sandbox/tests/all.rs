//! Integration tests of the confining provider through the `ShellExecutor` trait, with the
//! crate's own runner binary (`dsh-sandbox-run`), and of the `dsh-bash-sandbox` plugin.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
