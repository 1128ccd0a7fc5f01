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

fn numbered(lines: &[String]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}

#[test]
fn scattered_changes_give_one_hunk_each_and_pure_insertions_have_no_old_side() {
    let mut lines: Vec<String> = (1..=20).map(|n| n.to_string()).collect();
    let before = numbered(&lines);
    lines[1] = "two".into();
    lines[17] = "eighteen".into();
    assert_eq!(hunk_diffs("f", &before, &numbered(&lines)).len(), 2);
    assert_eq!(
        hunk_diffs("f", "", "a\nb\n"),
        vec![json!({"path": "f", "oldText": null, "newText": "a\nb"})]
    );
    assert!(hunk_diffs("f", "same\n", "same\n").is_empty());
    assert_eq!(
        hunk_diffs("f", "x\ry\n", "x\ry\nz\n"),
        vec![json!({"path": "f", "oldText": "x\ry", "newText": "x\ry\nz"})]
    );
}

#[test]
fn six_equal_lines_merge_and_seven_split() {
    let six: Vec<String> = ["a", "1", "2", "3", "4", "5", "6", "b"]
        .map(String::from)
        .to_vec();
    let mut changed = six.clone();
    changed[0] = "A".into();
    changed[7] = "B".into();
    assert_eq!(
        hunk_diffs("f", &numbered(&six), &numbered(&changed)).len(),
        1
    );
    let seven: Vec<String> = ["a", "1", "2", "3", "4", "5", "6", "7", "b"]
        .map(String::from)
        .to_vec();
    let mut changed = seven.clone();
    changed[0] = "A".into();
    changed[8] = "B".into();
    assert_eq!(
        hunk_diffs("f", &numbered(&seven), &numbered(&changed)).len(),
        2
    );
}

#[test]
fn hunks_follow_jsdiffs_search() {
    // Checked against jsdiff's structuredPatch: its forward search pairs the first block.
    let block = "X\n1\n2\n3\n4\n5\n6\n7\n";
    let before = format!("A\n{block}{block}");
    let after = format!("B\n{block}");
    assert_eq!(
        hunk_diffs("f", &before, &after),
        vec![
            json!({"path": "f", "oldText": "A\nX\n1\n2", "newText": "B\nX\n1\n2"}),
            json!({"path": "f", "oldText": "5\n6\n7\nX\n1\n2\n3\n4\n5\n6\n7", "newText": "5\n6\n7"}),
        ]
    );
    // No trailing newline on either side: the marker line is never part of the text.
    assert_eq!(
        hunk_diffs("f", "a\nb", "a\nc"),
        vec![json!({"path": "f", "oldText": "a\nb", "newText": "a\nc"})]
    );
}

proptest::proptest! {
    #[test]
    fn the_runs_rebuild_both_sides(
        old in proptest::collection::vec("[abc]?\r?", 0..40),
        new in proptest::collection::vec("[abc]?\r?", 0..40),
    ) {
        let old_text: String = old.iter().map(|line| format!("{line}\n")).collect();
        let new_text: String = new.iter().map(|line| format!("{line}\n")).collect();
        let old_tokens: Vec<&str> = old_text.split_inclusive('\n').collect();
        let new_tokens: Vec<&str> = new_text.split_inclusive('\n').collect();
        let runs = line_runs(&old_tokens, &new_tokens).unwrap();
        let (mut at_old, mut at_new) = (0, 0);
        let (mut rebuilt_old, mut rebuilt_new) = (String::new(), String::new());
        for (kind, count) in runs {
            proptest::prop_assert!(count > 0);
            if kind != Kind::Added {
                rebuilt_old.extend(old_tokens[at_old..at_old + count].iter().copied());
                at_old += count;
            }
            if kind != Kind::Removed {
                rebuilt_new.extend(new_tokens[at_new..at_new + count].iter().copied());
                at_new += count;
            }
            if kind == Kind::Same {
                proptest::prop_assert_eq!(&old_tokens[at_old - count..at_old], &new_tokens[at_new - count..at_new]);
            }
        }
        proptest::prop_assert_eq!(rebuilt_old, old_text);
        proptest::prop_assert_eq!(rebuilt_new, new_text);
    }
}
