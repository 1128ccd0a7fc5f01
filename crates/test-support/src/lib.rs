//! Test helpers shared by dsh crates' tests and benchmarks.
//!
//! [`turns`] builds realistic session logs: turns with reasoning, text and tool-call chunks,
//! a bash call and its result, shaped like the logs dsh 0.1.1 writes. [`plans`] generates
//! random logs for property tests. [`fake_deepseek`] is a scriptable DeepSeek
//! chat-completions server on loopback, streaming the events [`sse`] builds: the one fake model
//! of the crates' tests, of `cargo xtask bench` and of `cargo xtask e2e`.

pub mod fake_deepseek;
pub mod plans;
pub mod sse;
pub mod turns;
