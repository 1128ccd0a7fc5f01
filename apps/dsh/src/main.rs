//! `dsh`: boot a profile of plugins, or print its composition.

mod args;
mod builtins;
mod catalog;
mod dump;
mod output;
mod prepare;
mod run;
mod sessions;
mod subset;
mod tools;

use std::process::ExitCode;

use args::Invocation;

/// mimalloc: loading a long session allocates and frees hundreds of thousands of small JSON
/// nodes, where it is markedly faster than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    let invocation = match args::parse(argv) {
        Ok(invocation) => invocation,
        Err(error) => {
            output::stderr_line(&error.0);
            return ExitCode::from(1);
        }
    };
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
    match outcome {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(error) => {
            output::diagnostic(&format!("{error:#}"));
            ExitCode::from(1)
        }
    }
}

/// Logs go to stderr, filtered by `DSH_LOG` (or `RUST_LOG`), for example `DSH_LOG=debug` or
/// `DSH_LOG=dsh_kernel=trace`; the default shows warnings only.
fn init_logging() {
    let filter = std::env::var("DSH_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .ok()
        .and_then(|value| value.parse::<tracing_subscriber::filter::Targets>().ok())
        .unwrap_or_else(|| {
            tracing_subscriber::filter::Targets::new().with_default(tracing::Level::WARN)
        });
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let _ = tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .with(filter)
        .try_init();
}
