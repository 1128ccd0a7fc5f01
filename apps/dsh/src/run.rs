//! Booting a profile and running it until its app asks to exit or a signal arrives.
//!
//! SIGTERM shuts down gracefully and exits 0; SIGINT stops the running agents (cause `user`)
//! and exits 130; a second signal during the shutdown exits at once. The shutdown is bounded
//! to 5 seconds.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use dsh_agent_loop::{AGENTS, CancelCause};
use dsh_compose::boot;
use dsh_compose::expr::LaunchEnv;
use dsh_kernel::Kernel;
use dsh_launch::APP_EXIT;
use dsh_launch::AppExit;
use dsh_launch::CMDLINE_ARGS;
use dsh_launch::CmdlineArgs;
use dsh_launch::LOADER;
use dsh_launch::Loader;
use dsh_shell::SANDBOX_PROTECTION;

use crate::builtins;
use crate::prepare::prepare;
use crate::protection;

/// How long the plugin tree gets to unload before the process exits anyway.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// The exit code of SIGINT.
const SIGINT_CODE: i32 = 130;

/// Boots `profile` and waits; returns the process exit code.
pub fn run(profile: &str, patches: &[String], args: Vec<String>) -> anyhow::Result<i32> {
    let prepared = prepare(profile, true, patches)?;
    let (protection, _held) = protection::for_launch(&prepared);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let code = runtime.block_on(async move {
        // Listen before anything mounts and keep listening: a signal between two waits is
        // kept for the next one, never lost.
        let mut signals = Signals::listen()?;
        let kernel = Kernel::new()?;
        let root = kernel.root();
        root.provide(&CMDLINE_ARGS, Arc::new(CmdlineArgs::new(args)))?;
        let (exit, mut exit_requests) = AppExit::channel();
        root.provide(&APP_EXIT, Arc::new(exit))?;
        let loader = Arc::new(Loader::new());
        root.provide(&LOADER, Arc::clone(&loader))?;
        root.provide(&SANDBOX_PROTECTION, protection)?;
        let launch = Arc::new(LaunchEnv::capture(prepared.home.root().to_path_buf()));
        let registry = builtins::registry();

        let booted = tokio::select! {
            booted = boot(&kernel, &prepared.composition, &registry, launch) => booted,
            code = signals.next() => return Ok(shutdown(&kernel, code, &mut signals).await),
        };
        if let Err(error) = booted {
            // An app that asked to exit while booting (`--help`, a usage error) left its
            // other rows waiting on purpose: its exit code stands, not the audit.
            if let Some(code) = exit_requests.requested_now() {
                return Ok(shutdown(&kernel, code, &mut signals).await);
            }
            shutdown(&kernel, 1, &mut signals).await;
            return Err(anyhow::Error::new(error).context("plugin tree failed to load"));
        }
        tracing::debug!(profile = %prepared.profile.name, "booted");
        loader.mark_settled();
        let code = tokio::select! {
            code = exit_requests.requested() => code,
            code = signals.next() => code,
        };
        Ok::<_, anyhow::Error>(shutdown(&kernel, code, &mut signals).await)
    })?;
    runtime.shutdown_timeout(Duration::from_millis(100));
    Ok(code)
}

/// Unloads the tree within [`SHUTDOWN_TIMEOUT`]; a signal meanwhile cuts it short. On Ctrl-C
/// (130) the running agents are first stopped as by the user, so their turns end `aborted`
/// with the cause `user` rather than `disposed`.
async fn shutdown(kernel: &Kernel, code: i32, signals: &mut Signals) -> i32 {
    if code == SIGINT_CODE
        && let Some(agents) = kernel.root().get(&AGENTS)
    {
        for id in agents.ids() {
            if let Some(agent) = agents.get(&id) {
                agent.cancel(CancelCause::User);
            }
        }
    }
    tokio::select! {
        finished = tokio::time::timeout(SHUTDOWN_TIMEOUT, kernel.shutdown()) => {
            if finished.is_err() {
                tracing::warn!("the plugin tree did not unload within {SHUTDOWN_TIMEOUT:?}");
            }
        }
        _ = signals.next() => tracing::warn!("second signal: exiting without waiting for the unload"),
    }
    code
}

/// SIGINT and SIGTERM, listened to for the whole run.
struct Signals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    fn listen() -> anyhow::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::SignalKind;
            use tokio::signal::unix::signal;
            Ok(Self {
                interrupt: signal(SignalKind::interrupt()).context("cannot listen for SIGINT")?,
                terminate: signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?,
            })
        }
        #[cfg(not(unix))]
        Ok(Self {})
    }

    /// The exit code of the next signal: 130 for SIGINT, 0 for SIGTERM.
    async fn next(&mut self) -> i32 {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => SIGINT_CODE,
                _ = self.terminate.recv() => 0,
            }
        }
        #[cfg(not(unix))]
        {
            match tokio::signal::ctrl_c().await {
                Ok(()) => SIGINT_CODE,
                Err(_) => std::future::pending().await,
            }
        }
    }
}
