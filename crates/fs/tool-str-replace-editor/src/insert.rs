//! `insert`: text inserted after a line, with no newline added.

use dsh_fs::{FsErrorCode, FsKind, FsObservation, FsWriteIntent, quoted};
use dsh_tools::{ToolError, ToolRunContext};

use crate::args::{Command, EditorArgs, required_for_command};
use crate::error::fs_failure;
use crate::js::js_number;
use crate::policy::MutationPolicy;
use crate::seam::Seam;

/// Runs `insert`, in dsh's order: `insert_line` and `new_str`, the policy, the path,
/// `fs/edit-intent`, the stat, the read, the line check. The file's lines are what
/// `split('\n')` gives; `new_str`'s lines go between line `insert_line` and the next.
pub(crate) async fn insert(
    seam: &Seam,
    policy: &MutationPolicy,
    args: &EditorArgs,
    run: &ToolRunContext,
) -> Result<String, ToolError> {
    let Some(line) = args.insert_line else {
        return Err(ToolError::new(
            "Parameter `insert_line` is required for command: insert",
        ));
    };
    let value = required_for_command(args.new_str.as_deref(), "new_str", Command::Insert, true)?;
    let sandbox = policy.resolve(run);
    let target = seam.resolve(&args.path).await?;
    let intent = seam.edit_intent(&target).await?;
    let info = seam.stat_existing(&target, Command::Insert).await?;
    let display = &target.display_path;
    if info.kind != FsKind::File {
        return Err(fs_failure(
            FsErrorCode::NotRegularFile,
            format!("cannot insert into {}: not a regular file", quoted(display)),
        ));
    }
    let before = seam.read_text(&target).await?;
    let after = insert_lines(&before, line, value)?;
    let expected = FsWriteIntent::ReplaceIfVersion(intent.unwrap_or(info.version));
    let outcome = seam
        .write_text(&target, after, Some(expected), sandbox.clone())
        .await
        .map_err(|error| MutationPolicy::map_error(error, sandbox.as_ref()))?;
    seam.observe(&target, FsObservation::Present(outcome.version))?;
    Ok(format!("The file {display} has been edited successfully."))
}

/// `content` with `value`'s lines after line `line` (0: before the first), or dsh's
/// range error when `line` is not a whole number in `0..=lines`.
pub(crate) fn insert_lines(content: &str, line: f64, value: &str) -> Result<String, ToolError> {
    let lines: Vec<&str> = content.split('\n').collect();
    let total = lines.len();
    if line.fract() != 0.0 || line < 0.0 || line > total as f64 {
        return Err(ToolError::new(format!(
            "Invalid `insert_line` parameter: {}. It should be within the range of lines of the \
             file: [0, {total}]",
            js_number(line)
        )));
    }
    // A whole number in 0..=total here.
    let at = line as usize;
    let (head, tail) = lines.split_at(at.min(total));
    Ok(head
        .iter()
        .copied()
        .chain(value.split('\n'))
        .chain(tail.iter().copied())
        .collect::<Vec<_>>()
        .join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_newline_is_added() {
        assert_eq!(insert_lines("one\n", 2.0, "three").unwrap(), "one\n\nthree");
        assert_eq!(
            insert_lines("one\ntwo", 2.0, "three").unwrap(),
            "one\ntwo\nthree"
        );
        assert_eq!(insert_lines("a\nb", 0.0, "x\ny").unwrap(), "x\ny\na\nb");
        assert_eq!(insert_lines("", 0.0, "").unwrap(), "\n");
        assert_eq!(
            insert_lines("one\n\nthree\n", 1.0, "between").unwrap(),
            "one\nbetween\n\nthree\n"
        );
    }

    #[test]
    fn the_line_must_be_in_range() {
        let message = |line| {
            insert_lines("same same", line, "x")
                .unwrap_err()
                .message()
                .to_owned()
        };
        assert_eq!(
            message(-1.0),
            "Invalid `insert_line` parameter: -1. It should be within the range of lines of the \
             file: [0, 1]"
        );
        assert_eq!(
            message(1.5),
            "Invalid `insert_line` parameter: 1.5. It should be within the range of lines of the \
             file: [0, 1]"
        );
        assert!(message(99.0).starts_with("Invalid `insert_line` parameter: 99."));
    }
}
