//! The help texts the launcher prints itself.

use std::ffi::OsString;

use clap::CommandFactory;

use super::cli::Cli;

/// The launcher's own help.
pub(super) fn help() -> String {
    Cli::command().render_help().to_string()
}

/// `dsh [launcher flags] <sessions|tools> [flags] [action] (-h | --help)`: the help of the
/// subcommand or of its action. (The launcher hands `-h` to apps, so clap's own help flag is
/// off.)
pub(super) fn subcommand_help(argv: &[OsString]) -> Option<String> {
    let tokens: Vec<&str> = argv
        .iter()
        .skip(1)
        .map(|arg| arg.to_str().unwrap_or(""))
        .collect();
    let position = tokens
        .iter()
        .position(|token| *token == "sessions" || *token == "tools")?;
    let name = *tokens.get(position)?;
    let before = tokens.get(..position).unwrap_or_default();
    let launcher_only = before.iter().enumerate().all(|(index, token)| {
        token.starts_with("--")
            || before
                .get(index.wrapping_sub(1))
                .is_some_and(|f| *f == "--profile" || *f == "--patch")
    });
    let after = tokens.get(position + 1..).unwrap_or_default();
    if !launcher_only
        || !after
            .iter()
            .any(|token| *token == "-h" || *token == "--help")
    {
        return None;
    }
    let mut command = Cli::command();
    command.build();
    let subcommand = command.find_subcommand_mut(name)?;
    let action = after
        .iter()
        .find(|token| subcommand.find_subcommand(token).is_some())
        .copied();
    let mut target = match action {
        Some(name) => subcommand.find_subcommand_mut(name)?.clone(),
        None => subcommand.clone(),
    };
    Some(target.render_help().to_string())
}
