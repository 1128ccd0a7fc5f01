//! Fitting a rendering into the byte budget, as dsh does: drop the broadest files first
//! (keeping the longest suffix that fits), then truncate the most specific one at a code-point
//! boundary (found by binary search), then retry with the compact intro, and at last send the
//! budget notice alone, itself cut to fit.

use crate::config::MaxBytes;
use crate::discover::{InstructionFile, LoadedInstructionFile};
use crate::render::{
    COMPACT_INTRO, SYSTEM_REMINDER_CLOSE, SYSTEM_REMINDER_OPEN, escape_frame_body,
};

/// How a rendering reads: its intro (empty for none) and the text of one file's section.
pub(crate) struct Style<'a> {
    pub(crate) intro: &'a str,
    pub(crate) section: &'a dyn Fn(&LoadedInstructionFile) -> String,
}

/// A file whose text was cut to fit the budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruncatedInstruction {
    /// Its display path.
    pub display_path: String,
    /// Its UTF-8 length.
    pub original_bytes: usize,
    /// How many of those bytes were kept.
    pub included_bytes: usize,
}

/// A rendering and what the budget did to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Budgeted {
    pub(crate) text: String,
    pub(crate) omitted: Vec<InstructionFile>,
    pub(crate) truncated: Vec<TruncatedInstruction>,
    /// Indices of the files whose own section survived (a truncated file counts when some of
    /// its text, or its heading when it is empty, is there; a notice-only file does not).
    pub(crate) represented: Vec<usize>,
}

/// The longest prefix of `value` within `max_bytes` that ends on a code-point boundary.
pub(crate) fn truncate_utf8(value: &str, max_bytes: usize) -> &str {
    if value.len() <= max_bytes {
        return value;
    }
    let mut end = max_bytes;
    while end > 0 && !value.is_char_boundary(end) {
        end -= 1;
    }
    value.get(..end).unwrap_or_default()
}

/// `Workspace instruction budget <n> bytes: omitted <a>, <b>; truncated <p> from <A> to <B>
/// bytes`, or nothing when the budget changed nothing.
fn marker_text(
    label: &str,
    omitted: &[InstructionFile],
    truncated: &[TruncatedInstruction],
) -> String {
    let mut parts = Vec::new();
    if !omitted.is_empty() {
        let paths: Vec<&str> = omitted
            .iter()
            .map(|file| file.display_path.as_str())
            .collect();
        parts.push(format!("omitted {}", paths.join(", ")));
    }
    if !truncated.is_empty() {
        let items: Vec<String> = truncated
            .iter()
            .map(|item| {
                format!(
                    "{} from {} to {} bytes",
                    item.display_path, item.original_bytes, item.included_bytes
                )
            })
            .collect();
        parts.push(format!("truncated {}", items.join(", ")));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!(
        "Workspace instruction budget {label} bytes: {}",
        parts.join("; ")
    )
}

/// The framed text: the notice, the intro and the sections joined by blank lines, escaped,
/// between `<system-reminder>` lines.
fn build<'f>(
    files: impl IntoIterator<Item = &'f LoadedInstructionFile>,
    label: &str,
    omitted: &[InstructionFile],
    truncated: &[TruncatedInstruction],
    style: &Style<'_>,
) -> String {
    let mut blocks = vec![
        marker_text(label, omitted, truncated),
        style.intro.to_owned(),
    ];
    blocks.extend(files.into_iter().map(|file| (style.section)(file)));
    blocks.retain(|block| !block.is_empty());
    [
        SYSTEM_REMINDER_OPEN,
        &escape_frame_body(&blocks.join("\n\n")),
        SYSTEM_REMINDER_CLOSE,
    ]
    .join("\n")
}

fn with_content(file: &LoadedInstructionFile, max_bytes: usize) -> LoadedInstructionFile {
    LoadedInstructionFile {
        content: truncate_utf8(&file.content, max_bytes).to_owned(),
        ..file.clone()
    }
}

