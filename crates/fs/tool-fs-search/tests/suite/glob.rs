//! `glob` through the tool pipeline: dsh's exact texts, values, cards and spill files.

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{code, error_name, harness, harness_with, text};
use super::tree::Tree;

/// dsh's integration workspace: two sources with known ages, notes, a hidden file, VCS
/// metadata and an odd name.
fn workspace() -> Tree {
    let tree = Tree::new();
    tree.write(
        "src/alpha.ts",
        "export const alpha = 1\n// TODO: refit alpha\n",
    )
    .write("src/beta.ts", "export const beta = 2\n")
    .write("notes.md", "alpha appears here too\n")
    .write(".hidden.ts", "export const hidden = 3\n")
    .write(".git/config.ts", "never listed\n")
    .write("spaced dir/wei'rd name.ts", "const inside = true\n")
    .set_mtime("src/alpha.ts", 100)
    .set_mtime(".hidden.ts", 200)
    .set_mtime("src/beta.ts", 300)
    .set_mtime("spaced dir/wei'rd name.ts", 400)
    .set_mtime("notes.md", 500);
    tree
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_come_oldest_first_with_hidden_ones_and_without_vcs_metadata() {
    let tree = workspace();
    let harness = harness().await;
    let result = harness
        .call_in(tree.path(), "glob", json!({"pattern": "**/*.ts"}))
        .await;
    assert!(!result.is_error);
    assert_eq!(
        text(&result),
        "src/alpha.ts\n.hidden.ts\nsrc/beta.ts\nspaced dir/wei'rd name.ts"
    );
    assert_eq!(
        result.value.unwrap(),
        json!({"root": ".", "paths": ["src/alpha.ts", ".hidden.ts", "src/beta.ts", "spaced dir/wei'rd name.ts"]})
    );
    assert_eq!(
        result.meta.unwrap(),
        json!({"shape": "paths", "paths": ["src/alpha.ts", ".hidden.ts", "src/beta.ts", "spaced dir/wei'rd name.ts"], "truncated": false, "total": 4})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_scopes_the_search_and_names_the_root() {
    let tree = workspace();
    let harness = harness().await;
    let result = harness
        .call_in(
            tree.path(),
            "glob",
            json!({"pattern": "*.ts", "path": "src"}),
        )
        .await;
    assert_eq!(text(&result), "src/alpha.ts\nsrc/beta.ts");
    assert_eq!(result.value.unwrap()["root"], json!("src"));
    let absolute = tree.join("src");
    let result = harness
        .call_in(
            tree.path(),
            "glob",
            json!({"pattern": "*.ts", "path": absolute.to_str().unwrap()}),
        )
        .await;
    assert_eq!(text(&result), "src/alpha.ts\nsrc/beta.ts");
    assert_eq!(result.value.unwrap()["root"], json!("src"));
    // Outside the workdir, paths stay absolute.
    let elsewhere = Tree::new();
    elsewhere.write("x.ts", "");
    let result = harness
        .call_in(
            tree.path(),
            "glob",
            json!({"pattern": "*.ts", "path": elsewhere.path().to_str().unwrap()}),
        )
        .await;
    assert_eq!(
        text(&result),
        format!("{}/x.ts", elsewhere.path().display())
    );
    // An explicit file is listed whatever the pattern, as ripgrep lists it.
    let result = harness
        .call_in(
            tree.path(),
            "glob",
            json!({"pattern": "*.rs", "path": "notes.md"}),
        )
        .await;
    assert_eq!(text(&result), "notes.md");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_results_and_vcs_roots() {
    let tree = workspace();
    let harness = harness().await;
    let none = harness
        .call_in(tree.path(), "glob", json!({"pattern": "*.nomatch"}))
        .await;
    assert!(!none.is_error);
    assert_eq!(text(&none), "No files found");
    assert_eq!(none.value.unwrap(), json!({"root": ".", "paths": []}));
    let vcs = harness
        .call_in(tree.path(), "glob", json!({"pattern": "*", "path": ".git"}))
        .await;
    assert_eq!(text(&vcs), "No files found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn equal_times_are_ordered_by_path() {
    let tree = Tree::new();
    for name in ["c.txt", "a.txt", "b/z.txt", "b.txt"] {
        tree.write(name, "").set_mtime(name, 7);
    }
    tree.write("old.txt", "").set_mtime("old.txt", 1);
    let harness = harness().await;
    let result = harness
        .call_in(tree.path(), "glob", json!({"pattern": "*.txt"}))
        .await;
    assert_eq!(text(&result), "old.txt\na.txt\nb.txt\nb/z.txt\nc.txt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_search_errors() {
    let tree = workspace();
    let harness = harness().await;
    let invalid = harness
        .call_in(tree.path(), "glob", json!({"pattern": "["}))
        .await;
    assert!(invalid.is_error);
    assert_eq!(code(&invalid).as_deref(), Some("SEARCH_INVALID_PATTERN"));
    assert_eq!(error_name(&invalid).as_deref(), Some("SearchError"));
    assert_eq!(
        text(&invalid),
        "Error: glob pattern rejected by ripgrep: rg: error parsing glob '[': unclosed \
         character class; missing ']'"
    );
    let missing = harness
        .call_in(tree.path(), "glob", json!({"pattern": "*", "path": "nope"}))
        .await;
    assert_eq!(code(&missing).as_deref(), Some("SEARCH_FAILED"));
    // ripgrep 15's text; ripgrep 13 (/usr/bin/rg here) prints `nope: No such file or
    // directory (os error 2)` with no `rg: ` prefix.
    assert_eq!(
        text(&missing),
        "Error: glob search failed (exit 2): rg: nope: IO error for operation on nope: No such \
         file or directory (os error 2)"
    );
    let gone = tree.join("deleted-session-dir");
    let unusable = harness
        .call_in(&gone, "glob", json!({"pattern": "*"}))
        .await;
    assert_eq!(code(&unusable).as_deref(), Some("SEARCH_FAILED"));
    assert_eq!(
        text(&unusable),
        "Error: glob could not start its search command (ripgrep launch failed)"
    );
    let blank = harness
        .call_in(tree.path(), "glob", json!({"pattern": "  "}))
        .await;
    assert_eq!(text(&blank), "Error: pattern must be a non-empty string");
    assert_eq!(
        blank.error.unwrap().info,
        None,
        "a plain error, as dsh throws it"
    );
    let blank_path = harness
        .call_in(tree.path(), "glob", json!({"pattern": "*", "path": " "}))
        .await;
    assert_eq!(
        text(&blank_path),
        "Error: path must be a non-empty string when given"
    );
    // No process argument can hold a NUL byte: dsh's spawn of ripgrep throws.
    for arguments in [
        json!({"pattern": "*", "path": "a\u{0}b"}),
        json!({"pattern": "a\u{0}b"}),
    ] {
        let nul = harness.call_in(tree.path(), "glob", arguments).await;
        assert_eq!(code(&nul).as_deref(), Some("SEARCH_FAILED"));
        assert_eq!(
            text(&nul),
            "Error: glob could not start its search command (ripgrep launch failed)"
        );
    }
    let untyped = harness
        .call_in(tree.path(), "glob", json!({"pattern": 3}))
        .await;
    assert_eq!(code(&untyped).as_deref(), Some("INVALID_ARGS"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_harness_own_proc_entries_are_refused() {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let harness = harness().await;
    for path in [
        "/proc/self",
        "/proc/thread-self/",
        &format!("/proc/{}", std::process::id()),
    ] {
        let result = harness
            .call_in(
                Path::new("/"),
                "glob",
                json!({"pattern": "*", "path": path}),
            )
            .await;
        assert_eq!(code(&result).as_deref(), Some("SEARCH_FAILED"), "{path}");
        assert_eq!(
            text(&result),
            "Error: glob cannot search the harness's own /proc entries"
        );
    }
    // Walking /proc itself reaches other processes' entries but never ours. Some of theirs
    // may be unreadable (a container's init, as root), and ripgrep then exits 2 naming them.
    let result = harness
        .call_in(Path::new("/proc"), "glob", json!({"pattern": "status"}))
        .await;
    let ours = format!("{}/", std::process::id());
    if result.is_error {
        let failure = text(&result);
        assert!(
            failure.starts_with("Error: glob search failed (exit 2): rg: ./")
                && failure.contains("Permission denied (os error 13)"),
            "{failure}"
        );
        assert!(!failure.contains(&format!("./{ours}")), "{failure}");
        return;
    }
    let value = result.value.unwrap();
    let paths = value["paths"].as_array().unwrap();
    assert!(!paths.is_empty());
    assert!(
        paths
            .iter()
            .all(|path| !path.as_str().unwrap().starts_with(&ours))
    );
}

/// Four files, oldest first `a.ts` … `d.ts`.
fn four() -> Tree {
    let tree = Tree::new();
    for (age, name) in ["a.ts", "b.ts", "c.ts", "d.ts"].iter().enumerate() {
        tree.write(name, "").set_mtime(name, age as u64);
    }
    tree
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_over_cap_session_result_is_saved_whole() {
    let tree = four();
    let harness = harness_with(json!({"globMaxResults": 2})).await;
    let result = harness
        .call_in(tree.path(), "glob", json!({"pattern": "*.ts"}))
        .await;
    let text = text(&result);
    let prefix = "a.ts\nb.ts\n\n(Showing 2 of 4 paths. Full sorted result stored at: ";
    let suffix = ". Use read with offset/limit, or grep this path to search within it.)";
    assert!(text.starts_with(prefix) && text.ends_with(suffix), "{text}");
    let saved = &text[prefix.len()..text.len() - suffix.len()];
    assert_eq!(
        std::fs::read_to_string(saved).unwrap(),
        "a.ts\nb.ts\nc.ts\nd.ts"
    );
    let saved = Path::new(saved);
    let name = saved.file_name().unwrap().to_str().unwrap();
    assert!(
        name.ends_with("-glob-results.txt") && name.len() == 12 + 17,
        "{name}"
    );
    let dir = saved.parent().unwrap();
    assert_eq!(
        dir,
        dsh_shell::default_spill_dir().unwrap(),
        "the protected spill directory"
    );
    assert_eq!(dir.parent().unwrap(), std::env::temp_dir());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(saved).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    assert_eq!(
        result.value.unwrap(),
        json!({"root": ".", "paths": ["a.ts", "b.ts", "c.ts", "d.ts"]})
    );
    assert_eq!(
        result.meta.unwrap(),
        json!({"shape": "paths", "paths": ["a.ts", "b.ts"], "truncated": true, "total": 4})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_session_or_as_a_nested_call_nothing_is_saved() {
    let tree = four();
    let harness = harness_with(json!({"globMaxResults": 2})).await;
    let unsaved = "a.ts\nb.ts\n\n(Showing 2 of 4 paths. The complete result could not be saved; \
                   narrow pattern or path to see more.)";
    let ownerless = harness
        .call(
            "glob",
            json!({"pattern": "*.ts", "path": tree.path().to_str().unwrap()}),
        )
        .await;
    let listed = text(&ownerless);
    let prefix = format!("{}/", tree.path().display());
    assert_eq!(listed.replace(&prefix, ""), unsaved);
    assert!(ownerless.meta.is_some(), "a direct call still has its card");
    let nested = harness
        .call_nested(tree.path(), "glob", json!({"pattern": "*.ts"}))
        .await;
    assert_eq!(text(&nested), unsaved);
    assert_eq!(nested.meta, None, "a nested call has no card");
    assert_eq!(nested.value.unwrap()["paths"].as_array().unwrap().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_spreads_an_over_cap_page_across_the_top_level() {
    let tree = Tree::new();
    let names = [
        "vendor/a.ts",
        "vendor/b.ts",
        "vendor/c.ts",
        "src/d.ts",
        "guide/e.md",
        "top.txt",
    ];
    for (age, name) in names.iter().enumerate() {
        tree.write(name, "").set_mtime(name, age as u64);
    }
    let harness =
        harness_with(json!({"globMaxResults": 3, "sampleOverCapGlobResults": true})).await;
    let result = harness
        .call_nested(tree.path(), "glob", json!({"pattern": "*"}))
        .await;
    assert_eq!(
        text(&result),
        "vendor/a.ts\nsrc/d.ts\nguide/e.md\n\n(Showing 3 of 6 paths, sampled across 3 of the 4 \
         top-level entries this pattern matched instead of taken in modification-time order. \
         Narrow path to inspect a specific subtree. The complete result could not be saved; \
         narrow pattern or path to see more.)"
    );
    let direct = harness
        .call_in(tree.path(), "glob", json!({"pattern": "*"}))
        .await;
    assert_eq!(
        direct.meta.clone().unwrap(),
        json!({"shape": "paths", "paths": ["vendor/a.ts", "src/d.ts", "guide/e.md"], "truncated": true, "total": 6})
    );
    assert!(text(&direct).contains("top-level entries this pattern matched instead of taken in modification-time order. Narrow path to inspect a specific subtree. Full sorted result stored at: "));
    let rooted = harness
        .call_nested(
            tree.path(),
            "glob",
            json!({"pattern": "*", "path": "vendor"}),
        )
        .await;
    assert_eq!(text(&rooted), "vendor/a.ts\nvendor/b.ts\nvendor/c.ts");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listing_is_bounded_by_raw_output_max_bytes() {
    let tree = four();
    let harness = harness_with(json!({"rawOutputMaxBytes": 12})).await;
    let result = harness
        .call_in(tree.path(), "glob", json!({"pattern": "*"}))
        .await;
    assert_eq!(code(&result).as_deref(), Some("SEARCH_RAW_OUTPUT_OVERFLOW"));
    assert_eq!(
        text(&result),
        "Error: glob produced more raw output than the subprocess seam retained within the \
         12-byte cap; narrow pattern, path, or include and retry"
    );
    let fits = harness_with(json!({"rawOutputMaxBytes": 20})).await;
    let result = fits
        .call_in(tree.path(), "glob", json!({"pattern": "*"}))
        .await;
    assert_eq!(text(&result), "a.ts\nb.ts\nc.ts\nd.ts");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_session_the_process_directory_is_searched() {
    let harness = harness().await;
    let result = harness.call("glob", json!({"pattern": "Cargo.toml"})).await;
    assert_eq!(text(&result), "Cargo.toml");
}
