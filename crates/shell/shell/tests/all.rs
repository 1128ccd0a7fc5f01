//! Integration tests of the shell runner: foreground runs (exit codes, timeouts, aborts,
//! process trees), output budgets and spill files, the child environment, background
//! processes, and ownership (shutdown and drop).

#![expect(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
