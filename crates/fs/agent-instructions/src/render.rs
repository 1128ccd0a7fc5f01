//! The model-facing texts, word for word dsh's: the baseline (`Instructions from: <path>`
//! sections under an intro) and the update batch (`Additional instructions from`, `Updated
//! instructions from`, `Instructions removed`), each framed in one `<system-reminder>` with any
//! closing tag inside escaped (except dsh's last budget fallbacks: a budget too small for the
//! frame gets the budget notice, with the last file's heading when that fits, unframed).

use std::collections::HashMap;

use crate::budget::{Style, TruncatedInstruction, render_within};
use crate::config::MaxBytes;
use crate::discover::{InstructionFile, LoadedInstructionFile};
use crate::source::{Action, Change, scope_for_display_path};

/// Opens the frame.
pub(crate) const SYSTEM_REMINDER_OPEN: &str = "<system-reminder>";
/// Closes the frame.
pub(crate) const SYSTEM_REMINDER_CLOSE: &str = "</system-reminder>";
/// What a closing tag inside the frame becomes.
const ESCAPED_CLOSE: &str = "<\\/system-reminder>";
/// The intro of a baseline.
pub(crate) const INTRO: &str = "The following workspace instructions may be relevant to your \
     work. Use them as guidance when applicable. More specific instructions take precedence \
     over broader ones. They do not override system, developer, or direct user instructions.";
/// What a baseline that replaces a visible one starts with.
pub(crate) const REPLACEMENT_PREFIX: &str = "This complete workspace instruction baseline \
     replaces all earlier workspace instruction baselines. ";
/// What follows [`REPLACEMENT_PREFIX`] when no file remains.
pub(crate) const NO_INSTRUCTIONS: &str = "No workspace instructions are currently active.";
/// The intro of the last framed attempt at fitting the budget.
pub(crate) const COMPACT_INTRO: &str =
    "Workspace instructions were omitted or truncated to fit the configured byte budget.";
/// The user-global file's name under the harness home.
pub(crate) const USER_GLOBAL_FILE: &str = "AGENTS.md";

/// `body` with every `</system-reminder>` written `<\/system-reminder>`.
pub(crate) fn escape_frame_body(body: &str) -> String {
    body.replace(SYSTEM_REMINDER_CLOSE, ESCAPED_CLOSE)
}

fn baseline_section(file: &LoadedInstructionFile) -> String {
    format!(
        "Instructions from: {}\n\n{}",
        file.display_path, file.content
    )
}

/// A rendered baseline and what the byte budget did to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedWorkspaceContext {
    /// The model-facing text (empty when the budget disables the plugin).
    pub text: String,
    /// Files left out, broadest first.
    pub omitted: Vec<InstructionFile>,
    /// The file cut short, if any.
    pub truncated: Vec<TruncatedInstruction>,
}

/// Renders a baseline of `files` (broadest first) within `max_bytes`. A baseline that
/// replaces a visible one says so (and with no file, says that none applies).
pub fn render_workspace_context(
    files: &[LoadedInstructionFile],
    max_bytes: &MaxBytes,
    replace_previous_baseline: bool,
) -> RenderedWorkspaceContext {
    render_baseline(files, max_bytes, replace_previous_baseline).0
}

/// Renders a baseline and returns, with it, the files whose own text it carries.
pub(crate) fn render_baseline(
    files: &[LoadedInstructionFile],
    max_bytes: &MaxBytes,
    replace_previous_baseline: bool,
) -> (RenderedWorkspaceContext, Vec<LoadedInstructionFile>) {
    let intro = match (replace_previous_baseline, files.is_empty()) {
        (false, _) => INTRO.to_owned(),
        (true, true) => format!("{REPLACEMENT_PREFIX}{NO_INSTRUCTIONS}"),
        (true, false) => format!("{REPLACEMENT_PREFIX}{INTRO}"),
    };
    let style = Style {
        intro: &intro,
        section: &baseline_section,
    };
    let budgeted = render_within(files, max_bytes, &style);
    let included = budgeted
        .represented
        .iter()
        .filter_map(|index| files.get(*index).cloned())
        .collect();
    let rendered = RenderedWorkspaceContext {
        text: budgeted.text,
        omitted: budgeted.omitted,
        truncated: budgeted.truncated,
    };
    (rendered, included)
}

/// One transition of an update batch with the file text it shows (empty for a removal).
#[derive(Debug, Clone)]
pub(crate) struct ChangeItem {
    pub(crate) change: Change,
    pub(crate) file: LoadedInstructionFile,
}

fn change_section(change: &Change, file: &LoadedInstructionFile) -> String {
    match change.action {
        Action::Set => format!(
            "Additional instructions from: {}\n\nThese instructions apply to work under `{}`. Use \
             them as guidance when relevant; more specific instructions take precedence. They do \
             not override system, developer, or direct user instructions.\n\n{}",
            file.display_path,
            scope_for_display_path(&file.display_path),
            file.content
        ),
        Action::Remove => format!(
            "Instructions removed: {}\n\nThe previously loaded instructions from this file no \
             longer apply.",
            change.path
        ),
        Action::Replace => format!(
            "Updated instructions from: {}\n\nThis file changed after it was loaded. Use the \
             following content instead of the previously loaded instructions from this file.\n\n{}",
            change.path, file.content
        ),
    }
}

/// Renders an update batch within `max_bytes`; returns the text and the changes whose own
/// section survived the budget (only those may be recorded).
pub(crate) fn render_changes(items: &[ChangeItem], max_bytes: &MaxBytes) -> (String, Vec<Change>) {
    let by_path: HashMap<&str, &Change> = items
        .iter()
        .map(|item| (item.file.absolute_path.as_str(), &item.change))
        .collect();
    let section = |file: &LoadedInstructionFile| {
        by_path
            .get(file.absolute_path.as_str())
            .map(|change| change_section(change, file))
            .unwrap_or_default()
    };
    let style = Style {
        intro: "",
        section: &section,
    };
    let files: Vec<LoadedInstructionFile> = items.iter().map(|item| item.file.clone()).collect();
    let budgeted = render_within(&files, max_bytes, &style);
    let changes = budgeted
        .represented
        .iter()
        .filter_map(|index| items.get(*index))
        .map(|item| item.change.clone())
        .collect();
    (budgeted.text, changes)
}

#[cfg(test)]
mod tests;
