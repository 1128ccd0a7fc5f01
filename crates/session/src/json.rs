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
/// Non-finite numbers cannot exist in a [`Value`]. The walk is iterative, so deep values
/// cannot overflow the stack.
pub fn check_lossless(value: &Value) -> Result<(), LosslessError> {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((node, _)) = stack.pop() {
        match node {
            Value::Number(number) => {
                if number
                    .as_f64()
                    .is_some_and(|f| f == 0.0 && f.is_sign_negative())
                    && number.is_f64()
                {
                    return Err(LosslessError::NegativeZero {
                        path: pointer_to(value, node),
                    });
                }
            }
            Value::Array(items) => stack.extend(items.iter().map(|item| (item, 0))),
            Value::Object(map) => stack.extend(map.values().map(|item| (item, 0))),
            Value::Null | Value::Bool(_) | Value::String(_) => {}
        }
    }
    Ok(())
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
            #[allow(clippy::cast_precision_loss)] // deliberate: JavaScript holds a double
            self.write_f64(writer, value as f64)
        }
    }

    fn write_i64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: i64) -> io::Result<()> {
        if value.unsigned_abs() <= MAX_SAFE_INTEGER {
            CompactFormatter.write_i64(writer, value)
        } else {
            #[allow(clippy::cast_precision_loss)] // deliberate: JavaScript holds a double
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
#[allow(clippy::unwrap_used)]
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
