//! Properties: the line preview cut and the workdir-relative display rule.

use std::path::Path;

use dsh_tool_fs_search::render::{LINE_TRUNCATED, preview_line};
use dsh_tool_fs_search::workdir::to_workdir_relative;
use proptest::prelude::*;

proptest! {
    #[test]
    fn a_preview_is_the_longest_whole_prefix_within_the_cap(
        line in "\\PC{0,40}|[a-zé€😀]{0,40}",
        max in 1_usize..64,
    ) {
        let preview = preview_line(&line, max);
        if line.len() <= max {
            prop_assert_eq!(preview, line);
        } else {
            let kept = preview.strip_suffix(LINE_TRUNCATED).expect("the marker");
            prop_assert!(kept.len() <= max);
            prop_assert!(preview.len() <= max + LINE_TRUNCATED.len());
            prop_assert!(line.starts_with(kept));
            // The next character would not have fitted.
            let next = line[kept.len()..].chars().next().expect("something was cut");
            prop_assert!(kept.len() + next.len_utf8() > max);
        }
    }

    #[test]
    fn paths_inside_the_workdir_become_relative(
        base in prop::collection::vec("[a-z]{1,4}", 1..4),
        rest in prop::collection::vec("[a-z.]{1,4}", 0..4),
        other in "[A-Z]{1,4}",
    ) {
        let workdir = format!("/{}", base.join("/"));
        prop_assume!(rest.iter().all(|s| s != "." && s != ".."));
        let relative = rest.join("/");
        let inside = if relative.is_empty() { workdir.clone() } else { format!("{workdir}/{relative}") };
        let shown = to_workdir_relative(&inside, Path::new(&workdir));
        if relative.is_empty() {
            prop_assert_eq!(shown, ".");
        } else {
            prop_assert_eq!(&shown, &relative);
        }
        // Relative input and paths outside pass through unchanged.
        prop_assert_eq!(&to_workdir_relative(&relative, Path::new(&workdir)), &relative);
        let outside = format!("/{other}/{relative}");
        prop_assert_eq!(&to_workdir_relative(&outside, Path::new(&workdir)), &outside);
        let escaped = format!("{workdir}/../{other}");
        prop_assert_eq!(&to_workdir_relative(&escaped, Path::new(&workdir)), &escaped);
    }
}
