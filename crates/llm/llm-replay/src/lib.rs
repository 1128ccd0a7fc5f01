//! A keyless model provider that answers from a recorded session log (dsh's `llm-replay`).
//!
//! The recording is a log file (`session:`, plain JSONL or zstd frames, decoded by
//! `dsh-persistence`) or a session of the profile's session store (`sessionId:`, read through
//! the persistence seam, so a session kept in SQLite replays as well as a JSONL one).
//!
//! A [`Recording`] is the `assistant/chunk` events of a session log, grouped into model calls
//! by `(turn, step)`; each attempt of a retried step (ended by its `finish`) is a call of its
//! own. The [`ReplayAdapter`] answers the n-th request of a session with the n-th recorded
//! call, chunk for chunk, so a replayed run issues the same tool calls, and meets the same
//! retried failures, as the recorded one — for offline runs, demos and regression tests. A request after the last step
//! fails with `REPLAY_EXHAUSTED`; a request that does not carry the results of the tool calls
//! the previous step asked for fails with `REPLAY_DIVERGED`.

mod adapter;
mod plugin;
mod recording;

pub use adapter::{REPLAY_DIVERGED, REPLAY_EXHAUSTED, ReplayAdapter};
pub use plugin::{PLUGIN_NAME, RecordingSource, ReplayConfig, ReplayPlugin};
pub use recording::{RecordedStep, Recording};
