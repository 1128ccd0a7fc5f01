//! The infrastructure failures of the shell seam.

use std::io;
use std::path::PathBuf;

/// Why a command could not be run at all. A command that ran and failed, timed out or was
/// aborted is a [`crate::ShellRunResult`], never an error.
#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    /// The process could not be started: the program is missing, or the working directory is
    /// not a usable directory.
    #[error("spawn {program} in {}: {source}", cwd.display())]
    Spawn {
        /// The program (`argv[0]`).
        program: String,
        /// The working directory it was to run in.
        cwd: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The request's cancellation had already fired, so nothing was spawned.
    #[error("aborted before spawn: {reason}")]
    AbortedBeforeSpawn {
        /// Why (a cancellation token carries no reason, so this is `aborted`).
        reason: String,
    },
    /// The request cannot be run as given (for example a non-positive timeout).
    #[error("{0}")]
    InvalidRequest(String),
    /// The executor's config cannot be used.
    #[error("{0}")]
    InvalidConfig(String),
    /// The executor was shut down; it starts no more processes.
    #[error("the shell executor has been shut down and starts no more commands")]
    Closed,
    /// No sandbox backend can confine the command (or its runner failed); it was not run
    /// unconfined. Code `SANDBOX_UNAVAILABLE`.
    #[error("{message}")]
    SandboxUnavailable {
        /// dsh's refusal text, with the runner failure when there is one.
        message: String,
    },
    /// The thread a command was to be forked on has stopped (it ends only when its owner
    /// drops it, so this is a harness bug or a panic on that thread).
    #[error("the launch thread {name} has stopped")]
    LaunchThreadStopped {
        /// The thread's name.
        name: String,
    },
    /// The call was made outside a tokio runtime, which supervises the processes.
    #[error("the shell executor needs a tokio runtime (with I/O and timers enabled)")]
    NoRuntime,
}
