//! Discovery over a real directory tree (through `LocalDisk`): order, dedup, symlinks,
//! directories posing as candidates, markers, the read cap, and provider failures.

use std::os::unix::fs::symlink;

use serde_json::json;

use super::*;
use crate::tests::{Flaky, Tree, disk, write_at};

/// The display paths and texts a baseline would carry for `cwd`.
fn loaded(fs: &dyn FileSystem, config: &ResolvedConfig, cwd: &str) -> Vec<(String, String)> {
    let signal = CancellationToken::new();
    let probe = Probe {
        fs,
        signal: &signal,
    };
    let root = find_project_root(&probe, cwd, &config.project_root_markers).unwrap();
    let found = discover(&probe, config, cwd, &root).unwrap();
    let files = dedup_by_directory(load(&probe, found, config.max_source_bytes).unwrap());
    files
        .into_iter()
        .map(|file| (file.display_path, file.content))
        .collect()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
        .collect()
}

#[test]
fn user_global_first_then_every_candidate_from_the_root_down() {
    let tree = Tree::new();
    tree.mkdir(".git");
    write_at(&tree.home.path().join("AGENTS.md"), "global");
    tree.write("AGENTS.md", "root agents");
    tree.write("CLAUDE.md", "root claude");
    tree.write("CLAUDE.local.md", "root local");
    tree.write("pkg/AGENTS.local.md", "pkg local");
    tree.write("pkg/CLAUDE.md", "pkg claude");
    tree.write("pkg/app/AGENTS.md", "app agents");
    tree.write("pkg/app/deeper/AGENTS.md", "below the cwd: not loaded");
    let config = tree.config(json!({}));
    assert_eq!(
        loaded(&disk(), &config, &tree.path("pkg/app")),
        pairs(&[
            ("$DSH_HOME/AGENTS.md", "global"),
            ("AGENTS.md", "root agents"),
            ("CLAUDE.md", "root claude"),
            ("CLAUDE.local.md", "root local"),
            ("pkg/CLAUDE.md", "pkg claude"),
            ("pkg/AGENTS.local.md", "pkg local"),
            ("pkg/app/AGENTS.md", "app agents"),
        ])
    );
    let no_local = tree.config(json!({
        "localInstructionFileCandidates": [],
        "instructionFileCandidates": ["CLAUDE.md", "AGENTS.md"],
    }));
    assert_eq!(
        loaded(&disk(), &no_local, &tree.path("pkg")),
        pairs(&[
            ("$DSH_HOME/AGENTS.md", "global"),
            ("CLAUDE.md", "root claude"),
            ("AGENTS.md", "root agents"),
            ("pkg/CLAUDE.md", "pkg claude"),
        ])
    );
}

#[test]
fn trimmed_duplicates_collapse_within_a_directory_only() {
    let tree = Tree::new();
    tree.mkdir(".git");
    tree.write("AGENTS.md", "same rules\n");
    tree.write("CLAUDE.md", "  same rules");
    tree.write("AGENTS.local.md", "same rules, but local");
    tree.write("pkg/AGENTS.md", "same rules\n");
    let config = tree.config(json!({}));
    assert_eq!(
        loaded(&disk(), &config, &tree.path("pkg")),
        pairs(&[
            ("AGENTS.md", "same rules\n"),
            ("AGENTS.local.md", "same rules, but local"),
            ("pkg/AGENTS.md", "same rules\n"),
        ])
    );
}

#[test]
fn one_path_loads_once_even_when_two_candidates_name_it() {
    let tree = Tree::new();
    tree.mkdir(".git");
    tree.write("AGENTS.md", "shared");
    // The harness home is the project root: its AGENTS.md is the user-global file.
    let mut config = tree.config(json!({"instructionFileCandidates": ["AGENTS.md", "AGENTS.md"]}));
    config.dsh_home = tree.root();
    assert_eq!(
        loaded(&disk(), &config, &tree.root()),
        pairs(&[("$DSH_HOME/AGENTS.md", "shared")])
    );
}

