//! The services a launcher provides on the root before any row mounts, for the app rows
//! (headless, web) that read their command line, ask to exit, or wait for the whole tree:
//!
//! - [`CMDLINE_ARGS`]: the arguments after the launcher's own flags ([`CmdlineArgs`]).
//! - [`APP_EXIT`]: how an app asks the launcher to shut down with an exit code ([`AppExit`];
//!   the launcher keeps the [`ExitRequests`] end), and [`exit_with_text`] for a startup row
//!   that prints help or a usage error instead of running.
//! - [`LOADER`]: when the tree has booted ([`Loader`]).
//!
//! An app depends on this crate, not on composition: the launcher that composes and boots the
//! tree provides these services, and the app only reads them.

mod cmdline;
mod exit;
mod loader;

pub use cmdline::{CMDLINE_ARGS, CmdlineArgs};
pub use exit::{APP_EXIT, AppExit, ExitRequests, exit_with_text};
pub use loader::{LOADER, Loader};
