//! `dsh`: boot a profile of plugins, or print its composition.

mod args;
mod builtins;
mod catalog;
mod dump;
mod output;
mod prepare;
mod protection;
mod run;
mod secrets;
mod sessions;
mod subset;
mod tools;

use std::process::ExitCode;

use args::Invocation;

/// mimalloc: loading a long session allocates and frees hundreds of thousands of small JSON
/// nodes, where it is markedly faster than the system allocator (its transparent huge pages
/// save a long session's load about 10 ms; other commands turn them off, see
/// [`small_pages`]).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Turns transparent huge pages off for this process: a run is many threads with small
/// heaps, and with the allocator's huge pages each thread's first allocation takes 2 MiB (a
/// headless turn's peak RSS is 24 MiB with them, 13 without). `dsh sessions` keeps them: its
/// large heap loads faster. Commands the confined shell runs get the system's setting back;
/// commands of the unconfined shell inherit it.
fn small_pages() {
    #[cfg(target_os = "linux")]
    if let Err(error) = nix::sys::prctl::set_thp_disable(true) {
        tracing::debug!("cannot turn transparent huge pages off: {error}");
    }
}

/// Gives `dsh sessions` its huge pages back (see [`small_pages`]).
fn huge_pages() {
    #[cfg(target_os = "linux")]
    if let Err(error) = nix::sys::prctl::set_thp_disable(false) {
        tracing::debug!("cannot turn transparent huge pages on: {error}");
    }
}

fn main() -> ExitCode {
    // The confinement runner the sandboxed shell re-executes `dsh` as: it restricts this
    // single thread and execs the command, so it runs before anything else starts.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if argv
        .get(1)
        .is_some_and(|arg| arg == dsh_bash_sandbox::SANDBOX_RUN_SUBCOMMAND)
    {
        let code =
            dsh_bash_sandbox::sandbox_run::sandbox_run_main(argv.get(2..).unwrap_or_default());
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    // After the runner's exit: it hands the command the system's setting itself.
    small_pages();
    // Descriptors the caller left open (`9>>file`) reach no program dsh starts.
    dsh_shell::mark_inherited_close_on_exec(3);
    let invocation = match args::parse(argv) {
        Ok(invocation) => invocation,
        Err(error) => {
            output::stderr_line(&error.0);
            return ExitCode::from(1);
        }
    };
    if matches!(invocation, Invocation::Sessions { .. }) {
        huge_pages();
    }
    if matches!(
        invocation,
        Invocation::Run { .. } | Invocation::Tools { .. }
    ) {
        // Before any thread: credentials leave the start-up environment of a process that
        // runs commands.
        secrets::hide_credentials();
    }
    let outcome = match invocation {
        Invocation::Print(text) => {
            output::stdout(&text);
            Ok(0)
        }
        Invocation::Dump {
            profile,
            default_only,
            patches,
        } => dump::dump(&profile, default_only, &patches).map(|()| 0),
        Invocation::Sessions {
            profile,
            patches,
            action,
        } => {
            init_logging();
            sessions::run(&profile, &patches, &action)
        }
        Invocation::Tools {
            profile,
            patches,
            action,
        } => {
            init_logging();
            tools::run(&profile, &patches, &action)
        }
        Invocation::Run {
            profile,
            patches,
            args,
        } => {
            init_logging();
            run::run(&profile, &patches, args)
        }
    };
    // Every run that may start commands made a spill directory; one nothing spilled into goes.
    dsh_shell::remove_spill_dir_if_empty();
    match outcome {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(error) => {
            output::diagnostic(&format!("{error:#}"));
            ExitCode::from(1)
        }
    }
}

/// Logs go to stderr, filtered by `DSH_LOG` (or `RUST_LOG`), for example `DSH_LOG=debug` or
/// `DSH_LOG=dsh_kernel=trace`; the default shows warnings only. A target directive matches
/// by prefix, so `DSH_LOG=dsh=debug` covers every `dsh_*` crate. Each enabled span prints a
/// line when it opens and one when it closes (with its busy and idle times), so a turn reads
/// as a tree: `turn{..}:step{..}:request{..}: close time.busy=..`. Colours only go to a terminal
/// (and not with `NO_COLOR` set).
fn init_logging() {
    let filter = std::env::var("DSH_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .ok()
        .and_then(|value| value.parse::<tracing_subscriber::filter::Targets>().ok())
        .unwrap_or_else(|| {
            tracing_subscriber::filter::Targets::new().with_default(tracing::Level::WARN)
        });
    // Colours only for a person at a terminal: a log sent to a file or a pipe stays plain text.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    use tracing_subscriber::fmt::format::FmtSpan;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(colour)
                .with_span_events(FmtSpan::NEW | FmtSpan::CLOSE),
        )
        .with(filter)
        .try_init();
}
