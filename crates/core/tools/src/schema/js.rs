//! The few JavaScript semantics the schema walk depends on: key order, equality of scalars,
//! and what counts as a JSON number or an integer.

use serde_json::{Map, Value};

/// The largest array index JavaScript orders numerically (`2^32 - 2`).
const MAX_ARRAY_INDEX: u64 = 4_294_967_294;

/// Whether JavaScript treats `key` as an array index, which `Object.keys` lists first, in
/// ascending numeric order.
fn array_index(key: &str) -> Option<u64> {
    let canonical = key == "0" || (!key.starts_with('0') && !key.is_empty());
    if !canonical || !key.bytes().all(|b| b.is_ascii_digit()) || key.len() > 10 {
        return None;
    }
    key.parse::<u64>()
        .ok()
        .filter(|index| *index <= MAX_ARRAY_INDEX)
}

/// The entries of `map` in the order of JavaScript's `Object.entries`: array-index keys
/// ascending, then the other keys in insertion order.
pub(crate) fn entries(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut indexed: Vec<(u64, (&String, &Value))> = Vec::new();
    let mut named: Vec<(&String, &Value)> = Vec::with_capacity(map.len());
    for entry in map {
        match array_index(entry.0) {
            Some(index) => indexed.push((index, entry)),
            None => named.push(entry),
        }
    }
    if indexed.is_empty() {
        return named;
    }
    indexed.sort_by_key(|(index, _)| *index);
    indexed
        .into_iter()
        .map(|(_, entry)| entry)
        .chain(named)
        .collect()
}

/// Whether `value` is `-0`, which JSON text cannot carry.
pub(crate) fn is_negative_zero(value: &Value) -> bool {
    matches!(value, Value::Number(number)
        if number.is_f64() && number.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative()))
}

/// dsh's `isJsonNumber`: a number other than `-0` (every number in a [`Value`] is finite).
pub(crate) fn is_json_number(value: &Value) -> bool {
    value.is_number() && !is_negative_zero(value)
}

/// JavaScript's `Number.isInteger`, for a JSON number.
pub(crate) fn is_integer(value: &Value) -> bool {
    match value {
        Value::Number(number) => {
            number.is_i64()
                || number.is_u64()
                || number
                    .as_f64()
                    .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
        }
        _ => false,
    }
}

/// JavaScript's `===` (and `SameValueZero`) for the scalars `enum` and `const` hold: numbers
/// by value, strings and booleans by content, `null` equal to itself. Objects and arrays are
/// never equal (JavaScript compares them by identity).
pub(crate) fn scalar_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // JavaScript holds every number as a double.
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Null, Value::Null) => true,
        _ => false,
    }
}

/// Whether `value` survives JSON text unchanged (no `-0` anywhere).
pub(crate) fn is_lossless(value: &Value) -> bool {
    dsh_protocol::json::check_lossless(value).is_ok()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_in_object_keys_order() {
        let value = json!({"b": 1, "10": 2, "a": 3, "2": 4, "01": 5, "4294967295": 6});
        let Value::Object(map) = &value else {
            unreachable!()
        };
        let keys: Vec<&str> = entries(map).into_iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["2", "10", "b", "a", "01", "4294967295"]);
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(scalar_equal(&json!(1), &json!(1.0)));
        assert!(!scalar_equal(&json!(1), &json!(1.5)));
        assert!(!scalar_equal(&json!("1"), &json!(1)));
        assert!(scalar_equal(&json!(null), &json!(null)));
        assert!(is_integer(&json!(1e20)));
        assert!(!is_integer(&json!(1.5)));
        assert!(!is_json_number(&json!(-0.0)));
    }
}
