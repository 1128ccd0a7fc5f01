//! How plain scalars resolve under the JSON schema, shared by the parser and the emitter so
//! that whatever the emitter prints plain reads back as the same value.

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
    if let Some(number) = resolve_number(text)? {
        return Ok(Node::Number(number));
    }
    Ok(Node::String(text.to_owned()))
}

/// A plain scalar that is a number under the core schema, normalized as JavaScript would.
fn resolve_number(text: &str) -> Result<Option<Number>, String> {
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, text.strip_prefix('+').unwrap_or(text)),
    };
    if let Some(hex) = digits.strip_prefix("0x") {
        return Ok(parse_radix(hex, 16, sign));
    }
    if let Some(octal) = digits.strip_prefix("0o") {
        return Ok(parse_radix(octal, 8, sign));
    }
    let special = match digits {
        ".inf" | ".Inf" | ".INF" => Some(f64::INFINITY),
        ".nan" | ".NaN" | ".NAN" => Some(f64::NAN),
        _ => None,
    };
    if special.is_some() {
        return Err(format!(
            "`{text}` is not a finite number; dsh config holds JSON numbers only"
        ));
    }
    if !is_decimal(digits) {
        return Ok(None);
    }
    let value: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    Ok(number_from_f64(value))
}

fn parse_radix(digits: &str, radix: u32, sign: f64) -> Option<Number> {
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let value = u64::from_str_radix(digits, radix).map_or(f64::INFINITY, |value| value as f64);
    number_from_f64(sign * value)
}

/// `[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?` or `\.[0-9]+([eE][-+]?[0-9]+)?`.
fn is_decimal(text: &str) -> bool {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (mantissa, None),
    };
    let digits = |part: &str| part.bytes().all(|byte| byte.is_ascii_digit());
    let mantissa_ok = match fraction {
        Some(fraction) => {
            digits(whole) && digits(fraction) && !(whole.is_empty() && fraction.is_empty())
        }
        None => !whole.is_empty() && digits(whole),
    };
    let exponent_ok = exponent.is_none_or(|exponent| {
        let unsigned = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        !unsigned.is_empty() && digits(unsigned)
    });
    mantissa_ok && exponent_ok
}

/// A JSON number for `value`: integral values within JavaScript's safe range become integers
/// (so `1.0` and `1` are the same value, as in dsh); non-finite values have no JSON form.
pub(crate) fn number_from_f64(value: f64) -> Option<Number> {
    if !value.is_finite() {
        return None;
    }
    if value.fract() == 0.0 && value.abs() <= MAX_SAFE_INTEGER {
        // In range and integral, so the cast is exact.
        #[expect(
            clippy::cast_possible_truncation,
            reason = "checked integral and in range"
        )]
        return Some(Number::from(value as i64));
    }
    Number::from_f64(value)
}

/// Whether `text`, printed plain, could be read as anything but that string by us or by
/// js-yaml (which also accepts `0b`, `_` separators and the like).
pub(crate) fn plain_is_ambiguous(text: &str) -> bool {
    if !matches!(resolve_plain(text), Ok(Node::String(_))) {
        return true;
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    let numberish = unsigned
        .chars()
        .next()
        .is_some_and(|first| first.is_ascii_digit() || first == '.')
        && unsigned.chars().any(|c| c.is_ascii_digit())
        && unsigned
            .chars()
            .all(|c| c.is_ascii_hexdigit() || "xXoObB_.+-:".contains(c));
    numberish || text == "<<" || text == "="
}
