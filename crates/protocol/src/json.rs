//! JSON as dsh writes it: the text of JavaScript's `JSON.stringify`, and the lossless-value rule.
//!
//! dsh compares logs byte for byte, so numbers are printed the way ECMAScript prints them
//! (`1e+21`, `1.5e-7`, `1` for `1.0`), integers beyond 2^53 are rounded to the double JavaScript
//! would hold, and object keys keep their order (`serde_json` is built with `preserve_order`).

use std::io;

use serde::Serialize;
use serde_json::Value;
use serde_json::ser::{CompactFormatter, Formatter};

/// The largest integer JavaScript holds exactly (`Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A value that JSON text cannot carry without loss.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LosslessError {
    /// `-0` reads back as `0`, so dsh refuses it.
    #[error("negative zero at {path} cannot be stored losslessly")]
    NegativeZero {
        /// Where the value sits, as a JSON pointer.
        path: String,
    },
}

/// Checks that `value` survives a JSON round trip unchanged: no `-0` anywhere.
///
/// Non-finite numbers cannot exist in a [`Value`].
#[inline]
pub fn check_lossless(value: &Value) -> Result<(), LosslessError> {
    match find_negative_zero(value, 0) {
        None => Ok(()),
        Some(node) => Err(LosslessError::NegativeZero {
            path: pointer_to(value, node),
        }),
    }
}

/// [`check_lossless`] for valid JSON text, without building a tree: finds each `-0` in the
/// text and only when one could be a number (not followed by a non-zero digit) parses the text
/// to decide exactly.
#[inline]
pub fn check_lossless_text(text: &str) -> Result<(), LosslessError> {
    let bytes = text.as_bytes();
    let suspicious = memchr::memmem::find_iter(bytes, b"-0").any(|at| {
        let rest = bytes.get(at + 2..).unwrap_or_default();
        let mantissa_end = rest
            .iter()
            .position(|&b| b != b'0' && b != b'.')
            .unwrap_or(rest.len());
        !matches!(rest.get(mantissa_end), Some(b'1'..=b'9'))
    });
    if !suspicious {
        return Ok(());
    }
    // Rare (a `-0` number, or `-0` inside a string): decide on the value itself.
    let value: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    check_lossless(&value)
}

/// Nesting depth checked by recursion before switching to an explicit stack.
const RECURSION_LIMIT: usize = 64;

#[inline]
fn is_negative_zero(value: &Value) -> bool {
    matches!(value, Value::Number(number)
        if number.is_f64() && number.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative()))
}

/// The first `-0` in `value`: recursive for ordinary values (no allocation), iterative past
/// [`RECURSION_LIMIT`] levels so deep values cannot overflow the stack.
#[inline]
fn find_negative_zero(value: &Value, depth: usize) -> Option<&Value> {
    if depth >= RECURSION_LIMIT {
        return find_negative_zero_iteratively(value);
    }
    match value {
        Value::Number(_) => is_negative_zero(value).then_some(value),
        Value::Array(items) => items
            .iter()
            .find_map(|item| find_negative_zero(item, depth + 1)),
        Value::Object(map) => map
            .values()
            .find_map(|item| find_negative_zero(item, depth + 1)),
        Value::Null | Value::Bool(_) | Value::String(_) => None,
    }
}

fn find_negative_zero_iteratively(value: &Value) -> Option<&Value> {
    let mut stack: Vec<&Value> = vec![value];
    while let Some(node) = stack.pop() {
        match node {
            Value::Number(_) if is_negative_zero(node) => return Some(node),
            Value::Array(items) => stack.extend(items.iter()),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    None
}

/// Finds the JSON pointer of `target` (by address) inside `root`, for error messages.
fn pointer_to(root: &Value, target: &Value) -> String {
    let mut stack: Vec<(&Value, String)> = vec![(root, String::new())];
    while let Some((node, path)) = stack.pop() {
        if std::ptr::eq(node, target) {
            return if path.is_empty() {
                "/".to_owned()
            } else {
                path
            };
        }
        match node {
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    stack.push((item, format!("{path}/{index}")));
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    let key = key.replace('~', "~0").replace('/', "~1");
                    stack.push((item, format!("{path}/{key}")));
                }
            }
            _ => {}
        }
    }
    "/".to_owned()
}

/// Prints numbers the way ECMAScript's `Number.prototype.toString` does.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsFormatter;

