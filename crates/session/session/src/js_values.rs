//! Event payloads read the way JavaScript reads parsed JSON, so verdicts and messages built
//! from them match dsh 0.1's: a missing field is `undefined`, numbers compare as doubles and
//! print as JavaScript prints them.

use serde_json::Value;

/// JavaScript's `value[key]` on parsed JSON: `None` (`undefined`) unless `value` is an object.
pub(crate) fn field<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    value.as_object()?.get(key)
}

/// JavaScript's `a === b` between values read from two different events (`None` is `undefined`).
///
/// Numbers compare as doubles. Objects and arrays compare by identity in JavaScript, and two
/// values parsed from different places are never the same object, so they are never equal.
pub(crate) fn js_strict_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(Value::Null), Some(Value::Null)) => true,
        (Some(Value::Bool(a)), Some(Value::Bool(b))) => a == b,
        (Some(Value::Number(a)), Some(Value::Number(b))) => a.as_f64() == b.as_f64(),
        (Some(Value::String(a)), Some(Value::String(b))) => a == b,
        _ => false,
    }
}

/// JavaScript's `` `${value}` `` for a parsed JSON value (`None` is `undefined`).
pub(crate) fn js_template(value: Option<&Value>) -> String {
    let mut out = String::new();
    match value {
        None => out.push_str("undefined"),
        Some(Value::Null) => out.push_str("null"),
        Some(value) => push_js_string(&mut out, value, 0),
    }
    out
}

/// Appends JavaScript's `String(value)`; array elements that are `null` print as nothing.
fn push_js_string(out: &mut String, value: &Value, depth: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Value::Number(number) => {
            let mut buffer = ryu_js::Buffer::new();
            out.push_str(buffer.format(number.as_f64().unwrap_or(f64::NAN)));
        }
        Value::String(text) => out.push_str(text),
        Value::Object(_) => out.push_str("[object Object]"),
        // JavaScript gives up on absurdly deep arrays too; they never name a real call.
        Value::Array(_) if depth > 64 => {}
        Value::Array(items) => {
            for (position, item) in items.iter().enumerate() {
                if position > 0 {
                    out.push(',');
                }
                if !item.is_null() {
                    push_js_string(out, item, depth + 1);
                }
            }
        }
    }
}

/// JavaScript's `` `${n}` `` for a number held as a `u64`.
pub(crate) fn js_number(n: u64) -> String {
    let mut out = String::new();
    // Deliberate: JavaScript holds a double.
    push_js_string(&mut out, &Value::from(n as f64), 0);
    out
}

#[cfg(test)]
mod tests;
