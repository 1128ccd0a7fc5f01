//! The offline demo (`profiles/examples/replay.patch.yml`) run from outside the repository:
//! the overlay names its recording relative to itself, so it works from any directory.

use std::path::PathBuf;

use super::headless::replayed_bash_output;
use super::support::{Sandbox, display};

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
    // The recorded bash call ran for real, in the working directory.
    let output = replayed_bash_output(&sandbox, &mut command);
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
