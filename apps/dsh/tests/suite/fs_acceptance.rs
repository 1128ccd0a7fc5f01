//! Acceptance probes of the file tools through the real `dsh` binary, written from
//! `fs-tools-spec.md` by an independent checker: `dsh tools call` outside any session, and
//! headless turns against the fake DeepSeek server whose logs export as dsh events. The data
//! differs from `fs_tools.rs` on purpose (CRLF and mixed line endings, unicode, no trailing
//! newline, empty files, links out of the workspace, over-cap searches, ...).
//!
//! Tests marked `#[ignore = "BUG: …"]` pin a behaviour the spec requires and dsh does not have
//! yet; they pass once it is fixed.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use dsh_test_support::fake_deepseek::{FakeDeepSeek, Reply};
use dsh_test_support::sse::{tool_call_events, usage};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::fs_tools::structure;
use super::headless::{against, answer, exported, headless, only_session, run, tool_results};
use super::support::{NOBODY, Run, Sandbox, repo_root};

const FS_TOOLS: [&str; 7] = [
    "edit",
    "glob",
    "grep",
    "read",
    "read_image",
    "str_replace_editor",
    "write",
];

const HINT: &str = "[sandbox: escalation available — retry this exact operation once with sandbox_permissions (the narrowest wider mode that suffices) + justification; the approval prompt asks the user]";

const CLIPPED: &str = "<response clipped><NOTE>To save on context only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>";

// ---------------------------------------------------------------------------------------------
// Helpers

/// The workspace of `sandbox`, canonical (the display paths dsh shows are absolute).
fn work(sandbox: &Sandbox) -> PathBuf {
    std::fs::canonicalize(sandbox.work()).unwrap()
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// A directory outside every writable root (not under `/tmp`, which a `/tmp` workspace makes
/// writable).
fn outside() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// `dsh tools call name args` in the sandbox.
fn call(sandbox: &Sandbox, name: &str, args: &Value) -> Run {
    call_env(sandbox, name, args, &[])
}

fn call_env(sandbox: &Sandbox, name: &str, args: &Value, env: &[(&str, &str)]) -> Run {
    let mut command = sandbox.command(&["tools", "call", name, &args.to_string()]);
    for (key, value) in env {
        command.env(key, value);
    }
    Run::from(command.output().unwrap())
}

/// A successful call's text (what the model reads), checked to be exit 0.
fn ok(sandbox: &Sandbox, name: &str, args: &Value) -> String {
    let run = call(sandbox, name, args);
    assert_eq!(
        run.code,
        Some(0),
        "{name} {args}: {}{}",
        run.stdout,
        run.stderr
    );
    no_panic(&run);
    run.stdout.strip_suffix('\n').unwrap().to_owned()
}

/// `text` as [`ok`] returns it: `dsh tools call` prints a text that ends in a newline as it
/// is and adds one to any other, and [`ok`] takes one off.
fn printed(text: &str) -> &str {
    text.strip_suffix('\n').unwrap_or(text)
}

/// A failed call's text without the `Error: ` frame, and the code from stderr (`None` for a
/// plain error).
fn err(sandbox: &Sandbox, name: &str, args: &Value) -> (String, Option<String>) {
    failed(&call(sandbox, name, args), &format!("{name} {args}"))
}

fn failed(run: &Run, what: &str) -> (String, Option<String>) {
    assert_eq!(run.code, Some(1), "{what}: {}{}", run.stdout, run.stderr);
    no_panic(run);
    let text = run
        .stdout
        .strip_prefix("Error: ")
        .unwrap_or_else(|| panic!("{what}: {}", run.stdout))
        .strip_suffix('\n')
        .unwrap()
        .to_owned();
    let code = run
        .stderr
        .split_once("failed (")
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(code, _)| code.to_owned());
    (text, code)
}

fn no_panic(run: &Run) {
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert!(!run.stdout.contains("panicked"), "{}", run.stdout);
}

/// dsh's read envelope around `body` (numbered lines, a blank line, then the footer).
fn envelope(path: &Path, lines: &[(usize, &str)], footer: &str) -> String {
    let mut content = String::new();
    for (number, text) in lines {
        content.push_str(&format!("{number}: {text}\n"));
    }
    if !lines.is_empty() {
        content.push('\n');
    }
    format!(
        "<path>{}</path>\n<type>file</type>\n<content>\n{content}{footer}\n</content>",
        path.display()
    )
}

