//! Literal edits and line-ending handling.

use crate::error::{FsError, FsErrorCode};

use super::resolve::quoted;

/// How many leading UTF-16 code units decide a file's line-ending style (dsh's
/// `raw.slice(0, 4096)`).
const STYLE_SNIFF_UNITS: usize = 4096;

/// Whether `text` is mostly CRLF: more `\r\n` pairs than bare `\n` in its first 4096
/// UTF-16 code units.
pub(crate) fn is_crlf(text: &str) -> bool {
    let mut units = 0;
    let mut end = text.len();
    for (at, ch) in text.char_indices() {
        units += ch.len_utf16();
        if units > STYLE_SNIFF_UNITS {
            end = at;
            break;
        }
    }
    let head = text.get(..end).unwrap_or(text);
    let bytes = head.as_bytes();
    let (mut crlf, mut lf) = (0usize, 0usize);
    for at in memchr::memchr_iter(b'\n', bytes) {
        if at > 0 && bytes.get(at - 1) == Some(&b'\r') {
            crlf += 1;
        } else {
            lf += 1;
        }
    }
    crlf > lf
}

/// `text` with every `\r\n` as `\n` (a lone `\r` is kept).
pub(crate) fn to_lf(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// `text` (LF) with every `\n` as `\r\n`.
pub(crate) fn to_crlf(text: &str) -> String {
    text.replace('\n', "\r\n")
}

/// Replaces `old` by `new` in `content` (all LF): exactly one match unless `replace_all`.
/// The replacement is literal.
pub(crate) fn apply_literal_edit(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    display: &str,
) -> Result<String, FsError> {
    if old.is_empty() {
        return Err(FsError::new(
            FsErrorCode::EditNotFound,
            "old_string must be a non-empty string",
        ));
    }
    let matches = content.matches(old).count();
    if matches == 0 {
        return Err(FsError::new(
            FsErrorCode::EditNotFound,
            format!("old_string was not found in {}", quoted(display)),
        ));
    }
    if matches > 1 && !replace_all {
        return Err(FsError::new(
            FsErrorCode::AmbiguousEdit,
            format!(
                "old_string matched {matches} times in {}; provide a more specific old_string \
                 or set replace_all to true",
                quoted(display)
            ),
        ));
    }
    Ok(content.replace(old, new))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn style_is_the_majority_of_the_head() {
        assert!(is_crlf("a\r\nb\r\nc\n"));
        assert!(!is_crlf("a\r\nb\nc\n"));
        assert!(!is_crlf("no newline"));
        let late = format!("{}{}", "😀".repeat(2100), "line\r\n".repeat(10));
        assert!(!is_crlf(&late), "the sample is 4096 UTF-16 units, as dsh's");
    }

    #[test]
    fn edits_are_literal_and_counted() {
        assert_eq!(
            apply_literal_edit("a $& b", "$&", "x$1", false, "/f").unwrap(),
            "a x$1 b"
        );
        let error = apply_literal_edit("aa aa", "aa", "b", false, "/f").unwrap_err();
        assert_eq!(
            error.message(),
            "old_string matched 2 times in \"/f\"; provide a more specific old_string or set \
             replace_all to true"
        );
        assert_eq!(
            apply_literal_edit("aa aa", "aa", "b", true, "/f").unwrap(),
            "b b"
        );
        assert_eq!(
            apply_literal_edit("abc", "x", "y", false, "/f")
                .unwrap_err()
                .message(),
            "old_string was not found in \"/f\""
        );
        assert_eq!(
            apply_literal_edit("aaa", "aa", "b", false, "/f").unwrap(),
            "ba"
        );
    }

    proptest! {
        #[test]
        fn crlf_round_trips_through_lf(lines in proptest::collection::vec("[a-z ]{0,8}", 0..12)) {
            let lf = lines.join("\n");
            prop_assert_eq!(to_lf(&to_crlf(&lf)), lf);
        }
    }
}
