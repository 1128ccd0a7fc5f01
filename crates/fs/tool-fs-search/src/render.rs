//! The texts the model reads: dsh's glob listing and grep report, their caps and footers, the
//! line preview cut, and the full texts saved for over-cap results.

use std::collections::HashMap;

use crate::config::SearchCaps;
use crate::sample::{GlobSample, sample_across_top_level};
use crate::value::GrepMatch;

/// How the model retrieves a saved full result (dsh's local spill store hint).
pub const RETRIEVAL_HINT: &str =
    "Use read with offset/limit, or grep this path to search within it.";

/// The marker a cut line preview ends with.
pub const LINE_TRUNCATED: &str = " (line truncated)";

/// `glob`'s text for `paths` under the shown root `root`; `saved` is where the full list was
/// stored, when it was.
pub fn render_glob(paths: &[String], root: &str, caps: &SearchCaps, saved: Option<&str>) -> String {
    if paths.is_empty() {
        return "No files found".to_owned();
    }
    if paths.len() <= caps.glob_max_results {
        return paths.join("\n");
    }
    if !caps.sample_over_cap_glob_results {
        let head = paths.get(..caps.glob_max_results).unwrap_or(paths);
        return glob_page(head, paths.len(), saved, ".");
    }
    let sample = sample_across_top_level(paths, caps.glob_max_results, root);
    sampled_glob_page(&sample, paths.len(), saved)
}

/// A sampled over-cap page; a flat result (every path its own entry) keeps the plain footer,
/// since its sample is the oldest-first head.
fn sampled_glob_page(sample: &GlobSample, seen: usize, saved: Option<&str>) -> String {
    let basis = if sample.total == seen {
        ".".to_owned()
    } else {
        let narrow = if sample.shown < sample.total {
            " Narrow path to inspect a specific subtree."
        } else {
            ""
        };
        format!(
            ", sampled across {} of the {} top-level entries this pattern matched instead of \
             taken in modification-time order.{narrow}",
            sample.shown, sample.total
        )
    };
    glob_page(&sample.items, seen, saved, &basis)
}

fn glob_page(items: &[String], seen: usize, saved: Option<&str>, basis: &str) -> String {
    let recovery = match saved {
        Some(locator) => format!("Full sorted result stored at: {locator}. {RETRIEVAL_HINT}"),
        None => {
            "The complete result could not be saved; narrow pattern or path to see more.".to_owned()
        }
    };
    format!(
        "{}\n\n(Showing {} of {seen} paths{basis} {recovery})",
        items.join("\n"),
        items.len()
    )
}

/// The paths a `glob` card shows, chosen as the text chooses them, and whether the result was
/// capped.
pub fn glob_card_page(paths: &[String], root: &str, caps: &SearchCaps) -> (Vec<String>, bool) {
    if paths.len() <= caps.glob_max_results {
        return (paths.to_vec(), false);
    }
    if caps.sample_over_cap_glob_results {
        let sample = sample_across_top_level(paths, caps.glob_max_results, root);
        return (sample.items, true);
    }
    let head = paths.get(..caps.glob_max_results).unwrap_or(paths);
    (head.to_vec(), true)
}

/// The saved full text of an over-cap `glob` result: every path, oldest first.
pub fn glob_full_text(paths: &[String]) -> String {
    paths.join("\n")
}

/// `line` cut to at most `max_bytes` bytes at a UTF-8 boundary, with ` (line truncated)`
/// appended when anything was cut.
pub fn preview_line(line: &str, max_bytes: usize) -> String {
    if line.len() <= max_bytes {
        return line.to_owned();
    }
    let mut cut = max_bytes;
    while !line.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{LINE_TRUNCATED}", line.get(..cut).unwrap_or_default())
}

/// The matches a `grep` text and card show: the first `max_matches`, previewed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetainedMatches {
    /// The shown matches, previewed.
    pub items: Vec<GrepMatch>,
    /// How many matches the search found.
    pub seen: usize,
}

impl RetainedMatches {
    /// Whether matches were left out.
    pub fn truncated(&self) -> bool {
        self.items.len() < self.seen
    }
}

/// The first `max_matches` of `matches`, each line previewed to `max_line_bytes`.
pub fn retain_matches(matches: &[GrepMatch], caps: &SearchCaps) -> RetainedMatches {
    RetainedMatches {
        items: matches
            .iter()
            .take(caps.grep_max_matches)
            .map(|found| previewed(found, caps.grep_max_line_bytes))
            .collect(),
        seen: matches.len(),
    }
}

