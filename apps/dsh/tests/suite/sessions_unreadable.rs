//! Stores holding things that are not (good) logs: a FIFO, a directory or a link where a log
//! belongs, damaged and empty logs, logs of both encodings, and SQLite databases that are
//! empty, not files, or read-only. No command blocks, every healthy session is still listed,
//! each bad one is reported once with its path, and readers write nothing.
//!
//! Every command runs under a deadline (see [`run_within_deadline`]): a read that blocks
//! fails the test instead of hanging it.

use std::fs::Permissions;
use std::os::unix::fs::FileTypeExt as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use dsh_test_support::fake_deepseek::FakeDeepSeek;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::sessions::{
    PROJECT, RAW_ID, ZSTD_ID, assert_ok, dsh, raw_args, raw_sandbox, run_within_deadline,
    zstd_sandbox,
};
use super::sessions_sqlite::{SQLITE_ID, database, sqlite_args, sqlite_sandbox};
use super::support::{Run, Sandbox, display};

/// The log path of session `id` (cwd `/srv/dsh-demo`) in `sandbox`, its directory created.
fn log_path(sandbox: &Sandbox, id: &str, name: &str) -> PathBuf {
    let dir = sandbox.home().join(format!("sessions/{PROJECT}/{id}"));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn zstd_log(sandbox: &Sandbox) -> PathBuf {
    log_path(sandbox, ZSTD_ID, "session.jsonl.zstd")
}

fn make_fifo(path: &Path) {
    nix::unistd::mkfifo(
        path,
        nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR,
    )
    .unwrap();
}

fn make_dir(path: &Path) {
    std::fs::create_dir(path).unwrap();
}

fn fifo_refusal(path: &Path) -> String {
    format!(
        "session log \"{}\" is a FIFO, not a regular file; move it out of the session store",
        display(path)
    )
}

/// The healthy zstd fixture's row of `list`.
fn healthy_table() -> String {
    format!("ID\tCREATED\tCWD\tEVENTS\n{ZSTD_ID}\t2026-11-29T18:19:58.536Z\t/srv/dsh-demo\t41\n")
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

/// `dsh --profile headless [--patch <patch>] --resume <id> hi` against a fake model that must
/// never be asked anything.
async fn resume(sandbox: &Sandbox, patch: Option<&str>, id: &str) -> Run {
    let fake = FakeDeepSeek::start().await.unwrap();
    let mut args = vec!["--profile", "headless"];
    if let Some(patch) = patch {
        args.extend(["--patch", patch]);
    }
    args.extend(["--resume", id, "hi"]);
    let mut command = sandbox.command(&args);
    command
        .env("DEEPSEEK_BASE_URL", fake.base_url())
        .env("DEEPSEEK_API_KEY", "sk-test")
        .env_remove("DEEPSEEK_API_KEY_FILE");
    let shown: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    let run = tokio::task::spawn_blocking(move || {
        let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
        run_within_deadline(command, &shown)
    })
    .await
    .unwrap();
    assert!(fake.requests().is_empty(), "the model was asked");
    run
}

/// `dsh sessions list --json`, which must exit 1 (a bad log is listed), and its rows.
fn listed_as_json(sandbox: &Sandbox) -> (Run, Vec<Value>) {
    let json = dsh(sandbox, &["sessions", "list", "--json"]);
    assert_exit_1(&json);
    let rows = json
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    (json, rows)
}

// ---------------------------------------------------------------------------------------
// JSONL
// ---------------------------------------------------------------------------------------

#[test]
fn a_fifo_in_place_of_a_log_blocks_no_command() {
    let sandbox = zstd_sandbox();
    let fifo = log_path(&sandbox, "stuck", "session.jsonl.zstd");
    make_fifo(&fifo);
    let refusal = fifo_refusal(&fifo);

    let list = dsh(&sandbox, &["sessions", "list"]);
    assert_exit_1(&list);
    assert_eq!(list.stdout, healthy_table());
    assert_eq!(list.stderr, format!("dsh: {refusal}\n"));

    let (json, rows) = listed_as_json(&sandbox);
    assert_eq!(rows.len(), 2, "{}", json.stdout);
    assert_eq!(rows[0]["id"], json!(ZSTD_ID));
    assert_eq!(
        rows[1],
        json!({"id": "stuck", "path": display(&fifo), "events": null, "error": refusal})
    );

    let verify = dsh(&sandbox, &["sessions", "verify"]);
    assert_exit_1(&verify);
    assert_eq!(
        verify.stdout,
        format!("ok\t{ZSTD_ID}\t41 events\nbad\tstuck\n")
    );
    assert_eq!(verify.stderr, format!("dsh: {refusal}\n"));

    for action in ["verify", "show", "export"] {
        let run = dsh(&sandbox, &["sessions", action, "stuck"]);
        assert_exit_1(&run);
        assert_eq!(run.stderr, format!("dsh: {refusal}\n"), "{action}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_a_session_whose_log_is_a_fifo_fails_at_once() {
    let sandbox = zstd_sandbox();
    let fifo = log_path(&sandbox, "stuck", "session.jsonl.zstd");
    make_fifo(&fifo);
    let run = resume(&sandbox, None, "stuck").await;
    assert_exit_1(&run);
    assert!(run.stderr.contains(&fifo_refusal(&fifo)), "{}", run.stderr);
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
}

#[test]
fn one_bad_log_hides_no_healthy_one() {
    let sandbox = zstd_sandbox();
    let good = std::fs::read(zstd_log(&sandbox)).unwrap();
    // A damaged header frame (its checksum no longer matches).
    let damaged = log_path(&sandbox, "damaged", "session.jsonl.zstd");
    let mut bytes = good.clone();
    bytes[20] ^= 0xff;
    std::fs::write(&damaged, &bytes).unwrap();
    // Garbage under a log's name.
    let garbage = log_path(&sandbox, "garbage", "session.jsonl.zstd");
    std::fs::write(&garbage, "this is not a zstd log\n").unwrap();
    // A directory and a link where logs belong.
    let directory = log_path(&sandbox, "directory", "session.jsonl.zstd");
    std::fs::create_dir(&directory).unwrap();
    let link = log_path(&sandbox, "link", "session.jsonl.zstd");
    std::os::unix::fs::symlink(zstd_log(&sandbox), &link).unwrap();
    // A good log in the directory of another id.
    let foreign = log_path(&sandbox, "foreign", "session.jsonl.zstd");
    std::fs::write(&foreign, &good).unwrap();

    let list = dsh(&sandbox, &["sessions", "list"]);
    assert_exit_1(&list);
    assert_eq!(list.stdout, healthy_table());
    let lines: Vec<&str> = list.stderr.lines().collect();
    let bad = [&damaged, &directory, &foreign, &garbage, &link];
    assert_eq!(lines.len(), bad.len(), "{}", list.stderr);
    for (line, path) in lines.iter().zip(bad) {
        // Each line names its log once, and only its log (the foreign one also names where
        // its header says it belongs).
        assert!(line.starts_with("dsh: "), "{line}");
        assert_eq!(line.matches(&display(path)).count(), 1, "{line}");
    }
    assert!(
        lines[0].contains("header frame failed validation"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("is a directory, not a regular file"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].contains(&format!("header id \"{ZSTD_ID}\" and cwd identify")),
        "{}",
        lines[2]
    );
    assert!(lines[3].contains("invalid frame magic"), "{}", lines[3]);
    assert!(
        lines[4].contains("is a symbolic link, not a regular file"),
        "{}",
        lines[4]
    );

    let (_, rows) = listed_as_json(&sandbox);
    assert_eq!(rows[0]["events"], json!(41));
    let bad_rows: Vec<(Value, Value, bool)> = rows[1..]
        .iter()
        .map(|row| {
            (
                row["id"].clone(),
                row["path"].clone(),
                row["error"].is_string(),
            )
        })
        .collect();
    assert_eq!(
        bad_rows,
        ["damaged", "directory", "foreign", "garbage", "link"]
            .iter()
            .zip(bad)
            .map(|(id, path)| (json!(id), json!(display(path)), true))
            .collect::<Vec<_>>()
    );
    assert!(rows[1..].iter().all(|row| row["events"].is_null()));

    let verify = dsh(&sandbox, &["sessions", "verify"]);
    assert_exit_1(&verify);
    assert_eq!(
        verify.stdout,
        format!(
            "bad\tdamaged\nbad\tdirectory\nbad\tforeign\nbad\tgarbage\nbad\tlink\nok\t{ZSTD_ID}\t41 \
             events\n"
        )
    );
    assert_eq!(verify.stderr, list.stderr);
}

#[test]
fn verify_reports_empty_and_header_less_logs_as_bad() {
    let sandbox = raw_sandbox();
    let empty = log_path(&sandbox, "empty", "session.jsonl");
    std::fs::write(&empty, "").unwrap();
    let cut = log_path(&sandbox, "cut", "session.jsonl");
    std::fs::write(&cut, "{\"type\":\"session\",\"version\":0,").unwrap();

    let verify = dsh(&sandbox, &raw_args(&["verify"]));
    assert_exit_1(&verify);
    assert_eq!(
        verify.stdout,
        format!("bad\tcut\nbad\tempty\nok\t{RAW_ID}\t57 events\n")
    );
    assert_eq!(
        verify.stderr,
        format!(
            "dsh: stored session \"cut\" failed validation: header-less session log: the first \
             line does not end (file: {})\ndsh: stored session \"empty\" failed validation: empty \
             session log (file: {})\n",
            display(&cut),
            display(&empty)
        )
    );
    let list = dsh(&sandbox, &raw_args(&["list"]));
    assert_exit_1(&list);
    assert_eq!(list.stderr, verify.stderr);
}

#[test]
fn a_store_holding_logs_of_both_encodings_lists_and_reads_them_all() {
    // The zstd fixture, and the raw fixture written before `compression` was switched.
    let sandbox = zstd_sandbox();
    let raw_fixture = raw_sandbox();
    let raw = log_path(&raw_fixture, RAW_ID, "session.jsonl");
    std::fs::copy(&raw, log_path(&sandbox, RAW_ID, "session.jsonl")).unwrap();
    let table = format!(
        "ID\tCREATED\tCWD\tEVENTS\n{ZSTD_ID}\t2026-11-29T18:19:58.536Z\t/srv/dsh-demo\t41\n\
         {RAW_ID}\t2026-11-29T18:19:59.653Z\t/srv/dsh-demo\t57\n"
    );
    sandbox.write(
        "work/raw.yml",
        &std::fs::read_to_string(raw_fixture.work().join("raw.yml")).unwrap(),
    );
    for prefix in [&["sessions"][..], &["sessions", "--patch", "raw.yml"]] {
        let args = |rest: &[&'static str]| -> Vec<&str> {
            prefix.iter().copied().chain(rest.iter().copied()).collect()
        };
        let list = dsh(&sandbox, &args(&["list"]));
        assert_ok(&list);
        assert_eq!(list.stdout, table, "{prefix:?}");
        let verify = dsh(&sandbox, &args(&["verify"]));
        assert_ok(&verify);
        assert_eq!(
            verify.stdout,
            format!("ok\t{RAW_ID}\t57 events\nok\t{ZSTD_ID}\t41 events\n")
        );
        let export = dsh(&sandbox, &args(&["export", RAW_ID]));
        assert_ok(&export);
        let reference = dsh(&raw_fixture, &raw_args(&["export", RAW_ID]));
        assert_eq!(export.stdout, reference.stdout);
    }
}

// ---------------------------------------------------------------------------------------
// SQLite
// ---------------------------------------------------------------------------------------

#[test]
fn a_zero_byte_database_lists_as_empty_and_stays_zero_bytes() {
    let sandbox = sqlite_sandbox();
    std::fs::write(database(&sandbox), b"").unwrap();
    for rest in [&["list"][..], &["list", "--json"], &["verify"]] {
        // `dsh` fails the test if the file (or anything beside it) changed.
        let run = dsh(&sandbox, &sqlite_args(rest));
        assert_ok(&run);
        assert_eq!(run.stdout, "", "{rest:?}");
    }
    assert_eq!(std::fs::metadata(database(&sandbox)).unwrap().len(), 0);
}

#[test]
fn a_fifo_or_a_directory_at_the_database_path_is_named_for_what_it_is() {
    for (kind, make) in [
        ("a FIFO", make_fifo as fn(&Path)),
        ("a directory", make_dir as fn(&Path)),
    ] {
        let sandbox = sqlite_sandbox();
        std::fs::remove_file(database(&sandbox)).unwrap();
        make(&database(&sandbox));
        let run = dsh(&sandbox, &sqlite_args(&["list"]));
        assert_exit_1(&run);
        assert!(
            run.stderr.contains(&format!(
                "session database \"{}\" is {kind}, not a regular file",
                display(&database(&sandbox))
            )),
            "{}",
            run.stderr
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_database_is_not_resumed_into_even_as_root() {
    let sandbox = sqlite_sandbox();
    let path = database(&sandbox);
    std::fs::set_permissions(&path, Permissions::from_mode(0o400)).unwrap();
    let before = std::fs::read(&path).unwrap();
    let overlay = super::sessions_sqlite::OVERLAY;

    let run = resume(&sandbox, Some(overlay), SQLITE_ID).await;
    assert_exit_1(&run);
    assert!(
        run.stderr.contains(&format!(
            "session database at \"{}\" is read-only (mode 0400), and dsh does not write to a \
             database its owner made read-only, even as root; make it writable (`chmod u+w`) to \
             write sessions to it",
            display(&path)
        )),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing was written");
    let beside: Vec<String> = std::fs::read_dir(sandbox.home())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("sessions.sqlite"))
        .collect();
    assert_eq!(beside, ["sessions.sqlite"], "no -wal, -shm or journal");
    // Reading it still works.
    let list = dsh(&sandbox, &sqlite_args(&["list"]));
    assert_ok(&list);
}
