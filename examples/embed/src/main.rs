//! `dsh-embed-example <task...>`: boots this example's profile, runs one turn of a DeepSeek
//! agent on the task, prints the answer on stdout and `session <id>` on stderr.
//!
//! Exit codes: 0 when the turn completed; 1 when it did not (`error: <code>: <message>` on
//! stderr) or the harness failed; 2 for a blank task.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use dsh_embed_example::embed::{TurnReport, boot_profile, run_turn};
use dsh_embed_example::{DEFAULT_HOME, DEFAULT_MODEL, HOME_ENV, MODEL_ENV};
use dsh_kernel::Kernel;

fn main() -> ExitCode {
    let task = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    if task.trim().is_empty() {
        say(&format!(
            "usage: dsh-embed-example <task...>  (home: ${HOME_ENV}, else ./{DEFAULT_HOME}; \
             model: ${MODEL_ENV}, else {DEFAULT_MODEL}; key: $DEEPSEEK_API_KEY)"
        ));
        return ExitCode::from(2);
    }
    match run(&task) {
        Ok(report) => finish(&report),
        Err(error) => {
            say(&format!("error: {error:#}"));
            ExitCode::FAILURE
        }
    }
}

/// Boots the profile in a runtime of its own, runs the turn, and shuts everything down.
fn run(task: &str) -> anyhow::Result<TurnReport> {
    let home = home()?;
    let model = std::env::var(MODEL_ENV).unwrap_or_else(|_| DEFAULT_MODEL.to_owned());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let report = runtime.block_on(async {
        let kernel = Kernel::new()?;
        let report = match boot_profile(&kernel, home).await {
            Ok(()) => run_turn(&kernel, task, &model).await,
            Err(error) => Err(error),
        };
        // Unload every row (this flushes the session stores), whatever happened; a plugin
        // stuck in its unload gets five seconds.
        if !kernel.shutdown_within(Duration::from_secs(5)).await {
            say("warning: the plugin tree did not unload within 5 s");
        }
        report
    });
    // Tasks still blocking (a stuck file write) get a moment, then are left behind.
    runtime.shutdown_timeout(Duration::from_millis(100));
    report
}

/// `$DSH_EMBED_HOME`, else `./.dsh-embed`, made absolute.
fn home() -> anyhow::Result<PathBuf> {
    let home = std::env::var_os(HOME_ENV)
        .filter(|value| !value.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_HOME), PathBuf::from);
    std::path::absolute(&home).with_context(|| format!("cannot resolve {}", home.display()))
}

/// Prints the answer and the session id; the exit code says whether the turn completed.
fn finish(report: &TurnReport) -> ExitCode {
    say(&format!("session {}", report.session_id));
    let summary = &report.summary;
    if summary.completed() {
        let mut out = std::io::stdout().lock();
        // A closed stdout is ignored: the exit code still tells.
        let _ = writeln!(out, "{}", summary.text).and_then(|()| out.flush());
        return ExitCode::SUCCESS;
    }
    match summary.error() {
        Some((code, message)) => say(&format!("error: {code}: {message}")),
        None => say(&format!(
            "error: INCOMPLETE: the turn ended as \"{}\"",
            summary.reason_kind()
        )),
    }
    ExitCode::FAILURE
}

/// Writes one line on stderr (a closed stderr is ignored).
fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
