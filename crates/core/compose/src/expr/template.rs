//! A row's config compiled once: literal parts as JSON, expressions parsed, resolved at each
//! activation.

use serde_json::Value;

use super::ExprError;
use super::LaunchEnv;
use super::Services;
use super::parser::Expression;
use crate::node::Node;

/// A config tree whose expressions are parsed and whose literal parts are already JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Template {
    /// A subtree without expressions.
    Literal(Value),
    /// An expression.
    Expr(Expression),
    /// A sequence with expressions inside.
    Seq(Vec<Template>),
    /// A mapping with expressions inside.
    Map(Vec<(String, Template)>),
}

/// An expression of a template failed, at `path`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {error}")]
pub struct TemplateError {
    /// Where in the tree (`config.port`).
    pub path: String,
    /// The failure.
    pub error: ExprError,
}

impl Template {
    /// Compiles `node`, found at `path`; every expression that does not parse is reported.
    pub fn compile(node: &Node, path: &str) -> Result<Self, Vec<TemplateError>> {
        let mut errors = Vec::new();
        let template = compile(node, path, &mut errors);
        if errors.is_empty() {
            Ok(template)
        } else {
            Err(errors)
        }
    }

    /// The value, when the template holds no expression.
    pub fn as_literal(&self) -> Option<&Value> {
        match self {
            Self::Literal(value) => Some(value),
            _ => None,
        }
    }

    /// Evaluates every expression; an `undefined` result leaves its key out (or is `null` in a
    /// sequence, or at the top).
    pub fn resolve(
        &self,
        path: &str,
        launch: &LaunchEnv,
        services: Option<Services<'_>>,
    ) -> Result<Value, TemplateError> {
        resolve(self, path, launch, services).map(|value| value.unwrap_or(Value::Null))
    }
}

fn compile(node: &Node, path: &str, errors: &mut Vec<TemplateError>) -> Template {
    match node {
        Node::Expr(source) => match Expression::parse(source) {
            Ok(expression) => Template::Expr(expression),
            Err(error) => {
                errors.push(TemplateError {
                    path: path.to_owned(),
                    error,
                });
                Template::Literal(Value::Null)
            }
        },
        Node::Seq(items) => {
            let items: Vec<Template> = items
                .iter()
                .enumerate()
                .map(|(index, item)| compile(item, &format!("{path}[{index}]"), errors))
                .collect();
            if items.iter().all(|item| item.as_literal().is_some()) {
                Template::Literal(node.to_json())
            } else {
                Template::Seq(items)
            }
        }
        Node::Map(map) => {
            let entries: Vec<(String, Template)> = map
                .iter()
                .map(|(key, value)| {
                    (
                        key.to_owned(),
                        compile(value, &format!("{path}.{key}"), errors),
                    )
                })
                .collect();
            if entries
                .iter()
                .all(|(_, value)| value.as_literal().is_some())
            {
                Template::Literal(node.to_json())
            } else {
                Template::Map(entries)
            }
        }
        literal => Template::Literal(literal.to_json()),
    }
}

fn resolve(
    template: &Template,
    path: &str,
    launch: &LaunchEnv,
    services: Option<Services<'_>>,
) -> Result<Option<Value>, TemplateError> {
    Ok(match template {
        Template::Literal(value) => Some(value.clone()),
        Template::Expr(expression) => {
            expression
                .evaluate(launch, services)
                .map_err(|error| TemplateError {
                    path: path.to_owned(),
                    error,
                })?
        }
        Template::Seq(items) => Some(Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    resolve(item, &format!("{path}[{index}]"), launch, services)
                        .map(|value| value.unwrap_or(Value::Null))
                })
                .collect::<Result<_, _>>()?,
        )),
        Template::Map(entries) => {
            let mut object = serde_json::Map::new();
            for (key, value) in entries {
                if let Some(value) = resolve(value, &format!("{path}.{key}"), launch, services)? {
                    object.insert(key.clone(), value);
                }
            }
            Some(Value::Object(object))
        }
    })
}
