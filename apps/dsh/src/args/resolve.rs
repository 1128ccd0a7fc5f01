//! From parsed flags to an [`Invocation`]: the checks clap does not make.

use super::cli::LaunchFlags;
use super::{Invocation, UsageError, usage};

/// What `profile` with the launcher `flags` and the app's `args` asks for: a run, or with a dump
/// flag a dump (which takes no app arguments, and no `--patch` for the default tree).
pub(super) fn resolve(
    profile: String,
    flags: LaunchFlags,
    args: Vec<String>,
) -> Result<Invocation, UsageError> {
    if flags.patch.iter().any(String::is_empty) {
        return Err(usage("error: --patch needs a path"));
    }
    if !flags.dump_config && !flags.dump_default_config {
        return Ok(Invocation::Run {
            profile,
            patches: flags.patch,
            args,
        });
    }
    if flags.dump_config && flags.dump_default_config {
        return Err(usage(
            "error: --dump-config and --dump-default-config are mutually exclusive",
        ));
    }
    if !args.is_empty() {
        let shown: Vec<String> = args.iter().map(|arg| format!("{arg:?}")).collect();
        return Err(usage(format!(
            "error: config dumps take no app arguments, got {}",
            shown.join(" ")
        )));
    }
    if flags.dump_default_config && !flags.patch.is_empty() {
        return Err(usage(
            "error: --dump-default-config prints the bundle layers and takes no --patch",
        ));
    }
    Ok(Invocation::Dump {
        profile,
        default_only: flags.dump_default_config,
        patches: flags.patch,
    })
}

/// The profile and patches of `dsh [flags] <subcommand> [flags]`: `--profile` once, before or
/// after the subcommand (default `headless`), patches from both places in order.
pub(super) fn subcommand_profile(
    subcommand: &str,
    before: Option<String>,
    launch: LaunchFlags,
    after: Option<String>,
    patch: Vec<String>,
) -> Result<(String, Vec<String>), UsageError> {
    if launch.dump_config || launch.dump_default_config {
        return Err(usage(format!(
            "error: {subcommand} takes no --dump-config or --dump-default-config"
        )));
    }
    let profile = match (before, after) {
        (Some(_), Some(_)) => {
            return Err(usage(format!(
                "error: give --profile once, before or after `{subcommand}`"
            )));
        }
        (Some(name), None) | (None, Some(name)) => name,
        (None, None) => "headless".to_owned(),
    };
    if profile.is_empty() {
        return Err(usage("error: --profile needs a name"));
    }
    let patches: Vec<String> = launch.patch.into_iter().chain(patch).collect();
    if patches.iter().any(String::is_empty) {
        return Err(usage("error: --patch needs a path"));
    }
    Ok((profile, patches))
}
