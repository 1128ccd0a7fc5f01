//! The dsh headless app: `dsh --profile headless [--output text|json|stream-json]
//! [--resume <session-id>] [--model <model>] [--verbose] <task...>`.
//!
//! Two rows: `headless-startup` ([`HeadlessStartupPlugin`]) parses the command line and
//! provides `headlessStartup`; `headless-runner` ([`HeadlessRunnerPlugin`]) waits for the
//! tree to boot, creates an agent on a new session (or resumes a stored one), sends the task
//! as a follow-up, waits for the turn, flushes the session and prints:
//!
//! - `text` (dsh's output): the last non-empty assistant text and a newline;
//! - `json`: `{"sessionId", "text", "reason", "usage", "steps"}`;
//! - `stream-json`: each session event as a JSON line when it is logged, then the `json`
//!   object with `"type": "result"`.
//!
//! A turn that ended `error` adds `dsh: <code>: <message>` on stderr. The exit code is 0 only
//! when the turn completed; an unexpected failure prints `dsh: <message>` and exits 1.

mod args;
mod runner;
mod startup;
mod stream;

pub use args::{HeadlessArgs, OutputFormat, Parsed, TASK_REQUIRED, parse};
pub use runner::{HeadlessRunnerPlugin, RUNNER_PLUGIN_NAME, RunnerConfig};
pub use startup::{HEADLESS_STARTUP, HeadlessStartupPlugin, STARTUP_PLUGIN_NAME, StartupConfig};
