//! The grammar of `dsh sessions`, with the one rule of `convert` clap's derive cannot state.

use std::path::PathBuf;

use clap::CommandFactory;
use clap::Subcommand;
use clap::ValueEnum;
use clap::builder::NonEmptyStringValueParser;
use clap::error::ErrorKind;

use super::cli::Cli;
use super::{UsageError, usage};

pub(super) const SESSIONS_EXAMPLES: &str = "\
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

/// `convert` takes `--path` only with `--to sqlite` and `--root` only with `--to jsonl`
/// (a condition clap's derive cannot state); the error reads like clap's own.
pub(super) fn check_convert(action: &SessionsAction) -> Result<(), UsageError> {
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
