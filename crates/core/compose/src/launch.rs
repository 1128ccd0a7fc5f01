//! Services a launcher provides on the root before any row mounts.

use dsh_kernel::ServiceKey;
use tokio::sync::watch;

/// The arguments after the launcher's own flags, for the app rows that parse them.
pub const CMDLINE_ARGS: ServiceKey<CmdlineArgs> = ServiceKey::new("cmdlineArgs");

/// How an app row asks the launcher to shut down and exit.
pub const APP_EXIT: ServiceKey<AppExit> = ServiceKey::new("appExit");

/// The app's command line, frozen at launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmdlineArgs {
    args: Vec<String>,
}

impl CmdlineArgs {
    /// Wraps `args`.
    pub fn new(args: Vec<String>) -> Self {
        Self { args }
    }

    /// The arguments, in order.
    pub fn args(&self) -> &[String] {
        &self.args
    }
}

/// Requests a bounded shutdown with an exit code; the first request wins.
#[derive(Debug)]
pub struct AppExit {
    sender: watch::Sender<Option<i32>>,
}

/// The launcher's end of [`AppExit`].
#[derive(Debug)]
pub struct ExitRequests {
    receiver: watch::Receiver<Option<i32>>,
}

impl AppExit {
    /// A new exit channel.
    pub fn channel() -> (Self, ExitRequests) {
        let (sender, receiver) = watch::channel(None);
        (Self { sender }, ExitRequests { receiver })
    }

    /// Asks the launcher to shut down and exit with `code` (later requests are ignored).
    pub fn request(&self, code: i32) {
        self.sender.send_if_modified(|current| {
            if current.is_none() {
                *current = Some(code);
                true
            } else {
                false
            }
        });
    }
}

impl ExitRequests {
    /// Waits for the first exit request and returns its code. If every [`AppExit`] is gone
    /// without a request, this never returns.
    pub async fn requested(&mut self) -> i32 {
        match self.receiver.wait_for(Option::is_some).await {
            Ok(code) => code.unwrap_or(0),
            Err(_) => std::future::pending().await,
        }
    }
}

/// Tells app rows when the whole tree has booted (dsh's `ctx.loader.await()`): rows mount
/// concurrently, so an app that drives agents waits for it before starting, lest an
/// adapter or tool row is still loading.
pub const LOADER: ServiceKey<Loader> = ServiceKey::new("loader");

/// The boot state a launcher publishes; see [`LOADER`].
#[derive(Debug)]
pub struct Loader {
    settled: watch::Sender<bool>,
}

impl Default for Loader {
    fn default() -> Self {
        Self::new()
    }
}

impl Loader {
    /// A loader whose tree has not booted yet.
    pub fn new() -> Self {
        Self {
            settled: watch::channel(false).0,
        }
    }

    /// Marks the tree booted (every row active and audited).
    pub fn mark_settled(&self) {
        self.settled.send_replace(true);
    }

    /// Waits until the tree has booted. A boot that fails never settles: the launcher then
    /// unloads the tree, which stops the waiting task.
    pub async fn settled(&self) {
        let mut settled = self.settled.subscribe();
        let _ = settled.wait_for(|settled| *settled).await;
    }
}

impl ExitRequests {
    /// The code of an exit already requested, if any.
    pub fn requested_now(&self) -> Option<i32> {
        *self.receiver.borrow()
    }
}

/// How an app's startup row ends the process without running (help, a usage error): prints
/// `text` (on stderr when `to_stderr`) and asks the launcher to exit with `code`. `row` names
/// the caller in the error of a tree booted without a launcher.
pub fn exit_with_text(
    ctx: &dsh_kernel::Context,
    row: &str,
    text: &str,
    to_stderr: bool,
    code: i32,
) -> Result<(), dsh_kernel::BoxError> {
    use std::io::Write;
    // A closed stream cannot take the text; the exit code still says it all.
    let _ = if to_stderr {
        std::io::stderr().lock().write_all(text.as_bytes())
    } else {
        std::io::stdout().lock().write_all(text.as_bytes())
    };
    let exit = ctx.get(&APP_EXIT).ok_or_else(|| {
        format!("{row}: the launcher must provide appExit before the tree mounts")
    })?;
    exit.request(code);
    Ok(())
}
