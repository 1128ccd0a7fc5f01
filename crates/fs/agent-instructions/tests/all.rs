//! Integration tests of the agent-instructions plugin, booted in-process with the agent loop,
//! the host disk as `fs` and a scripted model: the baseline's place, source and text in the
//! session log and in the model request, updates after file touches, and resume.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
