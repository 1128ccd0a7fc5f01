//! dsh's unconfined shell provider (`dsh-bash-local`): [`LocalBashExecutor`] runs
//! `bash -c <command>` in its own process group through [`dsh_shell::ProcessRunner`], and
//! [`BashLocalPlugin`] provides it as the `shell` service with dsh's `shell` config keys.
//!
//! Processes belong to the executor: disposing the plugin terminates and awaits every tree
//! still alive, background processes included (in dsh they belong to the separate
//! subprocess service, so they outlive an executor reload).

mod executor;
mod plugin;

pub use executor::LocalBashExecutor;
pub use plugin::{BashLocalPlugin, PLUGIN_NAME};
