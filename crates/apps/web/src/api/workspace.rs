//! Which directories a web session may work in. A model's commands may write anywhere in
//! their workspace, so the API refuses one that is the filesystem root, holds the user's
//! home directory, or holds the dsh home (`$DSH_HOME`: its patches and profiles decide what
//! the next launch runs); and one inside the dsh home, which the sandbox keeps read-only.
//! Paths are compared canonicalized, so `..` and links do not slip by.

use std::path::{Component, Path, PathBuf};

use axum::extract::{Path as UrlPath, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use dsh_persistence::SESSION_PERSISTENCE;
use dsh_shell_env::{SHELL_ENV, resolve_dsh_home};

use super::Api;
use super::error::ApiError;

/// What to do instead, shared by every refusal.
const START_ELSEWHERE: &str = "start the session in a project directory (pass cwd, or run dsh \
     web from one)";

/// The directories a workspace must not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Guarded {
    /// The user's home directory, canonicalized when it exists.
    pub(crate) home: Option<PathBuf>,
    /// `$DSH_HOME`, canonicalized when it exists.
    pub(crate) dsh_home: Option<PathBuf>,
}

impl Guarded {
    /// The home directories of this process; the dsh home as the `shellEnv` service has it,
    /// else resolved as it would (`$DSH_HOME`, else `~/.dsh`).
    pub(crate) fn of(api: &Api) -> Self {
        let home = std::env::home_dir().filter(|home| home.is_absolute());
        let dsh_home = match api.ctx.get(&SHELL_ENV) {
            Some(env) => Some(PathBuf::from(env.dsh_home())),
            None => std::env::current_dir().ok().and_then(|cwd| {
                resolve_dsh_home(
                    None,
                    std::env::var_os("DSH_HOME").as_deref(),
                    home.as_deref(),
                    &cwd,
                )
                .ok()
            }),
        };
        Self {
            home: home.as_deref().map(settled),
            dsh_home: dsh_home.as_deref().map(settled),
        }
    }

    /// Why `workspace` (canonical) may not be one, or `None` when it may.
    pub(crate) fn refusal(&self, workspace: &Path) -> Option<String> {
        let shown = workspace.display();
        if workspace.parent().is_none() {
            return Some(format!(
                "{shown} is the filesystem root, where a model's commands could write anywhere"
            ));
        }
        if let Some(home) = &self.home {
            if home == workspace {
                return Some(format!(
                    "{shown} is your home directory, where a model's commands could change \
                     every file you own"
                ));
            }
            if home.starts_with(workspace) {
                return Some(format!(
                    "{shown} holds your home directory {}, where a model's commands could \
                     change every file you own",
                    home.display()
                ));
            }
        }
        if let Some(dsh_home) = self
            .dsh_home
            .as_ref()
            .filter(|dsh| dsh.starts_with(workspace))
        {
            let what = if dsh_home == workspace {
                format!("{shown} is the dsh home ($DSH_HOME)")
            } else {
                format!(
                    "{shown} holds the dsh home {} ($DSH_HOME)",
                    dsh_home.display()
                )
            };
            return Some(format!(
                "{what}, whose settings and patches decide what the next launch runs"
            ));
        }
        if let Some(dsh_home) = self
            .dsh_home
            .as_ref()
            .filter(|dsh| workspace.starts_with(dsh))
        {
            return Some(format!(
                "{shown} lies inside the dsh home {} ($DSH_HOME), which a model's commands may \
                 never write",
                dsh_home.display()
            ));
        }
        None
    }
}

/// `path` canonicalized when it exists; else, with `.` and `..` resolved lexically, its
/// nearest existing ancestor canonicalized and the rest appended.
fn settled(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    let path = normalized(path);
    let mut rest = Vec::new();
    let mut cursor = path.as_path();
    while let Some(parent) = cursor.parent() {
        if let Some(name) = cursor.file_name() {
            rest.push(name.to_owned());
        }
        if let Ok(real) = parent.canonicalize() {
            return rest.iter().rev().fold(real, |acc, name| acc.join(name));
        }
        cursor = parent;
    }
    path
}

