//! Diff metadata of `write` and `edit` (dsh's `computeHunkDiffs`): one entry per hunk with
//! three lines of context, the old side `null` when it has no lines.

use serde_json::{Value, json};
use similar::{ChangeTag, TextDiff};

/// Lines of context around each change.
const CONTEXT_LINES: usize = 3;
/// How long a diff may search for the smallest edit before it settles for a larger one.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(500);

/// The hunks between `before` and `after` (both LF), each `{path, oldText, newText}`.
pub fn hunk_diffs(path: &str, before: &str, after: &str) -> Vec<Value> {
    // Lines end at `\n` only (a lone `\r` stays inside its line, as jsdiff splits).
    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let new: Vec<&str> = after.split_inclusive('\n').collect();
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_slices(&old, &new);
    let mut hunks = Vec::new();
    for group in diff.grouped_ops(CONTEXT_LINES) {
        let mut old_side = Vec::new();
        let mut new_side = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                let line = change.value().strip_suffix('\n').unwrap_or(change.value());
                match change.tag() {
                    ChangeTag::Equal => {
                        old_side.push(line);
                        new_side.push(line);
                    }
                    ChangeTag::Delete => old_side.push(line),
                    ChangeTag::Insert => new_side.push(line),
                }
            }
        }
        let old_text = if old_side.is_empty() {
            Value::Null
        } else {
            Value::String(old_side.join("\n"))
        };
        hunks.push(json!({"path": path, "oldText": old_text, "newText": new_side.join("\n")}));
    }
    hunks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_edit_fixture() {
        assert_eq!(
            hunk_diffs(
                "config.txt",
                "mode=DEBUG\nlevel=info\n",
                "mode=RELEASE\nlevel=info\n"
            ),
            vec![
                json!({"path": "config.txt", "oldText": "mode=DEBUG\nlevel=info", "newText": "mode=RELEASE\nlevel=info"})
            ]
        );
    }

    #[test]
    fn scattered_changes_give_one_hunk_each_and_pure_insertions_have_no_old_side() {
        let before: String = (1..=20).map(|n| format!("{n}\n")).collect();
        let mut lines: Vec<String> = (1..=20).map(|n| n.to_string()).collect();
        lines[1] = "two".into();
        lines[17] = "eighteen".into();
        let after: String = lines.iter().map(|line| format!("{line}\n")).collect();
        assert_eq!(hunk_diffs("f", &before, &after).len(), 2);
        let inserted = hunk_diffs("f", "", "a\nb\n");
        assert_eq!(
            inserted,
            vec![json!({"path": "f", "oldText": null, "newText": "a\nb"})]
        );
        assert!(hunk_diffs("f", "same\n", "same\n").is_empty());
        assert_eq!(
            hunk_diffs("f", "x\ry\n", "x\ry\nz\n"),
            vec![json!({"path": "f", "oldText": "x\ry", "newText": "x\ry\nz"})]
        );
    }
}
