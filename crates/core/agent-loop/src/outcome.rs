//! How a turn ends: the log's own vocabulary ([`TurnEndReason`]), plus the code of the
//! loop's step limit.

pub use dsh_session::vocab::TurnEndReason;

/// The code of a turn ended by the loop's step limit (`maxSteps`; dsh has no such limit).
pub const STEP_LIMIT: &str = "STEP_LIMIT";