#[test]
fn symlinked_candidates_are_followed_and_directories_ignored() {
    let tree = Tree::new();
    tree.mkdir(".git");
    tree.write("docs/RULES.md", "linked rules");
    symlink(tree.path("docs/RULES.md"), tree.path("AGENTS.md")).unwrap();
    // A link to the sibling collapses with it (same text).
    symlink(tree.path("AGENTS.md"), tree.path("CLAUDE.md")).unwrap();
    tree.mkdir("pkg/AGENTS.md");
    tree.mkdir("pkg/real");
    symlink(tree.path("pkg/real"), tree.path("pkg/CLAUDE.md")).unwrap();
    symlink(tree.path("missing"), tree.path("pkg/AGENTS.local.md")).unwrap();
    let config = tree.config(json!({}));
    assert_eq!(
        loaded(&disk(), &config, &tree.path("pkg")),
        pairs(&[("AGENTS.md", "linked rules")])
    );
}

#[test]
fn the_root_is_the_first_directory_with_a_marker() {
    let tree = Tree::new();
    tree.write("AGENTS.md", "outer");
    tree.write("inner/.git", "gitdir: elsewhere");
    tree.write("inner/AGENTS.md", "inner");
    let config = tree.config(json!({}));
    let signal = CancellationToken::new();
    let fs = disk();
    let probe = Probe {
        fs: &fs,
        signal: &signal,
    };
    let markers = &config.project_root_markers;
    // A `.git` file marks the root, and nothing above it is searched.
    assert_eq!(
        find_project_root(&probe, &tree.path("inner/a/b"), markers).unwrap(),
        tree.path("inner")
    );
    assert_eq!(
        loaded(&fs, &config, &tree.path("inner/a")),
        pairs(&[("AGENTS.md", "inner")])
    );
    // No marker anywhere: the cwd itself is the root.
    let none = ["no-such-marker-anywhere".to_owned()];
    assert_eq!(
        find_project_root(&probe, &tree.path("inner/a"), &none).unwrap(),
        tree.path("inner/a")
    );
    tree.mkdir(".dsh-project");
    let custom = [".dsh-project".to_owned()];
    assert_eq!(
        find_project_root(&probe, &tree.path("inner/a"), &custom).unwrap(),
        tree.root()
    );
    let cancelled = CancellationToken::new();
    cancelled.cancel();
    let aborted = Probe {
        fs: &fs,
        signal: &cancelled,
    };
    assert_eq!(
        find_project_root(&aborted, &tree.root(), markers),
        Err(Aborted)
    );
}

#[test]
fn a_file_over_the_read_cap_is_left_out() {
    let tree = Tree::new();
    tree.mkdir(".git");
    tree.write("AGENTS.md", "0123456789");
    tree.write("CLAUDE.md", "short");
    let config = tree.config(json!({"maxSourceBytes": 9}));
    assert_eq!(
        loaded(&disk(), &config, &tree.root()),
        pairs(&[("CLAUDE.md", "short")])
    );
}

#[test]
fn descendant_directories_lie_strictly_between_the_cwd_and_the_file() {
    assert_eq!(
        descendant_dirs_between("/ws", "task.txt"),
        Vec::<String>::new()
    );
    assert_eq!(
        descendant_dirs_between("/ws", "/elsewhere/a/b.txt"),
        Vec::<String>::new()
    );
    assert_eq!(
        descendant_dirs_between("/ws", "../up/a.txt"),
        Vec::<String>::new()
    );
    assert_eq!(
        descendant_dirs_between("/ws", "a/b/c.txt"),
        ["/ws/a".to_owned(), "/ws/a/b".to_owned()]
    );
    assert_eq!(
        descendant_dirs_between("/ws", "/ws/a/c.txt"),
        ["/ws/a".to_owned()]
    );
    assert_eq!(
        ancestor_chain("/ws", "/ws/a/b"),
        ["/ws", "/ws/a", "/ws/a/b"]
    );
    assert_eq!(ancestor_chain("/ws", "/ws"), ["/ws"]);
}

#[test]
fn a_failing_probe_skips_that_candidate_and_a_failing_marker_counts_as_absent() {
    let tree = Tree::new();
    tree.mkdir(".git");
    tree.write("AGENTS.md", "unreadable today");
    tree.write("CLAUDE.md", "still here");
    let flaky = Flaky::new();
    flaky.fail(&tree.path("AGENTS.md"));
    let config = tree.config(json!({}));
    assert_eq!(
        loaded(&flaky, &config, &tree.root()),
        pairs(&[("CLAUDE.md", "still here")])
    );
    flaky.fail(&tree.path(".git"));
    let signal = CancellationToken::new();
    let probe = Probe {
        fs: &flaky,
        signal: &signal,
    };
    let root = find_project_root(&probe, &tree.path("sub"), &config.project_root_markers).unwrap();
    assert_ne!(root, tree.root(), "the failing marker was not seen");
}
