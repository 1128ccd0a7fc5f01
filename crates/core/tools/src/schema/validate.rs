//! Validating a value against a schema of the subset (`validateJsonSchemaValue`).
//!
//! The walk keeps explicit frames instead of recursing, so schema depth cannot overflow the
//! call stack; violations come out in dsh's order: missing required properties, then each
//! declared property in turn, then undeclared ones.

use serde_json::{Map, Value};

use super::js;

/// One pending (schema, value) pair.
struct Child<'a> {
    node: &'a Value,
    value: &'a Value,
    path: String,
}

/// What a frame is waiting for once its children are done.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    OneOf,
    Object,
    Array,
}

/// A node whose children are being validated.
struct Frame<'a> {
    kind: Kind,
    value: &'a Value,
    path: String,
    children: std::vec::IntoIter<Child<'a>>,
    violations: Vec<String>,
    tail: Vec<String>,
    matches: usize,
}

/// What starting a node gives: a finished result, or a frame with children to walk.
enum Started<'a> {
    Done(Vec<String>),
    Frame(Frame<'a>),
}

/// Validates `value` against `schema` (one accepted by [`super::check_schema`]), naming the
/// root `path` in messages. An empty root path is how dsh validates tool arguments: properties
/// read `"command"` rather than `"value.command"`, and the root itself reads `"arguments"`.
pub fn validate_at(schema: &Value, value: &Value, path: &str) -> Vec<String> {
    let mut frames: Vec<Frame<'_>> = Vec::new();
    let mut pending = Some(Child {
        node: schema,
        value,
        path: path.to_owned(),
    });
    loop {
        let result = match pending.take() {
            Some(child) => match start(child) {
                Started::Done(result) => result,
                Started::Frame(frame) => {
                    frames.push(frame);
                    continue;
                }
            },
            None => {
                let Some(frame) = frames.last_mut() else {
                    return Vec::new();
                };
                if let Some(child) = frame.children.next() {
                    pending = Some(child);
                    continue;
                }
                match frames.pop() {
                    Some(frame) => finish(frame),
                    None => return Vec::new(),
                }
            }
        };
        match frames.last_mut() {
            None => return result,
            Some(parent) if parent.kind == Kind::OneOf => {
                if result.is_empty() {
                    parent.matches += 1;
                }
            }
            Some(parent) => parent.violations.extend(result),
        }
    }
}

/// The root label of a diagnostic: `arguments` for the empty argument root.
fn shown(path: &str) -> &str {
    if path.is_empty() { "arguments" } else { path }
}

