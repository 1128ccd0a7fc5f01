//! The directory walk both tools share: the search root and how its paths print, ripgrep's two
//! filter configurations, the harness's own `/proc` entries kept out, and a stop flag.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use dsh_tools::ToolError;
use ignore::overrides::{Override, OverrideBuilder};
use ignore::{DirEntry, WalkBuilder};

use crate::error;
use crate::stderr::Stderr;
use crate::workdir::normalize;

/// The VCS metadata directories `glob` never lists (dsh's `GLOB_VCS_EXCLUDES`).
pub const VCS_DIRECTORIES: [&str; 6] = [".git", ".svn", ".hg", ".bzr", ".jj", ".sl"];

/// A flag the async side raises to stop a running search; the walk and the searcher poll it.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    /// Asks the search to stop.
    pub fn raise(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the search should stop.
    pub fn is_raised(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// The root of one search: what is walked, and how its paths are shown.
#[derive(Debug, Clone)]
pub struct SearchRoot {
    /// The absolute path walked (the workdir joined with the requested path, `.` dropped).
    walk: PathBuf,
    /// The requested path as written, which prefixes every shown path (as ripgrep prints
    /// paths under a path argument); `None` for the workdir itself, whose paths print bare.
    shown: Option<String>,
    /// The resolved root, when the walk can reach `/proc` (it then skips the harness's own
    /// entries).
    proc_base: Option<PathBuf>,
}

impl SearchRoot {
    /// The root for `requested` (relative to `workdir`, a usable directory), checked as ripgrep
    /// checks its path argument: a path that cannot be reached is ripgrep's
    /// `rg: <path>: IO error for operation on <path>: <cause>` and exit 2 (printed to
    /// `stderr`); one of the harness's own `/proc` entries is refused.
    pub fn resolve(
        tool: &str,
        workdir: &Path,
        requested: Option<&str>,
        stderr: &Stderr,
    ) -> Result<Self, ToolError> {
        let walk: PathBuf = match requested {
            Some(path) => workdir.join(path),
            None => workdir.to_path_buf(),
        }
        .components()
        .collect();
        if let Err(cause) = std::fs::metadata(&walk) {
            // A path that is not a directory is walked by ripgrep's single-threaded walk, whose
            // walkdir words the error.
            let shown = requested.unwrap_or("./");
            return Err(stderr.fatal(
                tool,
                &format!("{shown}: IO error for operation on {shown}: {cause}"),
            ));
        }
        let resolved = std::fs::canonicalize(&walk).unwrap_or_else(|_| normalize(&walk));
        if is_own_proc(&resolved) || is_own_proc(&normalize(&walk)) {
            return Err(error::own_proc(tool));
        }
        // A walk that can reach `/proc` (from it, or from an ancestor) checks every entry.
        let proc_base = (resolved.starts_with("/proc")
            || Path::new("/proc").starts_with(&resolved))
        .then_some(resolved);
        Ok(Self {
            walk,
            shown: requested.map(str::to_owned),
            proc_base,
        })
    }

    /// Whether ripgrep got no path argument (it then searches `./` and, finding no file to
    /// search, says so).
    pub fn is_implicit(&self) -> bool {
        self.shown.is_none()
    }

    /// The absolute path walked.
    pub fn path(&self) -> &Path {
        &self.walk
    }

    /// `path` below the walked root (empty for the root itself), or `None` when it is not
    /// below it.
    fn rest(&self, path: &Path) -> Option<String> {
        let rest = path.strip_prefix(&self.walk).ok()?;
        Some(rest.to_string_lossy().into_owned())
    }

    /// How ripgrep would print `path` (a path of this walk) in its results: under the
    /// requested path as written, or bare below the workdir.
    pub fn display(&self, path: &Path) -> String {
        let Some(rest) = self.rest(path) else {
            return path.to_string_lossy().into_owned();
        };
        match &self.shown {
            None if rest.is_empty() => ".".to_owned(),
            None => rest,
            Some(shown) => joined(shown, &rest),
        }
    }

    /// How ripgrep would print `path` in a walk error: as [`Self::display`], except that without
    /// a path argument it is under `./` (ripgrep strips that prefix from results only).
    pub fn error_display(&self, path: &Path) -> String {
        match (&self.shown, self.rest(path)) {
            (None, Some(rest)) => format!("./{rest}"),
            _ => self.display(path),
        }
    }

    /// A walk over this root with ripgrep's base settings: no symlinks followed, and the
    /// global gitignore resolved against `workdir` (ripgrep's current directory).
    fn builder(&self, workdir: &Path) -> WalkBuilder {
        let mut builder = WalkBuilder::new(&self.walk);
        builder.current_dir(workdir).follow_links(false);
        if let Some(base) = self.proc_base.clone() {
            let walk = self.walk.clone();
            builder.filter_entry(move |entry| {
                let rest = entry.path().strip_prefix(&walk).unwrap_or(entry.path());
                !is_own_proc(&base.join(rest))
            });
        }
        builder
    }
}

/// `shown` (a path argument as written) joined with `rest` as `Path::join` would print it.
fn joined(shown: &str, rest: &str) -> String {
    if rest.is_empty() {
        shown.to_owned()
    } else if shown.ends_with('/') {
        format!("{shown}{rest}")
    } else {
        format!("{shown}/{rest}")
    }
}

/// `grep`'s `--glob=<include>` (matched relative to `workdir`), built as ripgrep builds it
/// before anything else; a glob it rejects is its error.
pub fn include_override(
    workdir: &Path,
    include: Option<&str>,
) -> Result<Option<Override>, ignore::Error> {
    let Some(include) = include else {
        return Ok(None);
    };
    let mut overrides = OverrideBuilder::new(workdir);
    overrides.add(include)?;
    overrides.build().map(Some)
}

/// `glob`'s `--glob=<pattern>` and dsh's VCS excludes: each VCS directory excluded both as a
/// directory (pruned) and by its contents (so a root inside one lists nothing).
pub fn glob_override(workdir: &Path, pattern: &str) -> Result<Override, ignore::Error> {
    let mut overrides = OverrideBuilder::new(workdir);
    overrides.add(pattern)?;
    for name in VCS_DIRECTORIES {
        overrides.add(&format!("!**/{name}"))?;
        overrides.add(&format!("!**/{name}/**"))?;
    }
    overrides.build()
}

/// The walk `grep` runs (`rg` without `--hidden` or `--no-ignore`): hidden files skipped,
/// `.gitignore` (inside git repositories), `.git/info/exclude`, the global gitignore,
/// `.ignore` and `.rgignore` honoured, parent directories' ignore files included; `include`,
/// when given, keeps only the files it matches.
pub fn grep_walk(root: &SearchRoot, workdir: &Path, include: Option<Override>) -> WalkBuilder {
    let mut builder = root.builder(workdir);
    builder
        .standard_filters(true)
        .require_git(true)
        .add_custom_ignore_filename(".rgignore");
    if let Some(include) = include {
        builder.overrides(include);
    }
    builder
}

/// The walk `glob` runs (`rg --files --no-ignore --hidden`): no ignore file of any kind, hidden
/// files included, `overrides` ([`glob_override`]) deciding what is listed.
pub fn glob_walk(root: &SearchRoot, workdir: &Path, overrides: Override) -> WalkBuilder {
    let mut builder = root.builder(workdir);
    builder.standard_filters(false).overrides(overrides);
    builder
}

/// What ripgrep does with a walked entry: `Some(true)` for an explicit path (a root that is not
/// a directory, always searched), `Some(false)` for a regular file found by the walk, `None`
/// for anything else (directories, symlinks, devices).
pub fn subject_kind(entry: &DirEntry) -> Option<bool> {
    let kind = entry.file_type()?;
    if entry.depth() == 0 {
        return (!kind.is_dir()).then_some(true);
    }
    kind.is_file().then_some(false)
}

/// Whether `path` (absolute and normalized) is one of the harness's own `/proc` entries:
/// `/proc/self`, `/proc/thread-self`, `/proc/<our pid>` or `/proc/<one of our threads>`, or
/// anything below them. They hold this process's memory and descriptors.
pub fn is_own_proc(path: &Path) -> bool {
    let mut components = path.components();
    if components.next() != Some(Component::RootDir)
        || components.next() != Some(Component::Normal(OsStr::new("proc")))
    {
        return false;
    }
    let Some(Component::Normal(entry)) = components.next() else {
        return false;
    };
    let Some(entry) = entry.to_str() else {
        return false;
    };
    if entry == "self" || entry == "thread-self" || entry == std::process::id().to_string() {
        return true;
    }
    !entry.is_empty()
        && entry.bytes().all(|byte| byte.is_ascii_digit())
        && Path::new("/proc/self/task").join(entry).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(
        tool: &str,
        workdir: &Path,
        requested: Option<&str>,
    ) -> Result<SearchRoot, ToolError> {
        SearchRoot::resolve(tool, workdir, requested, &Stderr::new(65536))
    }

    #[test]
    fn shown_paths_follow_the_requested_spelling() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let work = dir.path();
        let bare = resolve("glob", work, None).unwrap();
        assert_eq!(bare.display(&work.join("a/b.txt")), "a/b.txt");
        for (requested, shown) in [
            ("sub", "sub/x.txt"),
            ("sub/", "sub/x.txt"),
            ("./sub", "./sub/x.txt"),
            (".", "./sub/x.txt"),
        ] {
            let root = resolve("glob", work, Some(requested)).unwrap();
            let child = if requested == "." {
                work.join("sub/x.txt")
            } else {
                work.join("sub").join("x.txt")
            };
            assert_eq!(root.display(&child), shown, "{requested}");
        }
        let absolute = work.join("sub");
        let root = resolve("glob", work, Some(absolute.to_str().unwrap())).unwrap();
        assert_eq!(
            root.display(&absolute.join("x")),
            format!("{}/x", absolute.display())
        );
    }

    #[test]
    fn roots_are_checked_as_ripgrep_checks_them() {
        let dir = tempfile::tempdir().unwrap();
        // ripgrep 15's wording (its walkdir-based walk); ripgrep 13 printed
        // `nope: No such file or directory (os error 2)` without the `rg: ` prefix.
        let missing = resolve("grep", dir.path(), Some("nope")).unwrap_err();
        assert_eq!(
            missing.message(),
            "grep search failed (exit 2): rg: nope: IO error for operation on nope: No such file \
             or directory (os error 2)"
        );
        std::fs::write(dir.path().join("file"), "x").unwrap();
        let under_file = resolve("glob", dir.path(), Some("file/x")).unwrap_err();
        assert_eq!(
            under_file.message(),
            "glob search failed (exit 2): rg: file/x: IO error for operation on file/x: Not a \
             directory (os error 20)"
        );
        let root = resolve("grep", dir.path(), None).unwrap();
        assert!(root.is_implicit());
        assert_eq!(root.error_display(dir.path()), "./");
        assert_eq!(root.error_display(&dir.path().join("a")), "./a");
        assert_eq!(root.display(&dir.path().join("a")), "a");
    }

    #[test]
    fn the_harness_own_proc_entries_are_refused() {
        let pid = std::process::id();
        assert!(is_own_proc(Path::new("/proc/self")));
        assert!(is_own_proc(Path::new("/proc/thread-self/fd")));
        assert!(is_own_proc(Path::new(&format!("/proc/{pid}/mem"))));
        assert!(!is_own_proc(Path::new("/proc/cpuinfo")));
        assert!(!is_own_proc(Path::new("/tmp/proc/self")));
        if Path::new("/proc/self").exists() {
            for root in ["/proc/self", "/proc/thread-self", "/dev/fd"] {
                let refused = resolve("grep", Path::new("/"), Some(root));
                assert_eq!(
                    refused.unwrap_err().message(),
                    "grep cannot search the harness's own /proc entries",
                    "{root}"
                );
            }
            let top = resolve("grep", Path::new("/"), None).unwrap();
            assert!(top.proc_base.is_some(), "a walk from / checks for /proc");
            let dir = tempfile::tempdir().unwrap();
            let plain = resolve("grep", dir.path(), None).unwrap();
            assert!(plain.proc_base.is_none());
            let own = format!("/proc/{pid}/status");
            assert!(resolve("grep", Path::new("/"), Some(&own)).is_err());
            assert!(resolve("grep", Path::new("/"), Some("/proc/1")).is_ok());
        }
    }
}
