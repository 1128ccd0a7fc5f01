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

use std::ffi::OsString;
use std::path::PathBuf;

use clap::CommandFactory;
use clap::Parser;
use clap::Subcommand;
use clap::ValueEnum;
use clap::builder::NonEmptyStringValueParser;
use clap::error::ErrorKind;

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
struct Cli {
    /// The profile to boot (templates: headless, web; others from $DSH_HOME/profiles/<name>).
    #[arg(long, value_name = "name")]
    profile: Option<String>,
    #[command(flatten)]
    launch: LaunchFlags,
    #[command(subcommand)]
    command: Option<Alias>,
    /// Arguments for the booted profile's app (see: dsh --profile <name> --help).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "args"
    )]
    args: Vec<String>,
}

#[derive(clap::Args, Debug)]
struct LaunchFlags {
    /// Extra patch-list layer applied after the profile's own layers (repeatable).
    #[arg(long, value_name = "path")]
    patch: Vec<String>,
    /// Print the composed profile tree and exit.
    #[arg(long)]
    dump_config: bool,
    /// Print the profile tree without its user layers or --patch files and exit.
    #[arg(long)]
    dump_default_config: bool,
}

#[derive(Subcommand, Debug)]
enum Alias {
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

const SESSIONS_EXAMPLES: &str = "\
Examples:
  dsh sessions list                        sessions of the headless profile's store
  dsh sessions list --json                 one JSON object per session and line
  dsh sessions show session-1              a readable transcript
  dsh sessions export session-1 > s.jsonl  the log as raw, unpacked dsh JSONL
  dsh sessions verify                      check every stored log; exit 1 on a bad one
  dsh sessions convert --to sqlite         copy every session into $DSH_HOME/sessions.sqlite
  dsh sessions convert --to jsonl --root ./copy --id session-1
                                           copy one session into JSONL files under ./copy
  dsh sessions --patch profiles/examples/sqlite.patch.yml convert --to jsonl
                                           copy the SQLite store into $DSH_HOME/sessions";

const TOOLS_EXAMPLES: &str = "\
Examples:
  dsh tools list                           the headless profile's tools, one line each
  dsh tools list --json                    every tool with its full parameter schema
  dsh tools call bash '{\"command\":\"ls\",\"description\":\"List files\"}'
                                           run one call; print what the model would read";

/// What `dsh tools` does.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum ToolsAction {
    /// List the tools: names and one-line descriptions.
    List {
        /// One JSON object per tool and line: name, description, parameters.
        #[arg(long)]
        json: bool,
    },
    /// Run one call through the whole tool pipeline, outside any model turn, and print the
    /// text the model would receive. Exit 0 when the call produced a result (a nonzero
    /// shell exit is a result), 1 when the tool failed.
    Call {
        /// The tool name.
        name: String,
        /// The arguments, as one JSON object.
        #[arg(value_name = "json args")]
        arguments: String,
    },
}

/// What `dsh sessions` does.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum SessionsAction {
    /// One line per stored session: id, created, cwd, events.
    List {
        /// One JSON object per line instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// A readable transcript of one session.
    Show {
        /// The session id.
        id: String,
    },
    /// The canonical log: the header line, then every event as one compact JSON line.
    Export {
        /// The session id.
        id: String,
    },
    /// Validate one session, or every session, without changing anything.
    Verify {
        /// The session id (default: all).
        id: Option<String>,
    },
    /// Copy sessions into a store of another format and verify each copy.
    ///
    /// Reads the profile's store and writes only the destination; a session the destination
    /// already holds is skipped, never overwritten.
    Convert {
        /// The destination's format.
        #[arg(long, value_enum, value_name = "format")]
        to: StoreFormat,
        /// With --to sqlite: the database file (default: $DSH_HOME/sessions.sqlite).
        #[arg(long, value_name = "file")]
        path: Option<PathBuf>,
        /// With --to jsonl: the sessions root (default: $DSH_HOME/sessions).
        #[arg(long, value_name = "dir")]
        root: Option<PathBuf>,
        /// Copy only this session (default: every session of the profile's store).
        #[arg(long, value_name = "id", value_parser = NonEmptyStringValueParser::new())]
        id: Option<String>,
    },
}

