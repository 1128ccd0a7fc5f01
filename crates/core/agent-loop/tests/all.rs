//! Integration tests of the agent loop, booted in-process with a scripted model: the event
//! sequence of turns and steps, tool calls (parallel, exclusive, cancelled), cancellation,
//! request errors and retries, interception events, steering, the creation transaction,
//! resume over JSONL persistence, and property tests of the log's structure.

#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test helpers outside #[test] functions unwrap, panic and index too"
)]

mod suite;