fn previewed(found: &GrepMatch, max_line_bytes: usize) -> GrepMatch {
    GrepMatch {
        path: found.path.clone(),
        line_number: found.line_number,
        line: preview_line(&found.line, max_line_bytes),
    }
}

/// `match` or `matches`.
fn noun(count: usize) -> &'static str {
    if count == 1 { "match" } else { "matches" }
}

/// Matches grouped by file in first-seen order: each file's path, then `Line <n>: <text>` per
/// match; groups joined by a blank line.
pub fn format_grep_matches(matches: &[GrepMatch]) -> String {
    let mut order: Vec<(&str, Vec<&GrepMatch>)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for found in matches {
        let slot = *index.entry(found.path.as_str()).or_insert_with(|| {
            order.push((found.path.as_str(), Vec::new()));
            order.len() - 1
        });
        if let Some((_, group)) = order.get_mut(slot) {
            group.push(found);
        }
    }
    let mut text = String::new();
    for (position, (path, group)) in order.iter().enumerate() {
        if position > 0 {
            text.push_str("\n\n");
        }
        text.push_str(path);
        for found in group {
            text.push_str("\nLine ");
            text.push_str(&found.line_number.to_string());
            text.push_str(": ");
            text.push_str(&found.line);
        }
    }
    text
}

/// `grep`'s text: `No matches found`, or the count header and the grouped matches, with the
/// recovery footer when the result was capped (`saved` is where the full text was stored).
pub fn render_grep(retained: &RetainedMatches, saved: Option<&str>) -> String {
    if retained.seen == 0 {
        return "No matches found".to_owned();
    }
    let header = if retained.truncated() {
        format!(
            "Found {} of {} matches",
            retained.items.len(),
            retained.seen
        )
    } else {
        format!("Found {} {}", retained.seen, noun(retained.seen))
    };
    let body = format_grep_matches(&retained.items);
    if !retained.truncated() {
        return format!("{header}\n\n{body}");
    }
    let recovery = match saved {
        Some(locator) => format!("Full grep result stored at: {locator}. {RETRIEVAL_HINT}"),
        None => "The complete result could not be saved; narrow pattern, path, or include to see \
                 more."
            .to_owned(),
    };
    format!("{header}\n\n{body}\n\n({recovery})")
}

