//! `dsh sessions` over the SQLite store of `profiles/examples/sqlite.patch.yml`, and
//! `dsh sessions convert` between the SQLite and JSONL stores.
//!
//! The database is dsh 0.1.1's own (`tests/fixtures/dsh-0.1.1/04-sqlite-one-bash`). Read
//! commands go through the read-only guard of the JSONL tests ([`dsh`]: every file under the
//! sandbox keeps its bytes and modification time, and none appears or vanishes, so SQLite's
//! `-wal`/`-shm` files are gone again too). A conversion writes only to its destination,
//! which the tests read back through the other store.

use std::fs::Permissions;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;

use super::sessions::FLOAT_LOG;
use super::sessions::PLUGIN_LOG;
use super::sessions::PROJECT;
use super::sessions::RAW_ID;
use super::sessions::ZSTD_ID;
use super::sessions::assert_canonical_key_order;
use super::sessions::assert_ok;
use super::sessions::drop_last_lines;
use super::sessions::dsh;
use super::sessions::every_command;
use super::sessions::raw_args;
use super::sessions::raw_fixture_text;
use super::sessions::raw_log_sandbox;
use super::sessions::raw_sandbox;
use super::sessions::two_session_raw_sandbox;
use super::sessions::zstd_sandbox;
use super::support::Run;
use super::support::Sandbox;
use super::support::display;

const SQLITE_FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/dsh-0.1.1/04-sqlite-one-bash/sessions.sqlite"
);
pub(super) const SQLITE_ID: &str = "session-ff7d60e8-a48c-41a1-aee4-d75e7b9cd5f1";
const SHIPPED_OVERLAY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../profiles/examples/sqlite.patch.yml"
);
/// Where each sandbox keeps a copy of the shipped overlay, relative to its working directory
/// (as in a checkout of this repository).
pub(super) const OVERLAY: &str = "profiles/examples/sqlite.patch.yml";

// ---------------------------------------------------------------------------------------
// Sandboxes
// ---------------------------------------------------------------------------------------

/// Copies the shipped overlay to `work/profiles/examples/sqlite.patch.yml`.
pub(super) fn add_overlay(sandbox: &Sandbox) {
    let text = std::fs::read_to_string(SHIPPED_OVERLAY).unwrap();
    sandbox.write(&format!("work/{OVERLAY}"), &text);
}

pub(super) fn database(sandbox: &Sandbox) -> PathBuf {
    sandbox.home().join("sessions.sqlite")
}

/// A sandbox with dsh 0.1.1's database at `$DSH_HOME/sessions.sqlite` (private, as dsh
/// creates it) and the overlay.
pub(super) fn sqlite_sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    std::fs::copy(SQLITE_FIXTURE, database(&sandbox)).unwrap();
    std::fs::set_permissions(database(&sandbox), Permissions::from_mode(0o600)).unwrap();
    add_overlay(&sandbox);
    sandbox
}

/// `dsh sessions --patch profiles/examples/sqlite.patch.yml <rest>`.
pub(super) fn sqlite_args<'a>(rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["sessions", "--patch", OVERLAY];
    args.extend_from_slice(rest);
    args
}

/// Reads a database with Python's sqlite3 module: the pragmas, tables and session ids.
fn python_facts(path: &Path) -> Value {
    let script = "\
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(json.dumps({
    'user_version': c.execute('PRAGMA user_version').fetchone()[0],
    'application_id': c.execute('PRAGMA application_id').fetchone()[0],
    'tables': sorted(r[0] for r in c.execute(\"SELECT name FROM sqlite_schema WHERE type = 'table'\")),
    'sessions': [r[0] for r in c.execute('SELECT id FROM sessions ORDER BY created_at, id')],
}))
c.close()
";
    let output = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn schema_17(sessions: &[&str]) -> Value {
    json!({
        "user_version": 17,
        "application_id": 1_146_308_688,
        "tables": ["events", "persistence_state", "sessions"],
        "sessions": sessions,
    })
}

/// The summary line of a conversion.
fn summary(copied: usize, skipped: usize, failed: usize, destination: &str) -> String {
    format!("{copied} copied, {skipped} skipped, {failed} failed; destination: {destination}\n")
}

fn sqlite_destination(path: &Path) -> String {
    format!("SQLite database {}", display(path))
}

fn jsonl_destination(root: &Path) -> String {
    format!("JSONL root {}", display(root))
}

