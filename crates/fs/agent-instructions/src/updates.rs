//! Updates after the baseline: compare what the model sees (the latest visible change of each
//! scope) with what the provider has now, for the baseline's scopes, the scopes already
//! visible, and the directories between the cwd and each touched file, and render the
//! differences: new files (`set`), changed ones (`replace`), removed ones (`remove`).

use std::collections::{HashMap, HashSet};

use crate::config::ResolvedConfig;
use crate::digest::{content_sha1, trimmed_sha1};
use crate::discover::{
    Aborted, LoadedInstructionFile, Probe, ScopeProbe, ancestor_chain, descendant_dirs_between,
    probe_scope, read_scope,
};
use crate::ordered::{OrderedMap, OrderedSet};
use crate::paths;
use crate::render::{ChangeItem, USER_GLOBAL_FILE, render_changes};
use crate::source::{Action, Change, USER_GLOBAL_DIRECTORY, candidate_scope_key, decode_scope_key};
use crate::state::VersionState;

/// What one reconciliation looks at.
pub(crate) struct Reconcile<'a> {
    /// The latest visible change of each scope (history and authority messages).
    pub(crate) visible: &'a OrderedMap<Change>,
    /// Touched file paths (relative to the cwd unless absolute).
    pub(crate) touched: &'a [String],
    /// Probe the baseline's scopes too (a compatible baseline is visible).
    pub(crate) include_baseline_scopes: bool,
    /// Baseline scopes that were read but left out of it; they are never added back.
    pub(crate) excluded_baseline_scopes: Option<&'a HashSet<String>>,
    pub(crate) project_root: &'a str,
    pub(crate) cwd: &'a str,
}

/// A cache change that goes with a rendered change (`None` forgets the scope).
#[derive(Debug, Clone)]
pub(crate) struct VersionUpdate {
    pub(crate) change: Change,
    pub(crate) state: Option<VersionState>,
}

/// A rendered update batch.
#[derive(Debug, Clone)]
pub(crate) struct Reconciled {
    pub(crate) text: String,
    pub(crate) changes: Vec<Change>,
    pub(crate) version_updates: Vec<VersionUpdate>,
}

/// Applies the cache changes of rendered changes.
pub(crate) fn apply_version_updates(
    versions: &mut HashMap<String, VersionState>,
    updates: &[VersionUpdate],
) {
    for update in updates {
        match &update.state {
            None => versions.remove(&update.change.scope),
            Some(state) => versions.insert(update.change.scope.clone(), state.clone()),
        };
    }
}

fn add_dir_scopes(target: &mut OrderedSet, config: &ResolvedConfig, directory: &str) {
    let candidates = config
        .instruction_file_candidates
        .iter()
        .chain(&config.local_instruction_file_candidates);
    for candidate in candidates {
        target.insert(candidate_scope_key(directory, candidate));
    }
}

fn relative_scope(project_root: &str, dir: &str) -> String {
    let scope = paths::relative(project_root, dir);
    if scope.is_empty() {
        ".".to_owned()
    } else {
        scope
    }
}

/// The transitions of one directory's candidates and the dedup state of one pass.
struct Pass<'a, 'p> {
    probe: &'a Probe<'p>,
    config: &'a ResolvedConfig,
    visible: &'a OrderedMap<Change>,
    project_root: &'a str,
    versions: &'a mut HashMap<String, VersionState>,
    seen_paths: HashSet<String>,
    kept_trimmed: HashMap<String, HashSet<String>>,
    items: Vec<ChangeItem>,
    updates: Vec<VersionUpdate>,
}

impl Pass<'_, '_> {
    fn previous_active(&self, scope: &str) -> Option<&Change> {
        self.visible.get(scope).filter(|change| change.is_active())
    }

    /// Whether `digest` repeats a file kept earlier in `directory` (else it is kept now).
    fn is_duplicate(&mut self, directory: &str, digest: &str) -> bool {
        !self
            .kept_trimmed
            .entry(directory.to_owned())
            .or_default()
            .insert(digest.to_owned())
    }

