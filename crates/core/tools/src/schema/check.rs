//! The subset check: which raw schemas dsh accepts (`assertSupportedJsonSchema`).
//!
//! The walk uses an explicit stack, so a deeply nested schema cannot overflow the call stack,
//! and reports every violation in dsh's walk order.

use serde_json::{Map, Value};

use super::js;

/// Keywords that constrain a value.
const CONSTRAINT_KEYWORDS: [&str; 8] = [
    "type",
    "oneOf",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
];
/// Keywords that only annotate.
const ANNOTATION_KEYWORDS: [&str; 4] = ["description", "title", "default", "examples"];
/// The single types a node may declare, in dsh's order.
pub(crate) const SCHEMA_TYPES: [&str; 7] = [
    "object", "array", "string", "number", "integer", "boolean", "null",
];
/// Keywords that are invalid beside `oneOf` (and without any `type`).
const ONE_OF_SIBLING_KEYWORDS: [&str; 6] = [
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
];
/// Which types each type-specific keyword is allowed on.
const ALLOWED_FOR: [(&str, &[&str]); 6] = [
    ("properties", &["object"]),
    ("required", &["object"]),
    ("additionalProperties", &["object"]),
    ("items", &["array"]),
    ("enum", &["string", "number", "integer", "boolean", "null"]),
    ("const", &["string", "number", "integer", "boolean", "null"]),
];

/// Deferred work of the walk.
enum Task<'a> {
    Enter {
        node: &'a Value,
        path: String,
    },
    OneOfTail {
        node: &'a Map<String, Value>,
        path: String,
    },
    ObjectTail {
        node: &'a Map<String, Value>,
        path: String,
    },
}

/// Every way `schema` falls outside the enforced subset, in walk order; `root` names the
/// schema in the messages (dsh uses `schema`).
pub fn schema_violations(schema: &Value, root: &str) -> Vec<String> {
    let mut violations = Vec::new();
    let mut tasks = vec![Task::Enter {
        node: schema,
        path: root.to_owned(),
    }];
    while let Some(task) = tasks.pop() {
        match task {
            Task::OneOfTail { node, path } => {
                for key in ONE_OF_SIBLING_KEYWORDS {
                    if node.contains_key(key) {
                        violations.push(format!("{path}.{key} is not supported beside oneOf"));
                    }
                }
            }
            Task::ObjectTail { node, path } => object_tail(node, &path, &mut violations),
            Task::Enter { node, path } => enter(node, path, &mut tasks, &mut violations),
        }
    }
    violations
}

fn enter<'a>(node: &'a Value, path: String, tasks: &mut Vec<Task<'a>>, out: &mut Vec<String>) {
    let Value::Object(node) = node else {
        out.push(format!("{path} must be a schema object"));
        return;
    };
    for (key, value) in js::entries(node) {
        let key = key.as_str();
        if CONSTRAINT_KEYWORDS.contains(&key) {
            continue;
        }
        if ANNOTATION_KEYWORDS.contains(&key) {
            if !js::is_lossless(value) {
                out.push(format!(
                    "{path}.{key} annotation must be lossless JSON data"
                ));
            }
            continue;
        }
        out.push(format!(
            "{path}.{key} is not a supported keyword (subset: \
             type/oneOf/properties/required/additionalProperties/items/enum/const + annotations)"
        ));
    }
    for key in ["description", "title"] {
        if node.get(key).is_some_and(|value| !value.is_string()) {
            out.push(format!("{path}.{key} must be a string"));
        }
    }

    let has_type = node.contains_key("type");
    let one_of = node.get("oneOf");
    if has_type && one_of.is_some() {
        out.push(format!("{path} cannot declare both type and oneOf"));
        return;
    }
    if let Some(one_of) = one_of {
        enter_one_of(node, one_of, path, tasks, out);
        return;
    }
    let Some(declared) = node.get("type") else {
        for key in ONE_OF_SIBLING_KEYWORDS {
            if node.contains_key(key) {
                out.push(format!("{path}.{key} requires type or oneOf"));
            }
        }
        return;
    };
    let Some(schema_type) = declared
        .as_str()
        .filter(|declared| SCHEMA_TYPES.contains(declared))
    else {
        out.push(if declared.is_array() {
            format!("{path}.type must be a single type string (type arrays are not supported)")
        } else {
            format!("{path}.type must be one of {}", SCHEMA_TYPES.join("/"))
        });
        return;
    };
    for (key, types) in ALLOWED_FOR {
        if node.contains_key(key) && !types.contains(&schema_type) {
            out.push(format!(
                "{path}.{key} is not supported on type \"{schema_type}\""
            ));
        }
    }
    match schema_type {
        "object" => enter_object(node, path, tasks, out),
        "array" => {
            if let Some(items) = node.get("items") {
                tasks.push(Task::Enter {
                    node: items,
                    path: format!("{path}.items"),
                });
            }
        }
        scalar => check_literals(node, scalar, &path, out),
    }
}

