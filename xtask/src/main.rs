//! Project tasks, run as `cargo xtask <task>`:
//!
//! - `ci`: what CI runs: rustfmt check, clippy with warnings denied, the layering check, every
//!   test (nextest when installed, else `cargo test`), doc tests, `cargo deny check`, and the
//!   browser tests.
//! - `bench`: the criterion benchmarks, then whole-process measurements of the `dsh` binary.
//! - `deny`: `cargo deny check` alone.
//! - `e2e`: the browser tests of `dsh web` (Playwright and Debian's Chromium).
//! - `layers`: the layering rules of the workspace (floors, roles, families, the crate table of
//!   `docs/architecture.md`, file lengths, `#[allow]` count).

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::ExitCode;
use std::time::Instant;

mod bench_model;
mod e2e;
mod layers;
mod process_bench;
mod scripted_model;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (task, rest) = args
        .split_first()
        .map_or((None, &[][..]), |(task, rest)| (Some(task.as_str()), rest));
    let result = match task {
        Some("ci") => ci(),
        Some("bench") => bench(rest),
        Some("deny") => deny(),
        Some("e2e") => e2e::run(),
        Some("layers") => layers::run(),
        Some(process_bench::MEASURE) => process_bench::measure(rest),
        _ => Err(
            "usage: cargo xtask ci | bench [--quick] [--process [filter]] | deny | e2e | layers\n\
             \n  ci      fmt check, clippy -D warnings, layers, tests, doc tests, cargo deny, e2e\
             \n  bench   criterion benchmarks and whole-process dsh measurements\
             \n  deny    cargo deny check (licenses, advisories, bans, sources)\
             \n  e2e     the browser tests of dsh web in headless Chromium\
             \n  layers  floors, roles and families of the crates, the crate table, file sizes"
                .to_owned(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            report(&format!("xtask: {message}"));
            ExitCode::FAILURE
        }
    }
}

fn report(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{line}");
}

pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The cargo that runs this task (`$CARGO`), else `cargo` from `PATH`.
fn cargo_command() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
}

/// Runs `cargo <args>` in the workspace root and fails if it fails.
fn cargo(args: &[&str]) -> Result<(), String> {
    report(&format!("==> cargo {}", args.join(" ")));
    let started = Instant::now();
    let status = cargo_command()
        .args(args)
        .current_dir(workspace_root())
        .status()
        .map_err(|error| format!("cannot run cargo: {error}"))?;
    report(&format!("    ({:.1?})", started.elapsed()));
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed ({status})", args.join(" ")))
    }
}

fn has_cargo_subcommand(name: &str) -> bool {
    cargo_command()
        .args([name, "--version"])
        .output()
        .is_ok_and(|output| output.status.success())
}

fn ci() -> Result<(), String> {
    cargo(&["fmt", "--all", "--", "--check"])?;
    cargo(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--locked",
        "--",
        "-D",
        "warnings",
    ])?;
    layers::run()?;
    if has_cargo_subcommand("nextest") {
        cargo(&[
            "nextest",
            "run",
            "--workspace",
            "--locked",
            "--no-fail-fast",
        ])?;
        cargo(&["test", "--workspace", "--locked", "--doc"])?;
    } else {
        cargo(&["test", "--workspace", "--locked"])?;
    }
    deny()?;
    report("==> cargo xtask e2e");
    e2e::run()
}

fn deny() -> Result<(), String> {
    if !has_cargo_subcommand("deny") {
        return Err(
            "cargo-deny is not installed: cargo install --locked cargo-deny (.ci/run does this)"
                .to_owned(),
        );
    }
    cargo(&["deny", "--locked", "check", "bans", "licenses", "sources"])?;
    // The advisory database is fetched from GitHub; on a machine that reaches only the
    // package registries, say so instead of failing on the network.
    report("==> cargo deny --locked check advisories");
    let output = cargo_command()
        .args(["deny", "--locked", "check", "advisories"])
        .current_dir(workspace_root())
        .output()
        .map_err(|error| format!("cannot run cargo deny: {error}"))?;
    let text = String::from_utf8_lossy(&output.stderr);
    if output.status.success() {
        report("    advisories ok");
        Ok(())
    } else if text.contains("failed to fetch advisory database") {
        report(
            "    advisories NOT CHECKED: the RustSec advisory database cannot be fetched from \
             this machine (no network beyond the package registries)",
        );
        Ok(())
    } else {
        report(&text);
        Err("cargo deny found advisories".to_owned())
    }
}

fn bench(args: &[String]) -> Result<(), String> {
    let quick = args.iter().any(|arg| arg == "--quick");
    // `--process [filter]`: only the whole-process cases (those whose name contains filter).
    let process_only = args.iter().position(|arg| arg == "--process");
    let filter = process_only
        .and_then(|at| args.get(at + 1))
        .filter(|arg| !arg.starts_with("--"))
        .cloned()
        .unwrap_or_default();
    if process_only.is_none() {
        let mut criterion = vec!["bench", "--workspace", "--bench", "*", "--locked", "--"];
        if quick {
            criterion.extend(["--warm-up-time", "1", "--measurement-time", "2"]);
        }
        cargo(&criterion)?;
    }
    cargo(&["build", "--release", "--locked", "-p", "dsh"])?;
    let writer = "write_long_session";
    cargo(&[
        "build",
        "--release",
        "--locked",
        "-p",
        "dsh-persistence-jsonl",
        "--example",
        writer,
    ])?;
    let release = workspace_root().join("target/release");
    let runs = if quick { 20 } else { 100 };
    process_bench::run(
        &release.join("dsh"),
        &release.join("examples").join(writer),
        runs,
        &filter,
    )
}
