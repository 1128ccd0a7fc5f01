//! The offline demo (`profiles/examples/replay.patch.yml`) run from outside the repository:
//! the overlay names its recording relative to itself, so it works from any directory.

use std::path::PathBuf;

use serde_json::Value;

use super::headless::exported;
use super::support::{Run, Sandbox, display};

/// The shipped replay overlay, as an absolute path.
fn replay_overlay() -> PathBuf {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../profiles/examples/replay.patch.yml"
    );
    std::fs::canonicalize(path).unwrap()
}

/// The recording beside the overlay.
fn recording() -> PathBuf {
    replay_overlay()
        .parent()
        .unwrap()
        .join("replay/session.jsonl")
}

#[test]
fn the_replay_overlay_runs_from_a_directory_outside_the_repository() {
    let sandbox = Sandbox::new();
    let overlay = display(&replay_overlay());
    // The sandbox's working directory is a temporary directory, not the repository.
    let mut command = sandbox.command(&[
        "--profile",
        "headless",
        "--patch",
        &overlay,
        "--output",
        "json",
        "show me where you run",
    ]);
    command
        .env_remove("DEEPSEEK_API_KEY")
        .env("DEEPSEEK_BASE_URL", "http://127.0.0.1:9");
    let done = Run::from(command.output().unwrap());
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let result: Value = serde_json::from_str(done.stdout.trim()).unwrap();
    assert!(
        result["text"]
            .as_str()
            .unwrap()
            .contains("replayed from profiles/examples/replay/session.jsonl"),
        "{result}"
    );
    // The recorded bash call ran for real, in the working directory.
    let log = exported(&sandbox, result["sessionId"].as_str().unwrap());
    let output = log
        .iter()
        .find(|event| event["type"] == "tool/result")
        .map(|event| {
            event["data"]["message"]["content"][0]["content"][0]["text"]
                .as_str()
                .unwrap()
        })
        .unwrap();
    assert!(
        output.starts_with(&format!("{}\n", display(&sandbox.work()))),
        "{output}"
    );
}

#[test]
fn the_dump_shows_the_recording_as_an_absolute_path() {
    let sandbox = Sandbox::new();
    let overlay = display(&replay_overlay());
    let run = sandbox.run(&[
        "--profile",
        "headless",
        "--dump-config",
        "--patch",
        &overlay,
    ]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout
            .contains(&format!("session: {}\n", display(&recording()))),
        "{}",
        run.stdout
    );
}
