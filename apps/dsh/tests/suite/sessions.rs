//! `dsh sessions`: list, show, export and verify stored logs without ever changing one.
//!
//! The logs are real dsh 0.1.1 logs (`tests/fixtures/dsh-0.1.1`) and variants made from them:
//! torn tails, open turns, flipped bytes, newer formats. Every command runs through
//! [`dsh`], which fails the test if anything under the sandbox (but the profile scaffold)
//! changed.

use std::collections::BTreeMap;
use std::io::Read;
use std::ops::Range;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;
use std::time::SystemTime;

use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;

use super::support::Run;
use super::support::Sandbox;
use super::support::display;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/dsh-0.1.1");
const ZSTD_FIXTURE: &str = "01-zstd-default-one-bash";
const RAW_FIXTURE: &str = "02-raw-jsonl-two-bash";
pub(super) const ZSTD_ID: &str = "session-04d35f8c-088e-43c0-8e5d-9e3b111b62fa";
pub(super) const RAW_ID: &str = "session-02adef58-77ad-4dd6-a853-cf5d434762f2";
pub(super) const PROJECT: &str = "--srv-dsh-demo--";

/// Points the headless profile's JSONL store (same root) at raw, uncompressed logs.
const RAW_PATCH: &str = "- id: session-persistence-jsonl\n  config:\n    root: !!js dshHomePath('sessions')\n    compression: none\n";

/// `dsh sessions --patch raw.yml <rest>` (the patch is written by [`raw_sandbox`]).
pub(super) fn raw_args<'a>(rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["sessions", "--patch", "raw.yml"];
    args.extend_from_slice(rest);
    args
}

// ---------------------------------------------------------------------------------------
// Sandboxes and the read-only guard
// ---------------------------------------------------------------------------------------

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn fixture_path(fixture: &str, rest: &str) -> PathBuf {
    Path::new(FIXTURES).join(fixture).join(rest)
}

pub(super) fn zstd_fixture_log() -> PathBuf {
    fixture_path(
        ZSTD_FIXTURE,
        &format!("home/sessions/{PROJECT}/{ZSTD_ID}/session.jsonl.zstd"),
    )
}

fn raw_fixture_log() -> PathBuf {
    fixture_path(
        RAW_FIXTURE,
        &format!("home/sessions/{PROJECT}/{RAW_ID}/session.jsonl"),
    )
}

fn decoded_zstd_fixture() -> String {
    std::fs::read_to_string(fixture_path(ZSTD_FIXTURE, "session.decoded.jsonl")).unwrap()
}

pub(super) fn raw_fixture_text() -> String {
    std::fs::read_to_string(raw_fixture_log()).unwrap()
}

/// A sandbox whose `DSH_HOME` holds the zstd fixture (the default profile reads it).
pub(super) fn zstd_sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    copy_tree(
        &fixture_path(ZSTD_FIXTURE, "home/sessions"),
        &sandbox.home().join("sessions"),
    );
    sandbox
}

/// A sandbox whose `DSH_HOME` holds the raw fixture, with `work/raw.yml` = [`RAW_PATCH`].
pub(super) fn raw_sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    copy_tree(
        &fixture_path(RAW_FIXTURE, "home/sessions"),
        &sandbox.home().join("sessions"),
    );
    sandbox.write("work/raw.yml", RAW_PATCH);
    sandbox
}

/// A sandbox with `text` as the raw log of session `id` (cwd `/srv/dsh-demo`), and
/// `work/raw.yml`.
pub(super) fn raw_log_sandbox(id: &str, text: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write(&format!("home/sessions/{PROJECT}/{id}/session.jsonl"), text);
    sandbox.write("work/raw.yml", RAW_PATCH);
    sandbox
}

fn zstd_log(sandbox: &Sandbox) -> PathBuf {
    sandbox
        .home()
        .join(format!("sessions/{PROJECT}/{ZSTD_ID}/session.jsonl.zstd"))
}

fn raw_log(sandbox: &Sandbox) -> PathBuf {
    sandbox
        .home()
        .join(format!("sessions/{PROJECT}/{RAW_ID}/session.jsonl"))
}

/// Every directory and file under the sandbox (but `home/profiles`, which dsh scaffolds on
/// first use, as the launcher does): file bytes and modification times.
type Tree = BTreeMap<PathBuf, Option<(Vec<u8>, SystemTime)>>;

fn tree(sandbox: &Sandbox) -> Tree {
    fn walk(root: &Path, dir: &Path, skip: &Path, out: &mut Tree) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path == skip {
                continue;
            }
            let relative = path.strip_prefix(root).unwrap().to_path_buf();
            let metadata = std::fs::symlink_metadata(&path).unwrap();
            if metadata.is_dir() {
                out.insert(relative, None);
                walk(root, &path, skip, out);
            } else {
                // A regular file by its bytes; a link by its target; anything else (a FIFO
                // some tests put in place of a log) by its type, never opened.
                let bytes = if metadata.is_file() {
                    std::fs::read(&path).unwrap()
                } else if metadata.is_symlink() {
                    std::fs::read_link(&path)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes()
                } else {
                    format!("{:?}", metadata.file_type()).into_bytes()
                };
                out.insert(relative, Some((bytes, metadata.modified().unwrap())));
            }
        }
    }
    let mut out = Tree::new();
    let root = sandbox.dir.path();
    walk(root, root, &sandbox.home().join("profiles"), &mut out);
    out
}

/// Runs dsh and fails unless every file under the sandbox (logs included) is byte for byte
/// and timestamp for timestamp what it was, and no file or directory appeared or vanished.
pub(super) fn dsh(sandbox: &Sandbox, args: &[&str]) -> Run {
    let before = tree(sandbox);
    let run = run_within_deadline(sandbox.command(args), args);
    let after = tree(sandbox);
    let changed: Vec<&PathBuf> = before
        .keys()
        .chain(after.keys())
        .filter(|path| before.get(*path) != after.get(*path))
        .collect();
    assert!(
        changed.is_empty(),
        "dsh {args:?} changed {changed:?}\nstderr: {}",
        run.stderr
    );
    run
}

/// How long one `dsh` run may take before a test calls it hung.
const DEADLINE: Duration = Duration::from_secs(60);

/// Runs `command` (with no stdin) and returns what it printed; a run that has not ended by
/// [`DEADLINE`] is killed and fails the test, so a command that blocks (on a FIFO, say)
/// fails instead of hanging the suite.
pub(super) fn run_within_deadline(mut command: Command, args: &[&str]) -> Run {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).unwrap();
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > DEADLINE {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("dsh {args:?} did not end within {DEADLINE:?}");
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    Run::from(Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    })
}

/// Runs `list`, `list --json`, `show`, `export`, `verify` and `verify <id>` (each checked by
/// [`dsh`]) and returns the runs by name.
pub(super) fn every_command(
    sandbox: &Sandbox,
    prefix: &[&str],
    id: &str,
) -> BTreeMap<&'static str, Run> {
    let commands: [(&'static str, Vec<&str>); 6] = [
        ("list", vec!["list"]),
        ("list --json", vec!["list", "--json"]),
        ("show", vec!["show", id]),
        ("export", vec!["export", id]),
        ("verify", vec!["verify"]),
        ("verify id", vec!["verify", id]),
    ];
    commands
        .into_iter()
        .map(|(name, rest)| {
            let args: Vec<&str> = prefix.iter().copied().chain(rest).collect();
            (name, dsh(sandbox, &args))
        })
        .collect()
}

