//! Running one search off the async runtime: a blocking thread does the work while the call
//! waits for it, the caller's cancellation, or the `timeoutMs` budget. On either stop the walk
//! is told to stop and the call waits for it, for at most the grace period: a search stuck in
//! a read that never returns (a kernel pipe posing as a regular file) cannot hold the call.

use std::time::Duration;

use dsh_tools::{CancellationToken, ToolError};

use crate::error;
use crate::walk::StopFlag;

/// Why a search stopped before it finished.
enum Stop {
    Cancelled,
    TimedOut,
}

/// Runs `job` on a blocking thread with a fresh [`StopFlag`]. A cancelled `signal` fails the
/// call with `SEARCH_ABORTED`, an elapsed `timeout_ms` with `TOOL_TIMEOUT`; both raise the flag
/// and wait up to `grace_ms` for `job` to return first.
pub async fn run_search<T, F>(
    tool: &'static str,
    (timeout_ms, grace_ms): (u64, u64),
    signal: &CancellationToken,
    job: F,
) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(&StopFlag) -> Result<T, ToolError> + Send + 'static,
{
    if signal.is_cancelled() {
        return Err(error::aborted(tool));
    }
    let stop = StopFlag::default();
    let mut task = tokio::task::spawn_blocking({
        let stop = stop.clone();
        move || job(&stop)
    });
    let deadline = tokio::time::sleep(Duration::from_millis(timeout_ms));
    tokio::pin!(deadline);
    let stopped = tokio::select! {
        joined = &mut task => return finished(tool, joined, signal),
        () = signal.cancelled() => Stop::Cancelled,
        () = &mut deadline => Stop::TimedOut,
    };
    stop.raise();
    // The walk polls the flag between entries and reads; its result no longer matters.
    let _ = tokio::time::timeout(Duration::from_millis(grace_ms), task).await;
    Err(match stopped {
        Stop::Cancelled => error::aborted(tool),
        Stop::TimedOut => error::timed_out(timeout_ms),
    })
}

fn finished<T>(
    tool: &str,
    joined: Result<Result<T, ToolError>, tokio::task::JoinError>,
    signal: &CancellationToken,
) -> Result<T, ToolError> {
    if signal.is_cancelled() {
        return Err(error::aborted(tool));
    }
    joined.map_err(|_| error::failed(tool, "the search thread stopped unexpectedly"))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_finished_search_returns_its_result() {
        let signal = CancellationToken::new();
        let result = run_search("grep", (1000, 1000), &signal, |_| Ok(7)).await;
        assert_eq!(result, Ok(7));
    }

    #[tokio::test]
    async fn a_timeout_stops_the_search_and_waits_for_it() {
        let signal = CancellationToken::new();
        let (sender, receiver) = std::sync::mpsc::channel();
        let result: Result<(), ToolError> = run_search("grep", (20, 5000), &signal, move |stop| {
            while !stop.is_raised() {
                std::thread::sleep(Duration::from_millis(1));
            }
            sender.send(()).unwrap();
            Ok(())
        })
        .await;
        assert_eq!(
            result.unwrap_err().message(),
            "tool call timed out after 20ms"
        );
        assert!(
            receiver.try_recv().is_ok(),
            "the job had stopped before the call returned"
        );
    }

    #[tokio::test]
    async fn cancellation_is_an_abort() {
        let signal = CancellationToken::new();
        let canceller = signal.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            canceller.cancel();
        });
        let result: Result<(), ToolError> = run_search("glob", (60_000, 5000), &signal, |stop| {
            while !stop.is_raised() {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        })
        .await;
        assert_eq!(
            result.unwrap_err().code(),
            Some(crate::error::codes::SEARCH_ABORTED)
        );
        let before: Result<(), ToolError> = run_search("glob", (10, 10), &signal, |_| Ok(())).await;
        assert!(before.is_err());
    }

    #[tokio::test]
    async fn a_search_that_ignores_the_flag_is_waited_for_only_the_grace_period() {
        let signal = CancellationToken::new();
        let started = std::time::Instant::now();
        let result: Result<(), ToolError> = run_search("grep", (10, 50), &signal, |_| {
            std::thread::sleep(Duration::from_millis(1500));
            Ok(())
        })
        .await;
        assert_eq!(result.unwrap_err().code(), Some("TOOL_TIMEOUT"));
        assert!(started.elapsed() < Duration::from_millis(1000));
    }
}