/// A property's path, without a leading dot at the empty root.
fn property_path(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn start(child: Child<'_>) -> Started<'_> {
    let Child { node, value, path } = child;
    if let Some(branches) = node.get("oneOf") {
        let children: Vec<Child<'_>> = branches
            .as_array()
            .map(|branches| {
                branches
                    .iter()
                    .map(|branch| Child {
                        node: branch,
                        value,
                        path: path.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        return Started::Frame(frame(Kind::OneOf, value, path, children));
    }
    let Some(schema_type) = node.get("type") else {
        return Started::Done(lossless(value, &path, "must be a lossless JSON value"));
    };
    let fail = |what: &str| Started::Done(vec![format!("\"{}\" {what}", shown(&path))]);
    match schema_type.as_str() {
        Some("object") => match value {
            Value::Object(object) => Started::Frame(start_object(node, object, value, path)),
            _ => fail("must be an object"),
        },
        Some("array") => match value {
            Value::Array(entries) => {
                let children = match node.get("items") {
                    Some(items) => entries
                        .iter()
                        .enumerate()
                        .map(|(index, entry)| Child {
                            node: items,
                            value: entry,
                            path: format!("{path}[{index}]"),
                        })
                        .collect(),
                    None => Vec::new(),
                };
                Started::Frame(frame(Kind::Array, value, path, children))
            }
            _ => fail("must be an array"),
        },
        Some("string") if !value.is_string() => fail("must be a string"),
        Some("number") if !value.is_number() => fail("must be a number"),
        Some("number") if !js::is_json_number(value) => fail("must be a finite JSON number"),
        Some("integer") if !(js::is_json_number(value) && js::is_integer(value)) => {
            fail("must be an integer")
        }
        Some("boolean") if !value.is_boolean() => fail("must be a boolean"),
        Some("null") if !value.is_null() => fail("must be null"),
        Some("string" | "number" | "integer" | "boolean" | "null") => {
            Started::Done(check_literals(node, value, &path))
        }
        // Not in the subset: `check_schema` refuses it, so there is nothing to enforce.
        _ => Started::Done(Vec::new()),
    }
}

fn frame<'a>(kind: Kind, value: &'a Value, path: String, children: Vec<Child<'a>>) -> Frame<'a> {
    Frame {
        kind,
        value,
        path,
        children: children.into_iter(),
        violations: Vec::new(),
        tail: Vec::new(),
        matches: 0,
    }
}

fn start_object<'a>(
    node: &'a Value,
    object: &'a Map<String, Value>,
    value: &'a Value,
    path: String,
) -> Frame<'a> {
    let properties = node.get("properties").and_then(Value::as_object);
    let mut violations = Vec::new();
    if let Some(required) = node.get("required").and_then(Value::as_array) {
        for key in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(key) {
                violations.push(format!(
                    "missing required property \"{}\"",
                    property_path(&path, key)
                ));
            }
        }
    }
    let children: Vec<Child<'a>> = properties
        .map(|properties| {
            js::entries(properties)
                .into_iter()
                .filter_map(|(key, child)| {
                    object.get(key).map(|entry| Child {
                        node: child,
                        value: entry,
                        path: property_path(&path, key),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let mut tail = Vec::new();
    if node.get("additionalProperties") == Some(&Value::Bool(false)) {
        for (key, _) in js::entries(object) {
            if !properties.is_some_and(|properties| properties.contains_key(key)) {
                tail.push(format!(
                    "\"{}\" is not a declared property (additionalProperties: false)",
                    property_path(&path, key)
                ));
            }
        }
    }
    let mut frame = frame(Kind::Object, value, path, children);
    frame.violations = violations;
    frame.tail = tail;
    frame
}

fn finish(frame: Frame<'_>) -> Vec<String> {
    let Frame {
        kind,
        value,
        path,
        mut violations,
        tail,
        matches,
        ..
    } = frame;
    match kind {
        Kind::OneOf if matches == 1 => Vec::new(),
        Kind::OneOf => vec![format!(
            "\"{}\" must match exactly one oneOf branch (matched {matches})",
            shown(&path)
        )],
        Kind::Object | Kind::Array => {
            violations.extend(tail);
            if !violations.is_empty() {
                violations
            } else if kind == Kind::Object {
                lossless(value, &path, "must be a lossless JSON object")
            } else {
                lossless(value, &path, "must be a dense lossless JSON array")
            }
        }
    }
}

fn lossless(value: &Value, path: &str, what: &str) -> Vec<String> {
    if js::is_lossless(value) {
        Vec::new()
    } else {
        vec![format!("\"{}\" {what}", shown(path))]
    }
}

/// `enum` and `const` of a scalar node, after its type matched.
fn check_literals(schema: &Value, value: &Value, path: &str) -> Vec<String> {
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.iter().any(|entry| js::scalar_equal(entry, value))
    {
        return vec![format!(
            "\"{}\" must be one of {}",
            shown(path),
            dsh_protocol::json::to_js_string(allowed)
        )];
    }
    if let Some(constant) = schema.get("const")
        && !js::scalar_equal(constant, value)
    {
        return vec![format!(
            "\"{}\" must be {}",
            shown(path),
            dsh_protocol::json::to_js_string(constant)
        )];
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn args(schema: Value, value: Value) -> Vec<String> {
        validate_at(&schema, &value, "")
    }

    fn bash() -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "description": {"type": "string"},
                "timeoutMs": {"type": "number"},
                "run_in_background": {"type": "boolean"}
            },
            "required": ["command", "description"]
        })
    }

    #[test]
    fn argument_texts() {
        assert_eq!(
            args(bash(), json!({"description": "d", "timeoutMs": "5"})),
            vec![
                "missing required property \"command\"",
                "\"timeoutMs\" must be a number"
            ]
        );
        assert_eq!(
            args(
                bash(),
                json!({"command": "ls", "description": "d", "extra": 1})
            ),
            Vec::<String>::new()
        );
        assert_eq!(
            args(bash(), json!(null)),
            vec!["\"arguments\" must be an object"]
        );
        assert_eq!(
            args(bash(), json!([])),
            vec!["\"arguments\" must be an object"]
        );
    }

    #[test]
    fn closed_objects_and_nesting() {
        let schema = json!({
            "type": "object",
            "properties": {
                "config": {
                    "type": "object",
                    "properties": {"host": {"type": "string"}, "port": {"type": "integer"}},
                    "required": ["host"],
                    "additionalProperties": false
                },
                "tags": {"type": "array", "items": {"type": "string"}},
                "servers": {"type": "array", "items": {
                    "type": "object", "properties": {"host": {"type": "string"}}, "required": ["host"]
                }}
            }
        });
        assert_eq!(
            args(
                schema,
                json!({"config": {"port": 1.5, "x": 1}, "tags": ["a", 2], "servers": [{"host": "a"}, {}]})
            ),
            vec![
                "missing required property \"config.host\"",
                "\"config.port\" must be an integer",
                "\"config.x\" is not a declared property (additionalProperties: false)",
                "\"tags[1]\" must be a string",
                "missing required property \"servers[1].host\"",
            ]
        );
    }

    #[test]
    fn literals_and_one_of() {
        let schema = json!({"type": "object", "properties": {
            "color": {"type": "string", "enum": ["red", "green"]},
            "n": {"type": "number", "enum": [1, 2.5]},
            "k": {"type": "string", "const": "x"},
            "either": {"oneOf": [{"type": "string"}, {"type": "number"}]},
            "both": {"oneOf": [{"type": "number"}, {"type": "integer"}]}
        }});
        assert_eq!(
            args(
                schema,
                json!({"color": "blue", "n": 3, "k": "y", "either": true, "both": 1})
            ),
            vec![
                "\"color\" must be one of [\"red\",\"green\"]",
                "\"n\" must be one of [1,2.5]",
                "\"k\" must be \"x\"",
                "\"either\" must match exactly one oneOf branch (matched 0)",
                "\"both\" must match exactly one oneOf branch (matched 2)",
            ]
        );
    }

    #[test]
    fn values_use_their_root_label() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "number"}}});
        assert_eq!(
            validate_at(&schema, &json!({"n": -0.0}), "value"),
            vec!["\"value.n\" must be a finite JSON number"]
        );
        assert_eq!(
            validate_at(&json!({}), &json!([-0.0]), "value"),
            vec!["\"value\" must be a lossless JSON value"]
        );
        assert_eq!(
            validate_at(&json!({"type": "array"}), &json!([-0.0]), "value"),
            vec!["\"value\" must be a dense lossless JSON array"]
        );
    }
}
