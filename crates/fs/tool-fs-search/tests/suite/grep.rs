//! `grep` through the tool pipeline: dsh's exact texts, values, cards and spill files.

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{code, error_name, harness, harness_with, text};
use super::tree::Tree;

fn workspace() -> Tree {
    let tree = Tree::new();
    tree.write(
        "src/alpha.ts",
        "export const alpha = 1\n// TODO: refit alpha\n",
    )
    .write("src/beta.ts", "export const beta = 2\n")
    .write("notes.md", "alpha appears here too\n")
    .write(".hidden.ts", "export const alpha = 3\n");
    tree
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matches_are_grouped_by_file_with_line_numbers() {
    let tree = workspace();
    let harness = harness().await;
    let result = harness
        .call_in(tree.path(), "grep", json!({"pattern": "alpha"}))
        .await;
    assert!(!result.is_error);
    let output = text(&result);
    let alpha = "src/alpha.ts\nLine 1: export const alpha = 1\nLine 2: // TODO: refit alpha";
    let notes = "notes.md\nLine 1: alpha appears here too";
    let either = [
        format!("Found 3 matches\n\n{alpha}\n\n{notes}"),
        format!("Found 3 matches\n\n{notes}\n\n{alpha}"),
    ];
    assert!(either.contains(&output), "{output}");
    let value = result.value.unwrap();
    assert_eq!(value["matches"].as_array().unwrap().len(), 3);
    let meta = result.meta.unwrap();
    assert_eq!(meta["shape"], json!("matches"));
    assert_eq!(meta["truncated"], json!(false));
    assert_eq!(meta["total"], json!(3));
    assert_eq!(meta["files"].as_array().unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_file_target_and_an_include_filter() {
    let tree = workspace();
    let harness = harness().await;
    let single = harness
        .call_in(
            tree.path(),
            "grep",
            json!({"pattern": "alpha", "path": "notes.md"}),
        )
        .await;
    assert_eq!(
        text(&single),
        "Found 1 match\n\nnotes.md\nLine 1: alpha appears here too"
    );
    assert_eq!(
        single.value.unwrap(),
        json!({"matches": [{"path": "notes.md", "lineNumber": 1, "line": "alpha appears here too"}]})
    );
    assert_eq!(
        single.meta.unwrap(),
        json!({"shape": "matches", "files": [{"path": "notes.md", "matches": [{"lineNumber": 1, "line": "alpha appears here too"}]}], "truncated": false, "total": 1})
    );
    let filtered = harness
        .call_in(
            tree.path(),
            "grep",
            json!({"pattern": "alpha", "path": ".", "include": "*.ts"}),
        )
        .await;
    // An include glob admits hidden files it matches, as ripgrep's `--glob` does.
    let alpha = "./src/alpha.ts\nLine 1: export const alpha = 1\nLine 2: // TODO: refit alpha";
    let hidden = "./.hidden.ts\nLine 1: export const alpha = 3";
    let either = [
        format!("Found 3 matches\n\n{alpha}\n\n{hidden}"),
        format!("Found 3 matches\n\n{hidden}\n\n{alpha}"),
    ];
    assert!(either.contains(&text(&filtered)), "{}", text(&filtered));
    let braces = harness
        .call_in(
            tree.path(),
            "grep",
            json!({"pattern": "  ", "include": "*.{ts,tsx}"}),
        )
        .await;
    assert!(!braces.is_error);
    assert_eq!(text(&braces), "No matches found");
    assert_eq!(braces.value.unwrap(), json!({"matches": []}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patterns_are_inert_regexes() {
    let tree = workspace();
    tree.write("dashes.txt", "value --flag value\n");
    let harness = harness().await;
    let hostile = harness
        .call_in(tree.path(), "grep", json!({"pattern": "$(touch pwned)"}))
        .await;
    assert_eq!(text(&hostile), "No matches found");
    assert!(!tree.join("pwned").exists());
    let dashed = harness
        .call_in(
            tree.path(),
            "grep",
            json!({"pattern": "--flag", "path": "dashes.txt"}),
        )
        .await;
    assert_eq!(
        text(&dashed),
        "Found 1 match\n\ndashes.txt\nLine 1: value --flag value"
    );
    let case = harness
        .call_in(tree.path(), "grep", json!({"pattern": "ALPHA"}))
        .await;
    assert_eq!(text(&case), "No matches found", "case-sensitive");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_search_errors() {
    let tree = workspace();
    let harness = harness().await;
    let regex = harness
        .call_in(tree.path(), "grep", json!({"pattern": "(unclosed"}))
        .await;
    assert_eq!(code(&regex).as_deref(), Some("SEARCH_INVALID_PATTERN"));
    assert_eq!(error_name(&regex).as_deref(), Some("SearchError"));
    assert_eq!(
        text(&regex),
        "Error: grep pattern rejected by ripgrep: rg: regex parse error:\n    (?:(unclosed)\n    \
         ^\nerror: unclosed group"
    );
    let include = harness
        .call_in(
            tree.path(),
            "grep",
            json!({"pattern": "x", "include": "a[b"}),
        )
        .await;
    assert_eq!(code(&include).as_deref(), Some("SEARCH_INVALID_PATTERN"));
    assert_eq!(
        text(&include),
        "Error: grep pattern rejected by ripgrep: rg: error parsing glob 'a[b': unclosed \
         character class; missing ']'"
    );
    let newline = harness
        .call_in(tree.path(), "grep", json!({"pattern": "a\nb"}))
        .await;
    assert_eq!(code(&newline).as_deref(), Some("SEARCH_FAILED"));
    // ripgrep 15's text; ripgrep 13 quotes the literal as '"\n"' and has no `rg: ` prefix.
    assert_eq!(
        text(&newline),
        "Error: grep search failed (exit 2): rg: the literal \"\\n\" is not allowed in a \
         regex\n\nConsider enabling multiline mode with the --multiline flag (or -U for short).\n\
         When multiline mode is enabled, new line characters can be matched."
    );
    let missing = harness
        .call_in(
            tree.path(),
            "grep",
            json!({"pattern": "x", "path": "no-such-dir"}),
        )
        .await;
    assert_eq!(code(&missing).as_deref(), Some("SEARCH_FAILED"));
    // ripgrep 15's text; ripgrep 13 prints `no-such-dir: No such file or directory (os
    // error 2)`.
    assert_eq!(
        text(&missing),
        "Error: grep search failed (exit 2): rg: no-such-dir: IO error for operation on \
         no-such-dir: No such file or directory (os error 2)"
    );
    // ripgrep 15 refuses a NUL-matching regex (binary detection makes it unmatchable);
    // ripgrep 13 searches for it and finds nothing.
    let unmatchable = harness
        .call_in(tree.path(), "grep", json!({"pattern": "\\x00"}))
        .await;
    assert_eq!(code(&unmatchable).as_deref(), Some("SEARCH_FAILED"));
    assert_eq!(
        text(&unmatchable),
        "Error: grep search failed (exit 2): rg: pattern contains \"\\0\" but it is impossible \
         to match\n\nConsider enabling text mode with the --text flag (or -a for short). \
         Otherwise,\nbinary detection is enabled and matching a NUL byte is impossible."
    );
    // ripgrep's order: the include glob, then the pattern, then the path.
    let order = harness
        .call_in(
            tree.path(),
            "grep",
            json!({"pattern": "(", "path": "no-such-dir", "include": "["}),
        )
        .await;
    assert!(
        text(&order).contains("error parsing glob '['"),
        "{}",
        text(&order)
    );
    let order = harness
        .call_in(
            tree.path(),
            "grep",
            json!({"pattern": "(", "path": "no-such-dir"}),
        )
        .await;
    assert_eq!(code(&order).as_deref(), Some("SEARCH_INVALID_PATTERN"));
    // No process argument can hold a NUL byte: dsh's spawn of ripgrep throws.
    for arguments in [
        json!({"pattern": "a\u{0}"}),
        json!({"pattern": "x", "path": "a\u{0}"}),
        json!({"pattern": "x", "include": "*\u{0}"}),
    ] {
        let nul = harness.call_in(tree.path(), "grep", arguments).await;
        assert_eq!(code(&nul).as_deref(), Some("SEARCH_FAILED"));
        assert_eq!(
            text(&nul),
            "Error: grep could not start its search command (ripgrep launch failed)"
        );
    }
    for (arguments, message) in [
        (json!({"pattern": ""}), "pattern must be a non-empty string"),
        (
            json!({"pattern": "x", "path": "  "}),
            "path must be a non-empty string when given",
        ),
        (
            json!({"pattern": "x", "include": " "}),
            "include must be a non-empty glob when given",
        ),
        (
            json!({"pattern": "x", "include": "!*.ts"}),
            "include must be a positive glob filter; negated patterns (\"!…\") are not supported",
        ),
        (
            json!({"pattern": "x", "include": "*.ts,*.js"}),
            "include must be one glob, not a comma-separated list (use {a,b} alternation instead)",
        ),
    ] {
        let result = harness.call_in(tree.path(), "grep", arguments).await;
        assert_eq!(text(&result), format!("Error: {message}"));
    }
    if Path::new("/proc/self").exists() {
        let own = harness
            .call_in(
                Path::new("/"),
                "grep",
                json!({"pattern": "x", "path": "/proc/self/status"}),
            )
            .await;
        assert_eq!(
            text(&own),
            "Error: grep cannot search the harness's own /proc entries"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lines_are_previewed_as_dsh_previews_them() {
    let tree = Tree::new();
    tree.write("a.txt", "a\u{e9}a\u{e9}a\u{e9}a\u{e9}\n")
        .write("crlf.txt", "windows line\r\n")
        .write("latin.txt", b"caf\xe9 line\n");
    let harness = harness_with(json!({"grepMaxLineBytes": 7})).await;
    let cut = harness
        .call_in(
            tree.path(),
            "grep",
            json!({"pattern": "a", "path": "a.txt"}),
        )
        .await;
    assert_eq!(
        text(&cut),
        "Found 1 match\n\na.txt\nLine 1: a\u{e9}a\u{e9}a (line truncated)"
    );
    assert_eq!(
        cut.value.unwrap(),
        json!({"matches": [{"path": "a.txt", "lineNumber": 1, "line": "a\u{e9}a\u{e9}a\u{e9}a\u{e9}"}]})
    );
    let wide = harness_with(json!({})).await;
    let crlf = wide
        .call_in(
            tree.path(),
            "grep",
            json!({"pattern": "line", "path": "crlf.txt"}),
        )
        .await;
    assert_eq!(
        text(&crlf),
        "Found 1 match\n\ncrlf.txt\nLine 1: windows line"
    );
    let latin = wide
        .call_in(
            tree.path(),
            "grep",
            json!({"pattern": "line", "path": "latin.txt"}),
        )
        .await;
    assert_eq!(
        text(&latin),
        "Found 1 match\n\nlatin.txt\nLine 1: (line is not valid UTF-8)"
    );
}

fn five() -> Tree {
    let tree = Tree::new();
    tree.write("a.txt", "one\ntwo\nthree\nfour\nfive\n");
    tree
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_over_cap_session_result_is_saved_whole() {
    let tree = five();
    let harness = harness_with(json!({"grepMaxMatches": 2})).await;
    let result = harness
        .call_in(tree.path(), "grep", json!({"pattern": "."}))
        .await;
    let output = text(&result);
    let prefix = "Found 2 of 5 matches\n\na.txt\nLine 1: one\nLine 2: two\n\n(Full grep result \
                  stored at: ";
    let suffix = ". Use read with offset/limit, or grep this path to search within it.)";
    assert!(
        output.starts_with(prefix) && output.ends_with(suffix),
        "{output}"
    );
    let saved = &output[prefix.len()..output.len() - suffix.len()];
    assert!(saved.ends_with("-grep-results.txt"));
    assert_eq!(
        std::fs::read_to_string(saved).unwrap(),
        "Found 5 matches\n\na.txt\nLine 1: one\nLine 2: two\nLine 3: three\nLine 4: four\nLine 5: \
         five"
    );
    assert_eq!(
        result.value.unwrap()["matches"].as_array().unwrap().len(),
        5
    );
    assert_eq!(
        result.meta.unwrap(),
        json!({"shape": "matches", "files": [{"path": "a.txt", "matches": [{"lineNumber": 1, "line": "one"}, {"lineNumber": 2, "line": "two"}]}], "truncated": true, "total": 5})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_session_or_as_a_nested_call_nothing_is_saved() {
    let tree = five();
    let harness = harness_with(json!({"grepMaxMatches": 1})).await;
    let unsaved = "Found 1 of 5 matches\n\na.txt\nLine 1: one\n\n(The complete result could not be \
                   saved; narrow pattern, path, or include to see more.)";
    let nested = harness
        .call_nested(tree.path(), "grep", json!({"pattern": "."}))
        .await;
    assert_eq!(text(&nested), unsaved);
    assert_eq!(nested.meta, None);
    assert_eq!(
        nested.value.unwrap()["matches"].as_array().unwrap().len(),
        5
    );
    let path = tree.join("a.txt");
    let ownerless = harness
        .call(
            "grep",
            json!({"pattern": ".", "path": path.to_str().unwrap()}),
        )
        .await;
    assert_eq!(
        text(&ownerless),
        unsaved.replace("a.txt", path.to_str().unwrap())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collected_results_are_bounded_by_raw_output_max_bytes() {
    let tree = five();
    let harness = harness_with(json!({"rawOutputMaxBytes": 30})).await;
    let result = harness
        .call_in(tree.path(), "grep", json!({"pattern": "."}))
        .await;
    assert_eq!(code(&result).as_deref(), Some("SEARCH_RAW_OUTPUT_OVERFLOW"));
    // Each match counts its path, its line and a separator: 9 + 9 + 11 + 10 = 39 > 30. dsh's
    // collector keeps only a tail of the cap, so the text is the lossy one.
    assert_eq!(
        text(&result),
        "Error: grep produced more raw output than the subprocess seam retained within the \
         30-byte cap; narrow pattern, path, or include and retry"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explicit_targets_that_are_not_regular_files_are_not_read() {
    let tree = Tree::new();
    let fifo = tree.join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let harness = harness_with(json!({"timeoutMs": 5000})).await;
    for path in [fifo.to_str().unwrap(), "/dev/null", "/dev/zero"] {
        let started = std::time::Instant::now();
        let result = harness
            .call_in(tree.path(), "grep", json!({"pattern": "x", "path": path}))
            .await;
        assert_eq!(text(&result), "No matches found", "{path}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "{path}"
        );
    }
}
