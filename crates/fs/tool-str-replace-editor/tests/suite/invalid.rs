//! Refused calls: dsh's eighteen invalid-argument cases, schema violations caught by the
//! registry, relative and NUL paths, special files and links. None of them changes a file.

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{err, harness};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dshs_invalid_cases_fail_with_their_texts_and_change_nothing() {
    let harness = harness().await;
    let ambiguous = harness.write("ambiguous.txt", "same same");
    let empty = harness.write("empty.txt", "");
    harness.write("trailing-newline.txt", "one\n");
    let three = harness.write("three-lines.txt", "one\ntwo\nthree");
    let directory = harness.path("directory");
    std::fs::create_dir(&directory).unwrap();
    let missing = harness.path("missing.txt");
    let new = harness.path("new.txt");
    let cases: Vec<(Value, String, Option<&str>)> =
        vec![
        (json!({"command": "view", "path": ""}), "path must be a non-empty string".into(), None),
        (
            json!({"command": "view", "path": missing}),
            format!("The path {missing} does not exist. Please provide a valid path."),
            Some("FS_NOT_FOUND"),
        ),
        (
            json!({"command": "view", "path": ambiguous, "view_range": [1]}),
            "Invalid `view_range`. It should be a list of two integers.".into(),
            None,
        ),
        (
            json!({"command": "view", "path": ambiguous, "view_range": [0, 1]}),
            "Invalid `view_range`: [0, 1]. Its first element `0` should be within the range of \
             lines of the file: [1, 1]"
                .into(),
            None,
        ),
        (
            json!({"command": "view", "path": ambiguous, "view_range": [1.5, 2]}),
            "invalid arguments: \"view_range[0]\" must be an integer".into(),
            Some("INVALID_ARGS"),
        ),
        (
            json!({"command": "view", "path": three, "view_range": [1, 99]}),
            "Invalid `view_range`: [1, 99]. Its second element `99` should be smaller than the \
             number of lines in the file: `3`"
                .into(),
            None,
        ),
        (
            json!({"command": "view", "path": three, "view_range": [2, 1]}),
            "Invalid `view_range`: [2, 1]. Its second element `1` should be larger or equal than \
             its first `2`"
                .into(),
            None,
        ),
        (
            json!({"command": "view", "path": directory, "view_range": [1, 1]}),
            "The `view_range` parameter is not allowed when `path` points to a directory.".into(),
            None,
        ),
        (
            json!({"command": "create", "path": new}),
            "Parameter `file_text` is required for command: create".into(),
            None,
        ),
        (
            json!({"command": "create", "path": ambiguous, "file_text": "overwrite"}),
            format!(
                "File already exists at: {ambiguous}. Cannot overwrite files using command \
                 `create`."
            ),
            None,
        ),
        (
            json!({"command": "str_replace", "path": ambiguous, "new_str": "x"}),
            "Parameter `old_str` is required for command: str_replace".into(),
            None,
        ),
        (
            json!({"command": "str_replace", "path": ambiguous, "old_str": "", "new_str": "x"}),
            "Parameter `old_str` is empty for command: str_replace".into(),
            None,
        ),
        (
            json!({"command": "insert", "path": ambiguous, "new_str": "x"}),
            "Parameter `insert_line` is required for command: insert".into(),
            None,
        ),
        (
            json!({"command": "insert", "path": ambiguous, "insert_line": -1, "new_str": "x"}),
            "Invalid `insert_line` parameter: -1. It should be within the range of lines of the \
             file: [0, 1]"
                .into(),
            None,
        ),
        (
            json!({"command": "insert", "path": ambiguous, "insert_line": 1.5, "new_str": "x"}),
            "invalid arguments: \"insert_line\" must be an integer".into(),
            Some("INVALID_ARGS"),
        ),
        (
            json!({"command": "insert", "path": ambiguous, "insert_line": 99, "new_str": "x"}),
            "Invalid `insert_line` parameter: 99. It should be within the range of lines of the \
             file: [0, 1]"
                .into(),
            None,
        ),
        (
            json!({"command": "insert", "path": empty, "insert_line": 2, "new_str": "x"}),
            "Invalid `insert_line` parameter: 2. It should be within the range of lines of the \
             file: [0, 1]"
                .into(),
            None,
        ),
        (
            json!({"command": "insert", "path": directory, "insert_line": 0, "new_str": "x"}),
            format!(
                "The path {directory} is a directory and only the `view` command can be used on \
                 directories"
            ),
            Some("FS_NOT_REGULAR_FILE"),
        ),
    ];
    assert_eq!(cases.len(), 18);
    for (args, message, code) in cases {
        let result = harness.call(args.clone()).await;
        assert_eq!(err(&result), format!("Error: {message}"), "{args}");
        assert_eq!(result.code(), code, "{args}");
    }
    assert_eq!(harness.read("ambiguous.txt"), "same same");
    assert_eq!(harness.read("empty.txt"), "");
    assert_eq!(harness.read("three-lines.txt"), "one\ntwo\nthree");
    assert!(!std::path::Path::new(&new).exists());
    assert!(!std::path::Path::new(&missing).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_violations_never_reach_the_tool() {
    let harness = harness().await;
    let path = harness.write("a.txt", "a\nb\n");
    let cases = [
        (
            json!({"command": "delete", "path": path}),
            "invalid arguments: \"command\" must be one of [\"view\",\"create\",\"str_replace\",\"insert\"]",
        ),
        (
            json!({"command": "view"}),
            "invalid arguments: missing required property \"path\"",
        ),
        (
            json!({"path": path}),
            "invalid arguments: missing required property \"command\"",
        ),
        (
            json!({"command": "view", "path": path, "view_range": "1,2"}),
            "invalid arguments: \"view_range\" must be an array",
        ),
        (
            json!({"command": "view", "path": path, "view_range": [1, "2"]}),
            "invalid arguments: \"view_range[1]\" must be an integer",
        ),
        (
            json!({"command": "create", "path": harness.path("b.txt"), "file_text": 5}),
            "invalid arguments: \"file_text\" must be a string",
        ),
        (
            json!({"command": "str_replace", "path": path, "old_str": "a", "new_str": null}),
            "invalid arguments: \"new_str\" must be a string",
        ),
    ];
    for (args, message) in cases {
        let result = harness.call(args.clone()).await;
        assert_eq!(err(&result), format!("Error: {message}"), "{args}");
        assert_eq!(result.code(), Some("INVALID_ARGS"));
    }
    assert_eq!(harness.read("a.txt"), "a\nb\n");
    assert!(!harness.root.join("b.txt").exists());
    let extra = harness
        .call(json!({"command": "view", "path": path, "replace_all": true}))
        .await;
    assert!(!extra.is_error, "extra keys are accepted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relative_and_nul_paths_are_refused_cleanly() {
    let harness = harness().await;
    harness.write("ambiguous.txt", "x");
    let relative = harness
        .call(json!({"command": "view", "path": "ambiguous.txt"}))
        .await;
    assert_eq!(
        err(&relative),
        "Error: The path ambiguous.txt is not an absolute path, it should start with `/`. Maybe \
         you meant /ambiguous.txt?"
    );
    insta::assert_snapshot!("relative_path", relative.text());
    let create = harness
        .call(json!({"command": "create", "path": "new.txt", "file_text": "x"}))
        .await;
    assert!(err(&create).contains("is not an absolute path"));
    assert!(!harness.root.join("new.txt").exists());
    let blank = harness
        .call(json!({"command": "create", "path": " \t", "file_text": "x"}))
        .await;
    assert_eq!(err(&blank), "Error: path must be a non-empty string");

    let nul = format!("{}/bad\u{0}name", harness.root.display());
    let result = harness
        .call(json!({"command": "create", "path": nul, "file_text": "x"}))
        .await;
    assert!(
        err(&result).contains("a path cannot contain a NUL character"),
        "{}",
        result.text()
    );
    assert_eq!(result.code(), Some("FS_NOT_FOUND"));
    assert_eq!(std::fs::read_dir(&harness.root).unwrap().count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn special_files_are_not_regular_files() {
    let harness = harness().await;
    let socket = harness.path("special");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let view = harness
        .call(json!({"command": "view", "path": socket}))
        .await;
    assert_eq!(
        err(&view),
        format!("Error: cannot view \"{socket}\": not a regular file or directory")
    );
    assert_eq!(view.code(), Some("FS_NOT_REGULAR_FILE"));
    let replace = harness
        .call(json!({"command": "str_replace", "path": socket, "old_str": "x", "new_str": "y"}))
        .await;
    assert_eq!(
        err(&replace),
        format!("Error: cannot edit \"{socket}\": not a regular file")
    );
    assert_eq!(replace.code(), Some("FS_NOT_REGULAR_FILE"));
    let insert = harness
        .call(json!({"command": "insert", "path": socket, "insert_line": 0, "new_str": "x"}))
        .await;
    assert_eq!(
        err(&insert),
        format!("Error: cannot insert into \"{socket}\": not a regular file")
    );
    let directory = harness.path("dir");
    std::fs::create_dir(&directory).unwrap();
    let replace_dir = harness
        .call(json!({"command": "str_replace", "path": directory, "old_str": "x"}))
        .await;
    assert_eq!(replace_dir.code(), Some("FS_NOT_REGULAR_FILE"));
    let create_dir = harness
        .call(json!({"command": "create", "path": directory, "file_text": "x"}))
        .await;
    assert!(err(&create_dir).starts_with("Error: File already exists at: "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_and_binary_files_give_clean_errors() {
    let harness = harness().await;
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "outside\n").unwrap();
    let link = harness.path("link.txt");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    let shown = harness.call(json!({"command": "view", "path": link})).await;
    assert!(
        shown
            .text()
            .starts_with(&format!("Here's the content of {link} with"))
    );
    let dangling = harness.path("dangling.txt");
    std::os::unix::fs::symlink(harness.root.join("nowhere"), &dangling).unwrap();
    let missing = harness
        .call(json!({"command": "view", "path": dangling}))
        .await;
    assert_eq!(
        err(&missing),
        format!("Error: The path {dangling} does not exist. Please provide a valid path.")
    );
    let through = harness
        .call(json!({"command": "create", "path": dangling, "file_text": "x"}))
        .await;
    assert_eq!(
        err(&through),
        format!("Error: cannot write \"{dangling}\": not a regular file")
    );
    assert_eq!(through.code(), Some("FS_NOT_REGULAR_FILE"));
    assert!(!harness.root.join("nowhere").exists());

    std::fs::write(harness.root.join("blob.bin"), b"\x00\x01binary").unwrap();
    let blob = harness.path("blob.bin");
    let binary = harness.call(json!({"command": "view", "path": blob})).await;
    assert_eq!(
        err(&binary),
        format!("Error: cannot read \"{blob}\": binary file")
    );
    assert_eq!(binary.code(), Some("FS_NOT_TEXT"));
    std::fs::write(harness.root.join("latin1.txt"), b"caf\xe9").unwrap();
    let latin1 = harness
        .call(
            json!({"command": "str_replace", "path": harness.path("latin1.txt"), "old_str": "caf"}),
        )
        .await;
    assert_eq!(latin1.code(), Some("FS_NOT_TEXT"));
    assert_eq!(
        std::fs::read(harness.root.join("latin1.txt")).unwrap(),
        b"caf\xe9"
    );
}
