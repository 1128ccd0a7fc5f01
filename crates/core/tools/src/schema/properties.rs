//! Property tests of the subset: a value always satisfies the exact schema derived from it,
//! that schema is in the subset, and one undeclared key or a wrong root type is exactly one
//! violation.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::{schema_violations, validate, validate_at};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1.0e6f64..1.0e6).prop_map(|f| if f == 0.0 { json!(0) } else { json!(f) }),
        "[a-z0-9 ]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map("[a-z0-9]{1,4}", inner, 0..5)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// The narrowest subset schema `value` satisfies: closed objects with every key required,
/// arrays whose items are each the `oneOf`-free schema of a homogeneous element type, and
/// scalars pinned with `const`.
fn exact_schema(value: &Value) -> Value {
    match value {
        Value::Null => json!({"type": "null", "const": null}),
        Value::Bool(b) => json!({"type": "boolean", "const": b}),
        Value::Number(n) if n.is_f64() => json!({"type": "number", "enum": [n]}),
        Value::Number(n) => json!({"type": "integer", "const": n}),
        Value::String(s) => json!({"type": "string", "enum": [s], "description": "pinned"}),
        Value::Array(items) => {
            let mut schema = json!({"type": "array"});
            if let [first, ..] = items.as_slice() {
                let kind = type_schema(first);
                if items.iter().all(|item| type_schema(item) == kind) {
                    schema["items"] = kind;
                }
            }
            schema
        }
        Value::Object(map) => {
            let properties: Map<String, Value> = map
                .iter()
                .map(|(k, v)| (k.clone(), exact_schema(v)))
                .collect();
            json!({
                "type": "object",
                "properties": properties,
                "required": map.keys().collect::<Vec<_>>(),
                "additionalProperties": false
            })
        }
    }
}

fn type_schema(value: &Value) -> Value {
    let name = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    json!({"type": name})
}

proptest! {
    #[test]
    fn a_value_satisfies_its_exact_schema(value in json_value()) {
        let schema = exact_schema(&value);
        prop_assert_eq!(schema_violations(&schema, "schema"), Vec::<String>::new());
        prop_assert_eq!(validate_at(&schema, &value, "value"), Vec::<String>::new());
        prop_assert_eq!(validate_at(&json!({}), &value, "value"), Vec::<String>::new());
    }

    #[test]
    fn one_undeclared_key_is_one_violation(
        map in prop::collection::btree_map("[a-z]{1,4}", json_value(), 0..5),
    ) {
        let value = Value::Object(map.into_iter().collect());
        let schema = exact_schema(&value);
        let mut extended = value;
        extended["UNDECLARED"] = json!(1);
        prop_assert_eq!(
            validate(&schema, &extended),
            vec!["\"UNDECLARED\" is not a declared property (additionalProperties: false)".to_owned()]
        );
    }

    #[test]
    fn a_wrong_root_type_is_one_violation(value in json_value()) {
        let schema = if value.is_string() { json!({"type": "boolean"}) } else { json!({"type": "string"}) };
        let violations = validate(&schema, &value);
        prop_assert_eq!(violations.len(), 1);
        prop_assert!(violations[0].starts_with("\"arguments\" must be a"));
    }
}
