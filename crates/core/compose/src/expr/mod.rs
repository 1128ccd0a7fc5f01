//! Config expressions: the `!!js` subset dsh's own bundles use, evaluated by a small safe
//! interpreter (no JavaScript engine).
//!
//! Supported: string and number literals, `true`/`false`/`null`/`undefined`, `( )`, `!`,
//! `===`/`!==`, `&&`, `||`, `??` (not mixed with `||`/`&&` without parentheses, as in
//! JavaScript), `c ? a : b`, member access `a.b`, `a?.b`, `a['b']`, and these names:
//!
//! - `process.env.NAME`, `process.platform`, `process.arch`, `process.cwd()`
//! - `dshHomePath('segment', ...)`: a path under `$DSH_HOME`
//! - `JSON.parse(text)`
//! - `ctx.<service>.<field>`: a field a service injected by the row exposes
//!
//! Anything else is refused with a message naming the expression.

mod eval;
mod parser;
mod template;

pub use eval::LaunchEnv;
pub use eval::Services;
pub use parser::Expression;
pub use template::Template;

/// Why an expression could not be parsed or evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expression `{source_text}`: {message}")]
pub struct ExprError {
    /// The expression's source.
    pub source_text: String,
    /// What went wrong.
    pub message: String,
}