/// Sets the modification time of `path` to `seconds` after the epoch.
fn set_mtime(path: &Path, seconds: u64) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(seconds))
        .unwrap();
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Every entry under `dir` (recursively), for "nothing else changed" checks.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            out.push(path.strip_prefix(base).unwrap().display().to_string());
            if path.is_dir() && !path.is_symlink() {
                walk(&path, base, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn tool_call(id: &str, name: &str, args: &Value) -> Reply {
    Reply::sse(tool_call_events(
        id,
        name,
        &args.to_string(),
        2,
        Some(usage(100, 10, None, None)),
    ))
}

/// What one scripted headless turn produced.
struct Turn {
    /// The text of each tool result the model was sent, in call order.
    results: Vec<String>,
    /// The `tool/result` events of the exported log, in call order.
    logged: Vec<Value>,
    /// The whole exported log.
    log: Vec<Value>,
    /// The first request's body (system prompt, tools).
    first: Value,
    id: String,
}

/// One headless turn whose model makes `calls` one after another (ids `call_0`, ...), then
/// answers `done`.
async fn turn(sandbox: &Sandbox, calls: &[(&str, Value)]) -> Turn {
    turn_env(sandbox, calls, &[]).await
}

async fn turn_env(sandbox: &Sandbox, calls: &[(&str, Value)], env: &[(&str, &str)]) -> Turn {
    let fake = FakeDeepSeek::start().await.unwrap();
    for (index, (name, args)) in calls.iter().enumerate() {
        fake.push(tool_call(&format!("call_{index}"), name, args));
    }
    fake.push(answer("done"));
    finish(sandbox, &fake, calls.len(), env).await
}

async fn finish(
    sandbox: &Sandbox,
    fake: &FakeDeepSeek,
    calls: usize,
    env: &[(&str, &str)],
) -> Turn {
    let mut command = against(sandbox, fake, &headless(&["work on the files"]));
    for (key, value) in env {
        command.env(key, value);
    }
    let done = run(command).await;
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    assert!(!done.stderr.contains("panicked"), "{}", done.stderr);
    assert_eq!(done.stdout, "done\n");
    let requests = fake.requests();
    let last = &requests.last().unwrap().body;
    let results: Vec<String> = tool_results(last)
        .into_iter()
        .map(|(_, text)| text)
        .collect();
    assert_eq!(results.len(), calls, "{results:#?}");
    let id = only_session(sandbox);
    let log = exported(sandbox, &id);
    let logged: Vec<Value> = log
        .iter()
        .filter(|event| event["type"] == "tool/result")
        .cloned()
        .collect();
    assert_eq!(logged.len(), calls);
    Turn {
        results,
        logged,
        log,
        first: requests[0].body.clone(),
        id,
    }
}

impl Turn {
    /// The persisted `error` of result `index` (`null` when none).
    fn error(&self, index: usize) -> &Value {
        &self.logged[index]["data"]["error"]
    }

    fn meta(&self, index: usize) -> &Value {
        &self.logged[index]["data"]["meta"]
    }

    fn is_error(&self, index: usize) -> bool {
        self.logged[index]["data"]["message"]["content"][0]["isError"] == json!(true)
    }
}

fn fs_error(code: &str) -> Value {
    json!({"name": "FsError", "code": code})
}

// ---------------------------------------------------------------------------------------------
// Schemas

/// `body.tools` of line 1 of dsh 0.1.1's recorded request, by tool name: from `shared/` beside
/// the repository when it is there, else `None`.
fn recorded_tools() -> Option<serde_json::Map<String, Value>> {
    let path = repo_root()
        .join("../shared/fixtures/dsh-0.1.1/01-zstd-default-one-bash/llm-requests.jsonl");
    let text = std::fs::read_to_string(path).ok()?;
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    Some(
        first["body"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| {
                (
                    tool["function"]["name"].as_str().unwrap().to_owned(),
                    tool["function"].clone(),
                )
            })
            .collect(),
    )
}

#[test]
fn listed_schemas_equal_the_recorded_request_body() {
    let sandbox = Sandbox::new();
    let run = sandbox.run(&["tools", "list", "--json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let listed: Vec<Value> = run
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let in_repo: Value = serde_json::from_str(
        &std::fs::read_to_string(
            repo_root().join("apps/dsh/tests/fixtures/dsh-0.1.1/fs-tool-parameters.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let recorded = recorded_tools();
    for name in FS_TOOLS {
        let tool = listed
            .iter()
            .find(|tool| tool["name"] == name)
            .unwrap_or_else(|| panic!("{name} is listed"));
        let ours = structure(&tool["parameters"]);
        let reference = match &recorded {
            Some(recorded) => structure(&recorded[name]["parameters"]),
            None => in_repo[name].clone(),
        };
        assert_eq!(ours, reference, "{name}");
        assert_eq!(ours.to_string(), reference.to_string(), "{name}: key order");
        // The parameter roots are open objects, as dsh's are.
        assert!(tool["parameters"].get("additionalProperties").is_none());
    }
    // The in-repo copy is the recording's.
    if let Some(recorded) = recorded {
        for name in FS_TOOLS {
            assert_eq!(
                in_repo[name],
                structure(&recorded[name]["parameters"]),
                "{name}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// read, through `dsh tools call`

#[test]
fn read_renders_crlf_unicode_unterminated_and_empty_files() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    std::fs::write(work.join("crlf.txt"), "first\r\nsecond\r\n\r\nfourth\r\n").unwrap();
    std::fs::write(work.join("uni.md"), "# Überschrift ✓\n日本語のテキスト\n").unwrap();
    std::fs::write(work.join("tail.txt"), "one\ntwo\nthree").unwrap();
    std::fs::write(work.join("empty.txt"), "").unwrap();
    std::fs::write(work.join("newline.txt"), "\n").unwrap();
    std::fs::write(work.join("blank.txt"), "a\n\n").unwrap();
    std::fs::write(work.join("lone-cr.txt"), "a\rb\r\r\n").unwrap();
    std::fs::write(work.join("bom.txt"), "\u{feff}with a mark\n").unwrap();
    let read = |name: &str| ok(&sandbox, "read", &json!({"file_path": name}));
    assert_eq!(
        read("crlf.txt"),
        envelope(
            &work.join("crlf.txt"),
            &[(1, "first"), (2, "second"), (3, ""), (4, "fourth")],
            "(End of file - total 4 lines)"
        )
    );
    assert_eq!(
        read("uni.md"),
        envelope(
            &work.join("uni.md"),
            &[(1, "# Überschrift ✓"), (2, "日本語のテキスト")],
            "(End of file - total 2 lines)"
        )
    );
    assert_eq!(
        read("tail.txt"),
        envelope(
            &work.join("tail.txt"),
            &[(1, "one"), (2, "two"), (3, "three")],
            "(End of file - total 3 lines)"
        )
    );
    assert_eq!(
        read("empty.txt"),
        envelope(
            &work.join("empty.txt"),
            &[],
            "(End of file - total 0 lines)"
        )
    );
    assert_eq!(
        read("newline.txt"),
        envelope(
            &work.join("newline.txt"),
            &[(1, "")],
            "(End of file - total 1 lines)"
        )
    );
    assert_eq!(
        read("blank.txt"),
        envelope(
            &work.join("blank.txt"),
            &[(1, "a"), (2, "")],
            "(End of file - total 2 lines)"
        )
    );
    // One trailing `\r` per line is stripped; a lone `\r` stays.
    assert_eq!(
        read("lone-cr.txt"),
        envelope(
            &work.join("lone-cr.txt"),
            &[(1, "a\rb\r")],
            "(End of file - total 1 lines)"
        )
    );
    assert_eq!(
        read("bom.txt"),
        envelope(
            &work.join("bom.txt"),
            &[(1, "with a mark")],
            "(End of file - total 1 lines)"
        )
    );
    // A path with `.` and `..` segments shows resolved.
    std::fs::create_dir(work.join("sub")).unwrap();
    assert_eq!(read("./sub/../tail.txt"), read("tail.txt"));
}

#[test]
fn read_windows_and_argument_checks() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    let text: String = (1..=12).map(|n| format!("row {n}\n")).collect();
    std::fs::write(work.join("rows.txt"), &text).unwrap();
    std::fs::write(work.join("empty.txt"), "").unwrap();
    let path = work.join("rows.txt");
    assert_eq!(
        ok(
            &sandbox,
            "read",
            &json!({"file_path": "rows.txt", "offset": 11})
        ),
        envelope(
            &path,
            &[(11, "row 11"), (12, "row 12")],
            "(End of file - total 12 lines)"
        )
    );
    assert_eq!(
        ok(
            &sandbox,
            "read",
            &json!({"file_path": "rows.txt", "offset": 3, "limit": 2})
        ),
        envelope(
            &path,
            &[(3, "row 3"), (4, "row 4")],
            "(Showing lines 3-4 of 12. Use offset=5 to continue.)"
        )
    );
    // The window ending exactly at the last line is the end of the file.
    assert_eq!(
        ok(
            &sandbox,
            "read",
            &json!({"file_path": "rows.txt", "offset": 12, "limit": 1})
        ),
        envelope(&path, &[(12, "row 12")], "(End of file - total 12 lines)")
    );
    // limit 2000 is the cap, and allowed.
    assert!(
        ok(
            &sandbox,
            "read",
            &json!({"file_path": "rows.txt", "limit": 2000})
        )
        .contains("12: row 12")
    );
    // An empty file at offset 1 has no lines; any other offset is out of range.
    assert_eq!(
        ok(
            &sandbox,
            "read",
            &json!({"file_path": "empty.txt", "offset": 1})
        ),
        envelope(
            &work.join("empty.txt"),
            &[],
            "(End of file - total 0 lines)"
        )
    );
    let shown = shown(&path);
    let cases = [
        (
            json!({"file_path": "rows.txt", "offset": 13}),
            format!("offset 13 is out of range for \"{shown}\" (12 lines)"),
            Some("FS_NOT_FOUND"),
        ),
        (
            json!({"file_path": "empty.txt", "offset": 2}),
            format!(
                "offset 2 is out of range for \"{}\" (0 lines)",
                work.join("empty.txt").display()
            ),
            Some("FS_NOT_FOUND"),
        ),
        (
            json!({"file_path": "rows.txt", "offset": 0}),
            "offset must be a positive integer".to_owned(),
            None,
        ),
        (
            json!({"file_path": "rows.txt", "offset": -3}),
            "offset must be a positive integer".to_owned(),
            None,
        ),
        (
            json!({"file_path": "rows.txt", "offset": 2.5}),
            "offset must be a positive integer".to_owned(),
            None,
        ),
        (
            json!({"file_path": "rows.txt", "limit": 0}),
            "limit must be a positive integer".to_owned(),
            None,
        ),
        (
            json!({"file_path": "rows.txt", "limit": 1.5}),
            "limit must be a positive integer".to_owned(),
            None,
        ),
        (
            json!({"file_path": "rows.txt", "limit": 2001}),
            "limit must be less than or equal to 2000".to_owned(),
            None,
        ),
        (
            json!({"file_path": "rows.txt", "limit": "5"}),
            "invalid arguments: \"limit\" must be a number".to_owned(),
            Some("INVALID_ARGS"),
        ),
        (
            json!({"file_path": 7}),
            "invalid arguments: \"file_path\" must be a string".to_owned(),
            Some("INVALID_ARGS"),
        ),
        (
            json!({"offset": 1}),
            "invalid arguments: missing required property \"file_path\"".to_owned(),
            Some("INVALID_ARGS"),
        ),
        (
            json!({"file_path": " \t "}),
            "file_path must be a non-empty string".to_owned(),
            None,
        ),
    ];
    for (args, text, code) in cases {
        assert_eq!(
            err(&sandbox, "read", &args),
            (text, code.map(str::to_owned)),
            "{args}"
        );
    }
    // Extra keys are accepted (open roots).
    assert!(
        ok(
            &sandbox,
            "read",
            &json!({"file_path": "rows.txt", "limit": 1, "extra": true})
        )
        .contains("1: row 1")
    );
}

#[test]
fn read_caps_lines_line_length_and_bytes() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    // A 2500-line file: the default limit is 2000 lines.
    let many: String = (1..=2500).map(|n| format!("{n}\n")).collect();
    std::fs::write(work.join("many.txt"), many).unwrap();
    let text = ok(&sandbox, "read", &json!({"file_path": "many.txt"}));
    assert!(text.ends_with("\n2000: 2000\n\n(Showing lines 1-2000 of 2500. Use offset=2001 to continue.)\n</content>"), "{}", &text[text.len() - 200..]);
    let rest = ok(
        &sandbox,
        "read",
        &json!({"file_path": "many.txt", "offset": 2001}),
    );
    assert!(
        rest.contains("\n2001: 2001\n")
            && rest.ends_with("2500: 2500\n\n(End of file - total 2500 lines)\n</content>")
    );
    // A line over 2000 UTF-16 code units is cut: ASCII, and astral characters counting two.
    std::fs::write(
        work.join("long.txt"),
        format!("short\n{}\n{}\n", "x".repeat(2001), "😀".repeat(1500)),
    )
    .unwrap();
    assert_eq!(
        ok(&sandbox, "read", &json!({"file_path": "long.txt"})),
        envelope(
            &work.join("long.txt"),
            &[
                (1, "short"),
                (
                    2,
                    &format!("{}... (line truncated to 2000 chars)", "x".repeat(2000))
                ),
                (
                    3,
                    &format!("{}... (line truncated to 2000 chars)", "😀".repeat(1000))
                ),
            ],
            "(End of file - total 3 lines)"
        )
    );
    // 51200 bytes of kept text: 100-byte lines plus one per line after the first fit 506.
    let wide: String = (0..1000)
        .map(|_| format!("{}\n", "w".repeat(100)))
        .collect();
    std::fs::write(work.join("wide.txt"), wide).unwrap();
    let text = ok(&sandbox, "read", &json!({"file_path": "wide.txt"}));
    assert!(
        text.contains(&format!("\n506: {}\n\n", "w".repeat(100))),
        "{}",
        &text[text.len() - 300..]
    );
    assert!(!text.contains("\n507: "));
    assert!(text.ends_with(
        "\n\n(Output capped. Showing lines 1-506. Use offset=507 to continue.)\n</content>"
    ));
    // The cap applies from the offset on.
    let text = ok(
        &sandbox,
        "read",
        &json!({"file_path": "wide.txt", "offset": 900}),
    );
    assert!(text.ends_with("\n\n(End of file - total 1000 lines)\n</content>"));
}

#[test]
fn read_refuses_what_is_not_a_text_file() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    std::fs::write(work.join("nul.txt"), b"text\x00more\n").unwrap();
    std::fs::write(work.join("utf16.txt"), b"\xff\xfeh\x00i\x00").unwrap();
    std::fs::write(work.join("cp1252.txt"), b"na\xefve \x93quote\x94\n").unwrap();
    std::fs::write(work.join("cut.txt"), b"half \xe2\x82").unwrap();
    // A NUL past the first 8192 bytes is text (it is valid UTF-8).
    let mut late = vec![b'a'; 9000];
    late.extend_from_slice(b"\x00\n");
    std::fs::write(work.join("late-nul.txt"), &late).unwrap();
    std::fs::create_dir(work.join("folder")).unwrap();
    std::fs::write(work.join("file"), "x").unwrap();
    nix::unistd::mkfifo(&work.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    std::os::unix::fs::symlink("nowhere", work.join("dangling")).unwrap();
    let p = |name: &str| shown(&work.join(name));
    let cases = [
        (
            "nul.txt",
            format!("cannot read \"{}\": binary file", p("nul.txt")),
            "FS_NOT_TEXT",
        ),
        (
            "utf16.txt",
            format!("cannot read \"{}\": binary file", p("utf16.txt")),
            "FS_NOT_TEXT",
        ),
        (
            "cp1252.txt",
            format!("cannot read \"{}\": invalid UTF-8 text", p("cp1252.txt")),
            "FS_NOT_TEXT",
        ),
        (
            "cut.txt",
            format!("cannot read \"{}\": invalid UTF-8 text", p("cut.txt")),
            "FS_NOT_TEXT",
        ),
        (
            "folder",
            format!("cannot read \"{}\": not a regular file", p("folder")),
            "FS_NOT_REGULAR_FILE",
        ),
        (
            "pipe",
            format!("cannot read \"{}\": not a regular file", p("pipe")),
            "FS_NOT_REGULAR_FILE",
        ),
        (
            "/dev/null",
            "cannot read \"/dev/null\": not a regular file".to_owned(),
            "FS_NOT_REGULAR_FILE",
        ),
        (
            "dangling",
            format!("cannot read \"{}\": not found", p("dangling")),
            "FS_NOT_FOUND",
        ),
        (
            "gone/deeper.txt",
            format!("cannot read \"{}\": not found", p("gone/deeper.txt")),
            "FS_NOT_FOUND",
        ),
        (
            "file/child",
            format!(
                "cannot resolve \"{}\": a parent path segment is not a directory",
                p("file/child")
            ),
            "FS_NOT_FOUND",
        ),
    ];
    for (path, text, code) in cases {
        assert_eq!(
            err(&sandbox, "read", &json!({"file_path": path})),
            (text, Some(code.to_owned())),
            "{path}"
        );
    }
    let text = ok(&sandbox, "read", &json!({"file_path": "late-nul.txt"}));
    assert!(
        text.contains("... (line truncated to 2000 chars)"),
        "{text}"
    );
    // A NUL in the path is a clear error of every tool, never a panic.
    for (name, args) in [
        ("read", json!({"file_path": "a\u{0}b"})),
        ("write", json!({"file_path": "a\u{0}b", "content": "x"})),
        (
            "edit",
            json!({"file_path": "a\u{0}b", "old_string": "x", "new_string": "y"}),
        ),
        (
            "str_replace_editor",
            json!({"command": "view", "path": format!("{}/a\u{0}b", work.display())}),
        ),
        ("glob", json!({"pattern": "*", "path": "a\u{0}b"})),
        ("grep", json!({"pattern": "x", "path": "a\u{0}b"})),
    ] {
        let (text, _) = err(&sandbox, name, &args);
        assert!(!text.is_empty(), "{name}");
    }
    assert!(!work.join("a").exists());
}

#[test]
fn read_streams_a_one_gigabyte_file() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    // Text in the first 8192 bytes, then a sparse gigabyte of NULs (valid UTF-8, one line).
    let head: String = (1..=110).map(|n| format!("{n:079}\n")).collect();
    let file = std::fs::File::create(work.join("giant.txt")).unwrap();
    std::io::Write::write_all(&mut &file, head.as_bytes()).unwrap();
    file.set_len(1 << 30).unwrap();
    drop(file);
    let text = ok(
        &sandbox,
        "read",
        &json!({"file_path": "giant.txt", "offset": 110, "limit": 2}),
    );
    assert_eq!(
        text,
        envelope(
            &work.join("giant.txt"),
            &[
                (110, &format!("{:079}", 110)),
                (
                    111,
                    &format!("{}... (line truncated to 2000 chars)", "\0".repeat(2000))
                ),
            ],
            "(End of file - total 111 lines)"
        )
    );
    // A gigabyte that is NULs from the start is binary.
    let file = std::fs::File::create(work.join("zeros.txt")).unwrap();
    file.set_len(1 << 30).unwrap();
    assert_eq!(
        err(&sandbox, "read", &json!({"file_path": "zeros.txt"}))
            .1
            .as_deref(),
        Some("FS_NOT_TEXT")
    );
}

// ---------------------------------------------------------------------------------------------
// write and edit outside a session, and the sandbox fence

#[test]
fn write_creates_owner_only_files_and_refuses_non_files() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    let made = ok(
        &sandbox,
        "write",
        &json!({"file_path": "deep/er/new.txt", "content": "α\r\nβ"}),
    );
    assert_eq!(
        made,
        format!(
            "<path>{}</path>\n<type>file</type>\n<content>\nCreated file\n</content>",
            work.join("deep/er/new.txt").display()
        )
    );
    // Written verbatim (no line-ending rewrite), owner-only.
    assert_eq!(
        std::fs::read(work.join("deep/er/new.txt")).unwrap(),
        "α\r\nβ".as_bytes()
    );
    assert_eq!(mode(&work.join("deep/er/new.txt")), 0o600);
    ok(
        &sandbox,
        "write",
        &json!({"file_path": "empty.txt", "content": ""}),
    );
    assert_eq!(std::fs::read(work.join("empty.txt")).unwrap(), b"");
    std::fs::create_dir(work.join("folder")).unwrap();
    std::fs::write(work.join("plain"), "x").unwrap();
    let p = |name: &str| shown(&work.join(name));
    assert_eq!(
        err(
            &sandbox,
            "write",
            &json!({"file_path": "folder", "content": "x"})
        ),
        (
            format!("cannot write \"{}\": not a regular file", p("folder")),
            Some("FS_NOT_REGULAR_FILE".to_owned())
        )
    );
    assert_eq!(
        err(
            &sandbox,
            "write",
            &json!({"file_path": "plain/child.txt", "content": "x"})
        ),
        (
            format!(
                "cannot resolve \"{}\": a parent path segment is not a directory",
                p("plain/child.txt")
            ),
            Some("FS_NOT_FOUND".to_owned())
        )
    );
    // Outside a session nothing was read, so an existing file is never replaced.
    assert_eq!(
        err(
            &sandbox,
            "write",
            &json!({"file_path": "plain", "content": "y"})
        ),
        (
            format!(
                "cannot overwrite existing \"{}\" without reading it first — read the file, then retry",
                p("plain")
            ),
            Some("FS_NOT_OBSERVED".to_owned())
        )
    );
    assert_eq!(std::fs::read_to_string(work.join("plain")).unwrap(), "x");
    // No staging directories are left behind.
    assert_eq!(
        tree(&work),
        [
            "deep",
            "deep/er",
            "deep/er/new.txt",
            "empty.txt",
            "folder",
            "plain"
        ]
    );
    for args in [
        json!({"file_path": "x.txt"}),
        json!({"file_path": "x.txt", "content": 5}),
    ] {
        let (_, code) = err(&sandbox, "write", &args);
        assert_eq!(code.as_deref(), Some("INVALID_ARGS"), "{args}");
    }
    assert_eq!(
        err(&sandbox, "write", &json!({"file_path": "", "content": "x"})),
        ("file_path must be a non-empty string".to_owned(), None)
    );
}

#[test]
fn writes_that_leave_the_workspace_are_denied_and_change_nothing() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    let outside = outside();
    let out = outside.path().canonicalize().unwrap();
    std::fs::write(out.join("secret.txt"), "keep\n").unwrap();
    std::os::unix::fs::symlink(&out, work.join("portal")).unwrap();
    std::os::unix::fs::symlink(out.join("secret.txt"), work.join("alias.txt")).unwrap();
    std::os::unix::fs::symlink(out.join("future.txt"), work.join("dangling.txt")).unwrap();
    // `..` from the workspace to the outside directory.
    let ups = "../".repeat(work.components().count() - 1);
    let climbing = format!(
        "{ups}{}",
        out.join("climb.txt")
            .display()
            .to_string()
            .trim_start_matches('/')
    );
    let denied = format!("[sandbox: file access denied under workspace-write mode]\n{HINT}");
    for path in [
        shown(&out.join("abs.txt")),
        "portal/new.txt".to_owned(),
        "portal/secret.txt".to_owned(),
        "alias.txt".to_owned(),
        climbing,
    ] {
        assert_eq!(
            err(
                &sandbox,
                "write",
                &json!({"file_path": path, "content": "gone"})
            ),
            (denied.clone(), Some("FS_SANDBOX_DENIED".to_owned())),
            "{path}"
        );
    }
    // A denied write creates no directory on the way.
    for path in [
        shown(&out.join("newdir/deeper/x.txt")),
        "portal/made-dir/x.txt".to_owned(),
    ] {
        assert_eq!(
            err(
                &sandbox,
                "write",
                &json!({"file_path": path, "content": "x"})
            )
            .1
            .as_deref(),
            Some("FS_SANDBOX_DENIED"),
            "{path}"
        );
    }
    // The editor is denied with the first line only.
    assert_eq!(
        err(
            &sandbox,
            "str_replace_editor",
            &json!({"command": "create", "path": shown(&work.join("portal/made.txt")), "file_text": "x"})
        ),
        (
            "[sandbox: file access denied under workspace-write mode]".to_owned(),
            Some("FS_SANDBOX_DENIED".to_owned())
        )
    );
    // Reading through the links is allowed.
    assert_eq!(
        ok(&sandbox, "read", &json!({"file_path": "alias.txt"})),
        envelope(
            &work.join("alias.txt"),
            &[(1, "keep")],
            "(End of file - total 1 lines)"
        )
    );
    assert_eq!(tree(&out), ["secret.txt"]);
    assert_eq!(
        std::fs::read_to_string(out.join("secret.txt")).unwrap(),
        "keep\n"
    );
    // A dangling link out of the workspace is refused one way or another.
    let (text, code) = err(
        &sandbox,
        "write",
        &json!({"file_path": "dangling.txt", "content": "x"}),
    );
    assert!(
        text == denied
            || text
                == format!(
                    "cannot write \"{}\": not a regular file",
                    work.join("dangling.txt").display()
                ),
        "{text} ({code:?})"
    );
    assert!(!out.join("future.txt").exists());
    assert!(work.join("dangling.txt").is_symlink());
    // /tmp is a writable root.
    let tmp = tempfile::tempdir_in("/tmp").unwrap();
    let in_tmp = tmp.path().join("scratch.txt");
    ok(
        &sandbox,
        "write",
        &json!({"file_path": shown(&in_tmp), "content": "ok"}),
    );
    assert_eq!(std::fs::read_to_string(&in_tmp).unwrap(), "ok");
}

#[test]
fn read_only_denies_every_mutation_anywhere() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    let outside = outside();
    let tmp = tempfile::tempdir_in("/tmp").unwrap();
    let ro = [("DSH_PERMISSION_MODE", "read-only")];
    let denied = format!("[sandbox: file access denied under read-only mode]\n{HINT}");
    for path in [
        "inside.txt".to_owned(),
        shown(&tmp.path().join("t.txt")),
        shown(&outside.path().join("o.txt")),
    ] {
        let run = call_env(
            &sandbox,
            "write",
            &json!({"file_path": path, "content": "x"}),
            &ro,
        );
        assert_eq!(
            failed(&run, &path),
            (denied.clone(), Some("FS_SANDBOX_DENIED".to_owned())),
            "{path}"
        );
        let run = call_env(
            &sandbox,
            "str_replace_editor",
            &json!({"command": "create", "path": work.join(&path).display().to_string(), "file_text": "x"}),
            &ro,
        );
        assert_eq!(
            failed(&run, &path),
            (
                "[sandbox: file access denied under read-only mode]".to_owned(),
                Some("FS_SANDBOX_DENIED".to_owned())
            )
        );
    }
    assert!(tree(&work).is_empty());
    assert!(tree(tmp.path()).is_empty());
    assert!(tree(outside.path()).is_empty());
    // Reads still work.
    std::fs::write(work.join("seen.txt"), "x\n").unwrap();
    let run = call_env(&sandbox, "read", &json!({"file_path": "seen.txt"}), &ro);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

#[test]
fn escalation_arguments_are_checked_in_dshs_order() {
    let sandbox = Sandbox::new();
    let outside = outside();
    let target = shown(&outside.path().join("e.txt"));
    let cases = [
        (
            json!({"file_path": target, "content": "x", "sandbox_permissions": "danger-full-access"}),
            "invalid escalation: sandbox_permissions requires a justification",
        ),
        (
            json!({"file_path": target, "content": "x", "justification": "Because."}),
            "invalid escalation: justification is only valid together with sandbox_permissions",
        ),
        (
            json!({"file_path": target, "content": "x", "sandbox_permissions": "danger-full-access", "justification": " "}),
            "invalid justification: expected a non-empty sentence",
        ),
        (
            json!({"file_path": target, "content": "x", "sandbox_permissions": "workspace-write", "justification": "Because."}),
            "sandbox escalation to \"workspace-write\" is not strictly wider than this call's current \"workspace-write\" mode",
        ),
        (
            json!({"file_path": target, "content": "x", "sandbox_permissions": "danger-full-access", "justification": "Because."}),
            "sandbox escalation to \"danger-full-access\" requires approval, but the call has no agent to route it through",
        ),
    ];
    for (args, text) in cases {
        assert_eq!(
            err(&sandbox, "write", &args),
            (text.to_owned(), None),
            "{args}"
        );
    }
    let (text, code) = err(
        &sandbox,
        "edit",
        &json!({"file_path": "x", "old_string": "a", "new_string": "b", "sandbox_permissions": "read-only", "justification": "x"}),
    );
    assert_eq!(
        (text.as_str(), code.as_deref()),
        (
            "invalid arguments: \"sandbox_permissions\" must be one of [\"workspace-write\",\"danger-full-access\"]",
            Some("INVALID_ARGS")
        )
    );
    assert!(tree(outside.path()).is_empty());
}

#[test]
fn edit_argument_checks_and_the_unread_file() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    std::fs::write(work.join("f.txt"), "a\n").unwrap();
    std::fs::create_dir(work.join("folder")).unwrap();
    let cases = [
        (
            json!({"file_path": "f.txt", "old_string": "", "new_string": "b"}),
            "old_string must be a non-empty string".to_owned(),
            None,
        ),
        (
            json!({"file_path": "f.txt", "old_string": "a", "new_string": "a"}),
            "old_string and new_string must differ".to_owned(),
            None,
        ),
        (
            json!({"file_path": "  ", "old_string": "a", "new_string": "b"}),
            "file_path must be a non-empty string".to_owned(),
            None,
        ),
        (
            json!({"file_path": "f.txt", "old_string": "a"}),
            "invalid arguments: missing required property \"new_string\"".to_owned(),
            Some("INVALID_ARGS"),
        ),
        (
            json!({"file_path": "f.txt", "old_string": "a", "new_string": "b", "replace_all": "yes"}),
            "invalid arguments: \"replace_all\" must be a boolean".to_owned(),
            Some("INVALID_ARGS"),
        ),
        (
            json!({"file_path": "f.txt", "old_string": "a", "new_string": "b"}),
            format!(
                "edit requires reading \"{}\" first — read the file, then retry",
                work.join("f.txt").display()
            ),
            Some("FS_NOT_OBSERVED"),
        ),
        (
            json!({"file_path": "folder", "old_string": "a", "new_string": "b"}),
            format!(
                "edit requires reading \"{}\" first — read the file, then retry",
                work.join("folder").display()
            ),
            Some("FS_NOT_OBSERVED"),
        ),
    ];
    for (args, text, code) in cases {
        assert_eq!(
            err(&sandbox, "edit", &args),
            (text, code.map(str::to_owned)),
            "{args}"
        );
    }
    assert_eq!(std::fs::read_to_string(work.join("f.txt")).unwrap(), "a\n");
}

// ---------------------------------------------------------------------------------------------
// str_replace_editor, through `dsh tools call`

#[test]
fn editor_views_files_and_ranges() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    std::fs::write(work.join("crlf.txt"), "a\r\nb\r\n").unwrap();
    std::fs::write(work.join("empty.txt"), "").unwrap();
    std::fs::write(work.join("nl.txt"), "\n").unwrap();
    std::fs::write(work.join("tail.txt"), "one\ntwo\nthree").unwrap();
    std::fs::write(work.join("tabs.txt"), "\tindented\n").unwrap();
    let view = |name: &str, range: Option<Value>| {
        let mut args = json!({"command": "view", "path": shown(&work.join(name))});
        if let Some(range) = range {
            args["view_range"] = range;
        }
        args
    };
    let header = |name: &str, n: usize| {
        format!(
            "Here's the content of {} with line numbers (which has a total of {n} lines)",
            work.join(name).display()
        )
    };
    let viewed =
        |name: &str, range: Option<Value>| ok(&sandbox, "str_replace_editor", &view(name, range));
    assert_eq!(
        viewed("crlf.txt", None),
        printed(&format!(
            "{}:\n     1  a\r\n     2  b\r\n     3  \n",
            header("crlf.txt", 3)
        ))
    );
    assert_eq!(
        viewed("empty.txt", None),
        printed(&format!("{}:\n     1  \n", header("empty.txt", 1)))
    );
    assert_eq!(
        viewed("nl.txt", None),
        printed(&format!("{}:\n     1  \n     2  \n", header("nl.txt", 2)))
    );
    assert_eq!(
        viewed("tabs.txt", None),
        printed(&format!(
            "{}:\n     1  \tindented\n     2  \n",
            header("tabs.txt", 2)
        ))
    );
    assert_eq!(
        viewed("tail.txt", Some(json!([3, 3]))),
        printed(&format!(
            "{} with view_range=[3, 3]:\n     3  three\n",
            header("tail.txt", 3)
        ))
    );
    assert_eq!(
        viewed("tail.txt", Some(json!([1, -1]))),
        printed(&format!(
            "{} with view_range=[1, -1]:\n     1  one\n     2  two\n     3  three\n",
            header("tail.txt", 3)
        ))
    );
    let range_errors = [
        (
            json!([0, 2]),
            "Invalid `view_range`: [0, 2]. Its first element `0` should be within the range of lines of the file: [1, 3]",
        ),
        (
            json!([4, 4]),
            "Invalid `view_range`: [4, 4]. Its first element `4` should be within the range of lines of the file: [1, 3]",
        ),
        (
            json!([2, 4]),
            "Invalid `view_range`: [2, 4]. Its second element `4` should be smaller than the number of lines in the file: `3`",
        ),
        (
            json!([3, 2]),
            "Invalid `view_range`: [3, 2]. Its second element `2` should be larger or equal than its first `3`",
        ),
        (
            json!([2, -2]),
            "Invalid `view_range`: [2, -2]. Its second element `-2` should be larger or equal than its first `2`",
        ),
        (
            json!([1]),
            "Invalid `view_range`. It should be a list of two integers.",
        ),
        (
            json!([1, 2, 3]),
            "Invalid `view_range`. It should be a list of two integers.",
        ),
        (
            json!([]),
            "Invalid `view_range`. It should be a list of two integers.",
        ),
    ];
    for (range, text) in range_errors {
        assert_eq!(
            err(
                &sandbox,
                "str_replace_editor",
                &view("tail.txt", Some(range.clone()))
            ),
            (text.to_owned(), None),
            "{range}"
        );
    }
    let (text, code) = err(
        &sandbox,
        "str_replace_editor",
        &view("tail.txt", Some(json!([1.5, 2]))),
    );
    assert_eq!(
        (text.as_str(), code.as_deref()),
        (
            "invalid arguments: \"view_range[0]\" must be an integer",
            Some("INVALID_ARGS")
        )
    );
    // Clipping at 16000 UTF-16 units, with the marker appended directly.
    std::fs::write(work.join("big.txt"), "z".repeat(20_000)).unwrap();
    let text = ok(&sandbox, "str_replace_editor", &view("big.txt", None));
    let full = format!(
        "{}:\n     1  {}\n",
        header("big.txt", 1),
        "z".repeat(20_000)
    );
    assert_eq!(text, format!("{}{CLIPPED}", &full[..16_000]));
    // Binary is refused as read refuses it; a missing path is dsh's editor text.
    std::fs::write(work.join("bin.dat"), b"\x00\x01").unwrap();
    assert_eq!(
        err(&sandbox, "str_replace_editor", &view("bin.dat", None)),
        (
            format!(
                "cannot read \"{}\": binary file",
                work.join("bin.dat").display()
            ),
            Some("FS_NOT_TEXT".to_owned())
        )
    );
    assert_eq!(
        err(&sandbox, "str_replace_editor", &view("nope.txt", None)),
        (
            format!(
                "The path {} does not exist. Please provide a valid path.",
                work.join("nope.txt").display()
            ),
            Some("FS_NOT_FOUND".to_owned())
        )
    );
}

#[test]
fn editor_lists_directories_two_levels_deep() {
    let sandbox = Sandbox::new();
    let root = work(&sandbox).join("tree");
    for dir in [
        "sub/subsub",
        ".hidden",
        "node_modules",
        "__pycache__",
        "node_modules_x",
        "sub/.dot-dir",
    ] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
    }
    for file in [
        "a.txt",
        "Z.txt",
        "sub/b.txt",
        "sub/subsub/too-deep.txt",
        ".hidden/x",
        "node_modules/y",
        "__pycache__/z.pyc",
        "sub/.env",
    ] {
        std::fs::write(root.join(file), "x").unwrap();
    }
    std::os::unix::fs::symlink("nowhere", root.join("broken")).unwrap();
    std::os::unix::fs::symlink("sub", root.join("link-to-sub")).unwrap();
    nix::unistd::mkfifo(&root.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let r = shown(&root);
    let rows = [
        format!("d\t{r}"),
        format!("f\t{r}/Z.txt"),
        format!("f\t{r}/a.txt"),
        format!("?\t{r}/broken"),
        format!("d\t{r}/link-to-sub"),
        format!("f\t{r}/link-to-sub/b.txt"),
        format!("d\t{r}/link-to-sub/subsub"),
        format!("d\t{r}/node_modules_x"),
        format!("?\t{r}/pipe"),
        format!("d\t{r}/sub"),
        format!("f\t{r}/sub/b.txt"),
        format!("d\t{r}/sub/subsub"),
    ];
    assert_eq!(
        ok(
            &sandbox,
            "str_replace_editor",
            &json!({"command": "view", "path": r})
        ),
        printed(&format!(
            "Here're the files and directories up to 2 levels deep in {r}, excluding hidden items, node_modules, and Python cache directories:\n{}\n\n",
            rows.join("\n")
        ))
    );
    assert_eq!(
        err(
            &sandbox,
            "str_replace_editor",
            &json!({"command": "view", "path": r, "view_range": [1, 2]})
        ),
        (
            "The `view_range` parameter is not allowed when `path` points to a directory."
                .to_owned(),
            None
        )
    );
    assert_eq!(
        err(
            &sandbox,
            "str_replace_editor",
            &json!({"command": "view", "path": format!("{r}/pipe")})
        ),
        (
            format!("cannot view \"{r}/pipe\": not a regular file or directory"),
            Some("FS_NOT_REGULAR_FILE".to_owned())
        )
    );
}

#[test]
fn editor_create_and_argument_errors() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    std::fs::write(work.join("exists.txt"), "old").unwrap();
    std::fs::create_dir(work.join("folder")).unwrap();
    let p = |name: &str| shown(&work.join(name));
    assert_eq!(
        ok(
            &sandbox,
            "str_replace_editor",
            &json!({"command": "create", "path": p("new/nested.txt"), "file_text": "ünï\n"})
        ),
        format!("New file created successfully at: {}", p("new/nested.txt"))
    );
    assert_eq!(
        std::fs::read_to_string(work.join("new/nested.txt")).unwrap(),
        "ünï\n"
    );
    assert_eq!(mode(&work.join("new/nested.txt")), 0o600);
    ok(
        &sandbox,
        "str_replace_editor",
        &json!({"command": "create", "path": p("blank.txt"), "file_text": ""}),
    );
    assert_eq!(std::fs::read(work.join("blank.txt")).unwrap(), b"");
    let cases = [
        (json!({"command": "create", "path": p("exists.txt"), "file_text": "new"}), format!("File already exists at: {}. Cannot overwrite files using command `create`.", p("exists.txt")), None),
        (json!({"command": "create", "path": p("folder"), "file_text": "new"}), format!("File already exists at: {}. Cannot overwrite files using command `create`.", p("folder")), None),
        (json!({"command": "create", "path": p("x.txt")}), "Parameter `file_text` is required for command: create".to_owned(), None),
        (json!({"command": "create", "path": p("exists.txt/child"), "file_text": "x"}), format!("cannot resolve \"{}\": a parent path segment is not a directory", p("exists.txt/child")), Some("FS_NOT_FOUND")),
        (json!({"command": "view", "path": "relative/x.txt"}), "The path relative/x.txt is not an absolute path, it should start with `/`. Maybe you meant /relative/x.txt?".to_owned(), None),
        (json!({"command": "view", "path": " "}), "path must be a non-empty string".to_owned(), None),
        (json!({"command": "insert", "path": p("exists.txt"), "new_str": "x"}), "Parameter `insert_line` is required for command: insert".to_owned(), None),
        (json!({"command": "insert", "path": p("exists.txt"), "insert_line": 0}), "Parameter `new_str` is required for command: insert".to_owned(), None),
        (json!({"command": "str_replace", "path": p("exists.txt"), "old_str": "old"}), format!("edit requires reading \"{}\" first", p("exists.txt")), Some("FS_NOT_OBSERVED")),
        (json!({"command": "delete", "path": p("exists.txt")}), "invalid arguments: \"command\" must be one of [\"view\",\"create\",\"str_replace\",\"insert\"]".to_owned(), Some("INVALID_ARGS")),
        (json!({"command": "insert", "path": p("exists.txt"), "insert_line": 1.5, "new_str": "x"}), "invalid arguments: \"insert_line\" must be an integer".to_owned(), Some("INVALID_ARGS")),
        (json!({"path": p("exists.txt")}), "invalid arguments: missing required property \"command\"".to_owned(), Some("INVALID_ARGS")),
    ];
    for (args, text, code) in cases {
        assert_eq!(
            err(&sandbox, "str_replace_editor", &args),
            (text, code.map(str::to_owned)),
            "{args}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(work.join("exists.txt")).unwrap(),
        "old"
    );
}

// ---------------------------------------------------------------------------------------------
// glob and grep, through `dsh tools call`

/// A git repository with ignore files of every kind, hidden files, a binary, VCS directories,
/// and distinct modification times (oldest first in `order`).
fn search_tree(sandbox: &Sandbox) -> PathBuf {
    let repo = work(sandbox);
    let git = std::process::Command::new("git")
        .args(["init", "-q", "."])
        .current_dir(&repo)
        .status();
    if !git.is_ok_and(|status| status.success()) {
        // Without git, a `.git` directory is what ripgrep looks for.
        std::fs::create_dir_all(repo.join(".git/info")).unwrap();
    }
    std::fs::create_dir_all(repo.join(".git/info")).unwrap();
    let files: [(&str, &[u8]); 20] = [
        (".gitignore", b"*.log\n!keep.log\n/build/\n"),
        (".ignore", b"dot-ignored.txt\n"),
        (".rgignore", b"rg-ignored.txt\n"),
        (".git/info/exclude", b"excluded.txt\n"),
        ("src/main.rs", b"fn main() {\n    let needle = 1;\n}\n"),
        ("src/lib.rs", b"pub const NEEDLE: &str = \"needle\";\n"),
        ("debug.log", b"needle in a log\n"),
        ("keep.log", b"needle kept\n"),
        ("build/out.txt", b"needle built\n"),
        ("dot-ignored.txt", b"needle\n"),
        ("rg-ignored.txt", b"needle\n"),
        ("excluded.txt", b"needle\n"),
        (".hidden.txt", b"needle hidden\n"),
        (".config/settings.txt", b"needle hidden dir\n"),
        ("blob.bin", b"needle\x00binary\n"),
        ("crlf.txt", b"needle\r\nno\r\n"),
        ("latin1.txt", b"needle caf\xe9\n"),
        (".svn/entries", b"needle\n"),
        (".hg/store", b"needle\n"),
        (".jj/repo", b"needle\n"),
    ];
    for (index, (path, content)) in files.iter().enumerate() {
        let path = repo.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        set_mtime(&path, 1_600_000_000 + index as u64 * 10);
    }
    for vcs in [".bzr/x", ".sl/x"] {
        let path = repo.join(vcs);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "needle\n").unwrap();
    }
    repo
}

#[test]
fn glob_lists_hidden_and_ignored_files_oldest_first_without_vcs_dirs() {
    let sandbox = Sandbox::new();
    let repo = search_tree(&sandbox);
    let all = ok(&sandbox, "glob", &json!({"pattern": "*"}));
    assert_eq!(
        all.lines().collect::<Vec<_>>(),
        [
            ".gitignore",
            ".ignore",
            ".rgignore",
            "src/main.rs",
            "src/lib.rs",
            "debug.log",
            "keep.log",
            "build/out.txt",
            "dot-ignored.txt",
            "rg-ignored.txt",
            "excluded.txt",
            ".hidden.txt",
            ".config/settings.txt",
            "blob.bin",
            "crlf.txt",
            "latin1.txt",
        ]
    );
    assert_eq!(
        ok(&sandbox, "glob", &json!({"pattern": "**/*.rs"})),
        "src/main.rs\nsrc/lib.rs"
    );
    assert_eq!(
        ok(&sandbox, "glob", &json!({"pattern": "*.{log,bin}"})),
        "debug.log\nkeep.log\nblob.bin"
    );
    assert_eq!(
        ok(&sandbox, "glob", &json!({"pattern": "*", "path": "src"})),
        "src/main.rs\nsrc/lib.rs"
    );
    let src = shown(&repo.join("src"));
    assert_eq!(
        ok(&sandbox, "glob", &json!({"pattern": "*.rs", "path": src})),
        "src/main.rs\nsrc/lib.rs"
    );
    assert_eq!(
        ok(
            &sandbox,
            "glob",
            &json!({"pattern": "main.rs", "path": "src/main.rs"})
        ),
        "src/main.rs"
    );
    // VCS directories are excluded even as the search root.
    assert_eq!(
        ok(&sandbox, "glob", &json!({"pattern": "*", "path": ".git"})),
        "No files found"
    );
    assert_eq!(
        ok(&sandbox, "glob", &json!({"pattern": "*", "path": ".svn"})),
        "No files found"
    );
    assert_eq!(
        ok(&sandbox, "glob", &json!({"pattern": "*.nothing"})),
        "No files found"
    );
    // Files only, never directories.
    assert_eq!(
        ok(&sandbox, "glob", &json!({"pattern": "src"})),
        "No files found"
    );
}

#[test]
fn grep_follows_ripgreps_filters() {
    let sandbox = Sandbox::new();
    search_tree(&sandbox);
    let found = ok(&sandbox, "grep", &json!({"pattern": "needle"}));
    let (header, body) = found.split_once("\n\n").unwrap();
    assert_eq!(header, "Found 5 matches");
    let mut groups: Vec<&str> = body.split("\n\n").collect();
    groups.sort_unstable();
    assert_eq!(
        groups,
        [
            "crlf.txt\nLine 1: needle",
            "keep.log\nLine 1: needle kept",
            "latin1.txt\nLine 1: (line is not valid UTF-8)",
            "src/lib.rs\nLine 1: pub const NEEDLE: &str = \"needle\";",
            "src/main.rs\nLine 2:     let needle = 1;",
        ]
    );
    assert_eq!(
        ok(
            &sandbox,
            "grep",
            &json!({"pattern": "needle", "include": "*.rs", "path": "src"})
        )
        .split("\n\n")
        .next()
        .unwrap(),
        "Found 2 matches"
    );
    assert_eq!(
        ok(&sandbox, "grep", &json!({"pattern": "NEEDLE"})),
        "Found 1 match\n\nsrc/lib.rs\nLine 1: pub const NEEDLE: &str = \"needle\";"
    );
    // A path named explicitly is searched even when ignored or hidden.
    assert_eq!(
        ok(
            &sandbox,
            "grep",
            &json!({"pattern": "needle", "path": "debug.log"})
        ),
        "Found 1 match\n\ndebug.log\nLine 1: needle in a log"
    );
    assert_eq!(
        ok(
            &sandbox,
            "grep",
            &json!({"pattern": "needle", "path": ".hidden.txt"})
        ),
        "Found 1 match\n\n.hidden.txt\nLine 1: needle hidden"
    );
    assert_eq!(
        ok(&sandbox, "grep", &json!({"pattern": "absent-word"})),
        "No matches found"
    );
    // `include` takes one glob with brace alternation; as ripgrep's `--glob`, it overrides
    // the ignore files (debug.log) for the files it names.
    let found = ok(
        &sandbox,
        "grep",
        &json!({"pattern": "needle", "include": "*.{rs,log}"}),
    );
    let (header, body) = found.split_once("\n\n").unwrap();
    assert_eq!(header, "Found 4 matches");
    let mut files: Vec<&str> = body
        .split("\n\n")
        .map(|group| group.lines().next().unwrap())
        .collect();
    files.sort_unstable();
    assert_eq!(
        files,
        ["debug.log", "keep.log", "src/lib.rs", "src/main.rs"]
    );
}

#[test]
fn grep_previews_are_cut_at_a_utf8_boundary() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    // 1999 ASCII bytes then a two-byte character: the cut at 2000 bytes falls inside it.
    std::fs::write(
        work.join("wide.txt"),
        format!("{}é tail\n", "k".repeat(1999)),
    )
    .unwrap();
    assert_eq!(
        ok(&sandbox, "grep", &json!({"pattern": "tail"})),
        format!(
            "Found 1 match\n\nwide.txt\nLine 1: {} (line truncated)",
            "k".repeat(1999)
        )
    );
}

#[test]
fn search_argument_and_pattern_errors() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("a.txt"), "x\n").unwrap();
    let grep_cases = [
        (
            json!({"pattern": ""}),
            "pattern must be a non-empty string",
            None,
        ),
        (
            json!({"pattern": "x", "path": " "}),
            "path must be a non-empty string when given",
            None,
        ),
        (
            json!({"pattern": "x", "include": ""}),
            "include must be a non-empty glob when given",
            None,
        ),
        (
            json!({"pattern": "x", "include": "!*.txt"}),
            "include must be a positive glob filter; negated patterns (\"!…\") are not supported",
            None,
        ),
        (
            json!({"pattern": "x", "include": "*.rs,*.txt"}),
            "include must be one glob, not a comma-separated list (use {a,b} alternation instead)",
            None,
        ),
        (
            json!({"pattern": "x", "include": "{a,b},c"}),
            "include must be one glob, not a comma-separated list (use {a,b} alternation instead)",
            None,
        ),
    ];
    for (args, text, code) in grep_cases {
        assert_eq!(
            err(&sandbox, "grep", &args),
            (text.to_owned(), code),
            "{args}"
        );
    }
    let glob_cases = [
        (
            json!({"pattern": "  "}),
            "pattern must be a non-empty string",
        ),
        (
            json!({"pattern": "*", "path": ""}),
            "path must be a non-empty string when given",
        ),
    ];
    for (args, text) in glob_cases {
        assert_eq!(
            err(&sandbox, "glob", &args),
            (text.to_owned(), None),
            "{args}"
        );
    }
    // A whitespace pattern is a legitimate regex.
    assert_eq!(
        ok(&sandbox, "grep", &json!({"pattern": " "})),
        "No matches found"
    );
    // Invalid patterns are SEARCH_INVALID_PATTERN with ripgrep's explanation.
    let (text, code) = err(&sandbox, "grep", &json!({"pattern": "(open"}));
    assert_eq!(code.as_deref(), Some("SEARCH_INVALID_PATTERN"));
    assert!(
        text.starts_with("grep pattern rejected by ripgrep: "),
        "{text}"
    );
    assert!(
        text.contains("regex parse error") && text.contains("unclosed group"),
        "{text}"
    );
    let (text, code) = err(&sandbox, "glob", &json!({"pattern": "{a,b"}));
    assert_eq!(code.as_deref(), Some("SEARCH_INVALID_PATTERN"));
    assert!(
        text.starts_with("glob pattern rejected by ripgrep: "),
        "{text}"
    );
    assert!(text.contains("error parsing glob '{a,b'"), "{text}");
    let (text, code) = err(&sandbox, "grep", &json!({"pattern": "x", "include": "[z"}));
    assert_eq!(code.as_deref(), Some("SEARCH_INVALID_PATTERN"), "{text}");
    // A missing path is SEARCH_FAILED (ripgrep's exit 2).
    let (text, code) = err(
        &sandbox,
        "grep",
        &json!({"pattern": "x", "path": "missing-dir"}),
    );
    assert_eq!(code.as_deref(), Some("SEARCH_FAILED"));
    assert!(
        text.starts_with("grep search failed (exit 2): ") && text.contains("missing-dir"),
        "{text}"
    );
    let (text, code) = err(
        &sandbox,
        "glob",
        &json!({"pattern": "*", "path": "missing-dir"}),
    );
    assert_eq!(code.as_deref(), Some("SEARCH_FAILED"));
    assert!(text.starts_with("glob search failed (exit 2): "), "{text}");
}

