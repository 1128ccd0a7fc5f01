//! A recording kept in the SQLite store replays: the replay row names the stored session by
//! id, reads it through the session persistence seam, and the recorded bash call runs for real.

use serde_json::Value;

use super::sessions_sqlite::{OVERLAY, SQLITE_ID, sqlite_args, sqlite_sandbox};
use super::support::Run;

/// A patch that replays stored session `id` instead of calling DeepSeek.
fn replay_stored(id: &str) -> String {
    format!(
        "
- id: llm-deepseek
  disabled: true
- insert:
    - id: llm-replay
      name: dsh-llm-replay
      inject: [sessionPersistence]
      config:
        sessionId: {id}
"
    )
}

#[test]
fn a_session_stored_in_sqlite_replays_a_real_turn() {
    let sandbox = sqlite_sandbox();
    sandbox.write("work/replay-stored.patch.yml", &replay_stored(SQLITE_ID));
    let mut command = sandbox.command(&[
        "--profile",
        "headless",
        "--patch",
        OVERLAY,
        "--patch",
        "replay-stored.patch.yml",
        "--output",
        "json",
        "run the demo",
    ]);
    command
        .env_remove("DEEPSEEK_API_KEY")
        .env("DEEPSEEK_BASE_URL", "http://127.0.0.1:9");
    let done = Run::from(command.output().unwrap());
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let result: Value = serde_json::from_str(done.stdout.trim()).unwrap();
    assert_eq!(
        result["text"], "Done. The last command printed: sqlite-run\n/srv/dsh-demo\n",
        "{result}"
    );

    // The new session went into the same database; its bash call ran here.
    let id = result["sessionId"].as_str().unwrap();
    assert_ne!(id, SQLITE_ID);
    let export = sandbox.run(&sqlite_args(&["export", id]));
    assert_eq!(export.code, Some(0), "{}", export.stderr);
    let output = export
        .stdout
        .lines()
        .skip(1)
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .find(|event| event["type"] == "tool/result")
        .map(|event| {
            event["data"]["message"]["content"][0]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .unwrap();
    let work = sandbox.work().canonicalize().unwrap();
    assert!(
        output.starts_with(&format!("sqlite-run\n{}\n", work.display())),
        "{output}"
    );
}
