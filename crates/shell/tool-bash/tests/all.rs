//! Integration tests of the `bash` tool through the whole tool pipeline, with the real local
//! shell: dsh's result text, truncation and spill files, timeouts that leave no process
//! behind, the `DSH_*` environment, workdirs, background jobs and pipeline listeners.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