#[test]
fn search_errors_carry_ripgreps_own_stderr() {
    // ripgrep 15.0.0 (the binary @vscode/ripgrep 1.18.0 ships, which dsh 0.1.1 spawns) prints
    // these texts; dsh puts the trimmed stderr after the colon (spec §2.5).
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("a.txt"), "x\n").unwrap();
    assert_eq!(
        err(&sandbox, "grep", &json!({"pattern": "(open"})).0,
        "grep pattern rejected by ripgrep: rg: regex parse error:\n    (?:(open)\n    ^\nerror: unclosed group"
    );
    assert_eq!(
        err(
            &sandbox,
            "grep",
            &json!({"pattern": "x", "path": "missing-dir"})
        )
        .0,
        "grep search failed (exit 2): rg: missing-dir: IO error for operation on missing-dir: No such file or directory (os error 2)"
    );
    assert_eq!(
        err(&sandbox, "grep", &json!({"pattern": "a\\nb"})).0,
        "grep search failed (exit 2): rg: the literal \"\\n\" is not allowed in a regex\n\nConsider enabling multiline mode with the --multiline flag (or -U for short).\nWhen multiline mode is enabled, new line characters can be matched."
    );
    assert_eq!(
        err(&sandbox, "glob", &json!({"pattern": "["})).0,
        "glob pattern rejected by ripgrep: rg: error parsing glob '[': unclosed character class; missing ']'"
    );
    // A NUL-matching regex cannot match under binary detection; ripgrep 15 refuses it.
    let (text, code) = err(&sandbox, "grep", &json!({"pattern": "\\x00"}));
    assert_eq!(code.as_deref(), Some("SEARCH_FAILED"));
    assert_eq!(
        text,
        "grep search failed (exit 2): rg: pattern contains \"\\0\" but it is impossible to match\n\nConsider enabling text mode with the --text flag (or -a for short). Otherwise,\nbinary detection is enabled and matching a NUL byte is impossible."
    );
}