fn assert_exit_1(run: &Run) {
    assert_eq!(
        run.code,
        Some(1),
        "stdout: {}\nstderr: {}",
        run.stdout,
        run.stderr
    );
}

// ---------------------------------------------------------------------------------------
// Reading dsh 0.1.1's database through the overlay
// ---------------------------------------------------------------------------------------

#[test]
fn the_overlay_reads_dsh_0_1_1s_database_without_changing_it() {
    let sandbox = sqlite_sandbox();
    let runs = every_command(&sandbox, &sqlite_args(&[]), SQLITE_ID);
    for (name, run) in &runs {
        assert_eq!((name, run.code, run.stderr.as_str()), (name, Some(0), ""));
    }
    assert_eq!(
        runs["list"].stdout,
        format!(
            "ID\tCREATED\tCWD\tEVENTS\n{SQLITE_ID}\t2026-11-29T18:20:01.679Z\t/srv/dsh-demo\t41\n"
        )
    );
    let object: Value = serde_json::from_str(runs["list --json"].stdout.trim_end()).unwrap();
    assert_eq!(
        object,
        json!({
            "version": 0,
            "id": SQLITE_ID,
            "createdAt": 1_795_976_401_679_u64,
            "cwd": "/srv/dsh-demo",
            "events": 41,
        })
    );
    for name in ["verify", "verify id"] {
        assert_eq!(
            runs[name].stdout,
            format!("ok\t{SQLITE_ID}\t41 events\n"),
            "{name}"
        );
    }
    let export = &runs["export"].stdout;
    assert_eq!(export.lines().count(), 1 + 41);
    assert!(export.starts_with(&format!(
        "{{\"type\":\"session\",\"version\":0,\"id\":\"{SQLITE_ID}\",\"createdAt\":1795976401679,\
         \"cwd\":\"/srv/dsh-demo\",\"delegationDepth\":0}}\n"
    )));
    assert!(!export.contains("-chunks\""), "packed rows are expanded");
    assert_canonical_key_order(export);
    let show = &runs["show"].stdout;
    assert!(
        show.contains("tool result [call_fake_1]:\n  sqlite-run\n  /srv/dsh-demo\n"),
        "{show}"
    );
    assert!(show.ends_with("── turn 1 ended: completed ──\n"), "{show}");
    insta::assert_snapshot!("show_sqlite_fixture", show);
    insta::assert_snapshot!("export_sqlite_fixture", export);
    assert_eq!(
        std::fs::read(database(&sandbox)).unwrap(),
        std::fs::read(SQLITE_FIXTURE).unwrap()
    );
}

#[test]
fn the_overlay_reads_the_same_database_from_the_home_patch_layer() {
    let sandbox = sqlite_sandbox();
    let through_flag = dsh(&sandbox, &sqlite_args(&["list"]));
    std::fs::copy(SHIPPED_OVERLAY, sandbox.home().join("cordis.patch.yml")).unwrap();
    for args in [
        &["sessions", "list"][..],
        &["sessions", "--profile", "web", "list"],
    ] {
        let run = dsh(&sandbox, args);
        assert_ok(&run);
        assert_eq!(run.stdout, through_flag.stdout, "{args:?}");
    }
}

#[test]
fn an_empty_home_with_the_overlay_lists_nothing_and_creates_no_database() {
    let sandbox = Sandbox::new();
    add_overlay(&sandbox);
    for rest in [&["list"][..], &["list", "--json"], &["verify"]] {
        let run = dsh(&sandbox, &sqlite_args(rest));
        assert_ok(&run);
        assert_eq!(run.stdout, "", "{rest:?}");
    }
    let missing = dsh(&sandbox, &sqlite_args(&["show", SQLITE_ID]));
    assert_exit_1(&missing);
    assert_eq!(
        missing.stderr,
        format!("dsh: session \"{SQLITE_ID}\" not found\n")
    );
    assert!(!database(&sandbox).exists());
}

// ---------------------------------------------------------------------------------------
// convert: SQLite to JSONL and back
// ---------------------------------------------------------------------------------------