/// The saved full text of an over-cap `grep` result: every match, previewed, under the
/// uncapped header.
pub fn grep_full_text(matches: &[GrepMatch], max_line_bytes: usize) -> String {
    let all: Vec<GrepMatch> = matches
        .iter()
        .map(|found| previewed(found, max_line_bytes))
        .collect();
    format!(
        "Found {} {}\n\n{}",
        matches.len(),
        noun(matches.len()),
        format_grep_matches(&all)
    )
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::config::ToolFsSearchConfig;

    fn caps(sample: bool, globs: usize, greps: usize) -> SearchCaps {
        let mut caps = ToolFsSearchConfig::new(sample).caps().unwrap();
        caps.glob_max_results = globs;
        caps.grep_max_matches = greps;
        caps
    }

    fn paths(list: &[&str]) -> Vec<String> {
        list.iter().map(|path| (*path).to_owned()).collect()
    }

    fn hit(path: &str, line_number: u64, line: &str) -> GrepMatch {
        GrepMatch {
            path: path.into(),
            line_number,
            line: line.into(),
        }
    }

    #[test]
    fn glob_footers() {
        let off = caps(false, 2, 250);
        assert_eq!(render_glob(&[], ".", &off, None), "No files found");
        assert_eq!(render_glob(&paths(&["a", "b"]), ".", &off, None), "a\nb");
        let four = paths(&["a.ts", "b.ts", "c.ts", "d.ts"]);
        assert_eq!(
            render_glob(&four, ".", &off, Some("/spill/x-glob-results.txt")),
            "a.ts\nb.ts\n\n(Showing 2 of 4 paths. Full sorted result stored at: \
             /spill/x-glob-results.txt. Use read with offset/limit, or grep this path to search \
             within it.)"
        );
        let three = caps(false, 3, 250);
        let tree = paths(&[
            "vendor/a.ts",
            "vendor/b.ts",
            "vendor/c.ts",
            "src/d.ts",
            "guide/e.md",
        ]);
        assert_eq!(
            render_glob(&tree, ".", &three, None),
            "vendor/a.ts\nvendor/b.ts\nvendor/c.ts\n\n(Showing 3 of 5 paths. The complete result \
             could not be saved; narrow pattern or path to see more.)"
        );
    }

    #[test]
    fn sampled_glob_footers() {
        let on = caps(true, 3, 250);
        let tree = paths(&[
            "vendor/a.ts",
            "vendor/b.ts",
            "vendor/c.ts",
            "src/d.ts",
            "guide/e.md",
            "top.txt",
        ]);
        assert_eq!(
            render_glob(&tree, ".", &on, None),
            "vendor/a.ts\nsrc/d.ts\nguide/e.md\n\n(Showing 3 of 6 paths, sampled across 3 of the \
             4 top-level entries this pattern matched instead of taken in modification-time \
             order. Narrow path to inspect a specific subtree. The complete result could not be \
             saved; narrow pattern or path to see more.)"
        );
        let reached = paths(&["vendor/a.ts", "vendor/b.ts", "vendor/c.ts", "src/d.ts"]);
        assert_eq!(
            render_glob(&reached, ".", &on, None),
            "vendor/a.ts\nvendor/b.ts\nsrc/d.ts\n\n(Showing 3 of 4 paths, sampled across 2 of the \
             2 top-level entries this pattern matched instead of taken in modification-time \
             order. The complete result could not be saved; narrow pattern or path to see more.)"
        );
        let flat = caps(true, 2, 250);
        assert_eq!(
            render_glob(&paths(&["a.ts", "b.ts", "c.ts"]), ".", &flat, None),
            "a.ts\nb.ts\n\n(Showing 2 of 3 paths. The complete result could not be saved; narrow \
             pattern or path to see more.)"
        );
        assert_eq!(
            glob_card_page(&tree, ".", &on),
            (paths(&["vendor/a.ts", "src/d.ts", "guide/e.md"]), true)
        );
    }

    #[test]
    fn grep_headers_groups_and_footers() {
        let all = caps(false, 100, 250);
        let found = vec![
            hit("a.ts", 3, "const x = 1"),
            hit("a.ts", 9, "const y = 2"),
            hit("b.ts", 1, "const z = 3"),
        ];
        assert_eq!(
            render_grep(&retain_matches(&found, &all), None),
            "Found 3 matches\n\na.ts\nLine 3: const x = 1\nLine 9: const y = 2\n\nb.ts\nLine 1: const z = 3"
        );
        let one = vec![hit("a.ts", 1, "hit")];
        assert_eq!(
            render_grep(&retain_matches(&one, &all), None),
            "Found 1 match\n\na.ts\nLine 1: hit"
        );
        assert_eq!(
            render_grep(&retain_matches(&[], &all), None),
            "No matches found"
        );
        let two = caps(false, 100, 2);
        let three = vec![
            hit("a.ts", 1, "one"),
            hit("a.ts", 2, "two"),
            hit("b.ts", 3, "three"),
        ];
        assert_eq!(
            render_grep(&retain_matches(&three, &two), Some("/spill/g.txt")),
            "Found 2 of 3 matches\n\na.ts\nLine 1: one\nLine 2: two\n\n(Full grep result stored \
             at: /spill/g.txt. Use read with offset/limit, or grep this path to search within it.)"
        );
        let capped_one = caps(false, 100, 1);
        assert_eq!(
            render_grep(&retain_matches(&three, &capped_one), None),
            "Found 1 of 3 matches\n\na.ts\nLine 1: one\n\n(The complete result could not be \
             saved; narrow pattern, path, or include to see more.)"
        );
        assert_eq!(
            grep_full_text(&three, 2000),
            "Found 3 matches\n\na.ts\nLine 1: one\nLine 2: two\n\nb.ts\nLine 3: three"
        );
    }

    #[test]
    fn groups_follow_first_seen_order() {
        let found = vec![
            hit("b.ts", 2, "x"),
            hit("a.ts", 1, "y"),
            hit("b.ts", 5, "z"),
        ];
        assert_eq!(
            format_grep_matches(&found),
            "b.ts\nLine 2: x\nLine 5: z\n\na.ts\nLine 1: y"
        );
    }

    #[test]
    fn previews_cut_at_a_utf8_boundary() {
        assert_eq!(preview_line("short", 100), "short");
        assert_eq!(preview_line("aéaéaéaé", 7), "aéaéa (line truncated)");
        assert_eq!(preview_line("aéaéaéaé", 6), "aéaé (line truncated)");
        assert_eq!(preview_line("ééé", 1), " (line truncated)");
        assert_eq!(preview_line("abc", 3), "abc");
        let capped = caps(false, 100, 250);
        let mut tight = capped;
        tight.grep_max_line_bytes = 7;
        let retained = retain_matches(&[hit("a.txt", 1, "aéaéaéaé")], &tight);
        assert_eq!(
            render_grep(&retained, None),
            "Found 1 match\n\na.txt\nLine 1: aéaéa (line truncated)"
        );
    }
}
