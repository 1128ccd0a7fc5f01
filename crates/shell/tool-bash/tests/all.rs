//! Integration tests of the `bash` tool through the whole tool pipeline, with the real local
//! shell: dsh's result text, truncation and spill files, timeouts that leave no process
//! behind, the `DSH_*` environment, workdirs, background jobs and pipeline listeners.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod suite;