#[test]
fn sqlite_converts_to_jsonl_and_back_with_the_same_export() {
    let sandbox = sqlite_sandbox();
    let export = dsh(&sandbox, &sqlite_args(&["export", SQLITE_ID])).stdout;
    let show = dsh(&sandbox, &sqlite_args(&["show", SQLITE_ID])).stdout;

    // Into the default JSONL root, $DSH_HOME/sessions: the store `dsh sessions` reads.
    let root = sandbox.home().join("sessions");
    let run = sandbox.run(&sqlite_args(&["convert", "--to", "jsonl"]));
    assert_ok(&run);
    assert_eq!(
        run.stdout,
        format!(
            "copied {SQLITE_ID} 41 events\n{}",
            summary(1, 0, 0, &jsonl_destination(&root))
        )
    );
    assert!(
        root.join(format!("{PROJECT}/{SQLITE_ID}/session.jsonl.zstd"))
            .is_file()
    );
    assert_eq!(
        std::fs::read(database(&sandbox)).unwrap(),
        std::fs::read(SQLITE_FIXTURE).unwrap(),
        "the source is only read"
    );
    let jsonl_export = dsh(&sandbox, &["sessions", "export", SQLITE_ID]);
    assert_ok(&jsonl_export);
    assert_eq!(jsonl_export.stdout, export);
    assert_eq!(dsh(&sandbox, &["sessions", "show", SQLITE_ID]).stdout, show);

    // And back, from the JSONL store into a new database named relative to the cwd.
    let back = sandbox.work().join("copies/back.sqlite");
    let run = sandbox.run(&[
        "sessions",
        "convert",
        "--to",
        "sqlite",
        "--path",
        "copies/back.sqlite",
    ]);
    assert_ok(&run);
    assert_eq!(
        run.stdout,
        format!(
            "copied {SQLITE_ID} 41 events\n{}",
            summary(1, 0, 0, &sqlite_destination(&back))
        )
    );
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&back), 0o600);
    sandbox.write(
        "work/back.yml",
        &format!(
            "- id: session-persistence-sqlite\n  config:\n    path: {}\n",
            display(&back)
        ),
    );
    let again = dsh(
        &sandbox,
        &sqlite_args(&["--patch", "back.yml", "export", SQLITE_ID]),
    );
    assert_ok(&again);
    assert_eq!(again.stdout, export);
    assert_eq!(python_facts(&back), schema_17(&[SQLITE_ID]));
}

#[test]
fn convert_to_jsonl_takes_a_root_relative_to_the_cwd() {
    let sandbox = sqlite_sandbox();
    let export = dsh(&sandbox, &sqlite_args(&["export", SQLITE_ID])).stdout;
    let run = sandbox.run(&sqlite_args(&["convert", "--to", "jsonl", "--root", "out"]));
    assert_ok(&run);
    let root = sandbox.work().join("out");
    assert!(
        run.stdout
            .ends_with(&summary(1, 0, 0, &jsonl_destination(&root))),
        "{}",
        run.stdout
    );
    assert!(!sandbox.home().join("sessions").exists());
    sandbox.write(
        "work/out.yml",
        &format!(
            "- id: session-persistence-jsonl\n  config:\n    root: {}\n",
            display(&root)
        ),
    );
    let copy = dsh(
        &sandbox,
        &["sessions", "--patch", "out.yml", "export", SQLITE_ID],
    );
    assert_ok(&copy);
    assert_eq!(copy.stdout, export);
}

// ---------------------------------------------------------------------------------------
// convert: the JSONL fixtures to SQLite
// ---------------------------------------------------------------------------------------

#[test]
fn the_zstd_fixture_converts_to_sqlite_with_the_same_export_and_transcript() {
    let sandbox = zstd_sandbox();
    add_overlay(&sandbox);
    let export = dsh(&sandbox, &["sessions", "export", ZSTD_ID]).stdout;
    let show = dsh(&sandbox, &["sessions", "show", ZSTD_ID]).stdout;
    let run = sandbox.run(&["sessions", "convert", "--to", "sqlite"]);
    assert_ok(&run);
    assert_eq!(
        run.stdout,
        format!(
            "copied {ZSTD_ID} 41 events\n{}",
            summary(1, 0, 0, &sqlite_destination(&database(&sandbox)))
        )
    );
    let runs = every_command(&sandbox, &sqlite_args(&[]), ZSTD_ID);
    assert_eq!(runs["export"].stdout, export);
    assert_eq!(runs["show"].stdout, show);
    assert_eq!(runs["verify"].stdout, format!("ok\t{ZSTD_ID}\t41 events\n"));
    assert_eq!(python_facts(&database(&sandbox)), schema_17(&[ZSTD_ID]));
}

