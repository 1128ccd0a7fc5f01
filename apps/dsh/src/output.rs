//! Writing to stdout and stderr. A closed pipe is not an error worth a panic.

use std::io::Write as _;

/// Writes `text` to stdout as is.
pub fn stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Writes `dsh: <message>` to stderr (errors and warnings alike).
pub fn diagnostic(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "dsh: {message}");
}

/// Writes `text` to stderr as is, with a final newline.
pub fn stderr_line(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
