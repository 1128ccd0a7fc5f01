//! `view`: a file with line numbers (optionally a range of its lines), or a directory
//! listing.

use dsh_fs::{FsErrorCode, FsKind, FsObservation, quoted};
use dsh_tools::ToolError;

use crate::args::{Command, EditorArgs};
use crate::clip::clip;
use crate::error::{from_fs, fs_failure};
use crate::js::js_number;
use crate::listing::list_directory;
use crate::seam::Seam;

/// Runs `view`. A file view records the file as present (at the version of its stat) once
/// read, before its range is checked; a directory view records nothing.
pub(crate) async fn view(seam: &Seam, args: &EditorArgs, max: usize) -> Result<String, ToolError> {
    let target = seam.resolve(&args.path).await?;
    let info = seam.stat_existing(&target, Command::View).await?;
    match info.kind {
        FsKind::Directory => {
            if args.view_range.is_some() {
                return Err(ToolError::new(
                    "The `view_range` parameter is not allowed when `path` points to a directory.",
                ));
            }
            let root = target.clone();
            seam.blocking("list", move |fs, signal| {
                list_directory(fs, signal, &root, max)
            })
            .await
            .map_err(|error| from_fs(&error))
        }
        FsKind::Other => Err(fs_failure(
            FsErrorCode::NotRegularFile,
            format!(
                "cannot view {}: not a regular file or directory",
                quoted(&target.display_path)
            ),
        )),
        FsKind::File => {
            let content = seam.read_text(&target).await?;
            seam.observe(&target, FsObservation::Present(info.version))?;
            format_file_view(
                &target.display_path,
                &content,
                args.view_range.as_deref(),
                max,
            )
        }
    }
}

/// dsh's `formatFileView`: the header, then each line as its number right-aligned in six
/// columns, two spaces and the line, then a final newline; the whole clipped to `max`.
///
/// Lines are what `split('\n')` gives, so a trailing newline adds an empty last line and an
/// empty file has one line. `range` is `[first, last]`, 1-based, `last = -1` meaning the end.
pub(crate) fn format_file_view(
    path: &str,
    content: &str,
    range: Option<&[f64]>,
    max: usize,
) -> Result<String, ToolError> {
    let lines: Vec<&str> = content.split('\n').collect();
    let total = lines.len();
    let mut header = format!(
        "Here's the content of {path} with line numbers (which has a total of {total} lines)"
    );
    let (first, shown) = match range {
        None => (1, lines.as_slice()),
        Some(range) => {
            let (first, last) = check_range(range, total)?;
            header.push_str(&format!(
                " with view_range=[{}, {}]",
                js_number(first as f64),
                js_number(last)
            ));
            let end = if last == -1.0 { total } else { last as usize };
            (first, lines.get(first - 1..end).unwrap_or_default())
        }
    };
    let numbered = shown
        .iter()
        .enumerate()
        .map(|(index, line)| format!("{:>6}  {line}", first + index))
        .collect::<Vec<_>>()
        .join("\n");
    Ok(clip(&format!("{header}:\n{numbered}\n"), max))
}

/// Checks a view range against a file of `total` lines, with dsh's texts and in dsh's
/// order; gives the first line (1-based, within the file) and the last (`-1` or within
/// `first..=total`).
fn check_range(range: &[f64], total: usize) -> Result<(usize, f64), ToolError> {
    let (Some(&first), Some(&last), 2) = (range.first(), range.get(1), range.len()) else {
        return Err(invalid_list());
    };
    if range.iter().any(|value| value.fract() != 0.0) {
        return Err(invalid_list());
    }
    let shown = format!("[{}, {}]", js_number(first), js_number(last));
    let total_f = total as f64;
    if first < 1.0 || first > total_f {
        return Err(ToolError::new(format!(
            "Invalid `view_range`: {shown}. Its first element `{}` should be within the range of \
             lines of the file: [1, {total}]",
            js_number(first)
        )));
    }
    if last > total_f {
        return Err(ToolError::new(format!(
            "Invalid `view_range`: {shown}. Its second element `{}` should be smaller than the \
             number of lines in the file: `{total}`",
            js_number(last)
        )));
    }
    if last != -1.0 && last < first {
        return Err(ToolError::new(format!(
            "Invalid `view_range`: {shown}. Its second element `{}` should be larger or equal \
             than its first `{}`",
            js_number(last),
            js_number(first)
        )));
    }
    // `first` is a whole number in 1..=total here.
    Ok((first as usize, last))
}

fn invalid_list() -> ToolError {
    ToolError::new("Invalid `view_range`. It should be a list of two integers.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(content: &str, range: Option<&[f64]>) -> Result<String, String> {
        format_file_view("/r/sample.txt", content, range, 16_000)
            .map_err(|error| error.message().to_owned())
    }

    #[test]
    fn dshs_canonical_range_view() {
        assert_eq!(
            view("one\ntwo\nthree\n", Some(&[2.0, -1.0])).unwrap(),
            "Here's the content of /r/sample.txt with line numbers (which has a total of 4 \
             lines) with view_range=[2, -1]:\n     2  two\n     3  three\n     4  \n"
        );
        assert_eq!(
            view("", None).unwrap(),
            "Here's the content of /r/sample.txt with line numbers (which has a total of 1 \
             lines):\n     1  \n"
        );
        assert!(
            view("a\nb\nc", Some(&[2.0, 2.0]))
                .unwrap()
                .ends_with(":\n     2  b\n")
        );
    }

    #[test]
    fn range_errors_in_dshs_order() {
        let three = "one\ntwo\nthree";
        let list = "Invalid `view_range`. It should be a list of two integers.";
        assert_eq!(view(three, Some(&[1.0])).unwrap_err(), list);
        assert_eq!(view(three, Some(&[1.0, 2.0, 3.0])).unwrap_err(), list);
        assert_eq!(view(three, Some(&[1.5, 2.0])).unwrap_err(), list);
        assert_eq!(
            view(three, Some(&[0.0, 1.0])).unwrap_err(),
            "Invalid `view_range`: [0, 1]. Its first element `0` should be within the range of \
             lines of the file: [1, 3]"
        );
        assert_eq!(
            view(three, Some(&[1.0, 99.0])).unwrap_err(),
            "Invalid `view_range`: [1, 99]. Its second element `99` should be smaller than the \
             number of lines in the file: `3`"
        );
        assert_eq!(
            view(three, Some(&[2.0, 1.0])).unwrap_err(),
            "Invalid `view_range`: [2, 1]. Its second element `1` should be larger or equal \
             than its first `2`"
        );
        assert_eq!(
            view(three, Some(&[2.0, -2.0])).unwrap_err(),
            "Invalid `view_range`: [2, -2]. Its second element `-2` should be larger or equal \
             than its first `2`"
        );
    }

    #[test]
    fn the_whole_view_is_clipped() {
        let text = format_file_view("/f", &"x".repeat(100), None, 10).unwrap();
        assert!(text.starts_with("Here's the"));
        assert!(text.ends_with(crate::clip::CLIPPED_MARKER));
        assert_eq!(text.len(), 10 + crate::clip::CLIPPED_MARKER.len());
    }
}
