//! The presentation metadata of a search result (dsh's `SearchMeta`, what a UI draws its search
//! card from), bounded to `searchMetaMaxBytes` of serialized JSON.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::render::RetainedMatches;

/// `{shape:'paths', paths, truncated, total}` for the shown glob page, with trailing paths
/// dropped until the JSON fits `max_bytes` (at least one path is kept).
pub fn glob_meta(page: Vec<String>, truncated: bool, total: usize, max_bytes: usize) -> Value {
    let items = page.into_iter().map(Value::String).collect();
    capped("paths", items, truncated, total, max_bytes)
}

/// `{shape:'matches', files:[{path, matches:[{lineNumber, line}]}], truncated, total}` for the
/// shown grep matches grouped by file in first-seen order, with trailing file groups dropped
/// until the JSON fits `max_bytes` (at least one group is kept).
pub fn grep_meta(retained: &RetainedMatches, max_bytes: usize) -> Value {
    let mut files: Vec<(&str, Vec<Value>)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for found in &retained.items {
        let slot = *index.entry(found.path.as_str()).or_insert_with(|| {
            files.push((found.path.as_str(), Vec::new()));
            files.len() - 1
        });
        if let Some((_, lines)) = files.get_mut(slot) {
            lines.push(json!({"lineNumber": found.line_number, "line": found.line}));
        }
    }
    let items = files
        .into_iter()
        .map(|(path, matches)| json!({"path": path, "matches": matches}))
        .collect();
    capped(
        "matches",
        items,
        retained.truncated(),
        retained.seen,
        max_bytes,
    )
}

/// The meta object for `shape` (`paths` lists its items under `paths`, `matches` under
/// `files`), cut as dsh's `capMetaBytes` cuts it: whole when it fits, else trailing items
/// dropped (keeping one) and `truncated` set.
fn capped(
    shape: &str,
    mut items: Vec<Value>,
    truncated: bool,
    total: usize,
    max_bytes: usize,
) -> Value {
    let list_key = if shape == "paths" { "paths" } else { "files" };
    let build = |items: Vec<Value>, truncated: bool| {
        let mut meta = serde_json::Map::new();
        meta.insert("shape".into(), json!(shape));
        meta.insert(list_key.into(), Value::Array(items));
        meta.insert("truncated".into(), json!(truncated));
        meta.insert("total".into(), json!(total));
        Value::Object(meta)
    };
    let sizes: Vec<usize> = items.iter().map(js_len).collect();
    let whole = js_len(&build(Vec::new(), truncated)) + list_len(&sizes);
    if whole <= max_bytes {
        return build(items, truncated);
    }
    // The same object with `truncated: true`, item by item: empty-list size plus the items and
    // the commas between them.
    let base = js_len(&build(Vec::new(), true));
    let mut kept = sizes.len();
    while kept > 1 && base + list_len(sizes.get(..kept).unwrap_or_default()) > max_bytes {
        kept -= 1;
    }
    items.truncate(kept);
    build(items, true)
}

/// The bytes a list of items adds inside `[]`: the items and the commas between them.
fn list_len(sizes: &[usize]) -> usize {
    sizes.iter().sum::<usize>() + sizes.len().saturating_sub(1)
}

/// The UTF-8 length of `value` as `JSON.stringify` prints it.
fn js_len(value: &Value) -> usize {
    dsh_protocol::json::to_js_string(value).len()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::value::GrepMatch;

    fn hit(path: &str, line_number: u64, line: &str) -> GrepMatch {
        GrepMatch {
            path: path.into(),
            line_number,
            line: line.into(),
        }
    }

    #[test]
    fn grep_meta_groups_by_file() {
        let retained = RetainedMatches {
            items: vec![hit("a.ts", 1, "one"), hit("a.ts", 2, "two")],
            seen: 3,
        };
        assert_eq!(
            grep_meta(&retained, 65536),
            json!({
                "shape": "matches",
                "files": [{"path": "a.ts", "matches": [{"lineNumber": 1, "line": "one"}, {"lineNumber": 2, "line": "two"}]}],
                "truncated": true,
                "total": 3
            })
        );
        let empty = RetainedMatches {
            items: Vec::new(),
            seen: 0,
        };
        assert_eq!(
            grep_meta(&empty, 65536),
            json!({"shape": "matches", "files": [], "truncated": false, "total": 0})
        );
    }

    #[test]
    fn meta_is_bounded_by_dropping_trailing_items() {
        let big = "x".repeat(40_000);
        let retained = RetainedMatches {
            items: vec![
                hit("a.ts", 1, &big),
                hit("b.ts", 1, &big),
                hit("c.ts", 1, "small"),
            ],
            seen: 3,
        };
        let meta = grep_meta(&retained, 65536);
        assert_eq!(meta["files"].as_array().unwrap().len(), 1);
        assert_eq!(meta["truncated"], json!(true));
        assert_eq!(meta["total"], json!(3));
        assert!(dsh_protocol::json::to_js_string(&meta).len() <= 65536);
        // One item too large on its own is kept rather than hidden.
        let huge = RetainedMatches {
            items: vec![hit("a.ts", 1, &"y".repeat(70_000))],
            seen: 1,
        };
        let meta = grep_meta(&huge, 65536);
        assert_eq!(meta["files"].as_array().unwrap().len(), 1);
        assert_eq!(meta["truncated"], json!(true));
    }

    #[test]
    fn the_cut_is_exactly_dshs() {
        // Each path serializes to 7 bytes ("p-NNN" quoted); the empty meta with truncated true
        // is {"shape":"paths","paths":[],"truncated":true,"total":10} = 55 bytes.
        let page: Vec<String> = (0..10).map(|i| format!("p-{i:03}")).collect();
        let base = r#"{"shape":"paths","paths":[],"truncated":true,"total":10}"#.len();
        let fits = base + 3 * 7 + 2;
        let meta = glob_meta(page.clone(), false, 10, fits);
        assert_eq!(meta["paths"].as_array().unwrap().len(), 3);
        assert_eq!(dsh_protocol::json::to_js_string(&meta).len(), fits);
        let meta = glob_meta(page.clone(), false, 10, fits - 1);
        assert_eq!(meta["paths"].as_array().unwrap().len(), 2);
        let whole = glob_meta(page, false, 10, 1_000_000);
        assert_eq!(whole["truncated"], json!(false));
        assert_eq!(whole["paths"].as_array().unwrap().len(), 10);
    }
}
