//! Composing the message a step enters with: the baseline when none compatible is visible,
//! followed by the updates reconciliation finds, as one `user/message` whose text blocks are
//! the baseline's and the update batch's `<system-reminder>`s.

use std::collections::HashSet;

use dsh_protocol::Message;
use dsh_session::LiveSession;

use crate::baseline::{baseline_state, load_baseline_set};
use crate::config::ResolvedConfig;
use crate::discover::{Aborted, Probe, find_project_root};
use crate::source::{Action, Change, VisibleState, instructions_message};
use crate::state::{Caches, Preparation};
use crate::updates::{Reconcile, apply_version_updates, reconcile};

/// What a composition needs besides the provider.
pub(crate) struct ComposeInput<'a> {
    pub(crate) config: &'a ResolvedConfig,
    pub(crate) session: &'a LiveSession,
    /// The session's working directory.
    pub(crate) cwd: &'a str,
    /// The messages the step claimed (they count as visible).
    pub(crate) claimed: &'a [Message],
    /// Files touched since the last entered step.
    pub(crate) touched: &'a [String],
}

/// Composes the step's instructions message, updating `caches` (a working copy the caller
/// keeps only when the step enters). `None` when there is nothing to add.
pub(crate) fn compose(
    probe: &Probe<'_>,
    input: &ComposeInput<'_>,
    caches: &mut Caches,
) -> Result<Option<Message>, Aborted> {
    let config = input.config;
    if config.max_bytes.limit().is_none() {
        return Ok(None);
    }
    let project_root = find_project_root(probe, input.cwd, &config.project_root_markers)?;
    let identity = config.baseline_identity(input.cwd, &project_root);
    let visible = VisibleState::read(input.session, input.claimed);
    let visible_baseline = visible.baseline;
    let mut visible_changes = visible.changes;
    let keep_visible = visible_baseline
        .as_ref()
        .is_some_and(|baseline| baseline.baseline_identity.as_deref() == Some(identity.as_str()));
    let mut excluded: Option<HashSet<String>> = caches
        .preparation
        .as_ref()
        .filter(|prepared| keep_visible && prepared.identity == identity)
        .map(|prepared| prepared.excluded.clone());
    let mut texts: Vec<String> = Vec::new();
    let mut changes: Vec<Change> = Vec::new();
    let mut baseline_entered = false;
    let mut preparation = None;
    if !keep_visible || excluded.is_none() {
        let replace_previous = visible_baseline.is_some() && !keep_visible;
        let set = load_baseline_set(probe, config, input.cwd, &project_root, replace_previous)?;
        let included = baseline_state(set.as_ref().map_or(&[], |set| &set.included));
        let observed = baseline_state(set.as_ref().map_or(&[], |set| &set.observed));
        let left_out: HashSet<String> = observed
            .changes
            .keys()
            .filter(|scope| !included.changes.contains_key(scope))
            .map(str::to_owned)
            .collect();
        excluded = Some(left_out.clone());
        preparation = Some(Preparation {
            identity: identity.clone(),
            excluded: left_out,
        });
        caches.versions.extend(included.versions);
        if let Some(set) = set.filter(|set| !keep_visible && !set.rendered.text.is_empty()) {
            let mut baseline_changes: Vec<Change> = Vec::new();
            if replace_previous && let Some(previous) = &visible_baseline {
                baseline_changes.extend(
                    previous
                        .changes
                        .iter()
                        .filter(|change| {
                            change.is_active() && !included.changes.contains_key(&change.scope)
                        })
                        .map(|change| Change {
                            action: Action::Remove,
                            scope: change.scope.clone(),
                            path: change.path.clone(),
                            digest: None,
                        }),
                );
            }
            baseline_changes.extend(included.changes.values().cloned());
            // The baseline counts as visible for the reconciliation that follows it.
            for change in &baseline_changes {
                visible_changes.insert(change.scope.clone(), change.clone());
            }
            texts.push(set.rendered.text);
            changes.extend(baseline_changes);
            baseline_entered = true;
        }
    }
    let update = reconcile(
        probe,
        config,
        &mut caches.versions,
        &Reconcile {
            visible: &visible_changes,
            touched: input.touched,
            include_baseline_scopes: keep_visible,
            excluded_baseline_scopes: if keep_visible {
                excluded.as_ref()
            } else {
                None
            },
            project_root: &project_root,
            cwd: input.cwd,
        },
    )?;
    if let Some(update) = update {
        texts.push(update.text);
        changes.extend(update.changes);
        apply_version_updates(&mut caches.versions, &update.version_updates);
    }
    if preparation.is_some() {
        caches.preparation = preparation;
    }
    if texts.is_empty() {
        return Ok(None);
    }
    let identity = baseline_entered.then_some(identity.as_str());
    Ok(Some(instructions_message(texts, identity, &changes)))
}
