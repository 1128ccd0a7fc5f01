//! Integration tests of dsh-system-prompt, in one test binary: the built-in sections,
//! registration and ownership, assembly and its waterfall, rendering, and tool order.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "helpers outside `#[test]` functions fail the test by panicking (clippy.toml allows it inside them)"
)]

mod suite;
