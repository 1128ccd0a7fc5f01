//! The few JavaScript semantics the tool's texts depend on: `trim`, `String(number)` and
//! string comparison with `<`.

/// JavaScript's `WhiteSpace` and `LineTerminator` (what `String.prototype.trim` removes):
/// Unicode `White_Space` without U+0085, plus U+FEFF.
fn is_js_whitespace(ch: char) -> bool {
    ch == '\u{feff}' || (ch.is_whitespace() && ch != '\u{85}')
}

/// Whether `text.trim()` is empty in JavaScript.
pub fn is_blank(text: &str) -> bool {
    text.chars().all(is_js_whitespace)
}

/// A number as JavaScript's `String(n)` prints it (`2`, `1.5`, `1e+21`).
pub fn js_number(value: f64) -> String {
    dsh_protocol::json::to_js_string(&value)
}

/// Compares two strings by UTF-16 code units, as JavaScript's `<` does (this differs from
/// code-point order only between U+E000..U+FFFF and characters past U+FFFF).
pub fn utf16_cmp(left: &str, right: &str) -> std::cmp::Ordering {
    left.encode_utf16().cmp(right.encode_utf16())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn javascript_semantics() {
        assert!(is_blank(" \t\n\u{feff}\u{a0}\u{3000}"));
        assert!(!is_blank("\u{85}"));
        assert!(is_blank(""));
        assert_eq!(js_number(2.0), "2");
        assert_eq!(js_number(-1.0), "-1");
        assert_eq!(js_number(1e21), "1e+21");
        assert_eq!(
            utf16_cmp("\u{ffff}", "\u{10000}"),
            std::cmp::Ordering::Greater
        );
        assert_eq!(utf16_cmp("a/b", "a-b"), std::cmp::Ordering::Greater);
    }
}
