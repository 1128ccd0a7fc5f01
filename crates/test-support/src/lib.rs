//! Test helpers shared by dsh crates' tests and benchmarks.
//!
//! [`turns`] builds realistic session logs: turns with reasoning, text and tool-call chunks,
//! a bash call and its result, shaped like the logs dsh 0.1.1 writes. [`plans`] generates
//! random logs for property tests.

pub mod plans;
pub mod turns;
