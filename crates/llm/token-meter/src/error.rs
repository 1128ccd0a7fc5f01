//! What the meter refuses: a log its fold cannot price. A refused event is not consumed, so
//! the next read fails the same way.

use dsh_llm::AssembleError;
use dsh_session::vocab::VocabError;

/// A session event the meter cannot fold, with dsh's texts.
#[derive(Debug, thiserror::Error)]
pub enum MeterError {
    /// A replace names a range that is not on the current surface (or is reversed).
    #[error("token surface: replace at seq {seq} has invalid current range {start}-{end}")]
    InvalidReplace {
        /// The replacing event.
        seq: u64,
        /// Seq of the first shadowed node it names.
        start: u64,
        /// Seq of the last shadowed node it names.
        end: u64,
    },
    /// A `step/start` while another step is open.
    #[error("token meter: step/start at seq {seq} arrived before turn {turn}/step {step} ended")]
    StepStillOpen {
        /// The new `step/start`.
        seq: u64,
        /// Turn of the open step.
        turn: u64,
        /// Number of the open step.
        step: u64,
    },
    /// A `step/end` that closes no open step.
    #[error("token meter: step/end at seq {seq} has no matching step/start event")]
    UnmatchedStepEnd {
        /// The `step/end`.
        seq: u64,
    },
    /// An `assistant/message` outside its step.
    #[error("token meter: assistant/message at seq {seq} has no matching step/start event")]
    UnmatchedMessage {
        /// The `assistant/message`.
        seq: u64,
    },
    /// A cited chunk seq that is not before the message.
    #[error("token meter: assistant/message at seq {seq} source seq {source_seq} is not earlier")]
    SourceNotEarlier {
        /// The `assistant/message`.
        seq: u64,
        /// The cited seq.
        source_seq: u64,
    },
    /// A chunk seq cited twice.
    #[error("token meter: assistant/message at seq {seq} repeats source seq {source_seq}")]
    SourceRepeated {
        /// The `assistant/message`.
        seq: u64,
        /// The cited seq.
        source_seq: u64,
    },
    /// A cited seq that is not an `assistant/chunk`.
    #[error(
        "token meter: assistant/message at seq {seq} source seq {source_seq} is not assistant/chunk"
    )]
    SourceNotChunk {
        /// The `assistant/message`.
        seq: u64,
        /// The cited seq.
        source_seq: u64,
    },
    /// A cited chunk of another turn or step.
    #[error(
        "token meter: assistant/message at seq {seq} source seq {source_seq} belongs to another step"
    )]
    SourceOtherStep {
        /// The `assistant/message`.
        seq: u64,
        /// The cited seq.
        source_seq: u64,
    },
    /// The cited chunks do not assemble (an open block of a type with no delta form).
    #[error("token meter: assistant/message at seq {seq}: {source}")]
    Assemble {
        /// The `assistant/message`.
        seq: u64,
        /// What the assembler found.
        #[source]
        source: AssembleError,
    },
    /// A core event without its core shape (`step/start` without numbers, ...).
    #[error(transparent)]
    Shape(#[from] VocabError),
}