/// The format of the store `dsh sessions convert` writes.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreFormat {
    /// One SQLite database (dsh 0.1's schema 17).
    Sqlite,
    /// dsh 0.1's JSONL logs in zstd frames, one directory per session.
    Jsonl,
}

impl StoreFormat {
    /// The value as written after `--to`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Jsonl => "jsonl",
        }
    }

    /// The location flag that goes with this format.
    fn location_flag(self) -> &'static str {
        match self {
            Self::Sqlite => "--path <file>",
            Self::Jsonl => "--root <dir>",
        }
    }
}

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

impl LaunchFlags {
    fn is_empty(&self) -> bool {
        self.patch.is_empty() && !self.dump_config && !self.dump_default_config
    }
}

fn resolve(
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
fn subcommand_profile(
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

/// `convert` takes `--path` only with `--to sqlite` and `--root` only with `--to jsonl`
/// (a condition clap's derive cannot state); the error reads like clap's own.
fn check_convert(action: &SessionsAction) -> Result<(), UsageError> {
    let SessionsAction::Convert { to, path, root, .. } = action else {
        return Ok(());
    };
    let misplaced = match to {
        StoreFormat::Sqlite => root.is_some().then_some(StoreFormat::Jsonl),
        StoreFormat::Jsonl => path.is_some().then_some(StoreFormat::Sqlite),
    };
    let Some(other) = misplaced else {
        return Ok(());
    };
    let message = format!(
        "the argument '{}' cannot be used with '--to {}'",
        other.location_flag(),
        to.name()
    );
    let mut command = Cli::command();
    command.build();
    let rendered = command
        .find_subcommand_mut("sessions")
        .and_then(|sessions| sessions.find_subcommand_mut("convert"))
        .map_or_else(
            || format!("error: {message}"),
            |convert| {
                convert
                    .error(ErrorKind::ArgumentConflict, &message)
                    .render()
                    .to_string()
            },
        );
    Err(usage(rendered.trim_end()))
}

/// The launcher's own help.
fn help() -> String {
    Cli::command().render_help().to_string()
}

/// `dsh [launcher flags] <sessions|tools> [flags] [action] (-h | --help)`: the help of the
/// subcommand or of its action. (The launcher hands `-h` to apps, so clap's own help flag is
/// off.)
fn subcommand_help(argv: &[OsString]) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn parse_args(args: &[&str]) -> Result<Invocation, UsageError> {
        parse(
            std::iter::once("dsh")
                .chain(args.iter().copied())
                .map(OsString::from),
        )
    }

    fn run(profile: &str, patches: &[&str], args: &[&str]) -> Invocation {
        Invocation::Run {
            profile: profile.to_owned(),
            patches: patches.iter().map(|p| (*p).to_owned()).collect(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        }
    }

    #[test]
    fn launcher_flags_end_at_the_first_unknown_token() {
        assert_eq!(
            parse_args(&["--profile", "headless", "run the tests"]).unwrap(),
            run("headless", &[], &["run the tests"])
        );
        assert_eq!(
            parse_args(&["--profile", "web", "--port", "0", "--patch", "x.yml"]).unwrap(),
            run("web", &[], &["--port", "0", "--patch", "x.yml"])
        );
        assert_eq!(
            parse_args(&[
                "--profile=tui",
                "--patch",
                "a.yml",
                "--patch=b.yml",
                "--resume",
                "abc"
            ])
            .unwrap(),
            run("tui", &["a.yml", "b.yml"], &["--resume", "abc"])
        );
        assert_eq!(
            parse_args(&["--profile", "web", "-h"]).unwrap(),
            run("web", &[], &["-h"])
        );
        assert_eq!(
            parse_args(&["--profile", "headless", "help", "me"]).unwrap(),
            run("headless", &[], &["help", "me"])
        );
    }

    #[test]
    fn one_double_dash_is_consumed() {
        assert_eq!(
            parse_args(&["--profile", "headless", "--", "--dump-config"]).unwrap(),
            run("headless", &[], &["--dump-config"])
        );
        assert_eq!(
            parse_args(&["--profile", "headless", "--", "--"]).unwrap(),
            run("headless", &[], &["--"])
        );
    }

    #[test]
    fn web_is_an_alias_of_profile_web() {
        assert_eq!(
            parse_args(&["web", "--patch", "p.yml", "--no-open"]).unwrap(),
            run("web", &["p.yml"], &["--no-open"])
        );
        assert_eq!(
            parse_args(&["web", "--dump-config"]).unwrap(),
            Invocation::Dump {
                profile: "web".to_owned(),
                default_only: false,
                patches: Vec::new()
            }
        );
    }

    #[test]
    fn dumps() {
        assert_eq!(
            parse_args(&["--profile", "web", "--dump-config", "--patch", "x.yml"]).unwrap(),
            Invocation::Dump {
                profile: "web".to_owned(),
                default_only: false,
                patches: vec!["x.yml".to_owned()]
            }
        );
        assert_eq!(
            parse_args(&["--profile", "web", "--dump-default-config"]).unwrap(),
            Invocation::Dump {
                profile: "web".to_owned(),
                default_only: true,
                patches: Vec::new()
            }
        );
    }

    #[test]
    fn help_and_version_print() {
        let Invocation::Print(help) = parse_args(&["-h"]).unwrap() else {
            panic!()
        };
        assert!(help.contains("--profile <name>"), "{help}");
        assert!(help.contains("Examples:"), "{help}");
        let Invocation::Print(version) = parse_args(&["-V"]).unwrap() else {
            panic!()
        };
        assert_eq!(version.trim(), format!("dsh {}", env!("CARGO_PKG_VERSION")));
    }

    #[test]
    fn sessions_default_to_the_headless_profile() {
        assert_eq!(
            parse_args(&["sessions", "list", "--json"]).unwrap(),
            Invocation::Sessions {
                profile: "headless".into(),
                patches: vec![],
                action: SessionsAction::List { json: true },
            }
        );
        assert_eq!(
            parse_args(&[
                "--profile",
                "web",
                "--patch",
                "a.yml",
                "sessions",
                "--patch",
                "b.yml",
                "show",
                "s1"
            ])
            .unwrap(),
            Invocation::Sessions {
                profile: "web".into(),
                patches: vec!["a.yml".into(), "b.yml".into()],
                action: SessionsAction::Show { id: "s1".into() },
            }
        );
        assert_eq!(
            parse_args(&["sessions", "--profile", "web", "verify"]).unwrap(),
            Invocation::Sessions {
                profile: "web".into(),
                patches: vec![],
                action: SessionsAction::Verify { id: None },
            }
        );
        for args in [
            &["sessions", "--help"][..],
            &["sessions", "-h"],
            &["--profile", "web", "sessions", "list", "--help"],
        ] {
            let Ok(Invocation::Print(text)) = parse_args(args) else {
                panic!("{args:?}")
            };
            assert!(text.contains("Usage: dsh sessions"), "{text}");
        }
        let Ok(Invocation::Print(text)) = parse_args(&["sessions", "--help"]) else {
            panic!()
        };
        assert!(
            text.contains("dsh sessions verify"),
            "the examples are shown: {text}"
        );
        assert!(parse_args(&["sessions", "show"]).is_err());
        assert!(parse_args(&["sessions"]).is_err());
    }

    #[test]
    fn sessions_convert_takes_a_format_a_location_and_an_id() {
        let convert =
            |to, path: Option<&str>, root: Option<&str>, id: Option<&str>| Invocation::Sessions {
                profile: "headless".into(),
                patches: vec!["sqlite.yml".into()],
                action: SessionsAction::Convert {
                    to,
                    path: path.map(PathBuf::from),
                    root: root.map(PathBuf::from),
                    id: id.map(str::to_owned),
                },
            };
        let cases: [(&[&str], Invocation); 4] = [
            (
                &["convert", "--to", "sqlite"],
                convert(StoreFormat::Sqlite, None, None, None),
            ),
            (
                &[
                    "convert",
                    "--to",
                    "sqlite",
                    "--path",
                    "db.sqlite",
                    "--id",
                    "s1",
                ],
                convert(StoreFormat::Sqlite, Some("db.sqlite"), None, Some("s1")),
            ),
            (
                &["convert", "--to=jsonl", "--root", "/srv/copy"],
                convert(StoreFormat::Jsonl, None, Some("/srv/copy"), None),
            ),
            (
                &["convert", "--id", "s1", "--to", "jsonl"],
                convert(StoreFormat::Jsonl, None, None, Some("s1")),
            ),
        ];
        for (rest, expected) in cases {
            let args: Vec<&str> = ["sessions", "--patch", "sqlite.yml"]
                .into_iter()
                .chain(rest.iter().copied())
                .collect();
            assert_eq!(parse_args(&args).unwrap(), expected, "{rest:?}");
        }
        let Ok(Invocation::Print(help)) = parse_args(&["sessions", "convert", "--help"]) else {
            panic!()
        };
        assert!(
            help.contains("Usage: dsh sessions convert [OPTIONS] --to <format>"),
            "{help}"
        );
        assert!(help.contains("[possible values: sqlite, jsonl]"), "{help}");
        let Ok(Invocation::Print(help)) = parse_args(&["sessions", "--help"]) else {
            panic!()
        };
        assert!(help.contains("dsh sessions convert --to sqlite"), "{help}");
    }

    #[test]
    fn sessions_convert_refuses_the_other_formats_location() {
        let cases: [(&[&str], &str); 5] = [
            (
                &["sessions", "convert"],
                "error: the following required arguments were not provided:\n  --to <format>",
            ),
            (
                &["sessions", "convert", "--to", "sqlite", "--root", "dir"],
                "error: the argument '--root <dir>' cannot be used with '--to sqlite'\n\n\
                 Usage: dsh sessions convert [OPTIONS] --to <format>",
            ),
            (
                &[
                    "sessions",
                    "convert",
                    "--to",
                    "jsonl",
                    "--path",
                    "db.sqlite",
                ],
                "error: the argument '--path <file>' cannot be used with '--to jsonl'\n\n\
                 Usage: dsh sessions convert [OPTIONS] --to <format>",
            ),
            (
                &["sessions", "convert", "--to", "yaml"],
                "error: invalid value 'yaml' for '--to <format>'",
            ),
            (
                &["sessions", "convert", "--to", "sqlite", "--id", ""],
                "error: a value is required for '--id <id>' but none was supplied",
            ),
        ];
        for (args, expected) in cases {
            let error = parse_args(args).unwrap_err().0;
            assert!(error.starts_with(expected), "{args:?}: {error}");
        }
    }

    #[test]
    fn rejected_inputs() {
        let cases: &[(&[&str], &str)] = &[
            (&[], "error: --profile <name> is required"),
            (&["task"], "error: --profile <name> is required"),
            (&["--bogus"], "error: --profile <name> is required"),
            (&["--profile", ""], "error: --profile needs a name"),
            (
                &["--profile", "web", "--patch="],
                "error: --patch needs a path",
            ),
            (
                &["--profile", "web", "--dump-config", "--dump-default-config"],
                "error: --dump-config and --dump-default-config are mutually exclusive",
            ),
            (
                &["--profile", "web", "--dump-config", "extra"],
                "error: config dumps take no app arguments, got \"extra\"",
            ),
            (
                &[
                    "--profile",
                    "web",
                    "--dump-default-config",
                    "--patch",
                    "x.yml",
                ],
                "error: --dump-default-config prints the bundle layers and takes no --patch",
            ),
            (
                &["--profile", "x", "web"],
                "error: web takes none of parent --profile, --patch, --dump-config, or --dump-default-config",
            ),
        ];
        for (args, expected) in cases {
            assert_eq!(parse_args(args).unwrap_err().0, *expected, "{args:?}");
        }
        assert!(
            parse_args(&["plugin", "--profile", "x", "add", "y"])
                .unwrap_err()
                .0
                .contains("dsh plugin")
        );
        assert!(parse_args(&["--profile"]).is_err());
    }
}
