//! Rules over the source files themselves: their length, and how many lints they switch off.

use std::path::{Path, PathBuf};

/// The longest a source file outside the tests may be, in lines.
pub const MAX_LINES: usize = 600;

/// How many `#[allow(...)]` (and `#![allow(...)]`) attributes the sources may hold.
pub const MAX_ALLOWS: usize = 20;

/// The folders whose source files are checked.
const ROOTS: [&str; 4] = ["crates", "apps", "examples", "xtask"];

/// The endings of source files: Rust, and the web UI's scripts, styles and pages.
const EXTENSIONS: [&str; 5] = [".rs", ".js", ".mjs", ".css", ".html"];

/// A source file: its path relative to the workspace root, with `/` separators, and its text.
pub type Source = (String, String);

/// Every source file under the checked folders (build output and dependencies left out), by
/// path order.
pub fn read(root: &Path) -> Result<Vec<Source>, String> {
    let mut files = Vec::new();
    for top in ROOTS {
        walk(root, &root.join(top), &mut files)?;
    }
    files.sort();
    Ok(files)
}

fn walk(root: &Path, dir: &Path, files: &mut Vec<Source>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|error| format!("{}: {error}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|error| format!("{}: {error}", dir.display()))?;
        let path: PathBuf = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !(name.starts_with('.') || name == "target" || name == "node_modules") {
                walk(root, &path, files)?;
            }
        } else if EXTENSIONS.iter().any(|extension| name.ends_with(extension)) {
            let text = std::fs::read_to_string(&path)
                .map_err(|error| format!("{}: {error}", path.display()))?;
            let relative = path.strip_prefix(root).unwrap_or(&path);
            files.push((relative.to_string_lossy().replace('\\', "/"), text));
        }
    }
    Ok(())
}

/// Whether `path` holds tests: under a `tests/` or `benches/` folder, or a `tests.rs` module.
pub fn is_test(path: &str) -> bool {
    path.split('/')
        .any(|part| part == "tests" || part == "benches")
        || path == "tests.rs"
        || path.ends_with("/tests.rs")
}

/// One problem per file outside the tests that is longer than [`MAX_LINES`].
pub fn long_files(files: &[Source]) -> Vec<String> {
    files
        .iter()
        .filter(|(path, _)| !is_test(path))
        .filter_map(|(path, text)| {
            let lines = text.lines().count();
            (lines > MAX_LINES).then(|| {
                format!(
                    "{path} has {lines} lines (at most {MAX_LINES} outside the tests: split it \
                     by job, or move its tests to a tests.rs child module)"
                )
            })
        })
        .collect()
}

/// A lint attribute in a source: its place and its text up to the closing `)]`.
struct LintAttribute {
    place: String,
    allow: bool,
    text: String,
}

/// Every `allow` and `expect` attribute of `files`: lines that start with one (so a mention in
/// a comment or a string does not count), read on to the line that closes it.
fn lint_attributes(files: &[Source]) -> Vec<LintAttribute> {
    let mut found = Vec::new();
    for (path, text) in files.iter().filter(|(path, _)| path.ends_with(".rs")) {
        let lines: Vec<&str> = text.lines().collect();
        for (number, line) in lines.iter().enumerate() {
            let line = line.trim_start();
            let allow = line.starts_with("#[allow(") || line.starts_with("#![allow(");
            if !(allow || line.starts_with("#[expect(") || line.starts_with("#![expect(")) {
                continue;
            }
            let text: Vec<&str> = lines
                .iter()
                .skip(number)
                .scan(false, |closed, line| {
                    (!*closed).then(|| {
                        *closed = line.trim_end().ends_with(")]");
                        *line
                    })
                })
                .collect();
            found.push(LintAttribute {
                place: format!("{path}:{}", number + 1),
                allow,
                text: text.join("\n"),
            });
        }
    }
    found
}

/// One problem per `allow` or `expect` attribute that gives no `reason`.
pub fn unexplained_lint_attributes(files: &[Source]) -> Vec<String> {
    lint_attributes(files)
        .into_iter()
        .filter(|attribute| !attribute.text.contains("reason"))
        .map(|attribute| {
            format!(
                "{}: a lint attribute without a reason: say why, as #[expect(lint, reason = \
                 \"...\")]",
                attribute.place
            )
        })
        .collect()
}

/// A problem when the files hold more than [`MAX_ALLOWS`] `allow` attributes.
pub fn too_many_allows(files: &[Source]) -> Option<String> {
    let places: Vec<String> = lint_attributes(files)
        .into_iter()
        .filter(|attribute| attribute.allow)
        .map(|attribute| attribute.place)
        .collect();
    (places.len() > MAX_ALLOWS).then(|| {
        format!(
            "{} #[allow(...)] attributes (at most {MAX_ALLOWS}; prefer #[expect(lint, reason = \
             \"...\")]): {}",
            places.len(),
            places.join(", ")
        )
    })
}