pub(super) fn assert_ok(run: &Run) {
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (Some(0), ""),
        "stdout: {}",
        run.stdout
    );
}

// ---------------------------------------------------------------------------------------
// An independent packed-row expander (and packer), per session-spec §3.3
// ---------------------------------------------------------------------------------------

/// The `assistant/chunk` lines a packed row stands for, or `None` for any other record.
fn expand_row(row: &Value) -> Option<Vec<String>> {
    let kind = row.get("type")?.as_str()?;
    let (chunk_type, pieces_key) = match kind {
        "text-chunks" => ("text-delta", "texts"),
        "reasoning-chunks" => ("reasoning-delta", "texts"),
        "tool-call-chunks" => ("tool-call-delta", "args"),
        _ => return None,
    };
    let seq0 = row["seq0"].as_u64().unwrap();
    let data = &row["data"];
    let dt: Vec<i64> = data["dt"]
        .as_array()
        .unwrap()
        .iter()
        .map(|gap| gap.as_i64().unwrap())
        .collect();
    let pieces = data[pieces_key].as_array().unwrap();
    assert_eq!(dt.len() + 1, pieces.len(), "{row}");
    let mut time = row["time0"].as_i64().unwrap();
    let mut lines = Vec::new();
    for (k, piece) in pieces.iter().enumerate() {
        if k > 0 {
            time += dt[k - 1];
        }
        let chunk = if kind == "tool-call-chunks" {
            let mut chunk = json!({"type": chunk_type, "index": data["index"], "id": data["id"]});
            if let Some(name) = data.get("name") {
                chunk["name"] = name.clone();
            }
            chunk["argumentsDelta"] = piece.clone();
            chunk
        } else {
            json!({"type": chunk_type, "index": data["index"], "text": piece})
        };
        let event = json!({
            "type": "assistant/chunk",
            "seq": seq0 + k as u64,
            "time": time,
            "data": {"turn": data["turn"], "step": data["step"], "chunk": chunk},
        });
        lines.push(serde_json::to_string(&event).unwrap());
    }
    Some(lines)
}

