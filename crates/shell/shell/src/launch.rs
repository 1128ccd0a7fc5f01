//! Launch threads: dedicated OS threads that children are forked from.
//!
//! A child inherits the credentials, seccomp filters and mount namespace of the *thread*
//! that forks it. A sandboxing provider puts its confinement (a Landlock domain, a network
//! filter, a private mount namespace) on a launch thread once, and every command forked
//! there starts confined, while the harness's other threads stay as they were. The thread
//! lives until its handle is dropped; children it forked are unaffected by its end.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use dsh_kernel::sync::lock;

use crate::error::ShellError;

type Job = Box<dyn FnOnce() + Send>;

/// A dedicated thread that runs jobs (spawns) one at a time, after its setup.
#[derive(Debug)]
pub struct LaunchThread {
    name: String,
    jobs: Mutex<mpsc::Sender<Job>>,
}

/// The stack of a launch thread: its jobs only build and spawn a command.
const STACK_BYTES: usize = 512 * 1024;

impl LaunchThread {
    /// Starts a thread named `name`, runs `setup` on it and waits for it: the thread is kept
    /// when `setup` succeeds (its value is returned with the handle) and ends when it fails.
    pub fn start<T, F>(name: &str, setup: F) -> Result<(Arc<Self>, T), String>
    where
        T: Send + 'static,
        F: FnOnce() -> Result<T, String> + Send + 'static,
    {
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ready, outcome) = mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name(name.to_owned())
            .stack_size(STACK_BYTES)
            .spawn(move || {
                let result = setup();
                let keep = result.is_ok();
                let _ = ready.send(result);
                if keep {
                    while let Ok(job) = queue.recv() {
                        job();
                    }
                }
            })
            .map_err(|error| format!("cannot start the launch thread {name}: {error}"))?;
        let value = outcome
            .recv()
            .map_err(|_| format!("the launch thread {name} stopped during its setup"))??;
        Ok((
            Arc::new(Self {
                name: name.to_owned(),
                jobs: Mutex::new(jobs),
            }),
            value,
        ))
    }

    /// The thread's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `job` on the thread and waits for its result.
    pub fn run<R, F>(&self, job: F) -> Result<R, ShellError>
    where
        R: Send + 'static,
        F: FnOnce() -> R + Send + 'static,
    {
        let (reply, result) = mpsc::sync_channel(1);
        let job: Job = Box::new(move || {
            let _ = reply.send(job());
        });
        let stopped = || ShellError::LaunchThreadStopped {
            name: self.name.clone(),
        };
        lock(&self.jobs).send(job).map_err(|_| stopped())?;
        result.recv().map_err(|_| stopped())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_on_the_thread_after_its_setup() {
        let (thread, id) =
            LaunchThread::start("dsh-launch-test", || Ok(std::thread::current().id())).unwrap();
        let ran_on = thread.run(|| std::thread::current().id()).unwrap();
        assert_eq!(ran_on, id);
        assert_ne!(ran_on, std::thread::current().id());
        assert_eq!(thread.name(), "dsh-launch-test");
    }

    #[test]
    fn a_failed_setup_is_reported_and_no_thread_is_kept() {
        let error =
            LaunchThread::start("dsh-launch-fail", || Err::<(), _>("no".to_owned())).unwrap_err();
        assert_eq!(error, "no");
    }
}
