//! The launcher grammar.
//!
//! ```text
//! dsh --profile <name> [--patch <path>]... [app args...]
//! dsh --profile <name> (--dump-config [--patch <path>]... | --dump-default-config)
//! dsh web [--patch <path>]... [--dump-config | --dump-default-config] [web app args...]
//! dsh -h | --help        (only without --profile)      dsh -V | --version
//! ```
//!
//! The launcher's flags come first and end at the first token it does not know; everything
//! from there on (including `-h`) belongs to the booted app. One `--` is consumed.
//!
//! `cli` is what clap parses, `resolve` the checks clap cannot make, `help` the texts the
//! launcher prints itself; [`sessions`] and [`tools`] are the grammars of those subcommands.

mod cli;
mod help;
mod resolve;
pub mod sessions;
#[cfg(test)]
mod tests;
pub mod tools;

use std::ffi::OsString;

use clap::Parser;
use clap::error::ErrorKind;

use cli::{Alias, Cli};
use help::{help, subcommand_help};
use resolve::{resolve, subcommand_profile};
use sessions::SessionsAction;
use sessions::check_convert;
use tools::ToolsAction;

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// Boot `profile` with extra patch files and hand `args` to its app.
    Run {
        /// The profile name.
        profile: String,
        /// `--patch` paths as given, in order.
        patches: Vec<String>,
        /// The app's arguments.
        args: Vec<String>,
    },
    /// Print the composition of `profile` without booting.
    Dump {
        /// The profile name.
        profile: String,
        /// Bundles only: no user layers and no `--patch`.
        default_only: bool,
        /// `--patch` paths as given, in order.
        patches: Vec<String>,
    },
    /// Work with stored sessions.
    Sessions {
        /// The profile whose persistence rows are booted.
        profile: String,
        /// `--patch` paths as given, in order.
        patches: Vec<String>,
        /// What to do.
        action: SessionsAction,
    },
    /// List or call tools.
    Tools {
        /// The profile whose tool rows are booted.
        profile: String,
        /// `--patch` paths as given, in order.
        patches: Vec<String>,
        /// What to do.
        action: ToolsAction,
    },
    /// Print this text on stdout and exit 0 (help or version).
    Print(String),
}

/// A usage error: print it on stderr and exit 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

fn usage(message: impl Into<String>) -> UsageError {
    UsageError(message.into())
}

/// Parses the command line (without the program name... or with it: `argv[0]` is skipped).
pub fn parse(argv: impl IntoIterator<Item = OsString>) -> Result<Invocation, UsageError> {
    let argv: Vec<OsString> = argv.into_iter().collect();
    if let Some(text) = subcommand_help(&argv) {
        return Ok(Invocation::Print(text));
    }
    let cli = match Cli::try_parse_from(argv) {
        Ok(cli) => cli,
        Err(error) => {
            return match error.kind() {
                ErrorKind::DisplayVersion | ErrorKind::DisplayHelp => {
                    Ok(Invocation::Print(error.render().to_string()))
                }
                _ => Err(usage(error.render().to_string().trim_end())),
            };
        }
    };
    match cli.command {
        Some(Alias::Web { launch, args }) => {
            if cli.profile.is_some() || !cli.launch.is_empty() {
                return Err(usage(
                    "error: web takes none of parent --profile, --patch, --dump-config, \
                     or --dump-default-config",
                ));
            }
            resolve("web".to_owned(), launch, args)
        }
        Some(Alias::Sessions {
            profile,
            patch,
            action,
        }) => {
            let (profile, patches) =
                subcommand_profile("sessions", cli.profile, cli.launch, profile, patch)?;
            check_convert(&action)?;
            Ok(Invocation::Sessions {
                profile,
                patches,
                action,
            })
        }
        Some(Alias::Tools {
            profile,
            patch,
            action,
        }) => {
            let (profile, patches) =
                subcommand_profile("tools", cli.profile, cli.launch, profile, patch)?;
            Ok(Invocation::Tools {
                profile,
                patches,
                action,
            })
        }
        Some(Alias::Plugin { .. }) => Err(usage(
            "error: `dsh plugin` is not part of this dsh: its plugins are compiled in; \
             compose your own binary from the dsh crates to add plugins (see the README)",
        )),
        None => {
            let Some(profile) = cli.profile else {
                if cli.args.iter().any(|arg| arg == "-h" || arg == "--help") {
                    return Ok(Invocation::Print(help()));
                }
                return Err(usage("error: --profile <name> is required"));
            };
            if profile.is_empty() {
                return Err(usage("error: --profile needs a name"));
            }
            resolve(profile, cli.launch, cli.args)
        }
    }
}
