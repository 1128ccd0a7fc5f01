//! How an app asks the launcher to shut down and exit.

use dsh_kernel::{BoxError, Context, ServiceKey};
use tokio::sync::watch;

/// How an app row asks the launcher to shut down and exit.
pub const APP_EXIT: ServiceKey<AppExit> = ServiceKey::new("appExit");

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

    /// The code of an exit already requested, if any.
    pub fn requested_now(&self) -> Option<i32> {
        *self.receiver.borrow()
    }
}

/// How an app's startup row ends the process without running (help, a usage error): prints
/// `text` (on stderr when `to_stderr`) and asks the launcher to exit with `code`. `row` names
/// the caller in the error of a tree booted without a launcher.
pub fn exit_with_text(
    ctx: &Context,
    row: &str,
    text: &str,
    to_stderr: bool,
    code: i32,
) -> Result<(), BoxError> {
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