#[test]
fn grep_where_no_file_is_searched_fails_as_ripgrep_does() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("a.txt"), "x\n").unwrap();
    std::fs::create_dir(sandbox.work().join("void")).unwrap();
    let expected = "grep search failed (exit 2): rg: No files were searched, which means ripgrep probably applied a filter you didn't expect.\nRunning with --debug will show why files are being skipped.";
    assert_eq!(
        err(
            &sandbox,
            "grep",
            &json!({"pattern": "x", "include": "*.none"})
        ),
        (expected.to_owned(), Some("SEARCH_FAILED".to_owned()))
    );
    // ripgrep prints this only without a path argument (`has_implicit_path`): with one,
    // nothing to search is taken as intended and the search is exit 1, no matches.
    assert_eq!(
        ok(&sandbox, "grep", &json!({"pattern": "x", "path": "void"})),
        "No matches found"
    );
    // An empty workspace, and one holding only hidden files, searched without a path.
    let empty = Sandbox::new();
    let hidden = Sandbox::new();
    std::fs::write(hidden.work().join(".only"), "x\n").unwrap();
    for sandbox in [&empty, &hidden] {
        assert_eq!(
            err(sandbox, "grep", &json!({"pattern": "x"})),
            (expected.to_owned(), Some("SEARCH_FAILED".to_owned()))
        );
    }
}

