//! The four commands' canonical texts and effects on disk (dsh's `tools.spec.ts` cases).

use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{err, harness, ok};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_view_replace_and_insert_read_as_dsh_renders_them() {
    let harness = harness().await;
    let sample = harness.path("sample.txt");
    let created = harness
        .call(json!({"command": "create", "path": sample, "file_text": "one\ntwo\nthree\n"}))
        .await;
    assert_eq!(
        ok(&created),
        format!("New file created successfully at: {sample}")
    );
    assert_eq!(
        created.value,
        Some(json!(format!("New file created successfully at: {sample}")))
    );
    assert_eq!(created.content.len(), 1);
    assert_eq!(created.meta, None);

    let viewed = harness
        .call(json!({"command": "view", "path": sample, "view_range": [2, -1]}))
        .await;
    assert_eq!(
        ok(&viewed),
        format!(
            "Here's the content of {sample} with line numbers (which has a total of 4 lines) \
             with view_range=[2, -1]:\n     2  two\n     3  three\n     4  \n"
        )
    );

    let edited = format!("The file {sample} has been edited successfully.");
    let replaced = harness
        .call(json!({"command": "str_replace", "path": sample, "old_str": "two", "new_str": "TWO"}))
        .await;
    assert_eq!(ok(&replaced), edited);
    assert_eq!(harness.read("sample.txt"), "one\nTWO\nthree\n");
    let removed = harness
        .call(json!({"command": "str_replace", "path": sample, "old_str": "TWO"}))
        .await;
    assert_eq!(ok(&removed), edited);
    let inserted = harness
        .call(json!({"command": "insert", "path": sample, "insert_line": 1, "new_str": "between"}))
        .await;
    assert_eq!(ok(&inserted), edited);
    assert_eq!(harness.read("sample.txt"), "one\nbetween\n\nthree\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_file_view_is_snapshotted() {
    let harness = harness().await;
    let path = harness.write("notes.md", "# Title\n\n\tindented\nlast line");
    let text = ok(&harness.call(json!({"command": "view", "path": path})).await);
    insta::assert_snapshot!(
        "whole_file_view",
        text.replace(harness.root.to_str().unwrap(), "/ws")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_files_newlines_ranges_and_end_inserts() {
    let harness = harness().await;
    let empty = harness.write("empty.txt", "");
    let newline = harness.write("newline.txt", "\n");
    let plain = harness.write("plain.txt", "one\ntwo");
    let view = |path: &str| json!({"command": "view", "path": path});
    assert!(
        ok(&harness.call(view(&empty)).await)
            .ends_with("(which has a total of 1 lines):\n     1  \n")
    );
    assert!(
        ok(&harness.call(view(&newline)).await)
            .ends_with("(which has a total of 2 lines):\n     1  \n     2  \n")
    );
    let ranged = harness
        .call(json!({"command": "view", "path": plain, "view_range": [1, 2]}))
        .await;
    assert!(ok(&ranged).ends_with("with view_range=[1, 2]:\n     1  one\n     2  two\n"));
    assert!(ok(&harness.call_without_session(view(&plain)).await).contains("     1  one"));
    let ownerless = harness
        .call_without_session(json!({
            "command": "create", "path": harness.path("ownerless.txt"), "file_text": "ownerless"
        }))
        .await;
    ok(&ownerless);
    assert_eq!(harness.read("ownerless.txt"), "ownerless");

    ok(&harness
        .call(json!({"command": "insert", "path": plain, "insert_line": 2, "new_str": "three"}))
        .await);
    assert_eq!(harness.read("plain.txt"), "one\ntwo\nthree");
    harness.write("newline.txt", "one\n");
    ok(&harness
        .call(json!({"command": "insert", "path": newline, "insert_line": 2, "new_str": "three"}))
        .await);
    assert_eq!(harness.read("newline.txt"), "one\n\nthree");
    let empty_insert = harness
        .call(json!({"command": "insert", "path": empty, "insert_line": 0, "new_str": ""}))
        .await;
    ok(&empty_insert);
    assert_eq!(harness.read("empty.txt"), "\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replacement_text_is_literal_and_creation_may_be_empty() {
    let harness = harness().await;
    let path = harness.write("literal.txt", "before OLD after");
    let replacement = "$&|$`|$'|$$";
    ok(&harness
        .call(json!({"command": "str_replace", "path": path, "old_str": "OLD", "new_str": replacement}))
        .await);
    assert_eq!(
        harness.read("literal.txt"),
        format!("before {replacement} after")
    );
    let empty = harness.path("nested/dir/empty.txt");
    ok(&harness
        .call(json!({"command": "create", "path": empty, "file_text": ""}))
        .await);
    assert_eq!(harness.read("nested/dir/empty.txt"), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matching_is_raw_and_tabs_survive() {
    let harness = harness().await;
    let mixed = harness.write("mixed-eol.txt", "alpha\r\nbeta\nmiddle\nalpha\nbeta");
    ok(&harness
        .call(json!({"command": "str_replace", "path": mixed, "old_str": "alpha\r\nbeta", "new_str": "replaced"}))
        .await);
    assert_eq!(
        harness.read("mixed-eol.txt"),
        "replaced\nmiddle\nalpha\nbeta"
    );
    let crlf = harness.write("crlf.txt", "a\r\nb\r\n");
    let shown = ok(&harness.call(json!({"command": "view", "path": crlf})).await);
    assert!(
        shown.ends_with(":\n     1  a\r\n     2  b\r\n     3  \n"),
        "{shown:?}"
    );
    let missing = harness
        .call(json!({"command": "str_replace", "path": crlf, "old_str": "a\nb", "new_str": "x"}))
        .await;
    assert_eq!(
        err(&missing),
        format!(
            "Error: No replacement was performed, old_str `a\nb` did not appear verbatim in {crlf}."
        )
    );

    let makefile = harness.write("Makefile", "target:\n\told\nremove\n");
    assert!(
        ok(&harness
            .call(json!({"command": "view", "path": makefile}))
            .await)
        .contains("     2  \told")
    );
    ok(&harness
        .call(json!({"command": "str_replace", "path": makefile, "old_str": "\told", "new_str": "\tnew"}))
        .await);
    ok(&harness
        .call(json!({"command": "str_replace", "path": makefile, "old_str": "remove\n"}))
        .await);
    ok(&harness
        .call(json!({"command": "insert", "path": makefile, "insert_line": 1, "new_str": "\tkept"}))
        .await);
    assert_eq!(harness.read("Makefile"), "target:\n\tkept\n\tnew\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replacement_failures_name_old_str_and_the_lines() {
    let harness = harness().await;
    let path = harness.write("ambiguous.txt", "same\nother\nsame");
    let missing = harness
        .call(json!({"command": "str_replace", "path": path, "old_str": "absent", "new_str": "x"}))
        .await;
    assert_eq!(
        err(&missing),
        format!(
            "Error: No replacement was performed, old_str `absent` did not appear verbatim in {path}."
        )
    );
    assert_eq!(missing.code(), Some("FS_EDIT_NOT_FOUND"));
    let repeated = harness
        .call(json!({"command": "str_replace", "path": path, "old_str": "same", "new_str": "x"}))
        .await;
    assert_eq!(
        err(&repeated),
        "Error: No replacement was performed. Multiple occurrences of old_str `same` in lines \
         [1, 3]. Please ensure it is unique"
    );
    assert_eq!(repeated.code(), Some("FS_AMBIGUOUS_EDIT"));
    harness.write("ambiguous.txt", "alpha\nbeta\nmiddle\nalpha\nbeta");
    let multiline = harness
        .call(json!({"command": "str_replace", "path": path, "old_str": "alpha\nbeta", "new_str": "x"}))
        .await;
    assert!(
        err(&multiline).contains("Multiple occurrences of old_str `alpha\nbeta` in lines [1, 4]")
    );
    assert_eq!(
        harness.read("ambiguous.txt"),
        "alpha\nbeta\nmiddle\nalpha\nbeta"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_view_is_clipped_at_max_output_chars() {
    let harness = super::support::harness_with(json!({"maxOutputChars": 10})).await;
    let path = harness.write("large.txt", &"x".repeat(100));
    let text = ok(&harness.call(json!({"command": "view", "path": path})).await);
    assert_eq!(
        text,
        format!("Here's the{}", dsh_tool_str_replace_editor::CLIPPED_MARKER)
    );
    assert!(text.contains("<response clipped><NOTE>To save on context only part of this file"));
}
