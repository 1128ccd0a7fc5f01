//! Failures dsh derives from ripgrep's stderr and exit 2: a search without a path argument that
//! searched no file, unreadable entries, a stderr longer than `stderrMaxBytes`. Where ripgrep
//! 13 (the `/usr/bin/rg` these tests compare with) agrees on the outcome, they check that it
//! does; the texts are ripgrep 15's (the binary dsh ships), which adds the `rg: ` prefix.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{code, harness, harness_with, rg, text};
use super::tree::Tree;

const NOTHING_SEARCHED: &str = "No files were searched, which means ripgrep probably applied a \
                                filter you didn't expect.\nRunning with --debug will show why \
                                files are being skipped.";

/// `rg --no-config --json` with dsh's grep arguments in `cwd`: its exit code and trimmed stderr.
fn rg_grep(cwd: &Path, arguments: &Value) -> (Option<i32>, String) {
    let mut args = vec![
        "--no-config".to_owned(),
        "--json".to_owned(),
        format!("--regexp={}", arguments["pattern"].as_str().unwrap()),
    ];
    if let Some(include) = arguments["include"].as_str() {
        args.push(format!("--glob={include}"));
    }
    if let Some(path) = arguments["path"].as_str() {
        args.extend(["--".to_owned(), path.to_owned()]);
    }
    let output = Command::new(rg())
        .args(&args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
    (output.status.code(), stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grep_without_a_path_that_searched_no_file_fails() {
    let tree = Tree::new();
    tree.write("a.txt", "x\n")
        .write("hidden/.only.txt", "x\n")
        .write("ignored/.ignore", "*\n")
        .write("ignored/b.txt", "x\n");
    std::fs::create_dir(tree.join("void")).unwrap();
    let harness = harness().await;
    let failure = format!("Error: grep search failed (exit 2): rg: {NOTHING_SEARCHED}");
    for (cwd, arguments) in [
        (
            tree.path().to_path_buf(),
            json!({"pattern": "x", "include": "*.none"}),
        ),
        (tree.join("void"), json!({"pattern": "x"})),
        (tree.join("hidden"), json!({"pattern": "x"})),
        (tree.join("ignored"), json!({"pattern": "x"})),
    ] {
        let result = harness.call_in(&cwd, "grep", arguments.clone()).await;
        assert_eq!(
            code(&result).as_deref(),
            Some("SEARCH_FAILED"),
            "{arguments}"
        );
        assert_eq!(text(&result), failure, "{arguments} in {}", cwd.display());
        // ripgrep 13 prints the same message, without the `rg: ` prefix.
        assert_eq!(
            rg_grep(&cwd, &arguments),
            (Some(2), NOTHING_SEARCHED.to_owned()),
            "{arguments}"
        );
    }
    // With a path argument ripgrep stays silent: nothing to search is then intended.
    for arguments in [
        json!({"pattern": "x", "path": "void"}),
        json!({"pattern": "x", "path": ".", "include": "*.none"}),
        json!({"pattern": "x", "path": "hidden"}),
    ] {
        let result = harness
            .call_in(tree.path(), "grep", arguments.clone())
            .await;
        assert_eq!(text(&result), "No matches found", "{arguments}");
        assert_eq!(rg_grep(tree.path(), &arguments), (Some(1), String::new()));
    }
    // A file that matches nothing was still searched.
    let result = harness
        .call_in(tree.path(), "grep", json!({"pattern": "absent"}))
        .await;
    assert_eq!(text(&result), "No matches found");
    // `glob` lists; an empty listing is no failure.
    let result = harness
        .call_in(&tree.join("void"), "glob", json!({"pattern": "*"}))
        .await;
    assert_eq!(text(&result), "No files found");
}

/// Whether this process can open a file whose mode is 000 (it then has CAP_DAC_OVERRIDE, and
/// permission errors cannot be staged).
fn reads_anything(tree: &Tree) -> bool {
    let probe = tree.join("probe");
    std::fs::write(&probe, "").unwrap();
    std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o000)).unwrap();
    let readable = std::fs::File::open(&probe).is_ok();
    std::fs::remove_file(&probe).unwrap();
    readable
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_entries_fail_the_search_after_it_finished() {
    let tree = Tree::new();
    if reads_anything(&tree) {
        eprintln!(
            "skipped: permissions do not bind this user (the dsh acceptance tests run this as nobody)"
        );
        return;
    }
    tree.write("ok.txt", "needle\n")
        .write("secret.txt", "needle\n")
        .write("locked/in.txt", "needle\n");
    for path in ["secret.txt", "locked"] {
        std::fs::set_permissions(tree.join(path), std::fs::Permissions::from_mode(0o000)).unwrap();
    }
    let harness = harness().await;
    let result = harness
        .call_in(tree.path(), "grep", json!({"pattern": "needle"}))
        .await;
    assert_eq!(code(&result).as_deref(), Some("SEARCH_FAILED"));
    // The parallel walk: any order. An unreadable file prints as results do, an unreadable
    // directory under `./` (ripgrep strips that prefix from results only).
    let failure = text(&result);
    let lines = [
        "rg: secret.txt: Permission denied (os error 13)",
        "rg: ./locked: Permission denied (os error 13)",
    ];
    let prefix = "Error: grep search failed (exit 2): ";
    assert!(
        [
            format!("{prefix}{}\n{}", lines[0], lines[1]),
            format!("{prefix}{}\n{}", lines[1], lines[0]),
        ]
        .contains(&failure),
        "{failure}"
    );
    let result = harness
        .call_in(
            tree.path(),
            "grep",
            json!({"pattern": "needle", "path": "secret.txt"}),
        )
        .await;
    assert_eq!(
        text(&result),
        "Error: grep search failed (exit 2): rg: secret.txt: Permission denied (os error 13)"
    );
    // `glob` opens no file; ripgrep's sorted (single-threaded) walk words the directory's
    // error through walkdir.
    let result = harness
        .call_in(tree.path(), "glob", json!({"pattern": "*"}))
        .await;
    assert_eq!(
        text(&result),
        "Error: glob search failed (exit 2): rg: ./locked: IO error for operation on ./locked: \
         Permission denied (os error 13)"
    );
    let result = harness
        .call_in(tree.path(), "glob", json!({"pattern": "*", "path": "."}))
        .await;
    assert_eq!(
        text(&result),
        "Error: glob search failed (exit 2): rg: ./locked: IO error for operation on ./locked: \
         Permission denied (os error 13)"
    );
    // ripgrep 13 fails these searches too (its texts have no `rg: ` prefix).
    let (exit, stderr) = rg_grep(tree.path(), &json!({"pattern": "needle"}));
    assert_eq!(exit, Some(2), "{stderr}");
    assert!(stderr.contains("secret.txt: Permission denied (os error 13)"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_stderr_is_quoted_from_its_tail() {
    let tree = Tree::new();
    tree.write("a.txt", "x\n");
    let harness = harness_with(json!({"stderrMaxBytes": 20})).await;
    let result = harness
        .call_in(
            tree.path(),
            "grep",
            json!({"pattern": "x", "path": "missing-directory"}),
        )
        .await;
    // The last 20 bytes of `rg: missing-directory: IO error … (os error 2)\n`, trimmed.
    assert_eq!(
        text(&result),
        "Error: grep search failed (exit 2): ectory (os error 2) [stderr truncated]"
    );
    let wide = harness_with(json!({})).await;
    let result = wide
        .call_in(
            tree.path(),
            "grep",
            json!({"pattern": "(", "include": "*.txt"}),
        )
        .await;
    assert_eq!(
        text(&result),
        "Error: grep pattern rejected by ripgrep: rg: regex parse error:\n    (?:()\n    ^\nerror: \
         unclosed group"
    );
}