#[test]
fn a_nul_in_a_search_argument_is_a_launch_failure() {
    let sandbox = Sandbox::new();
    for (name, args) in [
        ("glob", json!({"pattern": "a\u{0}b"})),
        ("glob", json!({"pattern": "*", "path": "a\u{0}b"})),
        ("grep", json!({"pattern": "a\u{0}b"})),
        ("grep", json!({"pattern": "x", "include": "a\u{0}b"})),
    ] {
        assert_eq!(
            err(&sandbox, name, &args),
            (
                format!("{name} could not start its search command (ripgrep launch failed)"),
                Some("SEARCH_FAILED".to_owned())
            ),
            "{args}"
        );
    }
}

#[test]
fn an_unreadable_entry_fails_the_search_as_ripgreps_exit_2_does() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("ok.txt"), "needle\n").unwrap();
    std::fs::write(sandbox.work().join("secret.txt"), "needle\n").unwrap();
    std::fs::create_dir(sandbox.work().join("locked")).unwrap();
    std::fs::write(sandbox.work().join("locked/in.txt"), "needle\n").unwrap();
    sandbox.give_to(NOBODY);
    use std::os::unix::fs::PermissionsExt;
    for path in ["secret.txt", "locked"] {
        std::fs::set_permissions(
            sandbox.work().join(path),
            std::fs::Permissions::from_mode(0o000),
        )
        .unwrap();
    }
    let args = json!({"pattern": "needle"}).to_string();
    let Some(mut command) = sandbox.command_as(NOBODY, &["tools", "call", "grep", &args]) else {
        eprintln!("skipped: cannot run as an unprivileged user here");
        return;
    };
    let run = Run::from(command.output().unwrap());
    let (text, code) = failed(&run, "grep as nobody");
    assert_eq!(code.as_deref(), Some("SEARCH_FAILED"));
    assert!(text.starts_with("grep search failed (exit 2): "), "{text}");
    assert!(text.contains("Permission denied (os error 13)"), "{text}");
    let args = json!({"pattern": "*"}).to_string();
    let mut command = sandbox
        .command_as(NOBODY, &["tools", "call", "glob", &args])
        .unwrap();
    let run = Run::from(command.output().unwrap());
    let (text, code) = failed(&run, "glob as nobody");
    assert_eq!(code.as_deref(), Some("SEARCH_FAILED"));
    assert!(text.contains("Permission denied (os error 13)"), "{text}");
}

#[test]
fn over_cap_results_outside_a_session_say_they_were_not_saved() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    for index in 0..105 {
        let path = work.join(format!("n{index:03}.md"));
        std::fs::write(&path, "hit\nhit\nhit\n").unwrap();
        set_mtime(&path, 1_700_000_000 + index);
    }
    let text = ok(&sandbox, "glob", &json!({"pattern": "*.md"}));
    let expected: Vec<String> = (0..100).map(|index| format!("n{index:03}.md")).collect();
    assert_eq!(
        text,
        format!(
            "{}\n\n(Showing 100 of 105 paths. The complete result could not be saved; narrow pattern or path to see more.)",
            expected.join("\n")
        )
    );
    let text = ok(&sandbox, "grep", &json!({"pattern": "hit"}));
    assert!(
        text.starts_with("Found 250 of 315 matches\n\n"),
        "{}",
        &text[..100]
    );
    assert!(text.ends_with("\n\n(The complete result could not be saved; narrow pattern, path, or include to see more.)"));
    assert_eq!(text.matches("\nLine ").count(), 250);
}

