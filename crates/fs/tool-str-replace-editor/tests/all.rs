//! Integration tests of `str_replace_editor` through the whole tool pipeline, over the real
//! disk: dsh's texts for every command, listings and clipping, refused arguments that change
//! nothing, observations and the intents an observation policy decides, and the sandbox
//! policy on every mutation.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