    fn push_removal(&mut self, scope: &str, path: &str) {
        let change = Change {
            action: Action::Remove,
            scope: scope.to_owned(),
            path: path.to_owned(),
            digest: None,
        };
        self.items.push(ChangeItem {
            change: change.clone(),
            file: LoadedInstructionFile {
                absolute_path: format!("removed:{scope}"),
                display_path: path.to_owned(),
                content: String::new(),
                version: None,
            },
        });
        self.updates.push(VersionUpdate {
            change,
            state: None,
        });
    }

    /// A scope that is gone, or excluded: its visible file is removed, else forgotten.
    fn gone(&mut self, scope: &str) {
        match self
            .previous_active(scope)
            .map(|change| change.path.clone())
        {
            Some(path) => self.push_removal(scope, &path),
            None => {
                self.versions.remove(scope);
            }
        }
    }

    /// Probes the candidates of one directory. When an active one cannot be observed, the
    /// directory keeps its last good state: nothing of it changes in this pass.
    fn directory(&mut self, directory: &str, scopes: &[String]) -> Result<(), Aborted> {
        let item_start = self.items.len();
        let update_start = self.updates.len();
        let prior: Vec<(String, Option<VersionState>)> = scopes
            .iter()
            .map(|scope| (scope.clone(), self.versions.get(scope).cloned()))
            .collect();
        let mut added_paths: Vec<String> = Vec::new();
        for scope in scopes {
            match probe_scope(self.probe, scope, self.project_root, self.config)? {
                ScopeProbe::Unavailable => {
                    if self.previous_active(scope).is_none() {
                        continue;
                    }
                    self.items.truncate(item_start);
                    self.updates.truncate(update_start);
                    for (candidate, state) in &prior {
                        match state {
                            None => self.versions.remove(candidate),
                            Some(state) => self.versions.insert(candidate.clone(), state.clone()),
                        };
                    }
                    for path in &added_paths {
                        self.seen_paths.remove(path);
                    }
                    self.kept_trimmed.remove(directory);
                    break;
                }
                ScopeProbe::Absent => self.gone(scope),
                ScopeProbe::Present(file) => {
                    if !self.seen_paths.insert(file.absolute_path.clone()) {
                        continue;
                    }
                    added_paths.push(file.absolute_path.clone());
                    let previous = self.previous_active(scope).cloned();
                    let cached = self.versions.get(scope).cloned();
                    if let (Some(cached), Some(previous)) = (&cached, &previous)
                        && cached.path == file.display_path
                        && cached.version == file.version
                        && previous.path == cached.path
                        && previous.digest.as_deref() == Some(cached.digest.as_str())
                    {
                        // Unchanged and already shown; it only goes when an earlier sibling
                        // now has the same text.
                        if self.is_duplicate(directory, &cached.trimmed_digest) {
                            self.push_removal(scope, &previous.path);
                        }
                        continue;
                    }
                    let Some(loaded) = read_scope(self.probe, &file, self.config.max_source_bytes)?
                    else {
                        continue;
                    };
                    let digest = content_sha1(&loaded.content);
                    let trimmed_digest = trimmed_sha1(&loaded.content);
                    if self.is_duplicate(directory, &trimmed_digest) {
                        match &previous {
                            Some(previous) => self.push_removal(scope, &previous.path),
                            None => {
                                self.versions.remove(scope);
                            }
                        }
                        continue;
                    }
                    let next = VersionState {
                        path: loaded.display_path.clone(),
                        version: file.version.clone(),
                        digest: digest.clone(),
                        trimmed_digest,
                    };
                    if let Some(previous) = &previous
                        && previous.path == loaded.display_path
                        && previous.digest.as_deref() == Some(digest.as_str())
                    {
                        self.versions.insert(scope.clone(), next);
                        continue;
                    }
                    let change = Change {
                        action: if previous.is_some() {
                            Action::Replace
                        } else {
                            Action::Set
                        },
                        scope: scope.clone(),
                        path: loaded.display_path.clone(),
                        digest: Some(digest),
                    };
                    self.items.push(ChangeItem {
                        change: change.clone(),
                        file: loaded,
                    });
                    self.updates.push(VersionUpdate {
                        change,
                        state: Some(next),
                    });
                }
            }
        }
        Ok(())
    }
}

