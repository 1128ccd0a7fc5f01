//! Reading: strict UTF-8 text (whole or streamed), bounded bytes, and the diff basis.

use std::fs::File;
use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use crate::error::{FsError, FsErrorCode};

use super::resolve::{is_missing, quoted};

/// How many leading bytes are checked for a NUL (dsh's binary sniff).
pub const BINARY_SNIFF_BYTES: usize = 8192;
/// The largest file read whole (edits and views); larger files are `FS_TOO_LARGE`.
pub const MAX_WHOLE_TEXT_BYTES: u64 = 256 * 1024 * 1024;
/// The chunk a stream reads and hands on: the memory a streamed read needs.
const CHUNK_BYTES: usize = 256 * 1024;
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Opens `path` for reading without following a final link or blocking on a FIFO, and
/// checks it is a regular file; `verb` names the operation in messages.
pub(crate) fn open_regular(path: &Path, display: &str, verb: &str) -> Result<(File, u64), FsError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
        .open(path)
        .map_err(|error| open_error(&error, path, display, verb).caused_by(error))?;
    let meta = file
        .metadata()
        .map_err(|error| io_error(&error, display, verb).caused_by(error))?;
    if !meta.is_file() {
        return Err(FsError::new(
            FsErrorCode::NotRegularFile,
            format!("cannot {verb} {}: not a regular file", quoted(display)),
        ));
    }
    Ok((file, meta.len()))
}

fn open_error(error: &std::io::Error, path: &Path, display: &str, verb: &str) -> FsError {
    if error.kind() == std::io::ErrorKind::PermissionDenied {
        // dsh passes the operating system's refusal on as it is, without a code.
        return FsError::plain(
            format!("EACCES: permission denied, open '{}'", path.display()),
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        );
    }
    if is_missing(error) {
        FsError::new(
            FsErrorCode::NotFound,
            format!("cannot {verb} {}: not found", quoted(display)),
        )
    } else {
        io_error(error, display, verb)
    }
}

/// An operating-system failure as an `FsError` of the matching code.
pub(crate) fn io_error(error: &std::io::Error, display: &str, verb: &str) -> FsError {
    let code = match error.kind() {
        std::io::ErrorKind::PermissionDenied => FsErrorCode::PermissionDenied,
        _ if error.raw_os_error() == Some(nix::libc::ELOOP) => FsErrorCode::NotRegularFile,
        _ => FsErrorCode::IoError,
    };
    let detail = match code {
        FsErrorCode::PermissionDenied => "permission denied".to_owned(),
        FsErrorCode::NotRegularFile => "not a regular file".to_owned(),
        _ => error.to_string(),
    };
    FsError::new(code, format!("cannot {verb} {}: {detail}", quoted(display)))
}

fn binary(display: &str, verb: &str) -> FsError {
    FsError::new(
        FsErrorCode::NotText,
        format!("cannot {verb} {}: binary file", quoted(display)),
    )
}

fn invalid_utf8(display: &str, verb: &str) -> FsError {
    FsError::new(
        FsErrorCode::NotText,
        format!("cannot {verb} {}: invalid UTF-8 text", quoted(display)),
    )
}

