//! The baseline: every instruction file from the user-global one down to the cwd, read,
//! deduplicated, rendered within the budget, with the changes and versions it stands for.

use dsh_fs::FileSystem;
use dsh_tools::CancellationToken;

use crate::config::ResolvedConfig;
use crate::digest::{content_sha1, trimmed_sha1};
use crate::discover::{
    Aborted, LoadedInstructionFile, Probe, dedup_by_directory, discover, find_project_root, load,
};
use crate::ordered::OrderedMap;
use crate::render::{RenderedWorkspaceContext, render_baseline};
use crate::source::{Action, Change, instruction_scope_key};
use crate::state::VersionState;

/// A rendered baseline with the files behind it.
#[derive(Debug, Clone)]
pub(crate) struct BaselineSet {
    pub(crate) rendered: RenderedWorkspaceContext,
    /// Every file read, before duplicates and the budget.
    pub(crate) observed: Vec<LoadedInstructionFile>,
    /// The files whose text the rendering carries.
    pub(crate) included: Vec<LoadedInstructionFile>,
}

/// Discovers, reads and renders the baseline of `cwd` under `project_root`. `None` when the
/// budget disables the plugin, or when no file exists and no visible baseline needs
/// replacing.
pub(crate) fn load_baseline_set(
    probe: &Probe<'_>,
    config: &ResolvedConfig,
    cwd: &str,
    project_root: &str,
    replace_previous: bool,
) -> Result<Option<BaselineSet>, Aborted> {
    if config.max_bytes.limit().is_none() {
        return Ok(None);
    }
    let discovered = discover(probe, config, cwd, project_root)?;
    let observed = load(probe, discovered, config.max_source_bytes)?;
    let deduped = dedup_by_directory(observed.clone());
    if deduped.is_empty() && !replace_previous {
        return Ok(None);
    }
    let (rendered, included) = render_baseline(&deduped, &config.max_bytes, replace_previous);
    Ok(Some(BaselineSet {
        rendered,
        observed,
        included,
    }))
}

/// The `set` change of every file, by scope, and the versions to cache for them.
pub(crate) struct BaselineState {
    pub(crate) changes: OrderedMap<Change>,
    pub(crate) versions: Vec<(String, VersionState)>,
}

/// The state `files` leave once rendered: a `set` with the SHA-1 of the whole text per scope.
pub(crate) fn baseline_state(files: &[LoadedInstructionFile]) -> BaselineState {
    let mut changes = OrderedMap::default();
    let mut versions = Vec::new();
    for file in files {
        let digest = content_sha1(&file.content);
        let scope = instruction_scope_key(&file.display_path);
        if let Some(version) = &file.version {
            versions.push((
                scope.clone(),
                VersionState {
                    path: file.display_path.clone(),
                    version: version.clone(),
                    digest: digest.clone(),
                    trimmed_digest: trimmed_sha1(&file.content),
                },
            ));
        }
        changes.insert(
            scope.clone(),
            Change {
                action: Action::Set,
                scope,
                path: file.display_path.clone(),
                digest: Some(digest),
            },
        );
    }
    BaselineState { changes, versions }
}

/// The baseline a session in `cwd` would get now, read through `fs` (blocking): the project
/// root found from `cwd`, every instruction file down to `cwd`, rendered within the budget.
/// `None` when the budget disables the plugin or no file exists.
pub fn load_baseline_instructions(
    fs: &dyn FileSystem,
    config: &ResolvedConfig,
    cwd: &str,
) -> Option<RenderedWorkspaceContext> {
    let signal = CancellationToken::new();
    let probe = Probe {
        fs,
        signal: &signal,
    };
    let project_root = find_project_root(&probe, cwd, &config.project_root_markers).ok()?;
    load_baseline_set(&probe, config, cwd, &project_root, false)
        .ok()
        .flatten()
        .map(|set| set.rendered)
}
