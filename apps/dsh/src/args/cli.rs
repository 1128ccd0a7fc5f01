//! The launcher's command line as clap parses it: the launcher flags, the `web` alias and the
//! `sessions`, `tools` and `plugin` subcommands.

use clap::Parser;
use clap::Subcommand;

use super::sessions::{SESSIONS_EXAMPLES, SessionsAction};
use super::tools::{TOOLS_EXAMPLES, ToolsAction};

const EXAMPLES: &str = "\
Examples:
  dsh --profile web                          boot the web profile (same as: dsh web)
  dsh --profile headless \"run the tests\"     answer one task, print the result, and exit
  dsh --profile web --dump-config            print the composed plugin rows of a profile
  dsh --profile headless --patch ./extra.yml boot a profile with one extra patch layer
  dsh --profile web --help                   the web app's own flags and help";

#[derive(Parser, Debug)]
#[command(
    name = "dsh",
    version,
    about = "dsh: boot a DeepSeek Harness profile, an ordered stack of plugin-bundle patch \
             layers under your own overrides.",
    disable_help_flag = true,
    disable_help_subcommand = true,
    after_help = EXAMPLES,
    args_override_self = false
)]
pub(super) struct Cli {
    /// The profile to boot (templates: headless, web; others from $DSH_HOME/profiles/<name>).
    #[arg(long, value_name = "name")]
    pub(super) profile: Option<String>,
    #[command(flatten)]
    pub(super) launch: LaunchFlags,
    #[command(subcommand)]
    pub(super) command: Option<Alias>,
    /// Arguments for the booted profile's app (see: dsh --profile <name> --help).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "args"
    )]
    pub(super) args: Vec<String>,
}

#[derive(clap::Args, Debug)]
pub(super) struct LaunchFlags {
    /// Extra patch-list layer applied after the profile's own layers (repeatable).
    #[arg(long, value_name = "path")]
    pub(super) patch: Vec<String>,
    /// Print the composed profile tree and exit.
    #[arg(long)]
    pub(super) dump_config: bool,
    /// Print the profile tree without its user layers or --patch files and exit.
    #[arg(long)]
    pub(super) dump_default_config: bool,
}

#[derive(Subcommand, Debug)]
pub(super) enum Alias {
    /// Boot the web profile (alias of --profile web); the web app's own flags follow.
    #[command(disable_help_flag = true)]
    Web {
        #[command(flatten)]
        launch: LaunchFlags,
        /// Arguments for the web app (see: dsh web --help).
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "args"
        )]
        args: Vec<String>,
    },
    /// List, show, export, verify and convert stored sessions (only `convert` writes, and
    /// only to its destination store).
    #[command(after_help = SESSIONS_EXAMPLES)]
    Sessions {
        /// The profile whose persistence rows to use (default: headless).
        #[arg(long, value_name = "name")]
        profile: Option<String>,
        /// Extra patch-list layer, as for the launcher (repeatable).
        #[arg(long, value_name = "path")]
        patch: Vec<String>,
        #[command(subcommand)]
        action: SessionsAction,
    },
    /// List the tools a profile gives the model, or run one call through the tool pipeline.
    #[command(after_help = TOOLS_EXAMPLES)]
    Tools {
        /// The profile whose tool rows to boot (default: headless).
        #[arg(long, value_name = "name")]
        profile: Option<String>,
        /// Extra patch-list layer, as for the launcher (repeatable).
        #[arg(long, value_name = "path")]
        patch: Vec<String>,
        #[command(subcommand)]
        action: ToolsAction,
    },
    /// Manage a profile's plugins (dsh 0.1 installs npm packages; this dsh compiles its
    /// plugins in).
    #[command(disable_help_flag = true)]
    Plugin {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

impl LaunchFlags {
    pub(super) fn is_empty(&self) -> bool {
        self.patch.is_empty() && !self.dump_config && !self.dump_default_config
    }
}