/// The whole text of `path`; `nul_anywhere` refuses a NUL at any offset (edits), else only
/// in the first [`BINARY_SNIFF_BYTES`].
pub(crate) fn read_whole_text(
    path: &Path,
    display: &str,
    verb: &str,
    nul_anywhere: bool,
) -> Result<String, FsError> {
    let (mut file, size) = open_regular(path, display, verb)?;
    if size > MAX_WHOLE_TEXT_BYTES {
        return Err(FsError::new(
            FsErrorCode::TooLarge,
            format!(
                "cannot {verb} {}: {size} bytes exceeds the {MAX_WHOLE_TEXT_BYTES}-byte limit",
                quoted(display)
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.by_ref()
        .take(MAX_WHOLE_TEXT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| io_error(&error, display, verb).caused_by(error))?;
    if bytes.len() as u64 > MAX_WHOLE_TEXT_BYTES {
        return Err(FsError::new(
            FsErrorCode::TooLarge,
            format!(
                "cannot {verb} {}: content exceeds the {MAX_WHOLE_TEXT_BYTES}-byte limit",
                quoted(display)
            ),
        ));
    }
    let sniff = if nul_anywhere {
        &bytes[..]
    } else {
        bytes.get(..BINARY_SNIFF_BYTES).unwrap_or(&bytes)
    };
    if memchr::memchr(0, sniff).is_some() {
        return Err(binary(display, verb));
    }
    let start = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
    bytes.drain(..start);
    String::from_utf8(bytes).map_err(|_| invalid_utf8(display, verb))
}

/// Streams the text of `path` to `sink` in decoded chunks, with the same checks as a whole
/// read; memory stays within one chunk.
pub(crate) fn stream_text(
    path: &Path,
    display: &str,
    sink: &mut dyn FnMut(&str) -> Result<(), FsError>,
) -> Result<(), FsError> {
    let verb = "read";
    let (mut file, _) = open_regular(path, display, verb)?;
    let mut buffer = vec![0u8; CHUNK_BYTES + 4];
    let mut carried = 0usize;
    let mut offset = 0usize;
    let mut first = true;
    loop {
        let read = file
            .read(buffer.get_mut(carried..).unwrap_or_default())
            .map_err(|error| io_error(&error, display, verb).caused_by(error))?;
        let filled = carried + read;
        let chunk = buffer.get(..filled).unwrap_or_default();
        if offset < BINARY_SNIFF_BYTES {
            let fresh = chunk.get(carried..).unwrap_or_default();
            let window = fresh.get(..BINARY_SNIFF_BYTES - offset).unwrap_or(fresh);
            if memchr::memchr(0, window).is_some() {
                return Err(binary(display, verb));
            }
        }
        offset += read;
        let mut text_start = 0;
        if first && (chunk.len() >= BOM.len() || read == 0) {
            first = false;
            if chunk.starts_with(BOM) {
                text_start = BOM.len();
            }
        } else if first {
            carried = filled;
            continue;
        }
        let body = chunk.get(text_start..).unwrap_or_default();
        let valid = match std::str::from_utf8(body) {
            Ok(text) => text.len(),
            Err(error) if error.error_len().is_none() && read > 0 => error.valid_up_to(),
            Err(_) => return Err(invalid_utf8(display, verb)),
        };
        let (text, rest) = body.split_at(valid);
        if !text.is_empty() {
            // Checked above: `text` is the valid prefix.
            let text = std::str::from_utf8(text).map_err(|_| invalid_utf8(display, verb))?;
            sink(text)?;
        }
        if read == 0 {
            return Ok(());
        }
        let rest_len = rest.len();
        let rest_start = filled - rest_len;
        buffer.copy_within(rest_start..filled, 0);
        carried = rest_len;
    }
}

/// The raw bytes of `path`, at most `max` (inclusive).
pub(crate) fn read_bytes(path: &Path, display: &str, max: u64) -> Result<Vec<u8>, FsError> {
    let verb = "read";
    let (file, size) = open_regular(path, display, verb)?;
    if size > max {
        return Err(FsError::new(
            FsErrorCode::TooLarge,
            format!(
                "cannot read {}: {size} bytes exceeds the {max}-byte limit",
                quoted(display)
            ),
        ));
    }
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| io_error(&error, display, verb).caused_by(error))?;
    if bytes.len() as u64 > max {
        return Err(FsError::new(
            FsErrorCode::TooLarge,
            format!(
                "cannot read {}: content exceeds the {max}-byte limit",
                quoted(display)
            ),
        ));
    }
    Ok(bytes)
}

/// The previous text of a file for a diff, line endings as `\n`: `None` when it is not a
/// regular file, is at or over `max` bytes, changes size while read, or is not text.
pub(crate) fn read_text_for_diff(path: &Path, max: u64) -> Option<String> {
    let (file, size) = open_regular(path, "", "read").ok()?;
    if size >= max {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 != size || memchr::memchr(0, &bytes).is_some() {
        return None;
    }
    let start = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
    let text = std::str::from_utf8(bytes.get(start..)?).ok()?;
    Some(text.replace("\r\n", "\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn streamed(path: &Path) -> Result<String, FsError> {
        let mut out = String::new();
        stream_text(path, "/f", &mut |chunk| {
            out.push_str(chunk);
            Ok(())
        })?;
        Ok(out)
    }

    #[test]
    fn streaming_equals_a_whole_read_across_chunk_splits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut text = String::from("\u{feff}");
        while text.len() < 3 * CHUNK_BYTES {
            text.push_str("héllo wörld ✓ 😀\n");
        }
        std::fs::write(&path, &text).unwrap();
        let whole = read_whole_text(&path, "/f", "read", false).unwrap();
        assert_eq!(streamed(&path).unwrap(), whole);
        assert!(!whole.starts_with('\u{feff}'));
    }

    #[test]
    fn streaming_refuses_binary_and_invalid_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"abc\0def").unwrap();
        assert_eq!(
            streamed(&path).unwrap_err().message(),
            "cannot read \"/f\": binary file"
        );
        std::fs::write(&path, b"abc\xffdef").unwrap();
        assert_eq!(
            streamed(&path).unwrap_err().message(),
            "cannot read \"/f\": invalid UTF-8 text"
        );
        std::fs::write(&path, b"ends in a cut \xe2\x9c").unwrap();
        assert_eq!(
            streamed(&path).unwrap_err().code(),
            Some(FsErrorCode::NotText)
        );
        std::fs::write(&path, b"").unwrap();
        assert_eq!(streamed(&path).unwrap(), "");
    }

    #[test]
    fn bytes_are_capped_inclusively() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read_bytes(&path, "/f", 5).unwrap(), b"12345");
        assert_eq!(
            read_bytes(&path, "/f", 4).unwrap_err().message(),
            "cannot read \"/f\": 5 bytes exceeds the 4-byte limit"
        );
    }
}