#[test]
fn a_store_of_two_raw_logs_converts_in_creation_order() {
    let sandbox = two_session_raw_sandbox();
    add_overlay(&sandbox);
    let exports: Vec<String> = [ZSTD_ID, RAW_ID]
        .iter()
        .map(|id| dsh(&sandbox, &raw_args(&["export", id])).stdout)
        .collect();
    let run = sandbox.run(&raw_args(&["convert", "--to", "sqlite"]));
    assert_ok(&run);
    assert_eq!(
        run.stdout,
        format!(
            "copied {ZSTD_ID} 41 events\ncopied {RAW_ID} 57 events\n{}",
            summary(2, 0, 0, &sqlite_destination(&database(&sandbox)))
        )
    );
    for (id, export) in [ZSTD_ID, RAW_ID].iter().zip(&exports) {
        let copy = dsh(&sandbox, &sqlite_args(&["export", id]));
        assert_ok(&copy);
        assert_eq!(&copy.stdout, export, "{id}");
    }
    let list = dsh(&sandbox, &sqlite_args(&["list"]));
    assert_eq!(
        list.stdout,
        format!(
            "ID\tCREATED\tCWD\tEVENTS\n\
             {ZSTD_ID}\t2026-11-29T18:19:58.536Z\t/srv/dsh-demo\t41\n\
             {RAW_ID}\t2026-11-29T18:19:59.653Z\t/srv/dsh-demo\t57\n"
        )
    );
    assert_eq!(
        python_facts(&database(&sandbox)),
        schema_17(&[ZSTD_ID, RAW_ID])
    );
}

#[test]
fn convert_copies_one_id_on_request_and_never_overwrites() {
    let sandbox = two_session_raw_sandbox();
    add_overlay(&sandbox);
    let raw_export = dsh(&sandbox, &raw_args(&["export", RAW_ID])).stdout;
    let destination = sqlite_destination(&database(&sandbox));

    let one = sandbox.run(&raw_args(&["convert", "--to", "sqlite", "--id", RAW_ID]));
    assert_ok(&one);
    assert_eq!(
        one.stdout,
        format!(
            "copied {RAW_ID} 57 events\n{}",
            summary(1, 0, 0, &destination)
        )
    );
    let list = dsh(&sandbox, &sqlite_args(&["list"]));
    assert!(
        list.stdout.ends_with(&format!(
            "ID\tCREATED\tCWD\tEVENTS\n{RAW_ID}\t2026-11-29T18:19:59.653Z\t/srv/dsh-demo\t57\n"
        )),
        "{}",
        list.stdout
    );

    // Everything: the id already there is skipped (exit 1), the other one copied.
    let all = sandbox.run(&raw_args(&["convert", "--to", "sqlite"]));
    assert_exit_1(&all);
    assert_eq!(all.stderr, "");
    assert_eq!(
        all.stdout,
        format!(
            "copied {ZSTD_ID} 41 events\n\
             skipped {RAW_ID}: the destination already holds this id; left as it is\n{}",
            summary(1, 1, 0, &destination)
        )
    );

    // Again: both skipped, and the database is not touched.
    let before = std::fs::read(database(&sandbox)).unwrap();
    let again = sandbox.run(&raw_args(&["convert", "--to", "sqlite"]));
    assert_exit_1(&again);
    assert_eq!(
        again.stdout,
        format!(
            "skipped {ZSTD_ID}: the destination already holds this id; left as it is\n\
             skipped {RAW_ID}: the destination already holds this id; left as it is\n{}",
            summary(0, 2, 0, &destination)
        )
    );
    assert_eq!(std::fs::read(database(&sandbox)).unwrap(), before);
    let copy = dsh(&sandbox, &sqlite_args(&["export", RAW_ID]));
    assert_eq!(copy.stdout, raw_export);

    // Into JSONL, the same rule: converting twice skips.
    let root = sandbox.work().join("jsonl");
    let twice: Vec<Run> = (0..2)
        .map(|_| {
            sandbox.run(&sqlite_args(&[
                "convert", "--to", "jsonl", "--root", "jsonl",
            ]))
        })
        .collect();
    assert_ok(&twice[0]);
    assert_exit_1(&twice[1]);
    assert!(
        twice[1]
            .stdout
            .ends_with(&summary(0, 2, 0, &jsonl_destination(&root))),
        "{}",
        twice[1].stdout
    );
}

