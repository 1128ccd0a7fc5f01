//! `dsh-sandbox-run`: the sandbox runner as a program of its own, for this crate's tests and
//! benchmarks (the `dsh` binary runs the same entry point as `dsh __sandbox-run`).

use std::ffi::OsString;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let code = dsh_bash_sandbox::sandbox_run::sandbox_run_main(&args);
    ExitCode::from(u8::try_from(code).unwrap_or(u8::MAX))
}
