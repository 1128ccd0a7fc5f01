//! `DSH_HOME` as dsh resolves it (`resolveDshHome` in `util/home-paths`).

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

use crate::error::ShellEnvError;

/// The harness home: `configured`, else a non-blank `env_value` (`$DSH_HOME`), else
/// `<home>/.dsh`; a leading `~`, `~/` or `~\` is the user's `home`; relative paths are taken
/// from `cwd`; `.` and `..` are resolved as `path.resolve` does.
pub fn resolve_dsh_home(
    configured: Option<&str>,
    env_value: Option<&OsStr>,
    home: Option<&Path>,
    cwd: &Path,
) -> Result<PathBuf, ShellEnvError> {
    let from_env = env_value
        .map(OsStr::to_string_lossy)
        .filter(|value| !value.trim().is_empty());
    let home_dir = || home.map(Path::to_path_buf).ok_or(ShellEnvError::NoHome);
    let Some(selected) = configured
        .map(str::to_owned)
        .or(from_env.map(std::borrow::Cow::into_owned))
    else {
        return Ok(normalize(&home_dir()?.join(".dsh")));
    };
    let expanded = if selected == "~" {
        home_dir()?
    } else if let Some(rest) = selected
        .strip_prefix("~/")
        .or_else(|| selected.strip_prefix("~\\"))
    {
        home_dir()?.join(rest)
    } else {
        PathBuf::from(selected)
    };
    Ok(normalize(&cwd.join(expanded)))
}

/// Resolves `.` and `..` lexically (never above the root) and drops trailing separators.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                if out.parent().is_some() {
                    out.pop();
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(configured: Option<&str>, env: Option<&str>) -> PathBuf {
        resolve_dsh_home(
            configured,
            env.map(OsStr::new),
            Some(Path::new("/home/me")),
            Path::new("/work/project"),
        )
        .unwrap()
    }

    #[test]
    fn config_then_env_then_default() {
        assert_eq!(
            resolve(Some("/srv/dsh"), Some("/env")),
            PathBuf::from("/srv/dsh")
        );
        assert_eq!(resolve(None, Some("/env/dsh/")), PathBuf::from("/env/dsh"));
        assert_eq!(resolve(None, Some("  ")), PathBuf::from("/home/me/.dsh"));
        assert_eq!(resolve(None, None), PathBuf::from("/home/me/.dsh"));
    }

    #[test]
    fn expands_tilde_and_resolves_relative_paths() {
        assert_eq!(resolve(Some("~"), None), PathBuf::from("/home/me"));
        assert_eq!(resolve(Some("~/x/../y"), None), PathBuf::from("/home/me/y"));
        assert_eq!(resolve(Some("~\\z"), None), PathBuf::from("/home/me/z"));
        assert_eq!(
            resolve(Some("./test-dsh-home"), None),
            PathBuf::from("/work/project/test-dsh-home")
        );
        assert_eq!(resolve(None, Some("../a/./b")), PathBuf::from("/work/a/b"));
        assert_eq!(resolve(Some("/../../x"), None), PathBuf::from("/x"));
        assert_eq!(
            resolve(Some("~user"), None),
            PathBuf::from("/work/project/~user")
        );
    }

    #[test]
    fn no_home_is_an_error_only_when_needed() {
        let cwd = Path::new("/w");
        assert_eq!(
            resolve_dsh_home(None, None, None, cwd).unwrap_err(),
            ShellEnvError::NoHome
        );
        assert_eq!(
            resolve_dsh_home(Some("rel"), None, None, cwd).unwrap(),
            PathBuf::from("/w/rel")
        );
    }
}
