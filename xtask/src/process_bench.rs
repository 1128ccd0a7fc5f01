//! Whole-process measurements of the `dsh` binary: wall time and peak RSS, compared with
//! the figures the issues give for dsh 0.1.1 on the same kind of machine.

use std::path::Path;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use nix::sys::resource::UsageWho;
use nix::sys::resource::getrusage;

use crate::report;

struct Case {
    name: &'static str,
    args: &'static [&'static str],
    /// dsh 0.1.1's figure, as the issue states it.
    baseline: &'static str,
    wall_target: Duration,
    rss_target_kib: i64,
}

/// Replaced by the benchmark's `DSH_HOME` in case arguments.
const HOME: &str = "{home}";

/// The long session the load cases open: 1,000 realistic 33-event turns plus a 7-event
/// preamble (33,007 events), as `write_long_session` writes it.
const LONG_SESSION: &str = "long-session";

const CASES: &[Case] = &[
    Case {
        name: "dsh --profile web --dump-config",
        args: &["--profile", "web", "--dump-config"],
        baseline: "dsh 0.1.1: 0.13-0.16 s, 64 MB",
        wall_target: Duration::from_millis(15),
        rss_target_kib: 10 * 1024,
    },
    Case {
        name: "dsh --profile headless --dump-config",
        args: &["--profile", "headless", "--dump-config"],
        baseline: "dsh 0.1.1: 0.13-0.16 s, 64 MB",
        wall_target: Duration::from_millis(15),
        rss_target_kib: 10 * 1024,
    },
    // The 60 ms is for the load itself, measured in process by the criterion bench
    // `load_33007_events`; a fresh `dsh` process also boots, faults in a cold heap and exits,
    // so the whole command gets 20 ms more. The memory target is the issue's.
    Case {
        name: "dsh sessions verify (33,007 events, zstd)",
        args: &["sessions", "verify", LONG_SESSION],
        baseline: "dsh 0.1.1 load: 824 ms, ~250 MB",
        wall_target: Duration::from_millis(80),
        rss_target_kib: 60 * 1024,
    },
    Case {
        name: "dsh sessions verify (33,007 events, raw)",
        args: &[
            "sessions",
            "--patch",
            "{home}/raw.patch.yml",
            "verify",
            LONG_SESSION,
        ],
        baseline: "dsh 0.1.1 load: 676 ms, ~250 MB",
        wall_target: Duration::from_millis(80),
        rss_target_kib: 60 * 1024,
    },
    // The SQLite issue's load target is 80 ms in process; the whole command gets 20 ms more.
    Case {
        name: "dsh sessions verify (33,007 events, SQLite)",
        args: &[
            "sessions",
            "--patch",
            "{home}/sqlite.patch.yml",
            "verify",
            LONG_SESSION,
        ],
        baseline: "dsh 0.1.1 load: 817 ms",
        wall_target: Duration::from_millis(100),
        rss_target_kib: 60 * 1024,
    },
    // From exec to the first successful API answer: boot, bind, the URL line (printed once
    // the tree has settled), then `GET /api/health` with the printed token. The server is
    // stopped with SIGTERM after each run.
    Case {
        name: "dsh web --no-open (to first HTTP 200)",
        args: &["web", "--no-open", "--port", "0"],
        baseline: "dsh 0.1.1: plugin tree boots in ~1 s",
        wall_target: Duration::from_millis(50),
        rss_target_kib: 25 * 1024,
    },
    // A whole agent turn: boot, two model requests to a loopback fake answering at once,
    // one confined bash call, the session written and flushed, exit.
    Case {
        name: "dsh --profile headless (1 bash call)",
        args: &["--profile", "headless", "print a word with bash"],
        baseline: "dsh 0.1.1: 0.98-1.8 s, 175-178 MB",
        wall_target: Duration::from_millis(60),
        rss_target_kib: 25 * 1024,
    },
];

/// Runs each case `runs` times with a private `DSH_HOME` and prints the figures. `writer` is
/// the `write_long_session` example, which stores the long session the load cases open.
pub fn run(binary: &Path, writer: &Path, runs: usize, filter: &str) -> Result<(), String> {
    let home = std::env::temp_dir().join(format!("dsh-bench-{}", std::process::id()));
    let outcome = write_sessions(writer, &home)
        .and_then(|()| convert_to_sqlite(binary, &home))
        .and_then(|()| run_cases(binary, runs, &home, filter));
    let _ = std::fs::remove_dir_all(&home);
    outcome
}