impl Formatter for JsFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        let mut buffer = ryu_js::Buffer::new();
        writer.write_all(buffer.format(value).as_bytes())
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(writer, f64::from(value))
    }

    fn write_u64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: u64) -> io::Result<()> {
        if value <= MAX_SAFE_INTEGER {
            CompactFormatter.write_u64(writer, value)
        } else {
            // Past 2^53 the value is rounded to a double on purpose: that is what JavaScript holds.
            self.write_f64(writer, value as f64)
        }
    }

    fn write_i64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: i64) -> io::Result<()> {
        if value.unsigned_abs() <= MAX_SAFE_INTEGER {
            CompactFormatter.write_i64(writer, value)
        } else {
            // Past 2^53 the value is rounded to a double on purpose: that is what JavaScript holds.
            self.write_f64(writer, value as f64)
        }
    }
}

/// Appends the `JSON.stringify` text of `value` to `out`.
pub fn write_js<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
) -> Result<(), serde_json::Error> {
    let mut serializer = serde_json::Serializer::with_formatter(out, JsFormatter);
    value.serialize(&mut serializer)
}

/// The `JSON.stringify` text of `value`.
pub fn to_js_string<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(128);
    // Serializing our own values into memory cannot fail: maps have string keys.
    if write_js(&mut out, value).is_err() {
        out.clear();
    }
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn numbers_print_like_javascript() {
        let cases = [
            ("1.0", "1"),
            ("1e21", "1e+21"),
            ("1E20", "100000000000000000000"),
            ("0.00000015", "1.5e-7"),
            ("123.456", "123.456"),
            ("-5", "-5"),
            ("9007199254740993", "9007199254740992"),
            ("-9007199254740993", "-9007199254740992"),
            ("18446744073709551615", "18446744073709552000"),
        ];
        for (input, expected) in cases {
            let value: Value = serde_json::from_str(input).unwrap();
            assert_eq!(to_js_string(&value), expected, "{input}");
        }
    }

    #[test]
    fn strings_escape_like_javascript() {
        let value = json!({"s": "é\u{1}\n\t\"\\\u{7f}\u{2028}"});
        assert_eq!(
            to_js_string(&value),
            "{\"s\":\"é\\u0001\\n\\t\\\"\\\\\u{7f}\u{2028}\"}"
        );
    }

    #[test]
    fn keys_keep_their_order() {
        let value: Value = serde_json::from_str(r#"{"z":1,"a":{"y":2,"b":3}}"#).unwrap();
        assert_eq!(to_js_string(&value), r#"{"z":1,"a":{"y":2,"b":3}}"#);
    }

    #[test]
    fn negative_zero_is_refused_with_its_path() {
        for text in ["-0", "-0.0", "-0e3"] {
            let value: Value =
                serde_json::from_str(&format!(r#"{{"a":[1,{{"b":{text}}}]}}"#)).unwrap();
            assert_eq!(
                check_lossless(&value),
                Err(LosslessError::NegativeZero {
                    path: "/a/1/b".into()
                }),
                "{text}"
            );
        }
        assert!(check_lossless(&json!({"a": 0, "b": 0.0, "c": -1})).is_ok());
    }

    #[test]
    fn negative_zero_is_found_in_text_too() {
        for (text, bad) in [
            (r#"{"a":-0}"#, true),
            (r#"{"a":[1,-0.0]}"#, true),
            (r#"{"a":-0e3}"#, true),
            (r#"{"a":-0.5,"b":-10,"c":"-0","d":"\\\"-0"}"#, false),
            (r#"[-1e-7,0,-0.001]"#, false),
        ] {
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(check_lossless_text(text).is_err(), bad, "{text}");
            assert_eq!(check_lossless(&value).is_err(), bad, "{text}");
        }
        assert_eq!(
            check_lossless_text(r#"{"a":[1,{"b":-0}]}"#),
            Err(LosslessError::NegativeZero {
                path: "/a/1/b".into()
            })
        );
    }

    #[test]
    fn deep_values_do_not_overflow() {
        let mut value = json!(0);
        for _ in 0..100_000 {
            value = Value::Array(vec![value]);
        }
        assert!(check_lossless(&value).is_ok());
        // Dropping a deep value recurses in serde_json; unwind it by hand.
        while let Value::Array(mut items) = value {
            value = items.pop().unwrap_or(Value::Null);
        }
    }
}
