//! Output bounding: dsh's `maybeTruncate`.
//!
//! dsh measures lengths with JavaScript's `String.prototype.length`, which counts UTF-16
//! code units, so the limit here does too.

/// What follows a clipped output (no separator before it).
pub const CLIPPED_MARKER: &str = "<response clipped><NOTE>To save on context only part of this \
    file has been shown to you. You should retry this tool after you have searched inside the \
    file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>";

/// `text` unchanged when it is at most `max` UTF-16 code units long; otherwise its first
/// `max` units followed by [`CLIPPED_MARKER`].
///
/// dsh cuts with `slice(0, max)`, which can split a surrogate pair and leave a lone high
/// surrogate that Rust strings cannot hold. When the cut falls inside a pair, the whole
/// character is left out, so the kept prefix is then `max - 1` units long.
pub fn clip(text: &str, max: usize) -> String {
    let Some(end) = utf16_cut(text, max) else {
        return text.to_owned();
    };
    let mut out = String::with_capacity(end + CLIPPED_MARKER.len());
    out.push_str(text.get(..end).unwrap_or(text));
    out.push_str(CLIPPED_MARKER);
    out
}

/// The byte offset at which `text` is cut to `max` UTF-16 units (the start of the character
/// that would cross the limit); `None` when it fits.
fn utf16_cut(text: &str, max: usize) -> Option<usize> {
    let mut units = 0usize;
    for (offset, ch) in text.char_indices() {
        units += ch.len_utf16();
        if units > max {
            return Some(offset);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_counts_utf16_units() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), format!("abc{CLIPPED_MARKER}"));
        assert_eq!(clip("é😀", 3), "é😀");
        assert_eq!(clip("é😀x", 3), format!("é😀{CLIPPED_MARKER}"));
    }

    #[test]
    fn a_cut_inside_a_surrogate_pair_drops_the_whole_character() {
        assert_eq!(clip("a😀b", 2), format!("a{CLIPPED_MARKER}"));
        assert_eq!(clip("😀", 1), CLIPPED_MARKER);
    }
}