// ---------------------------------------------------------------------------------------------
// Headless turns

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_then_bash_changes_the_file_then_edit_is_stale_until_reread() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    std::fs::write(work.join("app.cfg"), "név = alpha\r\nmode = slow\r\n").unwrap();
    let shown = shown(&work.join("app.cfg"));
    let edit =
        json!({"file_path": "app.cfg", "old_string": "mode = slow", "new_string": "mode = fast"});
    let turn = turn(
        &sandbox,
        &[
            ("read", json!({"file_path": "app.cfg"})),
            ("bash", json!({"command": "printf 'extra = 1\\r\\n' >> app.cfg", "description": "Append a line"})),
            ("edit", edit.clone()),
            ("write", json!({"file_path": "app.cfg", "content": "clobbered"})),
            ("read", json!({"file_path": "app.cfg", "offset": 3})),
            ("edit", edit),
        ],
    )
    .await;
    assert_eq!(turn.results[1], "(no output)");
    assert_eq!(
        turn.results[2],
        format!(
            "Error: cannot edit \"{shown}\": file changed since it was read — re-read the file, then retry"
        )
    );
    assert_eq!(turn.error(2), &fs_error("FS_STALE_VERSION"));
    assert_eq!(
        turn.results[3],
        format!(
            "Error: cannot write \"{shown}\": file changed since it was read — re-read the file, then retry"
        )
    );
    assert_eq!(turn.error(3), &fs_error("FS_STALE_VERSION"));
    // A windowed re-read authorizes an edit anywhere in the file.
    assert_eq!(
        turn.results[4],
        envelope(
            &work.join("app.cfg"),
            &[(3, "extra = 1")],
            "(End of file - total 3 lines)"
        )
    );
    assert_eq!(
        turn.results[5],
        format!("The file {shown} has been updated successfully.")
    );
    assert!(turn.error(5).is_null());
    assert_eq!(
        turn.meta(5),
        &json!({"diffs": [{"path": "app.cfg", "oldText": "név = alpha\nmode = slow\nextra = 1", "newText": "név = alpha\nmode = fast\nextra = 1"}]})
    );
    // The CRLF style is kept.
    assert_eq!(
        std::fs::read_to_string(work.join("app.cfg")).unwrap(),
        "név = alpha\r\nmode = fast\r\nextra = 1\r\n"
    );
    // The read's meta, persisted.
    assert_eq!(
        turn.meta(0),
        &json!({"path": shown, "offset": 1, "lines": [{"number": 1, "text": "név = alpha"}, {"number": 2, "text": "mode = slow"}], "totalLines": 2})
    );
    // The log is dsh's: it verifies, and `sessions show` renders every call and result.
    let verify = sandbox.run(&["sessions", "verify"]);
    assert_eq!(verify.code, Some(0), "{}", verify.stderr);
    let show = sandbox.run(&["sessions", "show", &turn.id]);
    assert_eq!(show.code, Some(0), "{}", show.stderr);
    for (index, name) in ["read", "bash", "edit", "write", "read", "edit"]
        .iter()
        .enumerate()
    {
        assert!(
            show.stdout
                .contains(&format!("tool call {name} [call_{index}]:")),
            "{name}: {}",
            show.stdout
        );
    }
    assert!(
        show.stdout
            .contains("tool result [call_2] (FS_STALE_VERSION):"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout
            .contains("tool result [call_3] (FS_STALE_VERSION):"),
        "{}",
        show.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_observation_policy_over_a_delete_and_recreate() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    std::fs::write(work.join("notes.md"), "- one\n- two\n").unwrap();
    let shown = shown(&work.join("notes.md"));
    let turn = turn(
        &sandbox,
        &[
            (
                "write",
                json!({"file_path": "notes.md", "content": "replaced"}),
            ),
            ("read", json!({"file_path": "notes.md", "limit": 1})),
            (
                "write",
                json!({"file_path": "notes.md", "content": "- one\n- 2\n"}),
            ),
            (
                "bash",
                json!({"command": "rm notes.md", "description": "Delete the notes"}),
            ),
            (
                "write",
                json!({"file_path": "notes.md", "content": "again"}),
            ),
            (
                "edit",
                json!({"file_path": "notes.md", "old_string": "one", "new_string": "1"}),
            ),
            ("read", json!({"file_path": "notes.md"})),
            (
                "edit",
                json!({"file_path": "notes.md", "old_string": "one", "new_string": "1"}),
            ),
            (
                "write",
                json!({"file_path": "notes.md", "content": "- fresh\n"}),
            ),
            // Just written: an edit needs no read.
            (
                "edit",
                json!({"file_path": "notes.md", "old_string": "fresh", "new_string": "fresher"}),
            ),
            (
                "write",
                json!({"file_path": "brand-new.md", "content": "new\n"}),
            ),
        ],
    )
    .await;
    let r = &turn.results;
    assert_eq!(
        r[0],
        format!(
            "Error: cannot overwrite existing \"{shown}\" without reading it first — read the file, then retry"
        )
    );
    assert_eq!(turn.error(0), &fs_error("FS_NOT_OBSERVED"));
    assert_eq!(
        r[2],
        format!("<path>{shown}</path>\n<type>file</type>\n<content>\nUpdated file\n</content>")
    );
    assert_eq!(
        turn.meta(2),
        &json!({"diffs": [{"path": "notes.md", "oldText": "- one\n- two", "newText": "- one\n- 2"}]})
    );
    assert_eq!(
        r[4],
        format!(
            "Error: cannot write \"{shown}\": file no longer exists — re-read the file, then retry"
        )
    );
    assert_eq!(turn.error(4), &fs_error("FS_STALE_VERSION"));
    assert_eq!(
        r[5],
        format!(
            "Error: cannot edit \"{shown}\": file changed since it was read — re-read the file, then retry"
        )
    );
    assert_eq!(turn.error(5), &fs_error("FS_STALE_VERSION"));
    assert_eq!(r[6], format!("Error: cannot read \"{shown}\": not found"));
    assert_eq!(turn.error(6), &fs_error("FS_NOT_FOUND"));
    assert_eq!(r[7], format!("Error: cannot edit \"{shown}\": not found"));
    assert_eq!(turn.error(7), &fs_error("FS_NOT_FOUND"));
    assert_eq!(
        r[8],
        format!("<path>{shown}</path>\n<type>file</type>\n<content>\nCreated file\n</content>")
    );
    assert_eq!(turn.meta(8), &json!({"diffs": []}));
    assert_eq!(
        r[9],
        format!("The file {shown} has been updated successfully.")
    );
    assert!(r[10].contains("Created file"));
    assert_eq!(
        std::fs::read_to_string(work.join("notes.md")).unwrap(),
        "- fresher\n"
    );
    for index in [0, 4, 5, 6, 7] {
        assert!(turn.is_error(index), "{index}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_keep_modes_normalize_line_endings_and_replace_literally() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    use std::os::unix::fs::PermissionsExt;
    // Mostly CRLF with one bare LF: CRLF wins, so the result is uniformly CRLF.
    std::fs::write(work.join("mixed.txt"), "a1\r\na2\r\na3\nfoo\r\n").unwrap();
    std::fs::write(work.join("script.sh"), "#!/bin/sh\necho $1 $1\necho $1\n").unwrap();
    std::fs::set_permissions(
        work.join("script.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(work.join("bom.txt"), "\u{feff}key=1\n").unwrap();
    std::fs::write(work.join("lf.txt"), "x\r\ny\nz\n").unwrap();
    std::fs::write(work.join("blob.bin"), b"\x00\x01\x02").unwrap();
    std::fs::write(work.join("unread.txt"), "u\n").unwrap();
    let p = |name: &str| shown(&work.join(name));
    let turn = turn(
        &sandbox,
        &[
            ("read", json!({"file_path": "mixed.txt"})),
            ("edit", json!({"file_path": "mixed.txt", "old_string": "foo", "new_string": "bar\nbaz"})),
            ("read", json!({"file_path": "script.sh"})),
            ("edit", json!({"file_path": "script.sh", "old_string": "$1", "new_string": "\"$&\""})),
            ("edit", json!({"file_path": "script.sh", "old_string": "nothing-like-this", "new_string": "x"})),
            ("edit", json!({"file_path": "script.sh", "old_string": "$1", "new_string": "\"$&\"", "replace_all": true})),
            ("read", json!({"file_path": "bom.txt"})),
            ("edit", json!({"file_path": "bom.txt", "old_string": "key=1", "new_string": "key=2"})),
            // One CRLF, two LF: LF style; the lone CRLF becomes LF.
            ("read", json!({"file_path": "lf.txt"})),
            ("edit", json!({"file_path": "lf.txt", "old_string": "z", "new_string": "Z"})),
            ("read", json!({"file_path": "blob.bin"})),
            ("write", json!({"file_path": "blob.bin", "content": "text now"})),
            ("edit", json!({"file_path": ".", "old_string": "a", "new_string": "b"})),
            // An out-of-range read records nothing.
            ("read", json!({"file_path": "mixed.txt", "offset": 99})),
            ("edit", json!({"file_path": "lf.txt", "old_string": "Z", "new_string": "z"})),
            ("edit", json!({"file_path": "unread.txt", "old_string": "u", "new_string": "U"})),
        ],
    )
    .await;
    let r = &turn.results;
    assert_eq!(
        r[1],
        format!("The file {} has been updated successfully.", p("mixed.txt"))
    );
    assert_eq!(
        std::fs::read_to_string(work.join("mixed.txt")).unwrap(),
        "a1\r\na2\r\na3\r\nbar\r\nbaz\r\n"
    );
    assert_eq!(
        r[3],
        format!(
            "Error: old_string matched 3 times in \"{}\"; provide a more specific old_string or set replace_all to true",
            p("script.sh")
        )
    );
    assert_eq!(turn.error(3), &fs_error("FS_AMBIGUOUS_EDIT"));
    assert_eq!(
        r[4],
        format!("Error: old_string was not found in \"{}\"", p("script.sh"))
    );
    assert_eq!(turn.error(4), &fs_error("FS_EDIT_NOT_FOUND"));
    assert_eq!(
        r[5],
        format!(
            "The file {} has been updated. All occurrences were successfully replaced.",
            p("script.sh")
        )
    );
    assert_eq!(
        std::fs::read_to_string(work.join("script.sh")).unwrap(),
        "#!/bin/sh\necho \"$&\" \"$&\"\necho \"$&\"\n"
    );
    assert_eq!(mode(&work.join("script.sh")), 0o755);
    assert_eq!(
        turn.meta(5),
        &json!({"diffs": [{"path": "script.sh", "oldText": "#!/bin/sh\necho $1 $1\necho $1", "newText": "#!/bin/sh\necho \"$&\" \"$&\"\necho \"$&\""}]})
    );
    assert_eq!(
        r[6],
        envelope(
            &work.join("bom.txt"),
            &[(1, "key=1")],
            "(End of file - total 1 lines)"
        )
    );
    assert_eq!(std::fs::read(work.join("bom.txt")).unwrap(), b"key=2\n");
    assert!(r[9].ends_with("has been updated successfully."), "{}", r[9]);
    assert_eq!(
        r[10],
        format!("Error: cannot read \"{}\": binary file", p("blob.bin"))
    );
    // An unreadable binary is never observed, so write cannot replace it.
    assert_eq!(
        r[11],
        format!(
            "Error: cannot overwrite existing \"{}\" without reading it first — read the file, then retry",
            p("blob.bin")
        )
    );
    assert_eq!(
        std::fs::read(work.join("blob.bin")).unwrap(),
        b"\x00\x01\x02"
    );
    assert_eq!(
        r[12],
        format!(
            "Error: edit requires reading \"{}\" first — read the file, then retry",
            work.display()
        )
    );
    assert_eq!(
        r[13],
        format!(
            "Error: offset 99 is out of range for \"{}\" (5 lines)",
            p("mixed.txt")
        )
    );
    // Just edited: no read needed. Never read: refused.
    assert_eq!(
        r[14],
        format!("The file {} has been updated successfully.", p("lf.txt"))
    );
    assert_eq!(
        r[15],
        format!(
            "Error: edit requires reading \"{}\" first — read the file, then retry",
            p("unread.txt")
        )
    );
    assert_eq!(turn.error(15), &fs_error("FS_NOT_OBSERVED"));
    assert_eq!(
        std::fs::read_to_string(work.join("unread.txt")).unwrap(),
        "u\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_out_of_the_workspace_reads_but_never_writes() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    let outside = outside();
    let out = outside.path().canonicalize().unwrap();
    std::fs::write(out.join("shared.conf"), "level=1\n").unwrap();
    std::os::unix::fs::symlink(out.join("shared.conf"), work.join("shared.conf")).unwrap();
    std::fs::write(work.join("target.txt"), "old\n").unwrap();
    std::os::unix::fs::symlink("target.txt", work.join("inner-link.txt")).unwrap();
    let denied = format!("Error: [sandbox: file access denied under workspace-write mode]\n{HINT}");
    let turn = turn(
        &sandbox,
        &[
            ("read", json!({"file_path": "shared.conf"})),
            ("edit", json!({"file_path": "shared.conf", "old_string": "1", "new_string": "2"})),
            ("write", json!({"file_path": "shared.conf", "content": "level=3\n"})),
            ("str_replace_editor", json!({"command": "view", "path": shown(&work.join("shared.conf"))})),
            ("str_replace_editor", json!({"command": "str_replace", "path": shown(&work.join("shared.conf")), "old_str": "1", "new_str": "4"})),
            ("str_replace_editor", json!({"command": "insert", "path": shown(&work.join("shared.conf")), "insert_line": 0, "new_str": "x"})),
            ("write", json!({"file_path": shown(&out.join("shared.conf")), "content": "level=5\n", "sandbox_permissions": "danger-full-access", "justification": "The shared config lives outside."})),
            ("read", json!({"file_path": "inner-link.txt"})),
            ("write", json!({"file_path": "inner-link.txt", "content": "new\n"})),
        ],
    )
    .await;
    let r = &turn.results;
    assert!(r[0].contains("1: level=1"), "{}", r[0]);
    assert_eq!(r[1], denied);
    assert_eq!(turn.error(1), &fs_error("FS_SANDBOX_DENIED"));
    assert_eq!(r[2], denied);
    assert_eq!(
        r[4],
        "Error: [sandbox: file access denied under workspace-write mode]"
    );
    assert_eq!(turn.error(4), &fs_error("FS_SANDBOX_DENIED"));
    assert_eq!(
        r[5],
        "Error: [sandbox: file access denied under workspace-write mode]"
    );
    // Headless has no approval channel.
    assert_eq!(
        r[6],
        "Error: sandbox escalation to \"danger-full-access\" requires approval, but no approval channel is available"
    );
    let asked = turn
        .log
        .iter()
        .find(|event| event["type"] == "approval/asked")
        .unwrap();
    assert_eq!(asked["data"]["toolName"], "write");
    assert_eq!(asked["data"]["callId"], "call_6");
    assert_eq!(
        asked["data"]["reason"],
        "escalate sandbox to danger-full-access: The shared config lives outside."
    );
    let decided = turn
        .log
        .iter()
        .find(|event| event["type"] == "approval/decided")
        .unwrap();
    assert_eq!(decided["data"]["id"], asked["data"]["id"]);
    assert_eq!(decided["data"]["outcome"], "unavailable");
    assert_eq!(
        std::fs::read_to_string(out.join("shared.conf")).unwrap(),
        "level=1\n"
    );
    assert_eq!(tree(&out), ["shared.conf"]);
    assert!(work.join("shared.conf").is_symlink());
    // A link inside the workspace is written through and kept.
    assert!(r[8].contains("Updated file"), "{}", r[8]);
    assert!(work.join("inner-link.txt").is_symlink());
    assert_eq!(
        std::fs::read_to_string(work.join("target.txt")).unwrap(),
        "new\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_sessions_deny_edits_after_a_read() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    std::fs::write(work.join("locked.txt"), "v1\n").unwrap();
    let turn = turn_env(
        &sandbox,
        &[
            ("read", json!({"file_path": "locked.txt"})),
            ("edit", json!({"file_path": "locked.txt", "old_string": "v1", "new_string": "v2"})),
            ("write", json!({"file_path": "locked.txt", "content": "v3\n"})),
            ("write", json!({"file_path": "new.txt", "content": "x"})),
            ("str_replace_editor", json!({"command": "view", "path": shown(&work.join("locked.txt"))})),
            ("str_replace_editor", json!({"command": "insert", "path": shown(&work.join("locked.txt")), "insert_line": 1, "new_str": "v0"})),
            ("str_replace_editor", json!({"command": "str_replace", "path": shown(&work.join("locked.txt")), "old_str": "v1", "new_str": "v2"})),
        ],
        &[("DSH_PERMISSION_MODE", "read-only")],
    )
    .await;
    let denied = format!("Error: [sandbox: file access denied under read-only mode]\n{HINT}");
    assert_eq!(turn.results[1], denied);
    assert_eq!(turn.results[2], denied);
    assert_eq!(turn.results[3], denied);
    for index in [5, 6] {
        assert_eq!(
            turn.results[index],
            "Error: [sandbox: file access denied under read-only mode]"
        );
        assert_eq!(turn.error(index), &fs_error("FS_SANDBOX_DENIED"));
    }
    assert_eq!(
        std::fs::read_to_string(work.join("locked.txt")).unwrap(),
        "v1\n"
    );
    assert!(!work.join("new.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_editor_in_a_session() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    std::fs::write(work.join("list.txt"), "alpha\nbeta\nalpha beta\n").unwrap();
    std::fs::write(work.join("dos.txt"), "one\r\ntwo\r\n").unwrap();
    let p = |name: &str| shown(&work.join(name));
    let list = p("list.txt");
    let turn = turn(
        &sandbox,
        &[
            ("str_replace_editor", json!({"command": "view", "path": p("later.txt")})),
            ("str_replace_editor", json!({"command": "create", "path": p("later.txt"), "file_text": "made\n"})),
            ("str_replace_editor", json!({"command": "view", "path": list, "view_range": [2, 3]})),
            ("str_replace_editor", json!({"command": "str_replace", "path": list, "old_str": "alpha", "new_str": "gamma"})),
            ("str_replace_editor", json!({"command": "str_replace", "path": list, "old_str": "delta", "new_str": "x"})),
            ("str_replace_editor", json!({"command": "str_replace", "path": list, "old_str": "beta\nalpha"})),
            ("str_replace_editor", json!({"command": "insert", "path": list, "insert_line": 0, "new_str": "top"})),
            ("str_replace_editor", json!({"command": "insert", "path": list, "insert_line": 4, "new_str": "bottom"})),
            ("str_replace_editor", json!({"command": "insert", "path": list, "insert_line": 9, "new_str": "x"})),
            ("str_replace_editor", json!({"command": "str_replace", "path": list, "old_str": ""})),
            ("str_replace_editor", json!({"command": "view", "path": p("dos.txt")})),
            ("str_replace_editor", json!({"command": "str_replace", "path": p("dos.txt"), "old_str": "one\ntwo", "new_str": "x"})),
            ("str_replace_editor", json!({"command": "str_replace", "path": p("dos.txt"), "old_str": "one\r\ntwo", "new_str": "1\r\n2"})),
            ("bash", json!({"command": "echo changed >> list.txt", "description": "Change the list"})),
            ("str_replace_editor", json!({"command": "str_replace", "path": list, "old_str": "top", "new_str": "TOP"})),
            ("str_replace_editor", json!({"command": "create", "path": list, "file_text": "again"})),
            ("str_replace_editor", json!({"command": "view", "path": shown(&work)})),
        ],
    )
    .await;
    let r = &turn.results;
    assert_eq!(
        r[0],
        format!(
            "Error: The path {} does not exist. Please provide a valid path.",
            p("later.txt")
        )
    );
    assert_eq!(turn.error(0), &fs_error("FS_NOT_FOUND"));
    assert_eq!(
        r[1],
        format!("New file created successfully at: {}", p("later.txt"))
    );
    assert_eq!(
        r[2],
        format!(
            "Here's the content of {list} with line numbers (which has a total of 4 lines) with view_range=[2, 3]:\n     2  beta\n     3  alpha beta\n"
        )
    );
    assert_eq!(
        r[3],
        format!(
            "Error: No replacement was performed. Multiple occurrences of old_str `alpha` in lines [1, 3]. Please ensure it is unique"
        )
    );
    assert_eq!(turn.error(3), &fs_error("FS_AMBIGUOUS_EDIT"));
    assert_eq!(
        r[4],
        format!(
            "Error: No replacement was performed, old_str `delta` did not appear verbatim in {list}."
        )
    );
    assert_eq!(turn.error(4), &fs_error("FS_EDIT_NOT_FOUND"));
    // new_str omitted deletes.
    assert_eq!(
        r[5],
        format!("The file {list} has been edited successfully.")
    );
    assert_eq!(
        r[6],
        format!("The file {list} has been edited successfully.")
    );
    assert_eq!(
        r[7],
        format!("The file {list} has been edited successfully.")
    );
    assert_eq!(
        r[8],
        "Error: Invalid `insert_line` parameter: 9. It should be within the range of lines of the file: [0, 5]"
    );
    assert_eq!(
        r[9],
        "Error: Parameter `old_str` is empty for command: str_replace"
    );
    assert_eq!(
        r[10],
        format!(
            "Here's the content of {} with line numbers (which has a total of 3 lines):\n     1  one\r\n     2  two\r\n     3  \n",
            p("dos.txt")
        )
    );
    // Matching is raw: a CRLF file needs `\r\n`.
    assert_eq!(
        r[11],
        format!(
            "Error: No replacement was performed, old_str `one\ntwo` did not appear verbatim in {}.",
            p("dos.txt")
        )
    );
    assert_eq!(
        r[12],
        format!("The file {} has been edited successfully.", p("dos.txt"))
    );
    assert_eq!(std::fs::read(work.join("dos.txt")).unwrap(), b"1\r\n2\r\n");
    // Changed by bash since the last editor write: stale, without the remedy.
    assert_eq!(
        r[14],
        format!("Error: cannot write \"{list}\": file changed since it was read")
    );
    assert_eq!(turn.error(14), &fs_error("FS_STALE_VERSION"));
    assert_eq!(
        r[15],
        format!(
            "Error: File already exists at: {list}. Cannot overwrite files using command `create`."
        )
    );
    assert_eq!(
        std::fs::read_to_string(work.join("list.txt")).unwrap(),
        "top\nalpha\n beta\n\nbottomchanged\n"
    );
    assert!(r[16].starts_with(&format!("Here're the files and directories up to 2 levels deep in {}, excluding hidden items, node_modules, and Python cache directories:\nd\t{}\nf\t{}\n", work.display(), work.display(), p("dos.txt"))), "{}", r[16]);
    // The editor has no meta.
    for index in 0..r.len() {
        if index != 13 {
            assert!(turn.meta(index).is_null(), "{index}: {}", turn.meta(index));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_cap_search_results_are_saved_whole_and_readable() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    for index in 0..120 {
        let path = work.join(format!("item-{index:03}.txt"));
        std::fs::write(&path, "mark\nmark\nmark\n").unwrap();
        set_mtime(&path, 1_650_000_000 + index);
    }
    let fake = FakeDeepSeek::start().await.unwrap();
    fake.push(tool_call("call_0", "glob", &json!({"pattern": "item-*"})));
    fake.push(tool_call("call_1", "grep", &json!({"pattern": "mark"})));
    // Then read each saved file the footers name.
    fake.respond_with(|request| {
        let results = tool_results(&request.body);
        let stored: Vec<String> = results
            .iter()
            .take(2)
            .filter_map(|(_, text)| {
                let (_, rest) = text.split_once("stored at: ")?;
                Some(rest.split_once(". Use read").unwrap().0.to_owned())
            })
            .collect();
        match results.len() {
            2 => tool_call(
                "call_2",
                "read",
                &json!({"file_path": stored[0], "offset": 118}),
            ),
            3 => tool_call(
                "call_3",
                "read",
                &json!({"file_path": stored[1], "limit": 4}),
            ),
            _ => answer("done"),
        }
    });
    let turn = finish(&sandbox, &fake, 4, &[]).await;
    let r = &turn.results;
    let (page, footer) = r[0].split_once("\n\n(").unwrap();
    let expected: Vec<String> = (0..100)
        .map(|index| format!("item-{index:03}.txt"))
        .collect();
    assert_eq!(page, expected.join("\n"));
    assert!(
        footer.starts_with("Showing 100 of 120 paths. Full sorted result stored at: /"),
        "{footer}"
    );
    assert!(
        footer.ends_with(
            "-glob-results.txt. Use read with offset/limit, or grep this path to search within it.)"
        ),
        "{footer}"
    );
    assert!(r[1].starts_with("Found 250 of 360 matches\n\n"));
    assert!(
        r[1].ends_with(
            "-grep-results.txt. Use read with offset/limit, or grep this path to search within it.)"
        ),
        "{}",
        &r[1][r[1].len() - 200..]
    );
    // The saved glob list is every path in order; the saved grep text is the full result.
    assert!(r[2].contains("\n118: item-117.txt\n119: item-118.txt\n120: item-119.txt\n\n(End of file - total 120 lines)"), "{}", r[2]);
    assert!(
        r[3].contains("\n1: Found 360 matches\n2: \n3: item-"),
        "{}",
        r[3]
    );
    assert!(r[3].contains("\n4: Line 1: mark\n"), "{}", r[3]);
    assert_eq!(turn.meta(0)["shape"], "paths");
    assert_eq!(turn.meta(0)["total"], 120);
    assert_eq!(turn.meta(0)["truncated"], true);
    assert_eq!(turn.meta(0)["paths"].as_array().unwrap().len(), 100);
    assert_eq!(turn.meta(1)["shape"], "matches");
    assert_eq!(turn.meta(1)["total"], 360);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prompt_carries_dshs_file_tool_sections_in_order() {
    let sandbox = Sandbox::new();
    let turn = turn(&sandbox, &[("glob", json!({"pattern": "*.none"}))]).await;
    assert_eq!(turn.results[0], "No files found");
    let system = turn.first["messages"][0]["content"].as_str().unwrap();
    let sections = [
        "Use the read tool — not shell commands like cat — to inspect text files. Results include line numbers. Use offset and limit to continue reading large files.",
        "Use the write tool to create files or completely replace file contents. Existing files are overwritten, so read an existing file first (the default fs-observation-policy requires it) and prefer edit for targeted changes.",
        "Use the edit tool for targeted changes to existing UTF-8 text files. It replaces literal old_string with new_string; by default old_string must appear exactly once. If old_string appears multiple times, provide a more specific old_string or set replace_all to true. Read the file first (the default fs-observation-policy requires it), unless you just created or edited it in this session.",
        "Use the glob tool — not shell find — to discover files by path pattern. A pattern with no \"/\" matches basenames at any depth, so \"*\" matches every file in the tree rather than its top level. Results are files only, never directories, and include hidden and ignored files: a result that fits comes back in modification-time order, while a larger one keeps the modification-time-ordered head.",
        "Use the grep tool — not shell grep or rg — to search file contents. Use read on a matched file when you need surrounding context.",
    ];
    let mut at = 0;
    for section in sections {
        let found = system[at..]
            .find(section)
            .unwrap_or_else(|| panic!("{section}\nin\n{system}"));
        at += found + section.len();
    }
    let bash = system.find("Check the [exit code: N] marker").unwrap();
    assert!(bash > at, "bash's section comes after the file tools'");
    let names: Vec<&str> = turn.first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    for name in FS_TOOLS {
        assert!(names.contains(&name), "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "BUG: no spill-policy: a result over 50000 bytes reaches the model whole"]
async fn a_result_over_fifty_thousand_bytes_is_spilled_except_read() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    // 30 matches of 1995-byte lines: about 60 kB of grep text, under the 250-match cap.
    let line = format!("hit {}\n", "w".repeat(1990));
    std::fs::write(work.join("long.txt"), line.repeat(30)).unwrap();
    let turn = turn(
        &sandbox,
        &[
            ("grep", json!({"pattern": "hit"})),
            ("read", json!({"file_path": "long.txt", "limit": 25})),
        ],
    )
    .await;
    let grep = &turn.results[0];
    assert!(grep.len() < 50_000, "{} bytes", grep.len());
    assert!(
        grep.contains("Full formatted result stored at: "),
        "{}",
        &grep[grep.len().saturating_sub(300)..]
    );
    assert!(grep.contains("(Omitted "), "{grep}");
    // read is exempt: 25 lines of ~2000 bytes come back whole (it is byte-capped itself).
    assert!(turn.results[1].contains("\n25: hit "));
}

// ---------------------------------------------------------------------------------------------
// Configuration through patch layers

/// `dsh tools --patch <patch> call name args`.
fn call_patched(sandbox: &Sandbox, patch: &str, name: &str, args: &Value) -> Run {
    let path = sandbox.write("acceptance.patch.yml", patch);
    Run::from(
        sandbox
            .command(&[
                "tools",
                "--patch",
                path.to_str().unwrap(),
                "call",
                name,
                &args.to_string(),
            ])
            .output()
            .unwrap(),
    )
}

#[test]
fn sampled_glob_pages_span_the_top_level_entries() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    let mut stamp = 1_600_000_000;
    for index in 1..=4 {
        for path in [
            format!("top{index}.txt"),
            format!("dir{index}/a.txt"),
            format!("dir{index}/b.txt"),
        ] {
            let path = work.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "x").unwrap();
            set_mtime(&path, stamp);
            stamp += 10;
        }
    }
    let patch = "- id: tool-fs-search\n  config:\n    sampleOverCapGlobResults: true\n    globMaxResults: 4\n";
    let run = call_patched(&sandbox, patch, "glob", &json!({"pattern": "*.txt"}));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "top1.txt\ndir1/a.txt\ntop2.txt\ndir2/a.txt\n\n(Showing 4 of 12 paths, sampled across 4 of the 8 top-level entries this pattern matched instead of taken in modification-time order. Narrow path to inspect a specific subtree. The complete result could not be saved; narrow pattern or path to see more.)\n"
    );
    // Sampling off keeps the oldest head.
    let patch = "- id: tool-fs-search\n  config:\n    sampleOverCapGlobResults: false\n    globMaxResults: 4\n";
    let run = call_patched(&sandbox, patch, "glob", &json!({"pattern": "*.txt"}));
    assert_eq!(
        run.stdout,
        "top1.txt\ndir1/a.txt\ndir1/b.txt\ntop2.txt\n\n(Showing 4 of 12 paths. The complete result could not be saved; narrow pattern or path to see more.)\n"
    );
}

#[test]
fn bad_tool_configuration_fails_the_load_with_dshs_texts() {
    let sandbox = Sandbox::new();
    let cases = [
        (
            "- id: tool-fs-search\n  config:\n    sampleOverCapGlobResults: false\n    globMaxResults: 0\n",
            "tool-fs-search: globMaxResults must be a positive integer",
        ),
        (
            "- id: tool-fs-search\n  config:\n    sampleOverCapGlobResults: false\n    grepMaxMatches: -1\n",
            "tool-fs-search: grepMaxMatches must be a positive integer",
        ),
        (
            "- id: tool-fs-search\n  config:\n    sampleOverCapGlobResults: false\n    graceMs: 2147483648\n",
            "tool-fs-search: graceMs must be no greater than 2147483647",
        ),
        (
            "- id: tool-fs\n  config:\n    readLimit: 0\n",
            "tool-fs: readLimit must be a positive integer",
        ),
        (
            "- id: tool-fs\n  config:\n    readMaxBytes: 1.5\n",
            "tool-fs: readMaxBytes must be a positive integer",
        ),
        (
            "- id: tool-str-replace-editor\n  config:\n    maxOutputChars: 0\n",
            "tool-str-replace-editor: maxOutputChars must be a positive safe integer",
        ),
        (
            "- id: tool-str-replace-editor\n  config:\n    description: \"  \"\n",
            "tool-str-replace-editor: description must be non-empty",
        ),
        (
            "- id: fs-sandbox\n  config:\n    diffBasisMaxBytes: 0\n",
            "fs-local: diffBasisMaxBytes must be a positive safe integer no greater than ",
        ),
    ];
    for (patch, text) in cases {
        let run = call_patched(&sandbox, patch, "read", &json!({"file_path": "x"}));
        assert_eq!(run.code, Some(1), "{patch}");
        assert!(run.stderr.contains(text), "{patch}: {}", run.stderr);
        no_panic(&run);
    }
}

#[test]
fn configured_caps_and_timeouts_reach_the_texts() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    std::fs::write(work.join("rows.txt"), "1\n2\n3\n4\n5\n").unwrap();
    let patch = "- id: tool-fs\n  config:\n    readLimit: 3\n    readMaxLineLength: 4\n";
    let run = call_patched(&sandbox, patch, "read", &json!({"file_path": "rows.txt"}));
    assert_eq!(
        run.stdout,
        format!(
            "{}\n",
            envelope(
                &work.join("rows.txt"),
                &[(1, "1"), (2, "2"), (3, "3")],
                "(Showing lines 1-3 of 5. Use offset=4 to continue.)"
            )
        )
    );
    let run = call_patched(
        &sandbox,
        patch,
        "read",
        &json!({"file_path": "rows.txt", "limit": 4}),
    );
    assert_eq!(
        failed(&run, "limit"),
        ("limit must be less than or equal to 3".to_owned(), None)
    );
    let list = call_patched(
        &sandbox,
        patch,
        "read",
        &json!({"file_path": "rows.txt", "offset": 5}),
    );
    assert_eq!(list.code, Some(0));
    std::fs::write(work.join("long.txt"), "abcdef\n").unwrap();
    let run = call_patched(&sandbox, patch, "read", &json!({"file_path": "long.txt"}));
    assert!(
        run.stdout
            .contains("1: abcd... (line truncated to 4 chars)\n"),
        "{}",
        run.stdout
    );
    // A search past its budget is dsh's timeout result.
    let patch =
        "- id: tool-fs-search\n  config:\n    sampleOverCapGlobResults: false\n    timeoutMs: 1\n";
    let run = call_patched(
        &sandbox,
        patch,
        "grep",
        &json!({"pattern": "zz-never-there", "path": "/usr"}),
    );
    assert_eq!(
        failed(&run, "timeout"),
        (
            "tool call timed out after 1ms".to_owned(),
            Some("TOOL_TIMEOUT".to_owned())
        )
    );
}

#[test]
fn raw_output_overflow_is_the_lossy_seam_text() {
    // dsh's subprocess collector keeps a tail of at most `rawOutputMaxBytes`, so an overflowing
    // ripgrep is always lossy and the model reads the second overflow text (spec §2.5,
    // runtime-spec "Output collector").
    let sandbox = Sandbox::new();
    for index in 0..20 {
        std::fs::write(sandbox.work().join(format!("file-{index:02}.txt")), "x\n").unwrap();
    }
    let patch = "- id: tool-fs-search\n  config:\n    sampleOverCapGlobResults: false\n    rawOutputMaxBytes: 30\n";
    for name in ["glob", "grep"] {
        let args = if name == "glob" {
            json!({"pattern": "*"})
        } else {
            json!({"pattern": "x"})
        };
        let run = call_patched(&sandbox, patch, name, &args);
        assert_eq!(
            failed(&run, name),
            (
                format!(
                    "{name} produced more raw output than the subprocess seam retained within the 30-byte cap; narrow pattern, path, or include and retry"
                ),
                Some("SEARCH_RAW_OUTPUT_OVERFLOW".to_owned())
            )
        );
    }
}

#[test]
fn the_unconfined_overlay_advertises_no_escalation() {
    let sandbox = Sandbox::new();
    let overlay = repo_root().join("profiles/examples/unconfined.patch.yml");
    let overlay = overlay.to_str().unwrap();
    let list = sandbox.run(&["tools", "--patch", overlay, "list", "--json"]);
    assert_eq!(list.code, Some(0), "{}", list.stderr);
    for line in list.stdout.lines() {
        let tool: Value = serde_json::from_str(line).unwrap();
        if tool["name"] == "write" || tool["name"] == "edit" {
            let properties = tool["parameters"]["properties"].as_object().unwrap();
            assert!(!properties.contains_key("sandbox_permissions"), "{tool}");
            assert!(!properties.contains_key("justification"), "{tool}");
        }
    }
    let outside = outside();
    let target = shown(&outside.path().join("free.txt"));
    let args = json!({"file_path": target, "content": "x", "sandbox_permissions": "danger-full-access", "justification": "Needed."});
    let run = Run::from(
        sandbox
            .command(&[
                "tools",
                "--patch",
                overlay,
                "call",
                "write",
                &args.to_string(),
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(
        failed(&run, "escalation"),
        ("sandbox_permissions is not available in this composition (no sandboxing filesystem to escalate)".to_owned(), None)
    );
    assert!(tree(outside.path()).is_empty());
    let args = json!({"file_path": target, "content": "x"});
    let run = Run::from(
        sandbox
            .command(&[
                "tools",
                "--patch",
                overlay,
                "call",
                "write",
                &args.to_string(),
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, Some(0), "{}", run.stdout);
    assert_eq!(
        std::fs::read_to_string(outside.path().join("free.txt")).unwrap(),
        "x"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_image_refuses_for_a_model_without_image_input() {
    // Base mounts attachment-local (spec §3.1), so dsh reaches the route gate (§2.4 step 5):
    // the shipped default model takes no image input.
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    std::fs::write(work.join("pixel.png"), b"\x89PNG\r\n\x1a\n").unwrap();
    let turn = turn(
        &sandbox,
        &[
            ("read_image", json!({"file_path": "pixel.png"})),
            ("read_image", json!({"file_path": "notes.txt"})),
        ],
    )
    .await;
    assert_eq!(
        turn.results[0],
        "Error: cannot read \"pixel.png\" as an image: model \"deepseek-v4-flash\" does not declare image input; switch to an image-capable model to read images"
    );
    assert_eq!(
        turn.results[1],
        "Error: cannot read \"notes.txt\": read_image only accepts PNG/JPEG/WebP/GIF paths"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matches_are_counted_without_overlap_and_replacements_are_literal() {
    let sandbox = Sandbox::new();
    let work = work(&sandbox);
    std::fs::write(work.join("a.txt"), "aaa\n").unwrap();
    std::fs::write(work.join("b.txt"), "aaaa\n").unwrap();
    std::fs::write(work.join("c.txt"), "foo\nboo\n").unwrap();
    std::fs::write(work.join("d.txt"), "\u{feff}x\r\ny\r\n").unwrap();
    let p = |name: &str| shown(&work.join(name));
    let turn = turn(
        &sandbox,
        &[
            ("read", json!({"file_path": "a.txt"})),
            ("edit", json!({"file_path": "a.txt", "old_string": "aa", "new_string": "X"})),
            ("read", json!({"file_path": "b.txt"})),
            ("edit", json!({"file_path": "b.txt", "old_string": "aa", "new_string": "X"})),
            ("str_replace_editor", json!({"command": "view", "path": p("c.txt")})),
            ("str_replace_editor", json!({"command": "str_replace", "path": p("c.txt"), "old_str": "o", "new_str": "0"})),
            ("str_replace_editor", json!({"command": "str_replace", "path": p("c.txt"), "old_str": "foo", "new_str": "$& $$ $1"})),
            ("str_replace_editor", json!({"command": "insert", "path": p("c.txt"), "insert_line": -1, "new_str": "x"})),
            ("read", json!({"file_path": "d.txt"})),
            ("edit", json!({"file_path": "d.txt", "old_string": "y", "new_string": "z"})),
            ("str_replace_editor", json!({"command": "view", "path": p("d.txt")})),
        ],
    )
    .await;
    let r = &turn.results;
    assert_eq!(
        r[1],
        format!("The file {} has been updated successfully.", p("a.txt"))
    );
    assert_eq!(std::fs::read_to_string(work.join("a.txt")).unwrap(), "Xa\n");
    assert_eq!(
        r[3],
        format!(
            "Error: old_string matched 2 times in \"{}\"; provide a more specific old_string or set replace_all to true",
            p("b.txt")
        )
    );
    assert_eq!(
        r[5],
        "Error: No replacement was performed. Multiple occurrences of old_str `o` in lines [1, 1, 2, 2]. Please ensure it is unique"
    );
    assert_eq!(
        r[6],
        format!("The file {} has been edited successfully.", p("c.txt"))
    );
    assert_eq!(
        std::fs::read_to_string(work.join("c.txt")).unwrap(),
        "$& $$ $1\nboo\n"
    );
    assert_eq!(
        r[7],
        "Error: Invalid `insert_line` parameter: -1. It should be within the range of lines of the file: [0, 3]"
    );
    // The byte-order mark goes, the CRLF style stays.
    assert_eq!(
        r[8],
        envelope(
            &work.join("d.txt"),
            &[(1, "x"), (2, "y")],
            "(End of file - total 2 lines)"
        )
    );
    assert_eq!(std::fs::read(work.join("d.txt")).unwrap(), b"x\r\nz\r\n");
    assert_eq!(
        r[10],
        format!(
            "Here's the content of {} with line numbers (which has a total of 3 lines):\n     1  x\r\n     2  z\r\n     3  \n",
            p("d.txt")
        )
    );
}