/// Writes the long session twice under `home`: zstd in the default store, raw JSONL in a
/// second store that `raw.patch.yml` selects.
fn write_sessions(writer: &Path, home: &Path) -> Result<(), String> {
    for (root, compression) in [("sessions", "zstd"), ("raw-sessions", "none")] {
        let status = Command::new(writer)
            .arg(home.join(root))
            .arg(compression)
            .status()
            .map_err(|error| format!("cannot run {}: {error}", writer.display()))?;
        if !status.success() {
            return Err(format!("{} failed: {status}", writer.display()));
        }
    }
    let patch = format!(
        "- id: session-persistence-jsonl\n  config:\n    root: {}\n    compression: none\n",
        home.join("raw-sessions").display()
    );
    std::fs::write(home.join("raw.patch.yml"), patch).map_err(|error| error.to_string())
}

/// Copies the long session into `$DSH_HOME/sessions.sqlite` with `dsh sessions convert`, and
/// puts the shipped overlay that selects it beside it as `sqlite.patch.yml`.
fn convert_to_sqlite(binary: &Path, home: &Path) -> Result<(), String> {
    let status = Command::new(binary)
        .args(["sessions", "convert", "--to", "sqlite"])
        .env("DSH_HOME", home)
        .stdout(Stdio::null())
        .status()
        .map_err(|error| format!("cannot run {}: {error}", binary.display()))?;
    if !status.success() {
        return Err(format!("dsh sessions convert --to sqlite failed: {status}"));
    }
    let overlay = crate::workspace_root().join("profiles/examples/sqlite.patch.yml");
    std::fs::copy(&overlay, home.join("sqlite.patch.yml"))
        .map(drop)
        .map_err(|error| format!("cannot copy {}: {error}", overlay.display()))
}

fn run_cases(binary: &Path, runs: usize, home: &Path, filter: &str) -> Result<(), String> {
    report("");
    report(&format!(
        "whole-process measurements ({runs} runs each, after one warm-up run)"
    ));
    let mut missed = Vec::new();
    for case in CASES.iter().filter(|case| case.name.contains(filter)) {
        let (median, p90, peak) = measure_in_fresh_process(binary, runs, home, case.args)?;
        let verdict = if median <= case.wall_target && peak <= case.rss_target_kib {
            "ok"
        } else {
            "MISSED"
        };
        report(&format!(
            "  {:<40} median {median:>9.2?}  p90 {p90:>9.2?}  peak RSS {:>6.1} MiB  \
             (target < {:?}, < {} MiB; {})  {verdict}",
            case.name,
            peak as f64 / 1024.0,
            case.wall_target,
            case.rss_target_kib / 1024,
            case.baseline,
        ));
        if verdict != "ok" {
            missed.push(case.name);
        }
    }
    if missed.is_empty() {
        Ok(())
    } else {
        Err(format!("targets missed: {}", missed.join(", ")))
    }
}

/// The hidden task that does the measuring, in a process whose only children are the runs
/// of `dsh` (so the children's peak RSS is theirs, not cargo's or rustc's).
pub const MEASURE: &str = "measure-process";

/// Runs [`MEASURE`] in a fresh `xtask` process and reads back median, p90 and peak RSS.
fn measure_in_fresh_process(
    binary: &Path,
    runs: usize,
    home: &Path,
    args: &[&str],
) -> Result<(Duration, Duration, i64), String> {
    let me = std::env::current_exe().map_err(|error| format!("cannot find xtask: {error}"))?;
    let model = crate::bench_model::start()?;
    let output = Command::new(me)
        .env("DEEPSEEK_BASE_URL", model)
        .env("DEEPSEEK_API_KEY", "sk-bench")
        .arg(MEASURE)
        .arg(runs.to_string())
        .arg(home)
        .arg(binary)
        .args(args)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|error| format!("cannot run the measuring process: {error}"))?;
    if !output.status.success() {
        return Err("the measuring process failed".to_owned());
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let fields: Vec<u64> = text
        .split_whitespace()
        .filter_map(|field| field.parse().ok())
        .collect();
    match fields.as_slice() {
        [median, p90, peak] => Ok((
            Duration::from_nanos(*median),
            Duration::from_nanos(*p90),
            i64::try_from(*peak).unwrap_or(i64::MAX),
        )),
        _ => Err(format!("unexpected measurement output: {text}")),
    }
}

