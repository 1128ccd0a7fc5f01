//! Content identities: the SHA-1 a change records, and the SHA-1 of the trimmed text that
//! collapses same-directory duplicates.

use ring::digest::{SHA1_FOR_LEGACY_USE_ONLY, digest};

/// The lowercase hexadecimal SHA-1 of `content`'s UTF-8 bytes.
pub(crate) fn content_sha1(content: &str) -> String {
    let hash = digest(&SHA1_FOR_LEGACY_USE_ONLY, content.as_bytes());
    let mut hex = String::with_capacity(40);
    for byte in hash.as_ref() {
        hex.push(char::from(
            HEX.get(usize::from(byte >> 4)).copied().unwrap_or(b'0'),
        ));
        hex.push(char::from(
            HEX.get(usize::from(byte & 0xf)).copied().unwrap_or(b'0'),
        ));
    }
    hex
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The SHA-1 of `content` without its leading and trailing whitespace, so siblings that differ
/// only there (a byte copy with an extra newline, a symlink) count as one file.
pub(crate) fn trimmed_sha1(content: &str) -> String {
    content_sha1(js_trim(content))
}

/// `String.prototype.trim`: JavaScript's whitespace and line terminators, which differ from
/// Rust's `trim` (JavaScript trims U+FEFF and keeps U+0085).
pub(crate) fn js_trim(text: &str) -> &str {
    text.trim_matches(is_js_whitespace)
}

fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{a}' | '\u{b}' | '\u{c}' | '\u{d}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_match_the_recorded_session() {
        // examples/acp-agent/tests/snapshots/agent-instructions: the root and nested files.
        assert_eq!(
            content_sha1("Root snapshot instruction.\n"),
            "2e18766c26603608f321508caae00ea8f4434d59"
        );
        assert_eq!(
            content_sha1("Nested snapshot instruction.\n"),
            "c446df9a85c7e73a3055f394a4822a19ac9ead5a"
        );
    }

    #[test]
    fn trimming_follows_javascript() {
        assert_eq!(js_trim("\u{feff} rules \n\t"), "rules");
        assert_eq!(js_trim("\u{85}rules"), "\u{85}rules");
        assert_eq!(trimmed_sha1("rules\n"), trimmed_sha1("  rules"));
        assert_ne!(trimmed_sha1("rules"), trimmed_sha1("rules!"));
    }
}
