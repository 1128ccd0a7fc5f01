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
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(before, after);
    let mut hunks = Vec::new();
    for group in diff.grouped_ops(CONTEXT_LINES) {
        let mut old = Vec::new();
        let mut new = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                let line = change.value().strip_suffix('\n').unwrap_or(change.value());
                match change.tag() {
                    ChangeTag::Equal => {
                        old.push(line);
                        new.push(line);
                    }
                    ChangeTag::Delete => old.push(line),
                    ChangeTag::Insert => new.push(line),
                }
            }
        }
        let old_text = if old.is_empty() {
            Value::Null
        } else {
            Value::String(old.join("\n"))
        };
        hunks.push(json!({"path": path, "oldText": old_text, "newText": new.join("\n")}));
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
    }
}
