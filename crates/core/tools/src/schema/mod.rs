//! dsh's enforced JSON Schema subset (`packages/core/tools/src/json-schema.ts`).
//!
//! A schema node is one of:
//!
//! - an annotation-only node (`{}` or `{"description": ...}`): any JSON value;
//! - `{"type": T}` with one `T` of `object`, `array`, `string`, `number`, `integer`,
//!   `boolean`, `null`; objects may add `properties`, `required` (names that must be declared)
//!   and a boolean `additionalProperties`, arrays `items`, scalars a type-correct `enum` and
//!   `const`;
//! - `{"oneOf": [...]}` with at least two branches, exactly one of which must match.
//!
//! `description`, `title`, `default` and `examples` are annotations; every other keyword is
//! refused ([`check_schema`]) rather than silently left unenforced.

mod check;
pub(crate) mod js;
mod validate;

use serde_json::Value;

pub use check::schema_violations;
pub use validate::validate_at;

use crate::error::ToolError;

/// Refuses a schema outside the subset with `unsupported JSON schema: <violations>` (code
/// `UNSUPPORTED_SCHEMA`); `root` names the schema in the violations (dsh says `schema`).
pub fn check_schema(schema: &Value, root: &str) -> Result<(), ToolError> {
    let violations = schema_violations(schema, root);
    if violations.is_empty() {
        Ok(())
    } else {
        Err(ToolError::unsupported_schema(&violations))
    }
}

/// Validates tool arguments against a `parameters` schema, with dsh's texts
/// (`missing required property "command"`, `"timeoutMs" must be a number`, ...). Empty means
/// valid.
pub fn validate(schema: &Value, arguments: &Value) -> Vec<String> {
    validate_at(schema, arguments, "")
}

#[cfg(test)]
mod properties;