/// Resolves `.` and `..` lexically (never above the root).
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The workspace of a new session: `cwd` (absolute, no NUL, an existing directory) or the
/// server's working directory, canonicalized, and not a guarded one; else a 400 naming it.
pub(crate) fn new_workspace(api: &Api, cwd: Option<String>) -> Result<String, ApiError> {
    let given = match cwd {
        Some(cwd) if cwd.contains('\0') => {
            return Err(ApiError::bad_request(format!(
                "cwd must not contain a NUL byte (got {cwd:?})"
            )));
        }
        Some(cwd) if Path::new(&cwd).is_absolute() => PathBuf::from(cwd),
        Some(cwd) => {
            return Err(ApiError::bad_request(format!(
                "cwd must be absolute (got {cwd:?})"
            )));
        }
        None => std::env::current_dir().map_err(|error| {
            ApiError::internal(format!("cannot read the working directory: {error}"))
        })?,
    };
    let shown = given.display();
    let real = given.canonicalize().map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => ApiError::bad_request(format!(
            "cwd {shown} does not exist: create the directory first, or pass an existing one"
        )),
        _ => ApiError::bad_request(format!("cwd {shown} cannot be used: {error}")),
    })?;
    if !real.is_dir() {
        return Err(ApiError::bad_request(format!(
            "cwd {shown} is not a directory: pass the directory to work in"
        )));
    }
    if let Some(reason) = Guarded::of(api).refusal(&real) {
        return Err(ApiError::bad_request(format!(
            "cwd refused: {reason}; {START_ELSEWHERE}"
        )));
    }
    real.into_os_string().into_string().map_err(|path| {
        ApiError::bad_request(format!(
            "cwd {} is not valid UTF-8 once resolved: pass a path in UTF-8",
            Path::new(&path).display()
        ))
    })
}

/// Before `POST /api/sessions/{id}/resume`: a stored session whose workspace is a guarded
/// directory is refused with 400 (a live one, an unknown one, and the rest go on to the
/// route, which answers them).
pub(crate) async fn guard_resume(
    State(api): State<Api>,
    UrlPath(id): UrlPath<String>,
    request: Request,
    next: Next,
) -> Response {
    match stored_workspace_refusal(&api, &id).await {
        Some(refusal) => refusal.into_response(),
        None => next.run(request).await,
    }
}

async fn stored_workspace_refusal(api: &Api, id: &str) -> Option<ApiError> {
    if api.agents.get(id).is_some() {
        return None;
    }
    let persistence = api.ctx.get(&SESSION_PERSISTENCE)?;
    // A listing that fails is left for the resume itself to report.
    let header = persistence
        .list()
        .await
        .ok()?
        .into_iter()
        .find(|header| header.id == id)?;
    // A session stored without a cwd runs in the server's working directory.
    let workspace = match header.cwd {
        Some(cwd) => PathBuf::from(cwd),
        None => std::env::current_dir().ok()?,
    };
    let reason = Guarded::of(api).refusal(&settled(&workspace))?;
    Some(ApiError::bad_request(format!(
        "session \"{id}\" cannot be resumed here: its workspace {reason}; start a new session in \
         a project directory instead"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guarded() -> Guarded {
        Guarded {
            home: Some(PathBuf::from("/home/me")),
            dsh_home: Some(PathBuf::from("/srv/dsh/home")),
        }
    }

    #[test]
    fn the_root_homes_and_their_ancestors_are_refused() {
        let guarded = guarded();
        let refusal = |path: &str| guarded.refusal(Path::new(path));
        assert_eq!(
            refusal("/").as_deref(),
            Some("/ is the filesystem root, where a model's commands could write anywhere")
        );
        assert_eq!(
            refusal("/home/me").as_deref(),
            Some(
                "/home/me is your home directory, where a model's commands could change every \
                 file you own"
            )
        );
        assert!(
            refusal("/home")
                .is_some_and(|reason| reason.starts_with("/home holds your home directory"))
        );
        assert_eq!(
            refusal("/srv/dsh/home").as_deref(),
            Some(
                "/srv/dsh/home is the dsh home ($DSH_HOME), whose settings and patches decide \
                 what the next launch runs"
            )
        );
        assert_eq!(
            refusal("/srv").as_deref(),
            Some(
                "/srv holds the dsh home /srv/dsh/home ($DSH_HOME), whose settings and patches \
                 decide what the next launch runs"
            )
        );
        assert_eq!(
            refusal("/srv/dsh/home/workspace").as_deref(),
            Some(
                "/srv/dsh/home/workspace lies inside the dsh home /srv/dsh/home ($DSH_HOME), \
                 which a model's commands may never write"
            )
        );
        for fine in ["/home/me/project", "/tmp", "/home/mee"] {
            assert_eq!(refusal(fine), None, "{fine}");
        }
    }

    #[test]
    fn paths_that_do_not_exist_settle_on_their_existing_ancestor() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        assert_eq!(
            settled(&dir.path().join("a/../b/c")),
            real.join("b").join("c")
        );
        assert_eq!(
            normalized(Path::new("/x/../../y/./z")),
            PathBuf::from("/y/z")
        );
    }
}
