//! Where a search runs and how its paths are shown: the session's directory (else the
//! process's), and dsh's `toWorkdirRelative` display rule.

use std::path::{Component, Path, PathBuf};

use dsh_tools::{ToolError, ToolRunContext};

use crate::error;

/// The directory a call searches from: the calling session's `cwd` as written, else the
/// process's current directory. A relative session `cwd` is taken from the process's directory,
/// so the result is always absolute when the process has a current directory.
pub fn workdir(run: &ToolRunContext) -> Option<PathBuf> {
    let session = run
        .caller
        .as_ref()
        .and_then(|caller| caller.session_header.as_ref())
        .and_then(|header| header.cwd.as_deref())
        .map(PathBuf::from);
    match session {
        Some(cwd) if cwd.is_absolute() => Some(cwd),
        Some(cwd) => std::env::current_dir().ok().map(|dir| dir.join(cwd)),
        None => std::env::current_dir().ok(),
    }
}

/// The directory a search runs in, when dsh's spawn of ripgrep would start: the workdir must
/// be a directory and no argument (nor the workdir) may hold a NUL byte, which no process
/// argument can carry. Otherwise `<tool> could not start its search command (ripgrep launch
/// failed)`, as dsh reports a spawn that threw.
pub fn launch_dir(
    tool: &str,
    workdir: Option<&Path>,
    arguments: &[Option<&str>],
) -> Result<PathBuf, ToolError> {
    if arguments
        .iter()
        .flatten()
        .any(|argument| argument.contains('\0'))
    {
        return Err(error::could_not_start(tool));
    }
    workdir
        .filter(|dir| !dir.as_os_str().as_encoded_bytes().contains(&0))
        .filter(|dir| dir.is_dir())
        .map(Path::to_path_buf)
        .ok_or_else(|| error::could_not_start(tool))
}

/// `path` with `.` segments dropped and `..` segments applied, without touching the disk (as
/// Node's `path.resolve` normalizes). Leading `..` of a relative path are kept; `..` at the root
/// stays at the root.
pub fn normalize(path: &Path) -> PathBuf {
    let mut parts: Vec<Component<'_>> = Vec::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match parts.last() {
                Some(Component::Normal(_)) => {
                    parts.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => parts.push(component),
            },
            other => parts.push(other),
        }
    }
    parts.iter().collect()
}

/// dsh's `toWorkdirRelative`: an absolute path inside `workdir` becomes relative to it (the
/// workdir itself becomes `.`); a relative path, or one outside `workdir`, is returned as it
/// is. Both sides are normalized first, so `/w/../up` is outside `/w` and kept verbatim.
pub fn to_workdir_relative(path: &str, workdir: &Path) -> String {
    let candidate = Path::new(path);
    if !candidate.is_absolute() {
        return path.to_owned();
    }
    let target = normalize(candidate);
    let base = normalize(workdir);
    match target.strip_prefix(&base) {
        Ok(rest) if rest.as_os_str().is_empty() => ".".to_owned(),
        Ok(rest) => rest.to_string_lossy().into_owned(),
        Err(_) => path.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_absolutes_become_relative_and_the_rest_passes_through() {
        let w = Path::new("/w");
        assert_eq!(to_workdir_relative("/w/a/b.ts", w), "a/b.ts");
        assert_eq!(to_workdir_relative("/w", w), ".");
        assert_eq!(to_workdir_relative("/w/", w), ".");
        assert_eq!(to_workdir_relative("/other/b.ts", w), "/other/b.ts");
        assert_eq!(to_workdir_relative("/w-sibling/b.ts", w), "/w-sibling/b.ts");
        assert_eq!(to_workdir_relative("rel/b.ts", w), "rel/b.ts");
        assert_eq!(to_workdir_relative("/w/../up.ts", w), "/w/../up.ts");
        assert_eq!(to_workdir_relative("/w/./x/../y.ts", w), "y.ts");
        assert_eq!(to_workdir_relative("/a/b", Path::new("/")), "a/b");
        assert_eq!(to_workdir_relative("/w/a", Path::new("/w/./")), "a");
    }

    #[test]
    fn a_search_starts_only_where_ripgrep_could_be_spawned() {
        let dir = tempfile::tempdir().unwrap();
        let launch = |workdir: Option<&Path>, arguments: &[Option<&str>]| {
            launch_dir("grep", workdir, arguments).map_err(|error| error.message().to_owned())
        };
        assert_eq!(
            launch(Some(dir.path()), &[Some("x"), None]),
            Ok(dir.path().to_path_buf())
        );
        let refused = Err("grep could not start its search command (ripgrep launch failed)".into());
        assert_eq!(launch(Some(dir.path()), &[Some("a\0b")]), refused);
        assert_eq!(launch(Some(dir.path()), &[None, Some("\0")]), refused);
        assert_eq!(launch(Some(&dir.path().join("gone")), &[]), refused);
        assert_eq!(launch(None, &[]), refused);
    }

    #[test]
    fn normalization_is_lexical() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("/../a")), PathBuf::from("/a"));
        assert_eq!(normalize(Path::new("../a/..")), PathBuf::from(".."));
        assert_eq!(normalize(Path::new("a/../../b")), PathBuf::from("../b"));
    }
}
