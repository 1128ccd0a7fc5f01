//! The over-cap glob page when sampling is on (dsh's `sampleAcrossTopLevel`): a round robin
//! over the top-level entries beneath the search root, so a broad pattern shows the whole tree
//! rather than its oldest subtree.

use std::collections::HashMap;

/// The sampled page and how much of the top level it reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobSample {
    /// The page: grouped by top-level entry, each group in its original (oldest first) order.
    pub items: Vec<String>,
    /// The top-level entries the page reaches.
    pub shown: usize,
    /// The top-level entries of the whole result.
    pub total: usize,
}

/// `path` relative to the shown search root `root`, before its first segment is taken.
fn relative_to_root<'a>(path: &'a str, root: &str) -> &'a str {
    if root == "." {
        return path.strip_prefix("./").unwrap_or(path);
    }
    let trimmed = root.trim_end_matches('/');
    if trimmed.is_empty() {
        return path.trim_start_matches('/');
    }
    if path == trimmed {
        return "";
    }
    match path.strip_prefix(trimmed) {
        Some(rest) if rest.starts_with('/') => rest.get(1..).unwrap_or_default(),
        _ => path,
    }
}

/// The top-level entry a path sits under: its first real segment (leading separators
/// dropped, so absolute paths group by their first name).
fn top_level(path: &str) -> &str {
    let trimmed = path.trim_start_matches('/');
    trimmed.split('/').next().unwrap_or(trimmed)
}

/// Picks `max_items` of `paths` (which the caller knows to hold more) by giving every
/// top-level entry one slot before any gets a second; exhausted entries drop out. Groups keep
/// their first-seen order and their paths the order of `paths`, so a flat result gives its
/// head.
pub fn sample_across_top_level(paths: &[String], max_items: usize, root: &str) -> GlobSample {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut groups: Vec<Vec<&String>> = Vec::new();
    for path in paths {
        let key = top_level(relative_to_root(path, root));
        let slot = *index.entry(key).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        if let Some(group) = groups.get_mut(slot) {
            group.push(path);
        }
    }
    // Round robin: each pass gives one slot to every group that still has paths.
    let mut taken = vec![0_usize; groups.len()];
    let mut count = 0;
    let mut active: Vec<usize> = (0..groups.len()).collect();
    while !active.is_empty() && count < max_items {
        let mut next = Vec::with_capacity(active.len());
        for &group in &active {
            if count >= max_items {
                break;
            }
            count += 1;
            let (Some(taken), Some(size)) = (taken.get_mut(group), groups.get(group).map(Vec::len))
            else {
                continue;
            };
            *taken += 1;
            if *taken < size {
                next.push(group);
            }
        }
        active = next;
    }
    let items = groups
        .iter()
        .zip(&taken)
        .flat_map(|(group, &taken)| group.iter().take(taken).map(|path| (*path).clone()))
        .collect();
    GlobSample {
        items,
        shown: taken.iter().filter(|&&taken| taken > 0).count(),
        total: groups.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(paths: &[&str]) -> Vec<String> {
        paths.iter().map(|path| (*path).to_owned()).collect()
    }

    fn sample(paths: &[&str], max: usize, root: &str) -> (Vec<String>, usize, usize) {
        let sample = sample_across_top_level(&strings(paths), max, root);
        (sample.items, sample.shown, sample.total)
    }

    #[test]
    fn every_entry_gets_a_slot_before_any_gets_a_second() {
        let paths = ["v/a", "v/b", "v/c", "v/d", "src/e", "guide/f"];
        assert_eq!(
            sample(&paths, 3, "."),
            (strings(&["v/a", "src/e", "guide/f"]), 3, 3)
        );
        assert_eq!(
            sample(&paths, 5, "."),
            (strings(&["v/a", "v/b", "v/c", "src/e", "guide/f"]), 3, 3)
        );
        assert_eq!(
            sample(&["solo/a", "many/b", "many/c", "many/d"], 3, "."),
            (strings(&["solo/a", "many/b", "many/c"]), 2, 2)
        );
        assert_eq!(
            sample(&["a/1", "b/1", "c/1", "d/1"], 2, "."),
            (strings(&["a/1", "b/1"]), 2, 4)
        );
    }

    #[test]
    fn absolute_paths_group_by_their_first_name_and_flat_results_keep_their_head() {
        assert_eq!(
            sample(&["/out/a", "/out/b", "/away/c", "/away/d"], 2, "."),
            (strings(&["/out/a", "/away/c"]), 2, 2)
        );
        assert_eq!(
            sample(&["a.ts", "b.ts", "c.ts"], 2, "."),
            (strings(&["a.ts", "b.ts"]), 2, 3)
        );
        assert_eq!(
            sample(&["old\\one", "old\\two", "src/a"], 2, "."),
            (strings(&["old\\one", "old\\two"]), 2, 3)
        );
    }

    #[test]
    fn groups_are_relative_to_an_explicit_root() {
        let paths = [
            "workspace/vendor/a.ts",
            "workspace/vendor/b.ts",
            "workspace/source/c.ts",
            "workspace/guides/d.md",
        ];
        assert_eq!(
            sample(&paths, 3, "workspace"),
            (
                strings(&[
                    "workspace/vendor/a.ts",
                    "workspace/source/c.ts",
                    "workspace/guides/d.md"
                ]),
                3,
                3
            )
        );
        assert_eq!(
            sample(&["./vendor/a.ts", "./src/b.ts"], 2, "."),
            (strings(&["./vendor/a.ts", "./src/b.ts"]), 2, 2)
        );
        assert_eq!(
            sample(&["/vendor/a.ts", "/src/b.ts"], 2, "/"),
            (strings(&["/vendor/a.ts", "/src/b.ts"]), 2, 2)
        );
        assert_eq!(
            sample(&["root/a/one", "root/a/two", "root/b/three"], 2, "root"),
            (strings(&["root/a/one", "root/b/three"]), 2, 2)
        );
        assert_eq!(
            sample(&["other/a.ts"], 1, "src"),
            (strings(&["other/a.ts"]), 1, 1)
        );
        assert_eq!(sample(&["src"], 1, "src"), (strings(&["src"]), 1, 1));
    }

    #[test]
    fn large_and_skewed_results_stay_linear() {
        let mut paths: Vec<String> = (0..12_500).map(|i| format!("group-{i}/only")).collect();
        paths.extend((0..12_500).map(|i| format!("late/{i}")));
        let started = std::time::Instant::now();
        let sample = sample_across_top_level(&paths, paths.len() - 1, ".");
        assert_eq!(sample.shown, 12_501);
        assert_eq!(sample.total, 12_501);
        assert_eq!(sample.items.len(), paths.len() - 1);
        let wide: Vec<String> = (0..125_000).map(|i| format!("dir-{i}/file.txt")).collect();
        let sample = sample_across_top_level(&wide, 100, ".");
        assert_eq!((sample.shown, sample.total), (100, 125_000));
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }
}
