//! The directory walk both tools share: the search root and how its paths print, ripgrep's two
//! filter configurations, the harness's own `/proc` entries kept out, and a stop flag.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use dsh_tools::ToolError;
use ignore::overrides::OverrideBuilder;
use ignore::{DirEntry, WalkBuilder};

use crate::error;
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
    /// The root for `requested` (relative to `workdir`), checked as ripgrep checks its path
    /// argument: the workdir must be a directory, the root must exist, and it must not be one
    /// of the harness's own `/proc` entries.
    pub fn resolve(
        tool: &str,
        workdir: Option<&Path>,
        requested: Option<&str>,
    ) -> Result<Self, ToolError> {
        if requested.is_some_and(|path| path.contains('\0')) {
            return Err(error::nul_byte(tool, "path"));
        }
        let workdir = workdir
            .filter(|dir| !dir.as_os_str().as_encoded_bytes().contains(&0))
            .filter(|dir| dir.is_dir())
            .ok_or_else(|| error::could_not_start(tool))?;
        let walk: PathBuf = match requested {
            Some(path) => workdir.join(path),
            None => workdir.to_path_buf(),
        }
        .components()
        .collect();
        if let Err(cause) = std::fs::metadata(&walk) {
            let shown = requested.unwrap_or(".");
            return Err(error::failed(tool, &format!("{shown}: {cause}")));
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

    /// The absolute path walked.
    pub fn path(&self) -> &Path {
        &self.walk
    }

    /// How ripgrep would print `path` (a path of this walk): under the requested path as
    /// written, or bare below the workdir.
    pub fn display(&self, path: &Path) -> String {
        let bytes = path.as_os_str().as_encoded_bytes();
        let root_len = self.walk.as_os_str().as_encoded_bytes().len();
        let Some(rest) = bytes.get(root_len..) else {
            return path.to_string_lossy().into_owned();
        };
        let rest = rest.strip_prefix(b"/").unwrap_or(rest);
        let rest = String::from_utf8_lossy(rest);
        match &self.shown {
            None if rest.is_empty() => ".".to_owned(),
            None => rest.into_owned(),
            Some(shown) if rest.is_empty() => shown.clone(),
            Some(shown) if shown.ends_with('/') => format!("{shown}{rest}"),
            Some(shown) => format!("{shown}/{rest}"),
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

/// The walk `grep` runs (`rg` without `--hidden` or `--no-ignore`): hidden files skipped,
/// `.gitignore` (inside git repositories), `.git/info/exclude`, the global gitignore,
/// `.ignore` and `.rgignore` honoured, parent directories' ignore files included; `include`,
/// when given, keeps only the files it matches (matched relative to `workdir`).
pub fn grep_walk(
    root: &SearchRoot,
    workdir: &Path,
    include: Option<&str>,
) -> Result<WalkBuilder, ignore::Error> {
    let mut builder = root.builder(workdir);
    builder
        .standard_filters(true)
        .require_git(true)
        .add_custom_ignore_filename(".rgignore");
    if let Some(include) = include {
        let mut overrides = OverrideBuilder::new(workdir);
        overrides.add(include)?;
        builder.overrides(overrides.build()?);
    }
    Ok(builder)
}

/// The walk `glob` runs (`rg --files --no-ignore --hidden`): no ignore file of any kind, hidden
/// files included, `pattern` as the one whitelist glob, and each VCS directory excluded both as
/// a directory (pruned) and by its contents (so a root inside one lists nothing).
pub fn glob_walk(
    root: &SearchRoot,
    workdir: &Path,
    pattern: &str,
) -> Result<WalkBuilder, ignore::Error> {
    let mut builder = root.builder(workdir);
    builder.standard_filters(false);
    let mut overrides = OverrideBuilder::new(workdir);
    overrides.add(pattern)?;
    for name in VCS_DIRECTORIES {
        overrides.add(&format!("!**/{name}"))?;
        overrides.add(&format!("!**/{name}/**"))?;
    }
    builder.overrides(overrides.build()?);
    Ok(builder)
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

    #[test]
    fn shown_paths_follow_the_requested_spelling() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let work = dir.path();
        let bare = SearchRoot::resolve("glob", Some(work), None).unwrap();
        assert_eq!(bare.display(&work.join("a/b.txt")), "a/b.txt");
        for (requested, shown) in [
            ("sub", "sub/x.txt"),
            ("sub/", "sub/x.txt"),
            ("./sub", "./sub/x.txt"),
            (".", "./sub/x.txt"),
        ] {
            let root = SearchRoot::resolve("glob", Some(work), Some(requested)).unwrap();
            let child = if requested == "." {
                work.join("sub/x.txt")
            } else {
                work.join("sub").join("x.txt")
            };
            assert_eq!(root.display(&child), shown, "{requested}");
        }
        let absolute = work.join("sub");
        let root =
            SearchRoot::resolve("glob", Some(work), Some(absolute.to_str().unwrap())).unwrap();
        assert_eq!(
            root.display(&absolute.join("x")),
            format!("{}/x", absolute.display())
        );
    }

    #[test]
    fn roots_are_checked_as_ripgrep_checks_them() {
        let dir = tempfile::tempdir().unwrap();
        let missing = SearchRoot::resolve("grep", Some(dir.path()), Some("nope")).unwrap_err();
        assert_eq!(
            missing.message(),
            "grep search failed (exit 2): nope: No such file or directory (os error 2)"
        );
        let gone = dir.path().join("gone");
        let unusable = SearchRoot::resolve("glob", Some(&gone), None).unwrap_err();
        assert_eq!(
            unusable.message(),
            "glob could not start its search command (ripgrep launch failed)"
        );
        let nul = SearchRoot::resolve("grep", Some(dir.path()), Some("a\0b")).unwrap_err();
        assert_eq!(
            nul.message(),
            "grep could not start its search: path contains a NUL byte"
        );
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
                let refused = SearchRoot::resolve("grep", Some(Path::new("/")), Some(root));
                assert_eq!(
                    refused.unwrap_err().message(),
                    "grep cannot search the harness's own /proc entries",
                    "{root}"
                );
            }
            let top = SearchRoot::resolve("grep", Some(Path::new("/")), None).unwrap();
            assert!(top.proc_base.is_some(), "a walk from / checks for /proc");
            let dir = tempfile::tempdir().unwrap();
            let plain = SearchRoot::resolve("grep", Some(dir.path()), None).unwrap();
            assert!(plain.proc_base.is_none());
            let own = format!("/proc/{pid}/status");
            assert!(SearchRoot::resolve("grep", Some(Path::new("/")), Some(&own)).is_err());
            assert!(SearchRoot::resolve("grep", Some(Path::new("/")), Some("/proc/1")).is_ok());
        }
    }
}
