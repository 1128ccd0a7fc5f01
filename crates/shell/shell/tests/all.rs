//! Integration tests of the shell runner: foreground runs (exit codes, timeouts, aborts,
//! process trees), output budgets and spill files, the child environment, background
//! processes, and ownership (shutdown and drop).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod suite;