/// The most-specific file cut to the largest prefix whose rendering fits `limit`, found by
/// binary search over its byte length (the empty prefix when nothing fits).
fn truncate_to_fit(
    file: &LoadedInstructionFile,
    limit: usize,
    label: &str,
    omitted: &[InstructionFile],
    style: &Style<'_>,
) -> LoadedInstructionFile {
    let original_bytes = file.content.len();
    let mut low: usize = 0;
    let mut high: usize = original_bytes;
    let mut best = with_content(file, 0);
    while low <= high {
        let mid = low + (high - low) / 2;
        let candidate = with_content(file, mid);
        let truncated = [TruncatedInstruction {
            display_path: file.display_path.clone(),
            original_bytes,
            included_bytes: candidate.content.len(),
        }];
        if build([&candidate], label, omitted, &truncated, style).len() <= limit {
            best = candidate;
            low = mid + 1;
        } else if mid == 0 {
            break;
        } else {
            high = mid - 1;
        }
    }
    best
}

/// Renders `files` (broadest first) in `style` within `max`.
pub(crate) fn render_within(
    files: &[LoadedInstructionFile],
    max: &MaxBytes,
    style: &Style<'_>,
) -> Budgeted {
    let Some(limit) = max.limit() else {
        return Budgeted {
            text: String::new(),
            omitted: files.iter().map(LoadedInstructionFile::file).collect(),
            truncated: Vec::new(),
            represented: Vec::new(),
        };
    };
    let label = max.label();
    let full = build(files, &label, &[], &[], style);
    if full.len() <= limit {
        return Budgeted {
            text: full,
            omitted: Vec::new(),
            truncated: Vec::new(),
            represented: (0..files.len()).collect(),
        };
    }
    for start in 1..files.len() {
        let omitted: Vec<InstructionFile> = files
            .iter()
            .take(start)
            .map(LoadedInstructionFile::file)
            .collect();
        let text = build(files.iter().skip(start), &label, &omitted, &[], style);
        if text.len() <= limit {
            return Budgeted {
                text,
                omitted,
                truncated: Vec::new(),
                represented: (start..files.len()).collect(),
            };
        }
    }
    let Some((last, broader)) = files.split_last() else {
        return Budgeted {
            text: String::new(),
            omitted: Vec::new(),
            truncated: Vec::new(),
            represented: Vec::new(),
        };
    };
    let last_index = broader.len();
    let omitted: Vec<InstructionFile> = broader.iter().map(LoadedInstructionFile::file).collect();
    let original_bytes = last.content.len();
    let compact = Style {
        intro: COMPACT_INTRO,
        section: style.section,
    };
    for candidate_style in [style, &compact] {
        let cut = truncate_to_fit(last, limit, &label, &omitted, candidate_style);
        let included_bytes = cut.content.len();
        let truncated = vec![TruncatedInstruction {
            display_path: last.display_path.clone(),
            original_bytes,
            included_bytes,
        }];
        let text = build([&cut], &label, &omitted, &truncated, candidate_style);
        if text.len() <= limit {
            let represented = if included_bytes > 0 || original_bytes == 0 {
                vec![last_index]
            } else {
                Vec::new()
            };
            return Budgeted {
                text,
                omitted,
                truncated,
                represented,
            };
        }
    }
    let truncated = vec![TruncatedInstruction {
        display_path: last.display_path.clone(),
        original_bytes,
        included_bytes: 0,
    }];
    let notice = escape_frame_body(&marker_text(&label, &omitted, &truncated));
    let heading = (style.section)(&with_content(last, 0));
    let with_heading = escape_frame_body(&format!("{notice}\n\n{heading}"));
    if with_heading.len() <= limit {
        let represented = if original_bytes == 0 {
            vec![last_index]
        } else {
            Vec::new()
        };
        return Budgeted {
            text: with_heading,
            omitted,
            truncated,
            represented,
        };
    }
    let text = truncate_utf8(&notice, limit).to_owned();
    Budgeted {
        text,
        omitted,
        truncated,
        represented: Vec::new(),
    }
}
