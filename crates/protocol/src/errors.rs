//! The boxed error every layer passes around, and how it is printed.

use std::error::Error;

/// A boxed error: what plugins, listeners and adapters return when they fail.
pub type BoxError = Box<dyn Error + Send + Sync + 'static>;

/// An error and its sources joined with `: `, deepest last (dsh's `errorChain`). A source whose
/// text already ends the chain is not repeated.
pub fn error_chain(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let next = cause.to_string();
        if !text.ends_with(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = cause.source();
    }
    text
}
