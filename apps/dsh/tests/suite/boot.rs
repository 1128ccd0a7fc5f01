//! Booting a profile: rows without a built plugin fail loudly; a tree that boots runs until a
//! signal.

use std::time::Duration;
use std::time::Instant;

use pretty_assertions::assert_eq;

use super::support::Run;
use super::support::Sandbox;

#[test]
fn booting_rows_whose_plugins_are_not_built_fails_naming_each_row_and_plugin() {
    let sandbox = Sandbox::new();
    let patch = sandbox.write(
        "work/mystery.yml",
        "- insert:\n    - id: mystery\n      name: dsh-mystery\n    - id: riddle\n      name: dsh-riddle\n",
    );
    let patch = patch.display().to_string();
    let run = sandbox.run(&["--profile", "headless", "--patch", &patch, "hello"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .starts_with("dsh: plugin tree failed to load: 2 problems with rows:\n"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("row \"session\""), "{}", run.stderr);
    for missing in [
        "  row \"mystery\": plugin \"dsh-mystery\" is not built into this dsh\n",
        "  row \"riddle\": plugin \"dsh-riddle\" is not built into this dsh\n",
    ] {
        assert!(run.stderr.contains(missing), "{}", run.stderr);
    }
}

fn wait_with_timeout(mut child: std::process::Child, limit: Duration) -> Run {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < limit,
            "dsh did not exit within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Run::from(child.wait_with_output().unwrap())
}

fn signal(child: &std::process::Child, name: &str) {
    // bash's builtin `kill`, so the test needs no procps.
    let status = std::process::Command::new("bash")
        .args(["-c", &format!("kill -{name} {}", child.id())])
        .status()
        .unwrap();
    assert!(status.success());
}

/// A profile with no rows boots (the audit passes), then runs until a signal. Returns once
/// the launcher has logged that it booted, so the signal handlers are in place.
fn start_empty_profile(sandbox: &Sandbox) -> std::process::Child {
    sandbox.write("home/profiles/empty/profile.yml", "bundles: []\n");
    let mut child = sandbox
        .command(&["--profile", "empty"])
        .env("DSH_LOG", "dsh=debug")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let booted = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|line| line.contains("booted"));
    assert!(booted, "dsh exited before it booted");
    // Keep draining stderr so the child never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    child
}

#[test]
fn a_booted_tree_exits_0_on_sigterm() {
    let sandbox = Sandbox::new();
    let child = start_empty_profile(&sandbox);
    signal(&child, "TERM");
    let run = wait_with_timeout(child, Duration::from_secs(10));
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), ""));
}

#[test]
fn a_booted_tree_exits_130_on_sigint() {
    let sandbox = Sandbox::new();
    let child = start_empty_profile(&sandbox);
    signal(&child, "INT");
    let run = wait_with_timeout(child, Duration::from_secs(10));
    assert_eq!((run.code, run.stdout.as_str()), (Some(130), ""));
}
