//! Integration tests of `dsh-llm-deepseek` against the fake DeepSeek server.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod suite;
