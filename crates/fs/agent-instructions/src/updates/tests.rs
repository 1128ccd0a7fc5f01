//! Reconciliation against a real tree: what a touch adds, what a change replaces or removes,
//! the version fast path, unavailable files, same-directory duplicates and budget exclusions.

use dsh_tools::CancellationToken;
use serde_json::json;

use super::*;
use crate::baseline::{baseline_state, load_baseline_set};
use crate::tests::{Flaky, Tree};

/// What the model sees after a baseline, and the versions the plugin caches with it.
struct Seen {
    visible: OrderedMap<Change>,
    versions: HashMap<String, VersionState>,
    excluded: HashSet<String>,
}

fn baseline(fs: &Flaky, config: &ResolvedConfig, root: &str) -> Seen {
    let signal = CancellationToken::new();
    let probe = Probe {
        fs,
        signal: &signal,
    };
    let set = load_baseline_set(&probe, config, root, root, false)
        .unwrap()
        .unwrap();
    let included = baseline_state(&set.included);
    let observed = baseline_state(&set.observed);
    Seen {
        visible: included.changes.clone(),
        versions: included.versions.into_iter().collect(),
        excluded: observed
            .changes
            .keys()
            .filter(|scope| !included.changes.contains_key(scope))
            .map(str::to_owned)
            .collect(),
    }
}

fn run(
    fs: &Flaky,
    config: &ResolvedConfig,
    seen: &mut Seen,
    root: &str,
    touched: &[&str],
) -> Option<Reconciled> {
    let signal = CancellationToken::new();
    let probe = Probe {
        fs,
        signal: &signal,
    };
    let touched: Vec<String> = touched.iter().map(|path| (*path).to_owned()).collect();
    let reconciled = reconcile(
        &probe,
        config,
        &mut seen.versions,
        &Reconcile {
            visible: &seen.visible,
            touched: &touched,
            include_baseline_scopes: true,
            excluded_baseline_scopes: Some(&seen.excluded),
            project_root: root,
            cwd: root,
        },
    )
    .unwrap();
    // What a step would leave behind once the batch entered.
    if let Some(reconciled) = &reconciled {
        apply_version_updates(&mut seen.versions, &reconciled.version_updates);
        for change in &reconciled.changes {
            seen.visible.insert(change.scope.clone(), change.clone());
        }
    }
    reconciled
}

fn summary(reconciled: Option<&Reconciled>) -> Vec<(Action, String)> {
    reconciled
        .map(|r| {
            r.changes
                .iter()
                .map(|c| (c.action, c.path.clone()))
                .collect()
        })
        .unwrap_or_default()
}

fn project() -> (Tree, Flaky, ResolvedConfig) {
    let tree = Tree::new();
    tree.mkdir(".git");
    tree.write("AGENTS.md", "root rules\n");
    tree.write("nested/AGENTS.md", "nested rules\n");
    tree.write("nested/deeper/CLAUDE.md", "deeper rules\n");
    let config = tree.config(json!({}));
    (tree, Flaky::new(), config)
}

#[test]
fn a_touch_below_the_cwd_adds_the_instructions_of_the_directories_crossed() {
    let (tree, fs, config) = project();
    let root = tree.root();
    let mut seen = baseline(&fs, &config, &root);
    assert!(
        run(&fs, &config, &mut seen, &root, &["task.txt"]).is_none(),
        "a file in the cwd adds nothing"
    );
    assert_eq!(fs.reads(), 1, "only the baseline read the root file");
    let added = run(&fs, &config, &mut seen, &root, &["nested/deeper/task.txt"]);
    assert_eq!(
        summary(added.as_ref()),
        [
            (Action::Set, "nested/AGENTS.md".to_owned()),
            (Action::Set, "nested/deeper/CLAUDE.md".to_owned())
        ]
    );
    let text = added.map(|r| r.text).unwrap_or_default();
    insta::assert_snapshot!(text);
    // Once visible, the same files are not added again, and unchanged ones are not re-read.
    let reads = fs.reads();
    assert!(run(&fs, &config, &mut seen, &root, &["nested/deeper/other.txt"]).is_none());
    assert_eq!(
        fs.reads(),
        reads,
        "the version fast path skipped every read"
    );
}