fn enter_one_of<'a>(
    node: &'a Map<String, Value>,
    one_of: &'a Value,
    path: String,
    tasks: &mut Vec<Task<'a>>,
    out: &mut Vec<String>,
) {
    let branches = one_of.as_array().filter(|branches| branches.len() >= 2);
    let Some(branches) = branches else {
        out.push(format!(
            "{path}.oneOf must be an array of at least two schemas"
        ));
        tasks.push(Task::OneOfTail { node, path });
        return;
    };
    let children: Vec<Task<'a>> = branches
        .iter()
        .enumerate()
        .rev()
        .map(|(index, branch)| Task::Enter {
            node: branch,
            path: format!("{path}.oneOf[{index}]"),
        })
        .collect();
    tasks.push(Task::OneOfTail { node, path });
    tasks.extend(children);
}

fn enter_object<'a>(
    node: &'a Map<String, Value>,
    path: String,
    tasks: &mut Vec<Task<'a>>,
    out: &mut Vec<String>,
) {
    let properties = node.get("properties");
    let children: Vec<Task<'a>> = match properties {
        None => Vec::new(),
        Some(Value::Object(properties)) => js::entries(properties)
            .into_iter()
            .rev()
            .map(|(key, child)| Task::Enter {
                node: child,
                path: format!("{path}.properties.{key}"),
            })
            .collect(),
        Some(_) => {
            out.push(format!("{path}.properties must be an object of schemas"));
            Vec::new()
        }
    };
    tasks.push(Task::ObjectTail { node, path });
    tasks.extend(children);
}

/// Object-only fields, checked after the property schemas.
fn object_tail(node: &Map<String, Value>, path: &str, out: &mut Vec<String>) {
    if let Some(required) = node.get("required") {
        let names: Option<Vec<&str>> = required
            .as_array()
            .and_then(|entries| entries.iter().map(Value::as_str).collect());
        match names {
            None => out.push(format!("{path}.required must be an array of strings")),
            Some(names) => {
                let declared = node.get("properties").and_then(Value::as_object);
                for name in names {
                    if !declared.is_some_and(|declared| declared.contains_key(name)) {
                        out.push(format!(
                            "{path}.required names \"{name}\" which is not in properties"
                        ));
                    }
                }
            }
        }
    }
    if node
        .get("additionalProperties")
        .is_some_and(|value| !value.is_boolean())
    {
        out.push(format!("{path}.additionalProperties must be a boolean"));
    }
}

/// Whether `value` is a valid literal of scalar type `schema_type`.
pub(crate) fn scalar_matches(schema_type: &str, value: &Value) -> bool {
    match schema_type {
        "string" => value.is_string(),
        "number" => js::is_json_number(value),
        "integer" => js::is_json_number(value) && js::is_integer(value),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => false,
    }
}