/// `log` with every packed row replaced by its members; other lines stay verbatim.
fn expand_log(log: &str) -> String {
    let mut out = String::new();
    for line in log.lines() {
        let row: Value = serde_json::from_str(line).unwrap();
        match expand_row(&row) {
            Some(members) => {
                for member in members {
                    out.push_str(&member);
                    out.push('\n');
                }
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// For a packable `assistant/chunk` line (§3.3 whitelist): the event and its run key.
fn packable(line: &str) -> Option<(Value, String)> {
    let event: Value = serde_json::from_str(line).ok()?;
    let keys = |value: &Value| -> Vec<String> {
        value
            .as_object()
            .map(|map| map.keys().cloned().collect())
            .unwrap_or_default()
    };
    if event["type"] != "assistant/chunk" || keys(&event) != ["type", "seq", "time", "data"] {
        return None;
    }
    let data = &event["data"];
    let chunk = &data["chunk"];
    if keys(data) != ["turn", "step", "chunk"] {
        return None;
    }
    let shape_ok = match chunk["type"].as_str()? {
        "text-delta" | "reasoning-delta" => keys(chunk) == ["type", "index", "text"],
        "tool-call-delta" => {
            keys(chunk) == ["type", "index", "id", "name", "argumentsDelta"]
                || keys(chunk) == ["type", "index", "id", "argumentsDelta"]
        }
        _ => false,
    };
    let key = format!(
        "{}/{}/{}/{}/{}/{:?}",
        data["turn"],
        data["step"],
        chunk["index"],
        chunk["type"],
        chunk["id"],
        chunk.get("name")
    );
    shape_ok.then_some((event, key))
}

fn packed_row(run: &[Value]) -> String {
    let first = &run[0];
    let chunk = &first["data"]["chunk"];
    let times: Vec<i64> = run.iter().map(|e| e["time"].as_i64().unwrap()).collect();
    let dt: Vec<i64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    let mut data = json!({
        "turn": first["data"]["turn"],
        "step": first["data"]["step"],
        "index": chunk["index"],
        "dt": dt,
    });
    let kind = match chunk["type"].as_str().unwrap() {
        "tool-call-delta" => {
            data["id"] = chunk["id"].clone();
            if let Some(name) = chunk.get("name") {
                data["name"] = name.clone();
            }
            let args: Vec<Value> = run
                .iter()
                .map(|e| e["data"]["chunk"]["argumentsDelta"].clone())
                .collect();
            data["args"] = Value::Array(args);
            "tool-call-chunks"
        }
        other => {
            let texts: Vec<Value> = run
                .iter()
                .map(|e| e["data"]["chunk"]["text"].clone())
                .collect();
            data["texts"] = Value::Array(texts);
            if other == "text-delta" {
                "text-chunks"
            } else {
                "reasoning-chunks"
            }
        }
    };
    serde_json::to_string(&json!({
        "type": kind,
        "seq0": first["seq"],
        "time0": first["time"],
        "data": data,
    }))
    .unwrap()
}

/// `log` with every run of at least two consecutive packable chunks of one block packed.
fn pack_log(log: &str) -> String {
    let mut out = String::new();
    let mut run: Vec<Value> = Vec::new();
    let mut run_lines: Vec<&str> = Vec::new();
    let mut run_key = String::new();
    let flush = |run: &mut Vec<Value>, run_lines: &mut Vec<&str>, out: &mut String| {
        if run.len() >= 2 {
            out.push_str(&packed_row(run));
            out.push('\n');
        } else {
            for line in run_lines.iter() {
                out.push_str(line);
                out.push('\n');
            }
        }
        run.clear();
        run_lines.clear();
    };
    for line in log.lines() {
        match packable(line) {
            Some((event, key)) => {
                let follows = run.last().is_some_and(|last| {
                    key == run_key && last["seq"].as_u64().unwrap() + 1 == event["seq"]
                });
                if !follows {
                    flush(&mut run, &mut run_lines, &mut out);
                    run_key = key;
                }
                run.push(event);
                run_lines.push(line);
            }
            None => {
                flush(&mut run, &mut run_lines, &mut out);
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    flush(&mut run, &mut run_lines, &mut out);
    out
}

/// The export lines whose seq is at most `last` (the header included).
fn export_through_seq(export: &str, last: u64) -> String {
    let mut out = String::new();
    for line in export.lines() {
        let value: Value = serde_json::from_str(line).unwrap();
        if value
            .get("seq")
            .is_some_and(|seq| seq.as_u64().unwrap() > last)
        {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `text` without its last `n` lines.
pub(super) fn drop_last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = lines[..lines.len() - n].join("\n");
    out.push('\n');
    out
}

// ---------------------------------------------------------------------------------------
// Zstandard frames (RFC 8878 structure only; the test needs no zstd library)
// ---------------------------------------------------------------------------------------

struct Frame {
    range: Range<usize>,
    payloads: Vec<Range<usize>>,
    checksum: Option<Range<usize>>,
}

fn zstd_frames(bytes: &[u8]) -> Vec<Frame> {
    let mut frames = Vec::new();
    let mut offset = 0;
    while offset < bytes.len() {
        let start = offset;
        assert_eq!(bytes[offset..offset + 4], [0x28, 0xB5, 0x2F, 0xFD]);
        let descriptor = bytes[offset + 4];
        offset += 5;
        let single_segment = descriptor & 0x20 != 0;
        let content_size = match descriptor >> 6 {
            0 => usize::from(single_segment),
            flag => 1 << flag,
        };
        let dictionary = [0, 1, 2, 4][usize::from(descriptor & 3)];
        offset += usize::from(!single_segment) + dictionary + content_size;
        let mut payloads = Vec::new();
        loop {
            let header =
                u32::from_le_bytes([bytes[offset], bytes[offset + 1], bytes[offset + 2], 0]);
            offset += 3;
            let size = if (header >> 1) & 3 == 1 {
                1
            } else {
                (header >> 3) as usize
            };
            payloads.push(offset..offset + size);
            offset += size;
            if header & 1 == 1 {
                break;
            }
        }
        let checksum = (descriptor & 0x04 != 0).then(|| {
            offset += 4;
            offset - 4..offset
        });
        frames.push(Frame {
            range: start..offset,
            payloads,
            checksum,
        });
    }
    frames
}

/// One standard zstd frame holding `text` in a single raw (stored) block, without a
/// checksum: what any zstd decoder accepts, made without a compressor.
fn raw_zstd_frame(text: &str) -> Vec<u8> {
    let content = text.as_bytes();
    assert!(content.len() < 128 << 10);
    let size = u32::try_from(content.len()).unwrap();
    let mut frame = vec![0x28, 0xB5, 0x2F, 0xFD];
    // Four-byte content size, single segment, no checksum, no dictionary.
    frame.push(0b1010_0000);
    frame.extend_from_slice(&size.to_le_bytes());
    let block = 1 | (size << 3); // last block, raw
    frame.extend_from_slice(&block.to_le_bytes()[..3]);
    frame.extend_from_slice(content);
    frame
}

// ---------------------------------------------------------------------------------------
// Booting: which profile, which patches, which rows
// ---------------------------------------------------------------------------------------

#[test]
fn sessions_boot_only_the_storage_rows_of_the_headless_profile() {
    let sandbox = zstd_sandbox();
    // `sessions` boots only the store rows, of the headless profile by default.
    let run = dsh(&sandbox, &["sessions", "verify"]);
    assert_ok(&run);
    assert_eq!(run.stdout, format!("ok\t{ZSTD_ID}\t41 events\n"));
    let explicit = dsh(&sandbox, &["sessions", "--profile", "headless", "verify"]);
    assert_eq!(explicit.stdout, run.stdout);
}

#[test]
fn an_empty_home_lists_nothing_and_creates_no_store() {
    let sandbox = Sandbox::new();
    for args in [
        &["sessions", "list"][..],
        &["sessions", "list", "--json"],
        &["sessions", "verify"],
    ] {
        let run = dsh(&sandbox, args);
        assert_ok(&run);
        assert_eq!(run.stdout, "", "{args:?}");
    }
    assert!(!sandbox.home().join("sessions").exists());
}

#[test]
fn the_web_profile_reads_the_same_store() {
    let sandbox = zstd_sandbox();
    let headless = dsh(&sandbox, &["sessions", "list"]);
    for args in [
        &["sessions", "--profile", "web", "list"][..],
        &["--profile", "web", "sessions", "list"],
    ] {
        let run = dsh(&sandbox, args);
        assert_ok(&run);
        assert_eq!(run.stdout, headless.stdout, "{args:?}");
    }
}

#[test]
fn a_profile_without_a_persistence_row_is_refused_before_or_after_sessions() {
    let sandbox = zstd_sandbox();
    sandbox.write("home/profiles/bare/profile.yml", "bundles: []\n");
    for args in [
        &["--profile", "bare", "sessions", "list"][..],
        &["sessions", "--profile", "bare", "list"],
    ] {
        let run = dsh(&sandbox, args);
        assert_eq!(run.code, Some(1), "{args:?}");
        assert_eq!(run.stdout, "");
        assert_eq!(
            run.stderr,
            "dsh: profile \"bare\" has no session persistence row (such as \
             session-persistence-jsonl or session-persistence-sqlite)\n"
        );
    }
}

#[test]
fn a_patch_disabling_the_persistence_row_leaves_nothing_to_read() {
    let sandbox = zstd_sandbox();
    sandbox.write(
        "work/off.yml",
        "- id: session-persistence-jsonl\n  disabled: true\n",
    );
    let run = dsh(&sandbox, &["sessions", "--patch", "off.yml", "list"]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr
            .contains("profile \"headless\" has no session persistence row"),
        "{}",
        run.stderr
    );
}

#[test]
fn profile_and_patch_select_the_store_before_or_after_sessions() {
    let sandbox = raw_sandbox();
    let expected = format!(
        "ID\tCREATED\tCWD\tEVENTS\n{RAW_ID}\t2026-11-29T18:19:59.653Z\t/srv/dsh-demo\t57\n"
    );
    // The default (zstd) store reads the raw log too: a store keeps reading the logs written
    // before its `compression` was changed.
    let default = dsh(&sandbox, &["sessions", "list"]);
    assert_ok(&default);
    assert_eq!(default.stdout, expected);
    // A --patch before or after `sessions`.
    for args in [
        &["sessions", "--patch", "raw.yml", "list"][..],
        &["--patch", "raw.yml", "sessions", "list"],
        &[
            "--profile",
            "headless",
            "--patch",
            "raw.yml",
            "sessions",
            "list",
        ],
    ] {
        let run = dsh(&sandbox, args);
        assert_ok(&run);
        assert_eq!(run.stdout, expected, "{args:?}");
    }
    // A profile whose own patch layer picks raw logs, named before or after `sessions`.
    sandbox.write("home/profiles/rawlogs/profile.yml", "bundles: [dsh-base]\n");
    sandbox.write("home/profiles/rawlogs/cordis.patch.yml", RAW_PATCH);
    for args in [
        &["--profile", "rawlogs", "sessions", "list"][..],
        &["sessions", "--profile", "rawlogs", "list"],
    ] {
        let run = dsh(&sandbox, args);
        assert_ok(&run);
        assert_eq!(run.stdout, expected, "{args:?}");
    }
    // Twice is a usage error.
    let twice = dsh(
        &sandbox,
        &[
            "--profile",
            "rawlogs",
            "sessions",
            "--profile",
            "rawlogs",
            "list",
        ],
    );
    assert_eq!(twice.code, Some(1));
    assert_eq!(
        twice.stderr,
        "error: give --profile once, before or after `sessions`\n"
    );
}

#[test]
fn a_patch_can_move_the_store_root() {
    let sandbox = Sandbox::new();
    copy_tree(
        &fixture_path(ZSTD_FIXTURE, "home/sessions"),
        &sandbox.dir.path().join("elsewhere"),
    );
    let patch = format!(
        "- id: session-persistence-jsonl\n  config:\n    root: {}\n",
        display(&sandbox.dir.path().join("elsewhere"))
    );
    sandbox.write("work/moved.yml", &patch);
    let plain = dsh(&sandbox, &["sessions", "list"]);
    assert_ok(&plain);
    assert_eq!(plain.stdout, "");
    let moved = dsh(&sandbox, &["sessions", "--patch", "moved.yml", "list"]);
    assert_ok(&moved);
    assert!(
        moved.stdout.ends_with(&format!(
            "{ZSTD_ID}\t2026-11-29T18:19:58.536Z\t/srv/dsh-demo\t41\n"
        )),
        "{}",
        moved.stdout
    );
}

// ---------------------------------------------------------------------------------------
// DSH_HOME layout
// ---------------------------------------------------------------------------------------

#[test]
fn logs_live_at_dsh_home_sessions_project_id() {
    let sandbox = Sandbox::new();
    sandbox.write("work/raw.yml", RAW_PATCH);
    // The project directory encodes the cwd; the session directory encodes the id.
    sandbox.write(
        "home/sessions/--home-me-My~0020Project--/session~0020a~002Fb/session.jsonl",
        concat!(
            r#"{"type":"session","version":0,"id":"session a/b","createdAt":1000,"cwd":"/home/me/My Project","delegationDepth":0}"#,
            "\n",
            r#"{"type":"turn/start","seq":0,"time":1001,"data":{"turn":1}}"#,
            "\n",
            r#"{"type":"turn/end","seq":1,"time":1002,"data":{"turn":1,"reason":{"kind":"completed"}}}"#,
            "\n",
        ),
    );
    // A header without a cwd lives under _no-cwd.
    sandbox.write(
        "home/sessions/_no-cwd/session-nocwd/session.jsonl",
        concat!(
            r#"{"type":"session","version":0,"id":"session-nocwd","createdAt":2000,"delegationDepth":0}"#,
            "\n",
            r#"{"type":"turn/start","seq":0,"time":2001,"data":{"turn":1}}"#,
            "\n",
            r#"{"type":"turn/end","seq":1,"time":2002,"data":{"turn":1,"reason":{"kind":"completed"}}}"#,
            "\n",
        ),
    );
    let list = dsh(&sandbox, &raw_args(&["list"]));
    assert_ok(&list);
    assert_eq!(
        list.stdout,
        "ID\tCREATED\tCWD\tEVENTS\n\
         session a/b\t1970-01-01T00:00:01.000Z\t/home/me/My Project\t2\n\
         session-nocwd\t1970-01-01T00:00:02.000Z\t-\t2\n"
    );
    let show = dsh(&sandbox, &raw_args(&["show", "session a/b"]));
    assert_ok(&show);
    assert_eq!(
        show.stdout,
        "session session a/b\ncreated 1970-01-01T00:00:01.000Z\ncwd /home/me/My Project\n\n\
         ── turn 1 ──\n── turn 1 ended: completed ──\n"
    );
    let verify = dsh(&sandbox, &raw_args(&["verify"]));
    assert_ok(&verify);
    assert_eq!(
        verify.stdout,
        "ok\tsession a/b\t2 events\nok\tsession-nocwd\t2 events\n"
    );
}

#[test]
fn a_log_outside_its_project_directory_or_in_the_flat_layout_is_refused() {
    let bytes = std::fs::read(zstd_fixture_log()).unwrap();
    // The header's cwd says --srv-dsh-demo--, the directory says otherwise.
    let misplaced = Sandbox::new();
    let path = misplaced.home().join(format!(
        "sessions/--elsewhere--/{ZSTD_ID}/session.jsonl.zstd"
    ));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, &bytes).unwrap();
    for args in [
        &["sessions", "list"][..],
        &["sessions", "verify"],
        &["sessions", "show", ZSTD_ID],
    ] {
        let run = dsh(&misplaced, args);
        assert_eq!(run.code, Some(1), "{args:?}");
        assert!(
            run.stderr.contains(&format!(
                "corrupt session log \"{}\": header id \"{ZSTD_ID}\" and cwd identify",
                display(&path)
            )),
            "{args:?}: {}",
            run.stderr
        );
    }
    // dsh's obsolete flat layout <project>/<id>.jsonl.zstd.
    let flat = Sandbox::new();
    let path = flat
        .home()
        .join(format!("sessions/{PROJECT}/{ZSTD_ID}.jsonl.zstd"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, &bytes).unwrap();
    let run = dsh(&flat, &["sessions", "show", ZSTD_ID]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains(&format!(
            "session artifact \"{}\" uses the unsupported flat-file layout",
            display(&path)
        )),
        "{}",
        run.stderr
    );
}

// ---------------------------------------------------------------------------------------
// list
// ---------------------------------------------------------------------------------------

#[test]
fn list_prints_id_created_cwd_and_events() {
    let sandbox = zstd_sandbox();
    let run = dsh(&sandbox, &["sessions", "list"]);
    assert_ok(&run);
    assert_eq!(
        run.stdout,
        format!(
            "ID\tCREATED\tCWD\tEVENTS\n{ZSTD_ID}\t2026-11-29T18:19:58.536Z\t/srv/dsh-demo\t41\n"
        )
    );
}

/// A raw store holding the raw fixture and the export of the zstd fixture.
pub(super) fn two_session_raw_sandbox() -> Sandbox {
    let zstd = zstd_sandbox();
    let export = dsh(&zstd, &["sessions", "export", ZSTD_ID]);
    assert_ok(&export);
    let sandbox = raw_sandbox();
    sandbox.write(
        &format!("home/sessions/{PROJECT}/{ZSTD_ID}/session.jsonl"),
        &export.stdout,
    );
    sandbox
}

#[test]
fn list_orders_sessions_by_creation_and_json_gives_one_object_per_line() {
    let sandbox = two_session_raw_sandbox();
    let table = dsh(&sandbox, &raw_args(&["list"]));
    assert_ok(&table);
    assert_eq!(
        table.stdout,
        format!(
            "ID\tCREATED\tCWD\tEVENTS\n\
             {ZSTD_ID}\t2026-11-29T18:19:58.536Z\t/srv/dsh-demo\t41\n\
             {RAW_ID}\t2026-11-29T18:19:59.653Z\t/srv/dsh-demo\t57\n"
        )
    );
    let run = dsh(&sandbox, &raw_args(&["list", "--json"]));
    assert_ok(&run);
    let objects: Vec<Value> = run
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(objects.len(), 2, "{}", run.stdout);
    let picked: Vec<Value> = objects
        .iter()
        .map(|object| {
            json!([
                object["id"],
                object["createdAt"],
                object["cwd"],
                object["events"]
            ])
        })
        .collect();
    assert_eq!(
        picked,
        [
            json!([ZSTD_ID, 1_795_976_398_536_u64, "/srv/dsh-demo", 41]),
            json!([RAW_ID, 1_795_976_399_653_u64, "/srv/dsh-demo", 57]),
        ]
    );
    assert!(run.stdout.ends_with("}\n"));
}

// ---------------------------------------------------------------------------------------
// show
// ---------------------------------------------------------------------------------------

#[test]
fn show_renders_the_zstd_fixture() {
    let sandbox = zstd_sandbox();
    let run = dsh(&sandbox, &["sessions", "show", ZSTD_ID]);
    assert_ok(&run);
    for part in [
        "user:\n  Run a shell command that greets me\n",
        "assistant (reasoning):\n  The user wants a shell command run; I will call the bash tool.\n",
        "tool call bash [call_fake_1]:\n",
        "tool result [call_fake_1]:\n  hello-from-dsh\n  Linux\n",
        // The text streamed as a packed text-chunks row.
        "assistant:\n  Done. The last command printed: hello-from-dsh\n  Linux\n",
    ] {
        assert!(run.stdout.contains(part), "{part}\n---\n{}", run.stdout);
    }
    assert!(run.stdout.ends_with("── turn 1 ended: completed ──\n"));
    insta::assert_snapshot!("show_zstd_fixture", run.stdout);
}

#[test]
fn show_renders_the_raw_fixture() {
    let sandbox = raw_sandbox();
    let run = dsh(&sandbox, &raw_args(&["show", RAW_ID]));
    assert_ok(&run);
    assert_eq!(run.stdout.matches("tool call bash [").count(), 2);
    assert_eq!(run.stdout.matches("── turn 1 ").count(), 2);
    insta::assert_snapshot!("show_raw_fixture", run.stdout);
}

// ---------------------------------------------------------------------------------------
// export
// ---------------------------------------------------------------------------------------

/// Every export line lists its keys in dsh's order.
pub(super) fn assert_canonical_key_order(export: &str) {
    const ORDER: [&str; 7] = [
        "type",
        "seq",
        "time",
        "data",
        "sourceEventSeqs",
        "surfaceOp",
        "ignorable",
    ];
    for line in export.lines().skip(1) {
        let value: Value = serde_json::from_str(line).unwrap();
        let positions: Vec<usize> = value
            .as_object()
            .unwrap()
            .keys()
            .map(|key| ORDER.iter().position(|known| known == key).unwrap())
            .collect();
        assert!(positions.is_sorted(), "{line}");
    }
}

#[test]
fn export_of_the_zstd_fixture_is_its_decoded_log_with_packed_rows_expanded() {
    let sandbox = zstd_sandbox();
    let run = dsh(&sandbox, &["sessions", "export", ZSTD_ID]);
    assert_ok(&run);
    let decoded = decoded_zstd_fixture();
    assert!(decoded.contains("\"type\":\"text-chunks\""));
    let expected = expand_log(&decoded);
    assert_eq!(expected.lines().count(), 1 + 41);
    assert_eq!(run.stdout, expected);
    assert!(run.stdout.starts_with(&format!(
        "{{\"type\":\"session\",\"version\":0,\"id\":\"{ZSTD_ID}\",\"createdAt\":1795976398536,\
         \"cwd\":\"/srv/dsh-demo\",\"delegationDepth\":0}}\n"
    )));
    assert!(!run.stdout.contains("-chunks\""));
    assert_canonical_key_order(&run.stdout);
}

#[test]
fn export_of_the_raw_fixture_is_the_log_with_packed_rows_expanded() {
    let sandbox = raw_sandbox();
    let run = dsh(&sandbox, &raw_args(&["export", RAW_ID]));
    assert_ok(&run);
    let expected = expand_log(&raw_fixture_text());
    assert_eq!(expected.lines().count(), 1 + 57);
    assert_eq!(run.stdout, expected);
    assert_canonical_key_order(&run.stdout);
}

#[test]
fn an_export_is_a_raw_log_that_verifies_and_exports_identically() {
    let zstd = zstd_sandbox();
    let export = dsh(&zstd, &["sessions", "export", ZSTD_ID]);
    assert_ok(&export);
    let copy = raw_log_sandbox(ZSTD_ID, &export.stdout);
    let again = dsh(&copy, &raw_args(&["export", ZSTD_ID]));
    assert_ok(&again);
    assert_eq!(again.stdout, export.stdout);
    let verify = dsh(&copy, &raw_args(&["verify"]));
    assert_ok(&verify);
    assert_eq!(verify.stdout, format!("ok\t{ZSTD_ID}\t41 events\n"));
    let show = dsh(&copy, &raw_args(&["show", ZSTD_ID]));
    let original = dsh(&zstd, &["sessions", "show", ZSTD_ID]);
    assert_ok(&show);
    assert_eq!(show.stdout, original.stdout);
}

#[test]
fn export_expands_reasoning_and_tool_call_rows_too() {
    let unpacked = expand_log(&raw_fixture_text());
    let packed = pack_log(&unpacked);
    for kind in ["text-chunks", "reasoning-chunks", "tool-call-chunks"] {
        assert!(
            packed.contains(&format!("{{\"type\":\"{kind}\",")),
            "{kind}"
        );
    }
    assert!(packed.lines().count() < unpacked.lines().count());
    assert_eq!(expand_log(&packed), unpacked);
    let sandbox = raw_log_sandbox(RAW_ID, &packed);
    let run = dsh(&sandbox, &raw_args(&["export", RAW_ID]));
    assert_ok(&run);
    assert_eq!(run.stdout, unpacked);
}

/// A small raw log with plugin payloads exactly as JavaScript's `JSON.stringify` writes
/// them (escapes, key order, integers), and an unknown event marked ignorable.
pub(super) const PLUGIN_LOG: &str = concat!(
    r#"{"type":"session","version":0,"id":"session-plugin","createdAt":1795976399653,"cwd":"/srv/dsh-demo","delegationDepth":0}"#,
    "\n",
    r#"{"type":"turn/start","seq":0,"time":1795976399660,"data":{"turn":1}}"#,
    "\n",
    r#"{"type":"goal/change","seq":1,"time":-5,"data":{"zeta":1,"alpha":{"b":[1,-3,9007199254740991,0],"a":"é \u0001\u001f\t\"q\" \\ / 😀 </script>"},"empty":{},"list":[],"nul":null,"t":true,"f":false}}"#,
    "\n",
    r#"{"type":"mystery/later","seq":2,"time":1795976399661,"data":{"nested":{"z":[{"y":1,"x":2}]}},"ignorable":true}"#,
    "\n",
    r#"{"type":"turn/end","seq":3,"time":1795976399662,"data":{"turn":1,"reason":{"kind":"completed"}}}"#,
    "\n",
);

#[test]
fn export_keeps_plugin_payloads_and_the_ignorable_flag() {
    let sandbox = raw_log_sandbox("session-plugin", PLUGIN_LOG);
    let run = dsh(&sandbox, &raw_args(&["export", "session-plugin"]));
    assert_ok(&run);
    assert_eq!(run.stdout, PLUGIN_LOG);
    let verify = dsh(&sandbox, &raw_args(&["verify", "session-plugin"]));
    assert_ok(&verify);
    assert_eq!(verify.stdout, "ok\tsession-plugin\t4 events\n");
}

/// A raw log of session `session-floats` whose numbers are each what JavaScript's
/// JSON.stringify prints for it (checked with node), so a lossless reader prints them back.
pub(super) const FLOAT_LOG: &str = concat!(
    r#"{"type":"session","version":0,"id":"session-floats","createdAt":1,"cwd":"/srv/dsh-demo","delegationDepth":0}"#,
    "\n",
    r#"{"type":"goal/change","seq":0,"time":1,"data":{"n":[2.5,0.1,1e+21,1.5e-7,0.30000000000000004,0.009729743003845215,7.938960790634156e-14,4.1779613494873047e-13,123456789012345680000]}}"#,
    "\n",
);

#[test]
fn export_keeps_float_payloads_exact() {
    let log = FLOAT_LOG;
    let sandbox = raw_log_sandbox("session-floats", log);
    let run = dsh(&sandbox, &raw_args(&["export", "session-floats"]));
    assert_ok(&run);
    assert_eq!(run.stdout, log);
}

// ---------------------------------------------------------------------------------------
// verify and errors
// ---------------------------------------------------------------------------------------

#[test]
fn verify_passes_good_logs_with_or_without_an_id() {
    let zstd = zstd_sandbox();
    for args in [
        &["sessions", "verify"][..],
        &["sessions", "verify", ZSTD_ID],
    ] {
        let run = dsh(&zstd, args);
        assert_ok(&run);
        assert_eq!(run.stdout, format!("ok\t{ZSTD_ID}\t41 events\n"));
    }
    let raw = raw_sandbox();
    let run = dsh(&raw, &raw_args(&["verify", RAW_ID]));
    assert_ok(&run);
    assert_eq!(run.stdout, format!("ok\t{RAW_ID}\t57 events\n"));
}

/// `verify`, `show` and `export` of `id` all exit 1 with `reason` on stderr; `verify` also
/// prints `bad <id>` on stdout.
fn assert_bad(sandbox: &Sandbox, prefix: &[&str], id: &str, reason: &str) {
    for action in ["verify", "show", "export"] {
        let args: Vec<&str> = prefix.iter().copied().chain([action, id]).collect();
        let run = dsh(sandbox, &args);
        assert_eq!(run.code, Some(1), "{args:?}");
        assert!(
            run.stderr.starts_with("dsh: ") && run.stderr.contains(reason),
            "{args:?}: expected {reason:?} in {}",
            run.stderr
        );
        let stdout = if action == "verify" {
            format!("bad\t{id}\n")
        } else {
            String::new()
        };
        assert_eq!(run.stdout, stdout, "{args:?}");
    }
    let all: Vec<&str> = prefix.iter().copied().chain(["verify"]).collect();
    let run = dsh(sandbox, &all);
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains(reason), "{}", run.stderr);
}

#[test]
fn a_flipped_byte_inside_a_complete_zstd_frame_fails_naming_the_file() {
    let original = std::fs::read(zstd_fixture_log()).unwrap();
    let frames = zstd_frames(&original);
    assert_eq!(frames.len(), 9);
    assert_eq!(frames.last().unwrap().range.end, original.len());
    // The third frame is the large batch at byte 493.
    let frame = &frames[2];
    assert_eq!(frame.range.start, 493);
    let payload = frame.payloads[0].clone();
    let checksum = frame.checksum.clone().unwrap();
    for offset in [payload.start + payload.len() / 2, checksum.start + 1] {
        let sandbox = zstd_sandbox();
        let mut bytes = original.clone();
        bytes[offset] ^= 0x01;
        std::fs::write(zstd_log(&sandbox), &bytes).unwrap();
        assert_bad(
            &sandbox,
            &["sessions"],
            ZSTD_ID,
            "corrupt Zstandard session log: frame at byte 493 failed validation",
        );
        let run = dsh(&sandbox, &["sessions", "verify"]);
        assert!(
            run.stderr
                .contains(&format!("(file: {})", display(&zstd_log(&sandbox)))),
            "{}",
            run.stderr
        );
        // Listed, but as unreadable, with the reason on stderr and exit code 1.
        let list = dsh(&sandbox, &["sessions", "list"]);
        assert_eq!(list.code, Some(1));
        assert!(list.stdout.ends_with("\tunreadable\n"), "{}", list.stdout);
        assert!(
            list.stderr
                .contains("corrupt Zstandard session log: frame at byte 493 failed validation"),
            "{}",
            list.stderr
        );
    }
}

#[test]
fn a_zstd_frame_holding_a_partial_record_is_corruption() {
    let sandbox = zstd_sandbox();
    let mut bytes = std::fs::read(zstd_log(&sandbox)).unwrap();
    bytes.extend(raw_zstd_frame(
        r#"{"type":"turn/start","seq":41,"time":1795976398760,"data":{"turn":2}}"#,
    ));
    std::fs::write(zstd_log(&sandbox), &bytes).unwrap();
    assert_bad(
        &sandbox,
        &["sessions"],
        ZSTD_ID,
        "complete frame contains a torn JSONL record",
    );
}

const NEWER: &str = "uses log format v1, but this harness reads only v0: the log was written by a \
                     newer harness — upgrade the harness to open it";

#[test]
fn a_newer_format_version_is_refused_with_upgrade_advice() {
    let raw = raw_sandbox();
    let text = raw_fixture_text().replacen("\"version\":0", "\"version\":1", 1);
    std::fs::write(raw_log(&raw), text).unwrap();
    assert_bad(&raw, &["sessions", "--patch", "raw.yml"], RAW_ID, NEWER);
    let run = dsh(&raw, &raw_args(&["verify"]));
    assert!(
        run.stderr.contains("written by a newer harness — upgrade"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("(raw log: {})", display(&raw_log(&raw)))),
        "{}",
        run.stderr
    );

    // The same in a zstd log: its header frame rewritten.
    let zstd = zstd_sandbox();
    let bytes = std::fs::read(zstd_log(&zstd)).unwrap();
    let header_end = zstd_frames(&bytes)[0].range.end;
    let header = decoded_zstd_fixture().lines().next().unwrap().replacen(
        "\"version\":0",
        "\"version\":1",
        1,
    );
    let mut patched = raw_zstd_frame(&format!("{header}\n"));
    patched.extend_from_slice(&bytes[header_end..]);
    std::fs::write(zstd_log(&zstd), &patched).unwrap();
    assert_bad(&zstd, &["sessions"], ZSTD_ID, NEWER);
}

#[test]
fn an_unknown_event_type_not_marked_ignorable_is_refused() {
    let unknown = r#"{"type":"mystery/thing","seq":57,"time":1795976399865,"data":{"x":1}}"#;
    let refusal = "contains event type \"mystery/thing\" (seq 57) unknown to this harness and not \
                   marked ignorable; refusing to interpret the log — it was likely written by a \
                   newer harness";
    let sandbox = raw_sandbox();
    std::fs::write(
        raw_log(&sandbox),
        format!("{}{unknown}\n", raw_fixture_text()),
    )
    .unwrap();
    assert_bad(
        &sandbox,
        &["sessions", "--patch", "raw.yml"],
        RAW_ID,
        refusal,
    );

    // Marked ignorable, the same event is fine.
    let ignorable = unknown.replacen("}}", "},\"ignorable\":true}", 1);
    std::fs::write(
        raw_log(&sandbox),
        format!("{}{ignorable}\n", raw_fixture_text()),
    )
    .unwrap();
    let run = dsh(&sandbox, &raw_args(&["verify"]));
    assert_ok(&run);
    assert_eq!(run.stdout, format!("ok\t{RAW_ID}\t58 events\n"));
    let export = dsh(&sandbox, &raw_args(&["export", RAW_ID]));
    assert!(export.stdout.ends_with(&format!("{ignorable}\n")));

    // And in a zstd log, in a frame of its own.
    let zstd = zstd_sandbox();
    let mut bytes = std::fs::read(zstd_log(&zstd)).unwrap();
    bytes.extend(raw_zstd_frame(
        "{\"type\":\"mystery/thing\",\"seq\":41,\"time\":1795976398760,\"data\":{}}\n",
    ));
    std::fs::write(zstd_log(&zstd), &bytes).unwrap();
    assert_bad(
        &zstd,
        &["sessions"],
        ZSTD_ID,
        "contains event type \"mystery/thing\" (seq 41) unknown to this harness",
    );
}

#[test]
fn an_unparsable_line_before_a_turn_end_is_corruption() {
    let sandbox = raw_sandbox();
    let text = raw_fixture_text();
    let mut lines: Vec<&str> = text.lines().collect();
    // After the header and 19 events: the 20th event line.
    lines.insert(20, "{\"type\":\"assistant/chunk\",,,");
    std::fs::write(raw_log(&sandbox), format!("{}\n", lines.join("\n"))).unwrap();
    assert_bad(
        &sandbox,
        &["sessions", "--patch", "raw.yml"],
        RAW_ID,
        &format!(
            "stored session \"{RAW_ID}\" failed validation: corrupt session log: unparsable \
             committed event at line 20 (file: {})",
            display(&raw_log(&sandbox))
        ),
    );
}

#[test]
fn an_unparsable_last_line_is_a_torn_tail_not_corruption() {
    let sandbox = raw_sandbox();
    std::fs::write(
        raw_log(&sandbox),
        format!("{}{{not json\n", raw_fixture_text()),
    )
    .unwrap();
    let runs = every_command(&sandbox, &["sessions", "--patch", "raw.yml"], RAW_ID);
    assert_ok(&runs["verify id"]);
    assert_eq!(
        runs["verify id"].stdout,
        format!("ok\t{RAW_ID}\t57 events\n")
    );
    assert_eq!(runs["export"].stdout, expand_log(&raw_fixture_text()));
}

#[test]
fn verify_of_every_session_reports_each_and_fails_if_one_is_bad() {
    let sandbox = two_session_raw_sandbox();
    let bad = sandbox
        .home()
        .join(format!("sessions/{PROJECT}/{ZSTD_ID}/session.jsonl"));
    let text = std::fs::read_to_string(&bad).unwrap();
    std::fs::write(
        &bad,
        format!("{text}{{\"type\":\"mystery/thing\",\"seq\":41,\"time\":1,\"data\":{{}}}}\n"),
    )
    .unwrap();
    let run = dsh(&sandbox, &raw_args(&["verify"]));
    assert_eq!(run.code, Some(1));
    assert_eq!(
        run.stdout,
        format!("ok\t{RAW_ID}\t57 events\nbad\t{ZSTD_ID}\n")
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with(&format!("dsh: session \"{ZSTD_ID}\" contains event type")),
        "{}",
        run.stderr
    );
}

#[test]
fn an_unknown_id_is_not_found() {
    let sandbox = zstd_sandbox();
    for action in ["show", "export", "verify"] {
        let run = dsh(&sandbox, &["sessions", action, "session-nope"]);
        assert_eq!(run.code, Some(1), "{action}");
        assert_eq!(run.stderr, "dsh: session \"session-nope\" not found\n");
        let stdout = if action == "verify" {
            "bad\tsession-nope\n"
        } else {
            ""
        };
        assert_eq!(run.stdout, stdout, "{action}");
    }
}

#[test]
fn show_and_export_without_an_id_are_usage_errors() {
    let sandbox = zstd_sandbox();
    for action in ["show", "export"] {
        let run = dsh(&sandbox, &["sessions", action]);
        assert_ne!(run.code, Some(0), "{action}");
        assert_eq!(run.stdout, "");
        assert!(
            run.stderr
                .contains("the following required arguments were not provided"),
            "{}",
            run.stderr
        );
        assert!(
            run.stderr
                .contains(&format!("Usage: dsh sessions {action} <ID>")),
            "{}",
            run.stderr
        );
    }
    let bare = dsh(&sandbox, &["sessions"]);
    assert_ne!(bare.code, Some(0));
    assert_eq!(bare.stdout, "");
    let dump = dsh(&sandbox, &["--dump-config", "sessions", "list"]);
    assert_eq!(dump.code, Some(1));
    assert_eq!(
        dump.stderr,
        "error: sessions takes no --dump-config or --dump-default-config\n"
    );
}

#[test]
fn sessions_help_prints_its_examples() {
    let sandbox = Sandbox::new();
    let run = dsh(&sandbox, &["sessions", "--help"]);
    assert_eq!((run.code, run.stderr.as_str()), (Some(0), ""));
    assert!(
        run.stdout
            .contains("dsh sessions export session-1 > s.jsonl"),
        "{}",
        run.stdout
    );
}

// ---------------------------------------------------------------------------------------
// Torn tails and open turns: repaired in memory, never on disk
// ---------------------------------------------------------------------------------------

#[test]
fn no_command_changes_any_log() {
    // Every command, through the guard in `dsh`, on intact, torn, open and corrupt logs.
    let intact_zstd = zstd_sandbox();
    every_command(&intact_zstd, &["sessions"], ZSTD_ID);
    let intact_raw = raw_sandbox();
    every_command(&intact_raw, &["sessions", "--patch", "raw.yml"], RAW_ID);

    let raw_variants = [
        format!(
            "{}{{\"type\":\"step/start\",\"seq\":57,\"ti",
            raw_fixture_text()
        ),
        drop_last_lines(&raw_fixture_text(), 1),
        drop_last_lines(&raw_fixture_text(), 2),
        raw_fixture_text().replacen("\"version\":0", "\"version\":1", 1),
    ];
    for text in raw_variants {
        let sandbox = raw_sandbox();
        std::fs::write(raw_log(&sandbox), &text).unwrap();
        let runs = every_command(&sandbox, &["sessions", "--patch", "raw.yml"], RAW_ID);
        assert_eq!(std::fs::read_to_string(raw_log(&sandbox)).unwrap(), text);
        assert_eq!(runs.len(), 6);
    }

    let bytes = std::fs::read(zstd_fixture_log()).unwrap();
    let last = zstd_frames(&bytes).pop().unwrap().range;
    let mut flipped = bytes.clone();
    flipped[600] ^= 0x10;
    for variant in [
        bytes[..last.start + last.len() / 2].to_vec(),
        bytes[..last.start + 3].to_vec(),
        flipped,
    ] {
        let sandbox = zstd_sandbox();
        std::fs::write(zstd_log(&sandbox), &variant).unwrap();
        every_command(&sandbox, &["sessions"], ZSTD_ID);
        assert_eq!(std::fs::read(zstd_log(&sandbox)).unwrap(), variant);
    }
}

#[test]
fn a_torn_raw_tail_is_left_on_disk_and_ignored() {
    let sandbox = raw_sandbox();
    let text = format!(
        "{}{{\"type\":\"turn/start\",\"seq\":57,\"ti",
        raw_fixture_text()
    );
    std::fs::write(raw_log(&sandbox), &text).unwrap();
    let runs = every_command(&sandbox, &["sessions", "--patch", "raw.yml"], RAW_ID);
    for (name, run) in &runs {
        assert_eq!((name, run.code), (name, Some(0)), "{}", run.stderr);
    }
    assert_eq!(runs["export"].stdout, expand_log(&raw_fixture_text()));
    assert!(
        runs["show"]
            .stdout
            .ends_with("── turn 1 ended: completed ──\n")
    );
    assert!(runs["list"].stdout.ends_with("\t57\n"));
    assert_eq!(runs["verify"].stdout, format!("ok\t{RAW_ID}\t57 events\n"));
}

#[test]
fn a_zstd_log_cut_inside_its_last_frame_reads_to_the_cut_and_closes_the_turn() {
    let intact = zstd_sandbox();
    let full_export = dsh(&intact, &["sessions", "export", ZSTD_ID]).stdout;
    let full_show = dsh(&intact, &["sessions", "show", ZSTD_ID]).stdout;

    let sandbox = zstd_sandbox();
    let bytes = std::fs::read(zstd_log(&sandbox)).unwrap();
    let last = zstd_frames(&bytes).pop().unwrap().range;
    // The last frame holds seqs 29..=40 (step 2's answer and the turn end); the one before
    // ends with step 2's start at seq 28.
    let cut = &bytes[..last.start + last.len() / 2];
    std::fs::write(zstd_log(&sandbox), cut).unwrap();
    let runs = every_command(&sandbox, &["sessions"], ZSTD_ID);
    for (name, run) in &runs {
        assert_eq!((name, run.code), (name, Some(0)), "{}", run.stderr);
    }
    assert_eq!(
        runs["export"].stdout,
        format!(
            "{}{}\n{}\n",
            export_through_seq(&full_export, 28),
            r#"{"type":"step/end","seq":29,"time":1795976398747,"data":{"turn":1,"step":2}}"#,
            r#"{"type":"turn/end","seq":30,"time":1795976398747,"data":{"turn":1,"reason":{"kind":"interrupted"}}}"#,
        )
    );
    let answer = full_show.find("assistant:\n  Done.").unwrap();
    assert_eq!(
        runs["show"].stdout,
        format!(
            "{}── turn 1 ended: interrupted (the process stopped mid-turn) ──\n",
            &full_show[..answer]
        )
    );
    assert!(
        runs["list"].stdout.ends_with("\t29\n"),
        "{}",
        runs["list"].stdout
    );
    assert_eq!(runs["verify"].stdout, format!("ok\t{ZSTD_ID}\t31 events\n"));
}

#[test]
fn an_open_turn_exports_with_an_interrupted_turn_end() {
    let intact = raw_sandbox();
    let full_export = dsh(&intact, &raw_args(&["export", RAW_ID])).stdout;
    let full_show = dsh(&intact, &raw_args(&["show", RAW_ID])).stdout;

    // The log ends after step 3's end: the turn is open, no step is.
    let sandbox = raw_sandbox();
    let text = drop_last_lines(&raw_fixture_text(), 1);
    assert!(text.ends_with("\"data\":{\"turn\":1,\"step\":3}}\n"));
    std::fs::write(raw_log(&sandbox), &text).unwrap();
    let runs = every_command(&sandbox, &["sessions", "--patch", "raw.yml"], RAW_ID);
    assert_eq!(
        runs["export"].stdout,
        format!(
            "{}{}\n",
            export_through_seq(&full_export, 55),
            r#"{"type":"turn/end","seq":56,"time":1795976399863,"data":{"turn":1,"reason":{"kind":"interrupted"}}}"#,
        )
    );
    assert_eq!(
        runs["show"].stdout,
        full_show.replace(
            "── turn 1 ended: completed ──\n",
            "── turn 1 ended: interrupted (the process stopped mid-turn) ──\n"
        )
    );
    assert!(
        runs["list"].stdout.ends_with("\t56\n"),
        "{}",
        runs["list"].stdout
    );
    assert_ok(&runs["verify id"]);
    assert_eq!(
        runs["verify id"].stdout,
        format!("ok\t{RAW_ID}\t57 events\n")
    );

    // The export is a balanced log: loaded as-is, it needs no closers.
    let copy = raw_log_sandbox(RAW_ID, &runs["export"].stdout);
    let again = dsh(&copy, &raw_args(&["export", RAW_ID]));
    assert_eq!(again.stdout, runs["export"].stdout);
}

#[test]
fn an_open_step_is_closed_before_the_turn() {
    let intact = raw_sandbox();
    let full_export = dsh(&intact, &raw_args(&["export", RAW_ID])).stdout;
    let sandbox = raw_sandbox();
    std::fs::write(raw_log(&sandbox), drop_last_lines(&raw_fixture_text(), 2)).unwrap();
    let run = dsh(&sandbox, &raw_args(&["export", RAW_ID]));
    assert_ok(&run);
    assert_eq!(
        run.stdout,
        format!(
            "{}{}\n{}\n",
            export_through_seq(&full_export, 54),
            r#"{"type":"step/end","seq":55,"time":1795976399863,"data":{"turn":1,"step":3}}"#,
            r#"{"type":"turn/end","seq":56,"time":1795976399863,"data":{"turn":1,"reason":{"kind":"interrupted"}}}"#,
        )
    );
    let show = dsh(&sandbox, &raw_args(&["show", RAW_ID]));
    assert!(
        show.stdout
            .ends_with("── turn 1 ended: interrupted (the process stopped mid-turn) ──\n"),
        "{}",
        show.stdout
    );
}

/// The raw fixture cut right after step 2's `tool/call` (seq 40): a call with no result.
fn pending_call_sandbox() -> Sandbox {
    let sandbox = raw_sandbox();
    let full = raw_fixture_text();
    let text: Vec<&str> = full.lines().take(42).collect();
    assert!(text[41].starts_with("{\"type\":\"tool/call\",\"seq\":40,"));
    std::fs::write(raw_log(&sandbox), format!("{}\n", text.join("\n"))).unwrap();
    sandbox
}

#[test]
fn a_pending_tool_call_gets_an_outcome_unknown_result_in_memory() {
    let sandbox = pending_call_sandbox();
    let runs = every_command(&sandbox, &["sessions", "--patch", "raw.yml"], RAW_ID);
    let export = &runs["export"].stdout;
    let closers: Vec<Value> = export
        .lines()
        .skip(1 + 41)
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(closers.len(), 3, "{export}");
    let result = &closers[0];
    assert_eq!(
        json!([
            result["type"],
            result["seq"],
            result["time"],
            result["surfaceOp"],
            result["sourceEventSeqs"]
        ]),
        json!(["tool/result", 41, 1_795_976_399_839_u64, "append", [40]])
    );
    assert_eq!(
        result["data"]["error"],
        json!({"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"})
    );
    let message = &result["data"]["message"];
    assert_eq!(
        json!([message["id"], message["role"], message["source"]]),
        json!([
            "interrupted-tool-result-call_fake_2-41",
            "user",
            {"kind": "tool", "callId": "call_fake_2"}
        ])
    );
    assert_eq!(message["content"][0]["toolCallId"], "call_fake_2");
    assert_eq!(message["content"][0]["isError"], true);
    assert_eq!(
        closers[1],
        json!({"type": "step/end", "seq": 42, "time": 1_795_976_399_839_u64, "data": {"turn": 1, "step": 2}})
    );
    assert_eq!(
        closers[2],
        json!({"type": "turn/end", "seq": 43, "time": 1_795_976_399_839_u64, "data": {"turn": 1, "reason": {"kind": "interrupted"}}})
    );
    let show = &runs["show"].stdout;
    assert!(
        show.contains(
            "tool result [call_fake_2] (TOOL_OUTCOME_UNKNOWN):\n  The tool call was interrupted"
        ),
        "{show}"
    );
    assert!(show.ends_with("── turn 1 ended: interrupted (the process stopped mid-turn) ──\n"));
    assert_eq!(
        runs["verify id"].stdout,
        format!("ok\t{RAW_ID}\t44 events\n")
    );
}

#[test]
fn crash_closers_export_in_the_canonical_key_order() {
    let sandbox = pending_call_sandbox();
    let run = dsh(&sandbox, &raw_args(&["export", RAW_ID]));
    assert_ok(&run);
    assert_canonical_key_order(&run.stdout);
}