/// The scopes a reconciliation probes, in order, and the baseline's own scopes.
fn scopes_to_probe(config: &ResolvedConfig, options: &Reconcile<'_>) -> (OrderedSet, OrderedSet) {
    let mut baseline = OrderedSet::default();
    baseline.insert(candidate_scope_key(USER_GLOBAL_DIRECTORY, USER_GLOBAL_FILE));
    for dir in ancestor_chain(options.project_root, options.cwd) {
        add_dir_scopes(
            &mut baseline,
            config,
            &relative_scope(options.project_root, &dir),
        );
    }
    let mut scopes = OrderedSet::default();
    if options.include_baseline_scopes {
        for scope in baseline.iter() {
            scopes.insert(scope.to_owned());
        }
    }
    for scope in options.visible.keys() {
        if !options.include_baseline_scopes && baseline.contains(scope) {
            continue;
        }
        let (directory, _) = decode_scope_key(scope);
        if directory == USER_GLOBAL_DIRECTORY {
            scopes.insert(candidate_scope_key(USER_GLOBAL_DIRECTORY, USER_GLOBAL_FILE));
        } else {
            add_dir_scopes(&mut scopes, config, directory);
        }
    }
    for touched in options.touched {
        for dir in descendant_dirs_between(options.cwd, touched) {
            add_dir_scopes(
                &mut scopes,
                config,
                &relative_scope(options.project_root, &dir),
            );
        }
    }
    (scopes, baseline)
}

/// Compares the visible state with the provider and renders the transitions that fit the
/// budget; `None` when nothing changed (or nothing of a change fits). `versions` is updated
/// for files found unchanged; the returned updates are for the rendered changes.
pub(crate) fn reconcile(
    probe: &Probe<'_>,
    config: &ResolvedConfig,
    versions: &mut HashMap<String, VersionState>,
    options: &Reconcile<'_>,
) -> Result<Option<Reconciled>, Aborted> {
    let (scopes, baseline_scopes) = scopes_to_probe(config, options);
    let mut by_directory: OrderedMap<Vec<String>> = OrderedMap::default();
    for scope in scopes.iter() {
        let (directory, _) = decode_scope_key(scope);
        let mut list = by_directory.get(directory).cloned().unwrap_or_default();
        list.push(scope.to_owned());
        by_directory.insert(directory.to_owned(), list);
    }
    let mut pass = Pass {
        probe,
        config,
        visible: options.visible,
        project_root: options.project_root,
        versions,
        seen_paths: HashSet::new(),
        kept_trimmed: HashMap::new(),
        items: Vec::new(),
        updates: Vec::new(),
    };
    for (directory, directory_scopes) in by_directory.iter() {
        let mut probed = Vec::new();
        for scope in directory_scopes {
            let excluded = options
                .excluded_baseline_scopes
                .is_some_and(|excluded| excluded.contains(scope));
            if excluded && baseline_scopes.contains(scope) {
                pass.gone(scope);
            } else {
                probed.push(scope.clone());
            }
        }
        pass.directory(directory, &probed)?;
    }
    if pass.items.is_empty() {
        return Ok(None);
    }
    let (text, changes) = render_changes(&pass.items, &config.max_bytes);
    if text.is_empty() || changes.is_empty() {
        return Ok(None);
    }
    let version_updates = pass
        .updates
        .into_iter()
        .filter(|update| changes.contains(&update.change))
        .collect();
    Ok(Some(Reconciled {
        text,
        changes,
        version_updates,
    }))
}

#[cfg(test)]
mod tests;
