//! dsh's YAML dialect: js-yaml's JSON schema extended with `!!js <expression>`.
//!
//! Common serde YAML crates resolve `!!js` as a core tag and silently drop it, so the tree is
//! built from `saphyr-parser` events, which hand us every tag, and printed by our own emitter.

mod emit;
mod parse;
mod scalar;

pub(crate) use emit::rows_to_yaml;
pub use emit::to_yaml;
pub use parse::YamlError;
pub use parse::parse_document;
pub(crate) use scalar::number_from_f64;
