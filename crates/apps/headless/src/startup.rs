//! The `dsh-headless/startup` plugin (row `headless-startup`): parses the app's command
//! line and provides `headlessStartup`, which the runner row waits for. With `--help` or a
//! usage error it prints, asks the launcher to exit, and provides nothing, so nothing runs.

use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin, ServiceKey};
use dsh_launch::{CMDLINE_ARGS, exit_with_text};
use serde::Deserialize;
use serde_json::json;

use crate::args::{HeadlessArgs, Parsed, parse};

/// The plugin's name in rows.
pub const STARTUP_PLUGIN_NAME: &str = "dsh-headless/startup";

/// The parsed command line (`ctx.headlessStartup`); rows read its fields `task`, `output`,
/// `resume`, `model` and `verbose` in expressions.
pub const HEADLESS_STARTUP: ServiceKey<HeadlessArgs> = ServiceKey::new("headlessStartup");

/// Row config of `dsh-headless/startup`: none.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StartupConfig {}

/// The `dsh-headless/startup` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeadlessStartupPlugin;

impl Plugin for HeadlessStartupPlugin {
    type Config = StartupConfig;

    async fn apply(&self, ctx: Context, _config: StartupConfig) -> Result<(), BoxError> {
        let args = ctx.get(&CMDLINE_ARGS).ok_or(
            "headless-startup: the launcher must provide cmdlineArgs before the tree mounts",
        )?;
        match parse(args.args()) {
            Parsed::Run(parsed) => {
                let fields = json!({
                    "task": parsed.task_text(),
                    "output": parsed.output.as_str(),
                    "resume": parsed.resume,
                    "model": parsed.model,
                    "verbose": parsed.verbose,
                });
                ctx.provide_with_fields(&HEADLESS_STARTUP, Arc::new(parsed), fields)?;
            }
            Parsed::Exit {
                text,
                to_stderr,
                code,
            } => exit_with_text(&ctx, "headless-startup", &text, to_stderr, code)?,
        }
        Ok(())
    }
}