#[test]
fn an_unknown_id_fails_and_an_empty_store_has_nothing_to_convert() {
    let sandbox = zstd_sandbox();
    let run = sandbox.run(&[
        "sessions",
        "convert",
        "--to",
        "sqlite",
        "--id",
        "session-nope",
    ]);
    assert_exit_1(&run);
    assert_eq!(
        run.stdout,
        format!(
            "failed session-nope: session \"session-nope\" not found\n{}",
            summary(0, 0, 1, &sqlite_destination(&database(&sandbox)))
        )
    );
    assert!(!database(&sandbox).exists(), "nothing was written");

    let empty = Sandbox::new();
    for to in ["sqlite", "jsonl"] {
        let run = dsh(&empty, &["sessions", "convert", "--to", to]);
        assert_ok(&run);
        assert_eq!(
            run.stdout,
            "nothing to convert: the profile's session store holds no sessions\n"
        );
    }
    assert!(!database(&empty).exists());
}

#[test]
fn a_destination_that_is_not_a_dsh_database_is_refused_untouched() {
    let sandbox = zstd_sandbox();
    let other = sandbox.work().join("other.sqlite");
    let script = "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\n\
                  c.execute('CREATE TABLE notes (text TEXT)')\nc.commit()\nc.close()\n";
    let made = Command::new("python3")
        .args(["-c", script])
        .arg(&other)
        .status()
        .unwrap();
    assert!(made.success());
    std::fs::set_permissions(&other, Permissions::from_mode(0o600)).unwrap();
    let before = std::fs::read(&other).unwrap();
    let run = sandbox.run(&[
        "sessions",
        "convert",
        "--to",
        "sqlite",
        "--path",
        "other.sqlite",
    ]);
    assert_exit_1(&run);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.starts_with(&format!(
            "dsh: cannot use the {}: session database at \"{}\" has an unversioned schema",
            sqlite_destination(&other),
            display(&other)
        )),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&other).unwrap(), before);
}

// ---------------------------------------------------------------------------------------
// convert: what a copy keeps
// ---------------------------------------------------------------------------------------

/// Converts the raw store of `sandbox` to SQLite, then that to JSONL under `work/back`, and
/// checks both copies export exactly as the source does.
fn assert_round_trip(sandbox: &Sandbox, id: &str, stored: usize) {
    add_overlay(sandbox);
    let source = dsh(sandbox, &raw_args(&["export", id]));
    assert_ok(&source);
    let run = sandbox.run(&raw_args(&["convert", "--to", "sqlite"]));
    assert_ok(&run);
    assert!(
        run.stdout
            .starts_with(&format!("copied {id} {stored} events\n")),
        "{}",
        run.stdout
    );
    let sqlite = dsh(sandbox, &sqlite_args(&["export", id]));
    assert_ok(&sqlite);
    assert_eq!(sqlite.stdout, source.stdout);
    let back = sandbox.run(&sqlite_args(&[
        "convert", "--to", "jsonl", "--root", "back",
    ]));
    assert_ok(&back);
    sandbox.write(
        "work/back.yml",
        &format!(
            "- id: session-persistence-jsonl\n  config:\n    root: {}\n",
            display(&sandbox.work().join("back"))
        ),
    );
    let jsonl = dsh(sandbox, &["sessions", "--patch", "back.yml", "export", id]);
    assert_ok(&jsonl);
    assert_eq!(jsonl.stdout, source.stdout);
}

#[test]
fn an_open_turn_is_copied_without_its_in_memory_closers() {
    // The raw fixture without its turn end: 56 stored events, read with a closer.
    let text = drop_last_lines(&raw_fixture_text(), 1);
    let sandbox = raw_log_sandbox(RAW_ID, &text);
    assert_round_trip(&sandbox, RAW_ID, 56);
    let list = dsh(&sandbox, &sqlite_args(&["list"]));
    assert!(list.stdout.ends_with("\t56\n"), "{}", list.stdout);
    let verify = dsh(&sandbox, &sqlite_args(&["verify"]));
    assert_eq!(verify.stdout, format!("ok\t{RAW_ID}\t57 events\n"));
}

#[test]
fn a_torn_tail_is_left_behind() {
    let text = format!(
        "{}{{\"type\":\"turn/start\",\"seq\":57,\"ti",
        raw_fixture_text()
    );
    let sandbox = raw_log_sandbox(RAW_ID, &text);
    assert_round_trip(&sandbox, RAW_ID, 57);
}