/// `enum` and `const` of a scalar node.
fn check_literals(node: &Map<String, Value>, schema_type: &str, path: &str, out: &mut Vec<String>) {
    let allowed = node.get("enum");
    let valid_enum = allowed.and_then(Value::as_array).filter(|entries| {
        !entries.is_empty()
            && entries
                .iter()
                .all(|entry| scalar_matches(schema_type, entry))
    });
    if allowed.is_some() && valid_enum.is_none() {
        out.push(format!(
            "{path}.enum must be a non-empty array of {schema_type} values"
        ));
    }
    if let Some(constant) = node.get("const") {
        if !scalar_matches(schema_type, constant) {
            out.push(format!("{path}.const must be a {schema_type} value"));
        } else if valid_enum.is_some_and(|entries| {
            !entries
                .iter()
                .any(|entry| js::scalar_equal(entry, constant))
        }) {
            out.push(format!(
                "{path}.const must be one of {path}.enum when both are declared"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn check(schema: Value) -> Vec<String> {
        schema_violations(&schema, "schema")
    }

    #[test]
    fn accepts_the_subset() {
        assert_eq!(
            check(json!({
                "type": "object",
                "description": "d",
                "properties": {
                    "command": {"type": "string", "title": "t", "examples": ["ls"]},
                    "mode": {"type": "string", "enum": ["a", "b"], "const": "a", "default": "a"},
                    "n": {"type": "integer", "enum": [1, 2.0]},
                    "list": {"type": "array", "items": {"type": "number"}},
                    "either": {"oneOf": [{"type": "string"}, {"type": "null"}]},
                    "any": {"description": "anything"}
                },
                "required": ["command"],
                "additionalProperties": false
            })),
            Vec::<String>::new()
        );
        assert_eq!(check(json!({})), Vec::<String>::new());
    }

    #[test]
    fn reports_every_violation_in_walk_order() {
        assert_eq!(
            check(json!({
                "type": "object",
                "minProperties": 1,
                "properties": {
                    "a": {"type": "string", "pattern": "x"},
                    "b": {"type": ["string", "null"]},
                    "c": {"type": "float"},
                    "d": {"oneOf": [{"type": "string"}], "items": {}},
                    "e": {"enum": [1]},
                    "f": {"type": "string", "items": {}},
                    "g": {"type": "number", "enum": ["1"], "const": 2},
                    "h": {"type": "string", "enum": ["x"], "const": "y"},
                    "i": 5
                },
                "required": ["a", "zzz"],
                "additionalProperties": "no"
            })),
            vec![
                "schema.minProperties is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations)",
                "schema.properties.a.pattern is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations)",
                "schema.properties.b.type must be a single type string (type arrays are not supported)",
                "schema.properties.c.type must be one of object/array/string/number/integer/boolean/null",
                "schema.properties.d.oneOf must be an array of at least two schemas",
                "schema.properties.d.items is not supported beside oneOf",
                "schema.properties.e.enum requires type or oneOf",
                "schema.properties.f.items is not supported on type \"string\"",
                "schema.properties.g.enum must be a non-empty array of number values",
                "schema.properties.h.const must be one of schema.properties.h.enum when both are declared",
                "schema.properties.i must be a schema object",
                "schema.required names \"zzz\" which is not in properties",
                "schema.additionalProperties must be a boolean",
            ]
        );
    }

    #[test]
    fn annotations_must_be_lossless_and_text_annotations_strings() {
        assert_eq!(
            check(json!({"type": "number", "default": -0.0, "title": 3, "description": null})),
            vec![
                "schema.default annotation must be lossless JSON data",
                "schema.description must be a string",
                "schema.title must be a string",
            ]
        );
    }

    #[test]
    fn type_and_one_of_together() {
        assert_eq!(
            check(json!({"type": "string", "oneOf": [{}, {}]})),
            vec!["schema cannot declare both type and oneOf"]
        );
    }
}
