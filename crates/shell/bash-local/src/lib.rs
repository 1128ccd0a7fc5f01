//! dsh's unconfined shell provider (`dsh-bash-local`): [`BashLocalPlugin`] provides
//! [`dsh_shell::BashRunner`] as the `shell` service with dsh's `shell` config keys, so
//! `bash -c <command>` runs in its own process group with the runner's limits, environment
//! and result text, and no confinement.
//!
//! Processes belong to the executor: disposing the plugin terminates and awaits every tree
//! still alive, background processes included (in dsh they belong to the separate
//! subprocess service, so they outlive an executor reload).

mod plugin;

pub use plugin::{BashLocalPlugin, PLUGIN_NAME};
