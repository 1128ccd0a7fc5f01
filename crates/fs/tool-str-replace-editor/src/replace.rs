//! `str_replace`: one unique, literal occurrence replaced in the file as stored.

use dsh_fs::{FsErrorCode, FsKind, FsObservation, FsWriteIntent, quoted};
use dsh_tools::{ToolError, ToolRunContext};

use crate::args::{Command, EditorArgs, required_for_command};
use crate::error::fs_failure;
use crate::policy::MutationPolicy;
use crate::seam::Seam;

/// Runs `str_replace`, in dsh's order: the policy, the path, `fs/edit-intent` (which may
/// refuse before the arguments are checked), `old_str`, the stat, the read. The text is
/// matched raw (no line-ending normalization) and replaced literally; the write expects the
/// version the edit intent gave, else the stat's.
pub(crate) async fn str_replace(
    seam: &Seam,
    policy: &MutationPolicy,
    args: &EditorArgs,
    run: &ToolRunContext,
) -> Result<String, ToolError> {
    let sandbox = policy.resolve(run);
    let target = seam.resolve(&args.path).await?;
    let intent = seam.edit_intent(&target).await?;
    let old = required_for_command(
        args.old_str.as_deref(),
        "old_str",
        Command::StrReplace,
        false,
    )?;
    let new = args.new_str.as_deref().unwrap_or_default();
    let info = seam.stat_existing(&target, Command::StrReplace).await?;
    let display = &target.display_path;
    if info.kind != FsKind::File {
        return Err(fs_failure(
            FsErrorCode::NotRegularFile,
            format!("cannot edit {}: not a regular file", quoted(display)),
        ));
    }
    let before = seam.read_text(&target).await?;
    let offsets: Vec<usize> = before
        .match_indices(old)
        .map(|(offset, _)| offset)
        .collect();
    let Some(&offset) = offsets.first() else {
        return Err(fs_failure(
            FsErrorCode::EditNotFound,
            format!(
                "No replacement was performed, old_str `{old}` did not appear verbatim in {display}."
            ),
        ));
    };
    if offsets.len() > 1 {
        let lines = line_numbers_at(&before, &offsets)
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        return Err(fs_failure(
            FsErrorCode::AmbiguousEdit,
            format!(
                "No replacement was performed. Multiple occurrences of old_str `{old}` in lines \
                 [{lines}]. Please ensure it is unique"
            ),
        ));
    }
    let mut after = String::with_capacity(before.len() - old.len() + new.len());
    after.push_str(before.get(..offset).unwrap_or_default());
    after.push_str(new);
    after.push_str(before.get(offset + old.len()..).unwrap_or_default());
    let expected = FsWriteIntent::ReplaceIfVersion(intent.unwrap_or(info.version));
    let outcome = seam
        .write_text(&target, after, Some(expected), sandbox.clone())
        .await
        .map_err(|error| MutationPolicy::map_error(error, sandbox.as_ref()))?;
    seam.observe(&target, FsObservation::Present(outcome.version))?;
    Ok(format!("The file {display} has been edited successfully."))
}

/// The 1-based line of each of the ascending byte `offsets` in `content`.
fn line_numbers_at(content: &str, offsets: &[usize]) -> Vec<usize> {
    let mut line = 1;
    let mut cursor = 0;
    offsets
        .iter()
        .map(|&offset| {
            let skipped = content.get(cursor..offset).unwrap_or_default();
            line += skipped.bytes().filter(|&byte| byte == b'\n').count();
            cursor = offset;
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn match_lines_are_where_each_match_starts() {
        let text = "alpha\nbeta\nmiddle\nalpha\nbeta";
        let offsets: Vec<usize> = text
            .match_indices("alpha\nbeta")
            .map(|(at, _)| at)
            .collect();
        assert_eq!(line_numbers_at(text, &offsets), [1, 4]);
        assert_eq!(line_numbers_at("same same", &[0, 5]), [1, 1]);
    }
}