#[test]
fn plugin_payloads_and_the_ignorable_flag_survive() {
    let sandbox = raw_log_sandbox("session-plugin", PLUGIN_LOG);
    assert_round_trip(&sandbox, "session-plugin", 4);
    let export = dsh(&sandbox, &sqlite_args(&["export", "session-plugin"]));
    assert_eq!(export.stdout, PLUGIN_LOG);
}

#[test]
fn float_payloads_survive_exactly() {
    let sandbox = raw_log_sandbox("session-floats", FLOAT_LOG);
    assert_round_trip(&sandbox, "session-floats", 1);
    let export = dsh(&sandbox, &sqlite_args(&["export", "session-floats"]));
    assert_eq!(export.stdout, FLOAT_LOG);
}

/// A raw log of one turn whose step streams `deltas` text deltas (one run of chunks across
/// several append batches and packed rows), then a payload of more than 4 KiB.
fn long_log(id: &str, deltas: usize) -> String {
    let mut lines = vec![format!(
        r#"{{"type":"session","version":0,"id":"{id}","createdAt":5,"cwd":"/srv/dsh-demo","delegationDepth":0}}"#
    )];
    let mut push = |kind: &str, data: Value| {
        let seq = lines.len() - 1;
        lines.push(format!(
            r#"{{"type":"{kind}","seq":{seq},"time":{},"data":{data}}}"#,
            1_000 + seq / 7
        ));
    };
    push("turn/start", json!({"turn": 1}));
    push("step/start", json!({"turn": 1, "step": 1}));
    push(
        "assistant/chunk",
        json!({"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 0, "blockType": "text"}}),
    );
    let mut text = String::new();
    for k in 0..deltas {
        let piece = format!("w{k} ");
        text.push_str(&piece);
        push(
            "assistant/chunk",
            json!({"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": piece}}),
        );
    }
    push(
        "assistant/chunk",
        json!({"turn": 1, "step": 1, "chunk": {"type": "block-end", "index": 0, "block": {"type": "text", "text": text}}}),
    );
    push(
        "goal/change",
        json!({"note": "ε≠0 ".repeat(3_000), "n": [1, 2.5, 1e21]}),
    );
    push("step/end", json!({"turn": 1, "step": 1}));
    push(
        "turn/end",
        json!({"turn": 1, "reason": {"kind": "completed"}}),
    );
    let mut log = lines.join("\n");
    log.push('\n');
    log
}

#[test]
fn a_long_log_is_copied_in_batches() {
    let deltas = 2_500;
    let sandbox = raw_log_sandbox("session-long", &long_log("session-long", deltas));
    assert_round_trip(&sandbox, "session-long", deltas + 7);
}

// ---------------------------------------------------------------------------------------
// convert: usage
// ---------------------------------------------------------------------------------------

#[test]
fn convert_needs_to_and_takes_only_the_location_flag_of_its_format() {
    let sandbox = raw_sandbox();
    let cases: [(&[&str], &str); 4] = [
        (
            &["convert"],
            "error: the following required arguments were not provided:\n  --to <format>",
        ),
        (
            &["convert", "--to", "sqlite", "--root", "x"],
            "error: the argument '--root <dir>' cannot be used with '--to sqlite'",
        ),
        (
            &["convert", "--to", "jsonl", "--path", "x.sqlite"],
            "error: the argument '--path <file>' cannot be used with '--to jsonl'",
        ),
        (
            &["convert", "--to", "csv"],
            "error: invalid value 'csv' for '--to <format>'",
        ),
    ];
    for (rest, expected) in cases {
        let run = dsh(&sandbox, &raw_args(rest));
        if !rest.contains(&"csv") {
            assert!(
                run.stderr.contains("Usage: dsh sessions convert"),
                "{rest:?}: {}",
                run.stderr
            );
        }
        assert_exit_1(&run);
        assert_eq!(run.stdout, "");
        assert!(run.stderr.starts_with(expected), "{rest:?}: {}", run.stderr);
    }
    let wrong = dsh(&sandbox, &raw_args(&["convert", "--to", "csv"]));
    assert!(
        wrong.stderr.contains("[possible values: sqlite, jsonl]"),
        "{}",
        wrong.stderr
    );
    let help = dsh(&sandbox, &["sessions", "convert", "--help"]);
    assert_ok(&help);
    for part in [
        "--to <format>",
        "--path <file>",
        "--root <dir>",
        "--id <id>",
    ] {
        assert!(help.stdout.contains(part), "{part}: {}", help.stdout);
    }
}