/// `measure-process <runs> <home> <binary> <args...>`: one warm-up run (which also scaffolds
/// the profile, as a user's first run does), then `runs` timed runs; prints
/// `<median ns> <p90 ns> <peak RSS KiB>`.
pub fn measure(args: &[String]) -> Result<(), String> {
    let [runs, home, binary, rest @ ..] = args else {
        return Err(format!("usage: {MEASURE} <runs> <home> <binary> <args...>"));
    };
    let runs: usize = runs.parse().map_err(|_| format!("bad run count {runs}"))?;
    let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
    let (binary, home) = (Path::new(binary), Path::new(home));
    spawn(binary, &rest, home)?;
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        samples.push(spawn(binary, &rest, home)?);
    }
    let (median, p90) = percentiles(&mut samples);
    let peak = getrusage(UsageWho::RUSAGE_CHILDREN)
        .map(|usage| usage.max_rss())
        .map_err(|error| format!("getrusage: {error}"))?;
    use std::io::Write as _;
    writeln!(
        std::io::stdout(),
        "{} {} {peak}",
        median.as_nanos(),
        p90.as_nanos()
    )
    .map_err(|error| error.to_string())
}

fn spawn(binary: &Path, args: &[&str], home: &Path) -> Result<Duration, String> {
    let home_text = home.display().to_string();
    let args: Vec<String> = args
        .iter()
        .map(|arg| arg.replace(HOME, &home_text))
        .collect();
    if args.first().is_some_and(|first| first == "web") {
        return serve_once(binary, &args, home);
    }
    let started = Instant::now();
    let status = Command::new(binary)
        .args(&args)
        .env("DSH_HOME", home)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|error| format!("cannot run {}: {error}", binary.display()))?;
    let elapsed = started.elapsed();
    if !status.success() {
        return Err(format!(
            "{} {} failed: {status}",
            binary.display(),
            args.join(" ")
        ));
    }
    Ok(elapsed)
}

/// Median and 90th percentile of `samples`.
fn percentiles(samples: &mut [Duration]) -> (Duration, Duration) {
    samples.sort_unstable();
    let at = |fraction: f64| {
        let index = ((samples.len() as f64 - 1.0) * fraction).round() as usize;
        samples.get(index).copied().unwrap_or_default()
    };
    (at(0.5), at(0.9))
}

/// Starts `dsh web`, waits for its URL line, asks `GET /api/health` with the printed token,
/// and returns the time from exec to the `200`; then stops the server.
fn serve_once(binary: &Path, args: &[String], home: &Path) -> Result<Duration, String> {
    use std::io::{BufRead, BufReader, Read, Write};
    let started = Instant::now();
    let mut child = Command::new(binary)
        .args(args)
        .env("DSH_HOME", home)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|error| format!("cannot run {}: {error}", binary.display()))?;
    let answered = (|| {
        let stdout = child
            .stdout
            .take()
            .ok_or("dsh web: its stdout was not captured")?;
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .map_err(|error| format!("dsh web: reading its URL line: {error}"))?;
        let (authority, token) =
            web_url(&line).ok_or_else(|| format!("dsh web printed {line:?}, not its URL line"))?;
        let health = |error: std::io::Error| format!("GET /api/health at {authority}: {error}");
        let mut stream = std::net::TcpStream::connect(authority).map_err(health)?;
        write!(
            stream,
            "GET /api/health HTTP/1.1\r\nHost: {authority}\r\nx-dsh-token: {token}\r\n\
             Connection: close\r\n\r\n"
        )
        .map_err(health)?;
        let mut status = [0_u8; 12];
        stream.read_exact(&mut status).map_err(health)?;
        let elapsed = started.elapsed();
        if &status[9..12] == b"200" {
            Ok(elapsed)
        } else {
            Err(format!(
                "GET /api/health answered {}",
                String::from_utf8_lossy(&status)
            ))
        }
    })();
    stop(&mut child);
    answered
}

/// The authority and token of a `dsh web: http://<authority>/#token=<token>` line.
pub(crate) fn web_url(line: &str) -> Option<(&str, &str)> {
    line.trim()
        .strip_prefix("dsh web: http://")?
        .split_once("/#token=")
}

/// SIGTERM, then SIGKILL if the server has not exited within 5 s.
pub(crate) fn stop(child: &mut std::process::Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
}
