//! Integration tests of the SQLite backend: the shared persistence contract, random logs read
//! back as written, dsh 0.1.1's own database, the schema refusals, the row format, torn tails and
//! a killed writer. (That both stores read the same logs alike is tested in
//! `apps/dsh/tests/suite/stores_agree.rs`, so this crate needs no other backend.)

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
