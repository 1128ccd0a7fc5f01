//! The file tools through the `dsh` binary: their schemas against dsh 0.1.1's request body,
//! `dsh tools call` outside a session, and a headless turn against the fake DeepSeek server
//! whose log exports as dsh events.

use dsh_test_support::fake_deepseek::{FakeDeepSeek, Reply};
use dsh_test_support::sse::{tool_call_events, usage};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::headless::{against, answer, exported, headless, only_session, run, tool_results};
use super::support::{Sandbox, repo_root};

const FS_TOOLS: [&str; 7] = [
    "edit",
    "glob",
    "grep",
    "read",
    "read_image",
    "str_replace_editor",
    "write",
];

/// A schema with every `description` value replaced by `…` (descriptions are our own words).
pub(super) fn structure(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let value = if key == "description" {
                        json!("…")
                    } else {
                        structure(value)
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(structure).collect()),
        other => other.clone(),
    }
}

#[test]
fn the_seven_schemas_are_dshs() {
    let sandbox = Sandbox::new();
    let run = sandbox.run(&["tools", "list", "--json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let reference: Value = serde_json::from_str(
        &std::fs::read_to_string(
            repo_root().join("apps/dsh/tests/fixtures/dsh-0.1.1/fs-tool-parameters.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let listed: Vec<Value> = run
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    for name in FS_TOOLS {
        let tool = listed
            .iter()
            .find(|tool| tool["name"] == name)
            .unwrap_or_else(|| panic!("{name} is listed"));
        let ours = structure(&tool["parameters"]);
        assert_eq!(ours, reference[name], "{name}");
        // Key order too: the model saw dsh's.
        assert_eq!(ours.to_string(), reference[name].to_string(), "{name}");
        assert!(!tool["description"].as_str().unwrap().is_empty());
    }
}

fn call(sandbox: &Sandbox, name: &str, args: &Value) -> super::support::Run {
    sandbox.run(&["tools", "call", name, &args.to_string()])
}

#[test]
fn tools_call_reads_outside_a_session() {
    let sandbox = Sandbox::new();
    sandbox.write("work/README.md", "# Demo\n\nSecond paragraph.\n");
    let run = call(&sandbox, "read", &json!({"file_path": "README.md"}));
    let path = std::fs::canonicalize(sandbox.work())
        .unwrap()
        .join("README.md");
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            Some(0),
            format!("<path>{}</path>\n<type>file</type>\n<content>\n1: # Demo\n2: \n3: Second paragraph.\n\n(End of file - total 3 lines)\n</content>\n", path.display()).as_str(),
            ""
        )
    );
    let window = call(
        &sandbox,
        "read",
        &json!({"file_path": "README.md", "offset": 3, "limit": 1}),
    );
    assert!(
        window.stdout.contains("3: Second paragraph."),
        "{}",
        window.stdout
    );
    let edit = call(
        &sandbox,
        "edit",
        &json!({"file_path": "README.md", "old_string": "Demo", "new_string": "Done"}),
    );
    assert_eq!(edit.code, Some(1));
    assert!(
        edit.stdout.starts_with("Error: edit requires reading"),
        "{}",
        edit.stdout
    );
    assert!(edit.stderr.contains("(FS_NOT_OBSERVED)"), "{}", edit.stderr);
}

#[test]
fn bad_input_gets_a_clear_error_and_changes_nothing() {
    let sandbox = Sandbox::new();
    let work = std::fs::canonicalize(sandbox.work()).unwrap();
    std::fs::write(work.join("latin1.txt"), b"caf\xe9\n").unwrap();
    let huge = std::fs::File::create(work.join("huge.bin")).unwrap();
    huge.set_len(1 << 30).unwrap();
    std::fs::create_dir(work.join("dir")).unwrap();
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::write(outside.path().join("secret.txt"), "keep\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), work.join("out")).unwrap();
    let cases = [
        (json!({"file_path": "latin1.txt"}), "invalid UTF-8 text"),
        (json!({"file_path": "huge.bin"}), "binary file"),
        (json!({"file_path": "dir"}), "not a regular file"),
        (json!({"file_path": "a\u{0}b"}), "NUL"),
        (json!({"file_path": "missing.txt"}), "not found"),
    ];
    for (args, reason) in cases {
        let run = call(&sandbox, "read", &args);
        assert_eq!(run.code, Some(1), "{args}");
        assert!(
            run.stdout.starts_with("Error: ") && run.stdout.contains(reason),
            "{args}: {}",
            run.stdout
        );
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    }
    let escape = call(
        &sandbox,
        "write",
        &json!({"file_path": "out/secret.txt", "content": "gone"}),
    );
    assert_eq!(escape.code, Some(1));
    assert!(
        escape
            .stdout
            .starts_with("Error: [sandbox: file access denied under workspace-write mode]"),
        "{}",
        escape.stdout
    );
    let new_file = call(
        &sandbox,
        "write",
        &json!({"file_path": "out/new.txt", "content": "x"}),
    );
    assert_eq!(new_file.code, Some(1), "{}", new_file.stdout);
    assert_eq!(
        std::fs::read_to_string(outside.path().join("secret.txt")).unwrap(),
        "keep\n"
    );
    assert!(!outside.path().join("new.txt").exists());
}

#[test]
fn read_only_denies_every_write() {
    let sandbox = Sandbox::new();
    let mut command = sandbox.command(&[
        "tools",
        "call",
        "write",
        r#"{"file_path":"made.txt","content":"x"}"#,
    ]);
    command.env("DSH_PERMISSION_MODE", "read-only");
    let run = super::support::Run::from(command.output().unwrap());
    assert_eq!(run.code, Some(1));
    assert!(
        run.stdout
            .starts_with("Error: [sandbox: file access denied under read-only mode]"),
        "{}",
        run.stdout
    );
    assert!(!sandbox.work().join("made.txt").exists());
}

#[test]
fn str_replace_editor_commands() {
    let sandbox = Sandbox::new();
    let file = std::fs::canonicalize(sandbox.work())
        .unwrap()
        .join("sample.txt");
    let path = file.to_string_lossy().into_owned();
    let create = call(
        &sandbox,
        "str_replace_editor",
        &json!({"command": "create", "path": path, "file_text": "one\ntwo\nthree\n"}),
    );
    assert_eq!(
        create.stdout,
        format!("New file created successfully at: {path}\n")
    );
    let view = call(
        &sandbox,
        "str_replace_editor",
        &json!({"command": "view", "path": path, "view_range": [2, -1]}),
    );
    assert_eq!(
        view.stdout,
        format!(
            "Here's the content of {path} with line numbers (which has a total of 4 lines) with view_range=[2, -1]:\n     2  two\n     3  three\n     4  \n"
        )
    );
    // Outside a session nothing is remembered, so a mutation of an existing file is refused.
    let replace = call(
        &sandbox,
        "str_replace_editor",
        &json!({"command": "str_replace", "path": path, "old_str": "two", "new_str": "2"}),
    );
    assert_eq!(replace.code, Some(1));
    assert!(
        replace.stdout.contains("edit requires reading"),
        "{}",
        replace.stdout
    );
    let relative = call(
        &sandbox,
        "str_replace_editor",
        &json!({"command": "view", "path": "sample.txt"}),
    );
    assert!(
        relative.stdout.contains("is not an absolute path"),
        "{}",
        relative.stdout
    );
}

fn tool_call(id: &str, name: &str, args: &Value) -> Reply {
    Reply::sse(tool_call_events(
        id,
        name,
        &args.to_string(),
        3,
        Some(usage(100, 10, None, None)),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_headless_turn_reads_edits_and_logs_dsh_events() {
    let sandbox = Sandbox::new();
    let work = std::fs::canonicalize(sandbox.work()).unwrap();
    std::fs::write(
        work.join("config.txt"),
        "mode=DEBUG\nlevel=info\nmode=DEBUG\n",
    )
    .unwrap();
    let fake = FakeDeepSeek::start().await.unwrap();
    let edit = json!({"file_path": "config.txt", "old_string": "DEBUG", "new_string": "RELEASE", "replace_all": true});
    fake.push(tool_call("call_edit0", "edit", &edit));
    fake.push(tool_call(
        "call_read",
        "read",
        &json!({"file_path": "config.txt", "offset": 2, "limit": 1}),
    ));
    fake.push(tool_call(
        "call_edit1",
        "edit",
        &json!({"file_path": "config.txt", "old_string": "DEBUG", "new_string": "RELEASE"}),
    ));
    fake.push(tool_call("call_edit2", "edit", &edit));
    fake.push(tool_call(
        "call_grep",
        "grep",
        &json!({"pattern": "mode=\\w+"}),
    ));
    fake.push(tool_call(
        "call_image",
        "read_image",
        &json!({"file_path": "shot.png"}),
    ));
    fake.push(answer("Switched to release mode."));
    let done = run(against(&sandbox, &fake, &headless(&["switch to release"]))).await;
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    assert_eq!(done.stdout, "Switched to release mode.\n");
    assert_eq!(
        std::fs::read_to_string(work.join("config.txt")).unwrap(),
        "mode=RELEASE\nlevel=info\nmode=RELEASE\n"
    );

    let requests = fake.requests();
    let first = &requests[0].body;
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    for name in FS_TOOLS {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("Use the read tool — not shell commands like cat"),
        "{system}"
    );
    let last = &requests.last().unwrap().body;
    let results = tool_results(last);
    let shown = work.join("config.txt").display().to_string();
    assert_eq!(
        results[0].1,
        format!("Error: edit requires reading \"{shown}\" first — read the file, then retry")
    );
    assert_eq!(
        results[1].1,
        format!(
            "<path>{shown}</path>\n<type>file</type>\n<content>\n2: level=info\n\n(Showing lines 2-2 of 3. Use offset=3 to continue.)\n</content>"
        )
    );
    assert_eq!(
        results[2].1,
        format!(
            "Error: old_string matched 2 times in \"{shown}\"; provide a more specific old_string or set replace_all to true"
        )
    );
    assert_eq!(
        results[3].1,
        format!("The file {shown} has been updated. All occurrences were successfully replaced.")
    );
    assert_eq!(
        results[4].1,
        "Found 2 matches\n\nconfig.txt\nLine 1: mode=RELEASE\nLine 3: mode=RELEASE"
    );
    assert_eq!(
        results[5].1,
        "Error: cannot read \"shot.png\" as an image: model \"deepseek-v4-flash\" does not \
         declare image input; switch to an image-capable model to read images"
    );

    let id = only_session(&sandbox);
    let log = exported(&sandbox, &id);
    let results: Vec<&Value> = log
        .iter()
        .filter(|event| event["type"] == "tool/result")
        .collect();
    assert_eq!(
        results[0]["data"]["error"],
        json!({"name": "FsError", "code": "FS_NOT_OBSERVED"})
    );
    assert_eq!(
        results[1]["data"]["meta"]["lines"],
        json!([{"number": 2, "text": "level=info"}])
    );
    assert_eq!(
        results[3]["data"]["meta"]["diffs"][0],
        json!({"path": "config.txt", "oldText": "mode=DEBUG\nlevel=info\nmode=DEBUG", "newText": "mode=RELEASE\nlevel=info\nmode=RELEASE"})
    );
    let show = sandbox.run(&["sessions", "show", &id]);
    assert_eq!(show.code, Some(0), "{}", show.stderr);
    assert!(
        show.stdout.contains("tool call edit [call_edit0]:"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout
            .contains("tool result [call_edit0] (FS_NOT_OBSERVED):"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains("tool call read [call_read]:"),
        "{}",
        show.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_headless_turn_drives_str_replace_editor() {
    let sandbox = Sandbox::new();
    let work = std::fs::canonicalize(sandbox.work()).unwrap();
    let file = work.join("notes.txt");
    std::fs::write(&file, "one\ntwo\nthree\n").unwrap();
    let path = file.display().to_string();
    let created = work.join("new/made.txt").display().to_string();
    let fake = FakeDeepSeek::start().await.unwrap();
    let calls = [
        json!({"command": "str_replace", "path": path, "old_str": "two", "new_str": "2"}),
        json!({"command": "view", "path": path}),
        json!({"command": "str_replace", "path": path, "old_str": "two", "new_str": "2"}),
        json!({"command": "insert", "path": path, "insert_line": 0, "new_str": "zero"}),
        json!({"command": "create", "path": created, "file_text": "made\n"}),
        json!({"command": "create", "path": created, "file_text": "again\n"}),
    ];
    for (index, args) in calls.iter().enumerate() {
        fake.push(tool_call(
            &format!("call_{index}"),
            "str_replace_editor",
            args,
        ));
    }
    fake.push(answer("Edited."));
    let done = run(against(&sandbox, &fake, &headless(&["edit the notes"]))).await;
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "zero\none\n2\nthree\n"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("new/made.txt")).unwrap(),
        "made\n"
    );
    let requests = fake.requests();
    let results = tool_results(&requests.last().unwrap().body);
    let texts: Vec<&str> = results.iter().map(|(_, text)| text.as_str()).collect();
    assert_eq!(
        texts,
        [
            format!("Error: edit requires reading \"{path}\" first"),
            format!(
                "Here's the content of {path} with line numbers (which has a total of 4 lines):\n     1  one\n     2  two\n     3  three\n     4  \n"
            ),
            format!("The file {path} has been edited successfully."),
            format!("The file {path} has been edited successfully."),
            format!("New file created successfully at: {created}"),
            format!(
                "Error: File already exists at: {created}. Cannot overwrite files using command `create`."
            ),
        ]
    );
}
