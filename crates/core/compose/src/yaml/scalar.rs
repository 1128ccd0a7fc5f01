//! How plain scalars resolve: js-yaml's JSON schema (its null, bool, int and float types, in
//! that order), shared by the parser and the emitter so that whatever the emitter prints
//! plain reads back as the same value, here and in dsh.

use serde_json::Number;

use crate::node::Node;

/// The largest integer a JavaScript number holds exactly.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// What a plain (untagged, unquoted) scalar means.
pub(crate) fn resolve_plain(text: &str) -> Result<Node, String> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Node::Null),
        "true" | "True" | "TRUE" => return Ok(Node::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Node::Bool(false)),
        _ => {}
    }
    let Some(value) = resolve_integer(text).or_else(|| resolve_float(text)) else {
        return Ok(Node::String(text.to_owned()));
    };
    number_from_f64(value).map(Node::Number).ok_or_else(|| {
        format!("`{text}` is not a finite number; dsh config holds JSON numbers only")
    })
}

/// js-yaml's `int`: `[-+]?` then `0b`/`0o`/`0x` digits or decimal digits, `_` allowed
/// between digits (not first after the prefix, not last).
fn resolve_integer(text: &str) -> Option<f64> {
    let (sign, body) = split_sign(text);
    if body == "0" {
        return Some(0.0);
    }
    for (prefix, radix) in [("0b", 2), ("0o", 8), ("0x", 16)] {
        if let Some(digits) = body.strip_prefix(prefix) {
            return digits_value(digits, radix, true).map(|value| sign * value);
        }
    }
    if body.starts_with('_') {
        return None;
    }
    digits_value(body, 10, false).map(|value| sign * value)
}

/// The value of `digits` in `radix` with `_` separators, as JavaScript's `parseInt` gives it.
fn digits_value(digits: &str, radix: u32, after_prefix: bool) -> Option<f64> {
    if digits.is_empty() || digits.ends_with('_') || (!after_prefix && digits.starts_with('_')) {
        return None;
    }
    let mut value = 0.0_f64;
    let mut any = false;
    for c in digits.chars() {
        if c == '_' {
            continue;
        }
        value = value * f64::from(radix) + f64::from(c.to_digit(radix)?);
        any = true;
    }
    any.then_some(value)
}

/// js-yaml's `float`: `[-+]?[0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)?`, or
/// `\.[0-9_]+([eE][-+]?[0-9]+)?` (no sign), or `.inf`/`.nan` forms; not ending in `_`.
fn resolve_float(text: &str) -> Option<f64> {
    if text.ends_with('_') {
        return None;
    }
    let (sign, body) = split_sign(text);
    match body {
        ".inf" | ".Inf" | ".INF" => return Some(sign * f64::INFINITY),
        ".nan" | ".NaN" | ".NAN" if sign > 0.0 && !text.starts_with('+') => return Some(f64::NAN),
        _ => {}
    }
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(at) => (body.get(..at)?, Some(body.get(at + 1..)?)),
        None => (body, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (mantissa, None),
    };
    let digits = |part: &str| part.chars().all(|c| c.is_ascii_digit() || c == '_');
    let mantissa_ok = if whole.is_empty() {
        // `.5`: only without a sign, and with at least one digit after the point.
        text.len() == body.len()
            && fraction.is_some_and(|fraction| !fraction.is_empty() && digits(fraction))
    } else {
        whole.starts_with(|c: char| c.is_ascii_digit())
            && digits(whole)
            && fraction.is_none_or(digits)
    };
    let exponent_ok = exponent.is_none_or(|exponent| {
        let unsigned = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        !unsigned.is_empty() && unsigned.chars().all(|c| c.is_ascii_digit())
    });
    if !(mantissa_ok && exponent_ok) {
        return None;
    }
    let cleaned: String = body.chars().filter(|c| *c != '_').collect();
    cleaned.parse::<f64>().ok().map(|value| sign * value)
}

fn split_sign(text: &str) -> (f64, &str) {
    match text.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, text.strip_prefix('+').unwrap_or(text)),
    }
}

/// A JSON number for `value`: integral values within JavaScript's safe range become integers
/// (so `1.0` and `1` are the same value, as in dsh); non-finite values have no JSON form.
pub(crate) fn number_from_f64(value: f64) -> Option<Number> {
    if !value.is_finite() {
        return None;
    }
    if value.fract() == 0.0 && value.abs() <= MAX_SAFE_INTEGER {
        // In range and integral, so the cast is exact.
        return Some(Number::from(value as i64));
    }
    Number::from_f64(value)
}

/// A plain mapping key as JavaScript's `String()` of its value reads it: `~` is `"null"`,
/// `0x10` is `"16"`, `1.0` is `"1"`.
pub(crate) fn plain_key(text: &str) -> Result<String, String> {
    Ok(match resolve_plain(text)? {
        Node::Null => "null".to_owned(),
        Node::Bool(value) => value.to_string(),
        Node::Number(number) => js_number_text(&number),
        _ => text.to_owned(),
    })
}

/// How JavaScript prints a number: integers plainly, exponents from 1e21 up and below 1e-6.
fn js_number_text(number: &Number) -> String {
    let Some(value) = number
        .as_f64()
        .filter(|_| !number.is_i64() && !number.is_u64())
    else {
        return number.to_string();
    };
    if (1e-7..1e21).contains(&value.abs()) {
        value.to_string()
    } else {
        let text = format!("{value:e}");
        match text.split_once('e') {
            Some((mantissa, exponent)) if !exponent.starts_with('-') => {
                format!("{mantissa}e+{exponent}")
            }
            _ => text,
        }
    }
}

/// Whether `text`, printed plain, could be read as anything but that string.
pub(crate) fn plain_is_ambiguous(text: &str) -> bool {
    !matches!(resolve_plain(text), Ok(Node::String(_))) || text == "<<" || text == "="
}
