//! `view` of a directory: two levels, hidden and dependency directories left out, the root's
//! own row, path order, clipping.

use pretty_assertions::assert_eq;
use serde_json::json;

use dsh_tool_str_replace_editor::CLIPPED_MARKER;

use super::support::{Harness, err, harness, harness_with, ok};

fn tree(harness: &Harness) {
    for dir in [
        "dir/nested/third",
        "dir/node_modules/pkg",
        "dir/node_modules_old",
        "dir/__pycache__",
        "dir/__pycache__backup",
    ] {
        std::fs::create_dir_all(harness.root.join(dir)).unwrap();
    }
    for (file, content) in [
        ("dir/visible.txt", "ok"),
        ("dir/.hidden", "hidden"),
        ("dir/nested/child.txt", "child"),
        ("dir/nested/.secret", "hidden"),
        ("dir/nested/third/too-deep.txt", "deep"),
        ("dir/node_modules/pkg/index.js", "dependency"),
        ("dir/node_modules_old/kept.js", "source"),
        ("dir/__pycache__/module.pyc", "cache"),
        ("dir/__pycache__backup/kept.py", "source"),
    ] {
        harness.write(file, content);
    }
    std::os::unix::fs::symlink(
        harness.root.join("nowhere"),
        harness.root.join("dir/dangling"),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listing_is_two_levels_of_visible_entries_in_path_order() {
    let harness = harness().await;
    tree(&harness);
    let dir = harness.path("dir");
    let text = ok(&harness.call(json!({"command": "view", "path": dir})).await);
    let expected = [
        format!("Here're the files and directories up to 2 levels deep in {dir}, excluding hidden items, node_modules, and Python cache directories:"),
        format!("d\t{dir}"),
        format!("d\t{dir}/__pycache__backup"),
        format!("f\t{dir}/__pycache__backup/kept.py"),
        format!("?\t{dir}/dangling"),
        format!("d\t{dir}/nested"),
        format!("f\t{dir}/nested/child.txt"),
        format!("d\t{dir}/nested/third"),
        format!("d\t{dir}/node_modules_old"),
        format!("f\t{dir}/node_modules_old/kept.js"),
        format!("f\t{dir}/visible.txt"),
        String::new(),
        String::new(),
    ]
    .join("\n");
    assert_eq!(text, expected);
    for hidden in [
        ".hidden",
        ".secret",
        "too-deep.txt",
        "index.js",
        "module.pyc",
    ] {
        assert!(!text.contains(hidden), "{hidden} is listed");
    }
    insta::assert_snapshot!(
        "directory_listing",
        text.replace(harness.root.to_str().unwrap(), "/ws")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_view_records_nothing_and_refuses_a_range() {
    let harness = harness().await;
    let seen = super::support::record_observations(&harness.kernel.root());
    tree(&harness);
    let dir = harness.path("dir");
    ok(&harness.call(json!({"command": "view", "path": dir})).await);
    assert!(seen.lock().unwrap().is_empty());
    let ranged = harness
        .call(json!({"command": "view", "path": dir, "view_range": [1, 1]}))
        .await;
    assert_eq!(
        err(&ranged),
        "Error: The `view_range` parameter is not allowed when `path` points to a directory."
    );
    let empty = harness.path("empty-dir");
    std::fs::create_dir(&empty).unwrap();
    assert_eq!(
        ok(&harness
            .call(json!({"command": "view", "path": empty}))
            .await),
        format!(
            "Here're the files and directories up to 2 levels deep in {empty}, excluding hidden \
             items, node_modules, and Python cache directories:\nd\t{empty}\n\n"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rows_are_clipped_but_not_the_header() {
    let harness = harness_with(json!({"maxOutputChars": 12})).await;
    tree(&harness);
    let dir = harness.path("dir");
    let text = ok(&harness.call(json!({"command": "view", "path": dir})).await);
    let rows = format!("d\t{dir}\n");
    let kept: String = rows.chars().take(12).collect();
    assert!(
        text.ends_with(&format!(
            "Python cache directories:\n{kept}{CLIPPED_MARKER}\n"
        )),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_below_the_limit_is_whole() {
    let harness = harness_with(json!({"maxOutputChars": 10_000})).await;
    tree(&harness);
    let text = ok(&harness
        .call(json!({"command": "view", "path": harness.path("dir")}))
        .await);
    assert!(!text.contains("<response clipped>"));
    assert!(text.contains("node_modules_old/kept.js"));
    assert!(text.contains("__pycache__backup/kept.py"));
}
