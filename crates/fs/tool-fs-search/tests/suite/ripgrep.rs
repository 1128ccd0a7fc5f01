//! `glob` and `grep` agree with the real ripgrep: the same files in the same order, the same
//! matches, on a tree that exercises ignore files, hidden and binary files, encodings, nested
//! repositories and include globs.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

use dsh_tool_fs_search::walk::VCS_DIRECTORIES;
use dsh_tool_fs_search::workdir::to_workdir_relative;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{Harness, harness, rg};
use super::tree::fixture;

type Match = (String, u64, String);

fn run_rg(cwd: &Path, args: &[String]) -> String {
    let output = Command::new(rg())
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let code = output.status.code();
    assert!(
        code == Some(0) || code == Some(1),
        "rg {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// `rg --no-config --json --regexp=<pattern> [--glob=<include>] [-- <path>]`, parsed as dsh
/// parses it.
fn rg_grep(
    cwd: &Path,
    pattern: &str,
    path: Option<&str>,
    include: Option<&str>,
) -> BTreeSet<Match> {
    let mut args = vec![
        "--no-config".to_owned(),
        "--json".to_owned(),
        format!("--regexp={pattern}"),
    ];
    if let Some(include) = include {
        args.push(format!("--glob={include}"));
    }
    if let Some(path) = path {
        args.extend(["--".to_owned(), path.to_owned()]);
    }
    let stdout = run_rg(cwd, &args);
    let mut matches = BTreeSet::new();
    for line in stdout.lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        if record["type"] != "match" {
            continue;
        }
        let data = &record["data"];
        let shown = data["path"]["text"].as_str().unwrap();
        let text = match data["lines"]["text"].as_str() {
            Some(text) => match text.strip_suffix('\n') {
                Some(text) => text.strip_suffix('\r').unwrap_or(text).to_owned(),
                None => text.to_owned(),
            },
            None => "(line is not valid UTF-8)".to_owned(),
        };
        matches.insert((
            to_workdir_relative(shown, cwd),
            data["line_number"].as_u64().unwrap(),
            text,
        ));
    }
    matches
}

/// `rg --no-config --files --glob=<pattern> --sort=modified --no-ignore --hidden` with dsh's
/// VCS excludes.
fn rg_glob(cwd: &Path, pattern: &str, path: Option<&str>) -> Vec<String> {
    let mut args: Vec<String> = [
        "--no-config",
        "--files",
        &format!("--glob={pattern}"),
        "--sort=modified",
        "--no-ignore",
        "--hidden",
    ]
    .iter()
    .map(|arg| (*arg).to_owned())
    .collect();
    for name in VCS_DIRECTORIES {
        args.push(format!("--glob=!**/{name}"));
        args.push(format!("--glob=!**/{name}/**"));
    }
    if let Some(path) = path {
        args.extend(["--".to_owned(), path.to_owned()]);
    }
    run_rg(cwd, &args)
        .lines()
        .map(|line| to_workdir_relative(line, cwd))
        .collect()
}

async fn our_grep(harness: &Harness, cwd: &Path, arguments: Value) -> BTreeSet<Match> {
    let result = harness.call_in(cwd, "grep", arguments.clone()).await;
    assert!(!result.is_error, "grep {arguments}: {}", result.text());
    let matches = result.value.unwrap()["matches"].as_array().unwrap().clone();
    let found: Vec<Match> = matches
        .iter()
        .map(|m| {
            (
                m["path"].as_str().unwrap().to_owned(),
                m["lineNumber"].as_u64().unwrap(),
                m["line"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    // Each file's matches are together and in line order.
    let mut finished: BTreeSet<&str> = BTreeSet::new();
    for pair in found.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if a.0 == b.0 {
            assert!(a.1 < b.1, "lines in order: {a:?} then {b:?}");
        } else {
            finished.insert(&a.0);
            assert!(!finished.contains(b.0.as_str()), "{} split", b.0);
        }
    }
    let set: BTreeSet<Match> = found.iter().cloned().collect();
    assert_eq!(set.len(), found.len(), "no match twice");
    set
}

async fn our_glob(harness: &Harness, cwd: &Path, arguments: Value) -> Vec<String> {
    let result = harness.call_in(cwd, "glob", arguments.clone()).await;
    assert!(!result.is_error, "glob {arguments}: {}", result.text());
    result.value.unwrap()["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|path| path.as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_finds_what_ripgrep_finds() {
    let tree = fixture();
    let harness = harness().await;
    let root = tree.path();
    let repo = tree.join("repo");
    let absolute_sub = repo.join("sub");
    let cases: Vec<(&Path, &str, Option<&str>, Option<&str>)> = vec![
        (root, "hello", None, None),
        (&repo, "hello", None, None),
        (&repo, "hello", Some("src"), None),
        (&repo, "hello", Some("src/"), None),
        (&repo, "hello", Some("./src"), None),
        (&repo, "hello", Some("."), None),
        (&repo, "hello", Some(absolute_sub.to_str().unwrap()), None),
        (root, "hello", Some("repo/nested-repo"), None),
        (root, "hello", Some("plain"), None),
        (&repo, "hello", None, Some("*.txt")),
        (&repo, "hello", None, Some("src/*.rs")),
        (&repo, "hello", None, Some("**/*.{rs,md}")),
        (root, "hello", None, Some("repo/src/**")),
        (&repo, "hello", Some("src"), Some("*.rs")),
        (&repo, r"^\s*//", None, None),
        (&repo, r"h.llo|w\wrld", None, None),
        (&repo, "hello$", None, None),
        (&repo, "(?i)HELLO", None, None),
        (&repo, r"\bhello\b \w+", None, None),
        (&repo, "hello", Some("bin.dat"), None),
        (&repo, "hello", Some("late-binary.dat"), None),
        (&repo, "hello", Some("app.log"), None),
        (&repo, "hello", Some(".config"), None),
        (&repo, "hello", Some("build"), None),
        (&repo, "hello", Some("link.txt"), None),
        (&repo, "hello", Some("linkdir"), None),
        (&repo, "hello", Some(".git"), None),
        (&repo, "utf16", None, None),
        (&repo, "nothing-matches-this", None, None),
        (&repo, "$(touch pwned)", None, None),
        (&repo, "--flag", None, None),
    ];
    for (cwd, pattern, path, include) in cases {
        let mut arguments = json!({"pattern": pattern});
        if let Some(path) = path {
            arguments["path"] = json!(path);
        }
        if let Some(include) = include {
            arguments["include"] = json!(include);
        }
        let theirs = rg_grep(cwd, pattern, path, include);
        let ours = our_grep(&harness, cwd, arguments.clone()).await;
        assert_eq!(ours, theirs, "grep {arguments} in {}", cwd.display());
        let expect_none = ["nothing-matches-this", "$(touch pwned)", "--flag"].contains(&pattern);
        assert_eq!(ours.is_empty(), expect_none, "grep {arguments}: {ours:?}");
    }
    assert!(!repo.join("pwned").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_reports_ripgreps_line_texts() {
    let tree = fixture();
    let harness = harness().await;
    let repo = tree.join("repo");
    let found = our_grep(&harness, &repo, json!({"pattern": "hello"})).await;
    let has = |path: &str, line: u64, text: &str| {
        found.contains(&(path.to_owned(), line, text.to_owned()))
    };
    assert!(has("crlf.txt", 3, "hello again"), "CRLF stripped");
    assert!(has("latin1.txt", 1, "(line is not valid UTF-8)"));
    assert!(has("utf16.txt", 1, "hello utf16"), "UTF-16 transcoded");
    assert!(has("noeol.txt", 1, "last hello"));
    assert!(has("cr.txt", 1, "hello cr\r"), "a lone CR is kept");
    assert!(
        has("late-binary.dat", 1, "hello early"),
        "matches before the NUL"
    );
    assert!(
        !found.iter().any(|m| m.0 == "bin.dat"),
        "a binary file is skipped"
    );
    assert!(
        !found.iter().any(|m| m.0.starts_with(".git")),
        "hidden and VCS skipped"
    );
    assert!(
        !found
            .iter()
            .any(|m| m.0 == "app.log" || m.0 == "secret.txt")
    );
    assert!(has("keep.log", 1, "hello kept"), "a negated gitignore rule");
    assert!(
        has("sub/rooted.txt", 1, "hello sub rooted"),
        "an anchored rule"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn glob_lists_what_ripgrep_lists_in_its_order() {
    let tree = fixture();
    let harness = harness().await;
    let root = tree.path();
    let repo = tree.join("repo");
    let absolute_src = repo.join("src");
    let cases: Vec<(&Path, &str, Option<&str>)> = vec![
        (root, "*", None),
        (&repo, "*", None),
        (&repo, "*.txt", None),
        (&repo, "**/*.rs", None),
        (&repo, "src/*.rs", None),
        (&repo, "src/**", None),
        (&repo, "*.{rs,md}", None),
        (&repo, "[a-c]*", None),
        (&repo, ".*", None),
        (&repo, "*", Some("src")),
        (&repo, "*", Some("src/")),
        (&repo, "*", Some("./src")),
        (&repo, "*", Some(".")),
        (&repo, "*.rs", Some(absolute_src.to_str().unwrap())),
        (&repo, "src/*.rs", Some("src")),
        (&repo, "*", Some(".git")),
        (&repo, "*", Some("nested-repo")),
        (&repo, "*.md", Some("src/main.rs")),
        (&repo, "*", Some("linkdir")),
        (&repo, "*.nomatch", None),
        (root, "repo/**/deep/*", None),
    ];
    for (cwd, pattern, path) in cases {
        let mut arguments = json!({"pattern": pattern});
        if let Some(path) = path {
            arguments["path"] = json!(path);
        }
        let theirs = rg_glob(cwd, pattern, path);
        let ours = our_glob(&harness, cwd, arguments.clone()).await;
        assert_eq!(ours, theirs, "glob {arguments} in {}", cwd.display());
        let expect_none = pattern == "*.nomatch" || path == Some(".git");
        assert_eq!(ours.is_empty(), expect_none, "glob {arguments}: {ours:?}");
    }
    // The whole tree, oldest first, is the depth-first name order the fixture stamped.
    let all = our_glob(&harness, &repo, json!({"pattern": "*"})).await;
    let mut by_time = all.clone();
    by_time.sort_by_key(|path| {
        std::fs::metadata(repo.join(path))
            .unwrap()
            .modified()
            .unwrap()
    });
    assert_eq!(all, by_time);
    assert!(all.contains(&".hidden.txt".to_owned()) && all.contains(&"app.log".to_owned()));
    assert!(
        !all.iter()
            .any(|path| path.starts_with(".git/") || path.contains("/.git/"))
    );
    assert!(
        !all.iter()
            .any(|path| path == "link.txt" || path.starts_with("linkdir"))
    );
}