#[test]
fn a_changed_file_is_replaced_and_a_deleted_one_removed() {
    let (tree, fs, config) = project();
    let root = tree.root();
    let mut seen = baseline(&fs, &config, &root);
    run(&fs, &config, &mut seen, &root, &["nested/x.txt"]);
    tree.write("nested/AGENTS.md", "nested rules, revised\n");
    std::fs::remove_file(tree.root.path().join("AGENTS.md")).unwrap();
    let changed = run(&fs, &config, &mut seen, &root, &[]);
    assert_eq!(
        summary(changed.as_ref()),
        [
            (Action::Remove, "AGENTS.md".to_owned()),
            (Action::Replace, "nested/AGENTS.md".to_owned())
        ]
    );
    let text = changed.map(|r| r.text).unwrap_or_default();
    assert!(text.contains("Instructions removed: AGENTS.md\n\nThe previously loaded instructions"));
    assert!(text.contains("Updated instructions from: nested/AGENTS.md\n\nThis file changed"));
    assert!(
        run(&fs, &config, &mut seen, &root, &[]).is_none(),
        "settled"
    );
    // A file that comes back after its removal is set again.
    tree.write("AGENTS.md", "root rules\n");
    let back = run(&fs, &config, &mut seen, &root, &[]);
    assert_eq!(
        summary(back.as_ref()),
        [(Action::Set, "AGENTS.md".to_owned())]
    );
}

#[test]
fn a_file_the_provider_cannot_see_keeps_its_last_state() {
    let (tree, fs, config) = project();
    let root = tree.root();
    let mut seen = baseline(&fs, &config, &root);
    run(&fs, &config, &mut seen, &root, &["nested/x.txt"]);
    fs.fail(&tree.path("nested/AGENTS.md"));
    tree.write(
        "nested/CLAUDE.md",
        "a new sibling, held back with its directory",
    );
    assert!(run(&fs, &config, &mut seen, &root, &["nested/x.txt"]).is_none());
    fs.heal();
    let healed = run(&fs, &config, &mut seen, &root, &["nested/x.txt"]);
    assert_eq!(
        summary(healed.as_ref()),
        [(Action::Set, "nested/CLAUDE.md".to_owned())]
    );
}

#[test]
fn a_sibling_with_the_same_text_is_dropped_or_removed() {
    let (tree, fs, config) = project();
    let root = tree.root();
    let mut seen = baseline(&fs, &config, &root);
    run(&fs, &config, &mut seen, &root, &["nested/x.txt"]);
    tree.write("nested/CLAUDE.md", "  nested rules");
    assert!(
        run(&fs, &config, &mut seen, &root, &["nested/x.txt"]).is_none(),
        "a duplicate is not added"
    );
    tree.write("nested/CLAUDE.md", "claude rules");
    let added = run(&fs, &config, &mut seen, &root, &[]);
    assert_eq!(
        summary(added.as_ref()),
        [(Action::Set, "nested/CLAUDE.md".to_owned())]
    );
    // The earlier sibling changes to match it: the later one goes.
    tree.write("nested/AGENTS.md", "claude rules\n");
    let collapsed = run(&fs, &config, &mut seen, &root, &[]);
    assert_eq!(
        summary(collapsed.as_ref()),
        [
            (Action::Replace, "nested/AGENTS.md".to_owned()),
            (Action::Remove, "nested/CLAUDE.md".to_owned())
        ]
    );
}

#[test]
fn files_the_baseline_left_out_are_not_added_back() {
    let tree = Tree::new();
    tree.mkdir(".git");
    tree.write("AGENTS.md", &"broad ".repeat(100));
    tree.write("CLAUDE.md", "specific");
    let config = tree.config(json!({"maxBytes": 400}));
    let fs = Flaky::new();
    let root = tree.root();
    let mut seen = baseline(&fs, &config, &root);
    assert_eq!(
        seen.excluded.iter().collect::<Vec<_>>(),
        [&".\0AGENTS.md".to_owned()]
    );
    assert!(run(&fs, &config, &mut seen, &root, &[]).is_none());
}
