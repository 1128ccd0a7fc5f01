//! POSIX path arithmetic on strings, done the way Node's `path` module does it (`resolve`,
//! `join`, `dirname`, `basename`, `relative`), because display paths, scope keys and the
//! baseline identity are model-visible and must read exactly as dsh writes them.

/// Collapses `.`, `..` and repeated separators of `path`'s segments. An absolute path never
/// climbs above `/`; a relative one keeps its leading `..`s.
fn normalize_segments(path: &str) -> Vec<&str> {
    let absolute = path.starts_with('/');
    let mut out: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if out.last().is_some_and(|last| *last != "..") {
                    out.pop();
                } else if !absolute {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// Node's `path.normalize` without the trailing separator: `/a/./b/../c` is `/a/c`, an empty
/// relative result is `.`.
pub(crate) fn normalize(path: &str) -> String {
    let segments = normalize_segments(path).join("/");
    if path.starts_with('/') {
        format!("/{segments}")
    } else if segments.is_empty() {
        ".".to_owned()
    } else {
        segments
    }
}

/// Whether `path` is absolute.
pub(crate) fn is_absolute(path: &str) -> bool {
    path.starts_with('/')
}

/// Node's `path.resolve(base, path)`: `path` when absolute, else `base/path`, normalized.
/// `base` is made absolute against the process's directory when it is not.
pub(crate) fn resolve(base: &str, path: &str) -> String {
    if is_absolute(path) {
        return normalize(path);
    }
    let base = if is_absolute(base) {
        base.to_owned()
    } else {
        join(&process_cwd(), base)
    };
    normalize(&format!("{base}/{path}"))
}

/// `path` made absolute against the process's directory (Node's one-argument `resolve`).
pub(crate) fn absolute(path: &str) -> String {
    resolve(&process_cwd(), path)
}

/// The process's working directory, `/` when it cannot be read.
pub(crate) fn process_cwd() -> String {
    std::env::current_dir()
        .ok()
        .and_then(|dir| dir.to_str().map(str::to_owned))
        .unwrap_or_else(|| "/".to_owned())
}

/// Node's `path.join(a, b)`.
pub(crate) fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => ".".to_owned(),
        (true, false) => normalize(b),
        (false, true) => normalize(a),
        (false, false) => normalize(&format!("{a}/{b}")),
    }
}

/// Node's `path.dirname`: `.` for a bare name, `/` for a child of the root.
pub(crate) fn dirname(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return if path.is_empty() { "." } else { "/" }.to_owned();
    }
    match trimmed.rfind('/') {
        None => ".".to_owned(),
        Some(at) => {
            let parent = trimmed.get(..at).unwrap_or_default().trim_end_matches('/');
            if parent.is_empty() {
                "/".to_owned()
            } else {
                parent.to_owned()
            }
        }
    }
}

/// Node's `path.basename`: the last segment, trailing separators ignored.
pub(crate) fn basename(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    match trimmed.rfind('/') {
        None => trimmed.to_owned(),
        Some(at) => trimmed.get(at + 1..).unwrap_or_default().to_owned(),
    }
}

/// Node's `path.relative(from, to)`: `""` for the same directory, `..` steps up from `from`.
pub(crate) fn relative(from: &str, to: &str) -> String {
    let from = absolute(from);
    let to = absolute(to);
    if from == to {
        return String::new();
    }
    let from_segments = normalize_segments(&from);
    let to_segments = normalize_segments(&to);
    let common = from_segments
        .iter()
        .zip(&to_segments)
        .take_while(|(a, b)| a == b)
        .count();
    let ups = from_segments.len().saturating_sub(common);
    let mut parts: Vec<&str> = std::iter::repeat_n("..", ups).collect();
    parts.extend(to_segments.iter().skip(common).copied());
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_as_node_writes_them() {
        assert_eq!(normalize("/a/./b/../c/"), "/a/c");
        assert_eq!(normalize("/.."), "/");
        assert_eq!(normalize("a/../.."), "..");
        assert_eq!(resolve("/repo", "nested/task.txt"), "/repo/nested/task.txt");
        assert_eq!(resolve("/repo", "/abs/x"), "/abs/x");
        assert_eq!(join("/repo", ".git"), "/repo/.git");
        assert_eq!(join("/", "AGENTS.md"), "/AGENTS.md");
        assert_eq!(dirname("AGENTS.md"), ".");
        assert_eq!(dirname("nested/AGENTS.md"), "nested");
        assert_eq!(dirname("/a"), "/");
        assert_eq!(dirname("/"), "/");
        assert_eq!(dirname("a/b/c.md"), "a/b");
        assert_eq!(basename("a/b/c.md"), "c.md");
        assert_eq!(basename("c.md"), "c.md");
        assert_eq!(relative("/repo", "/repo"), "");
        assert_eq!(relative("/repo/a/b", "/repo"), "../..");
        assert_eq!(
            relative("/repo", "/repo/nested/AGENTS.md"),
            "nested/AGENTS.md"
        );
        assert_eq!(relative("/repo/a", "/repo/b/c"), "../b/c");
        assert_eq!(relative("/", "/x"), "x");
    }
}
