//! Reading a log file of this store: the whole log or its text in the store's encoding, or only
//! its header (for listing).

use std::path::Path;

use dsh_persistence::BackendError;
use dsh_persistence::log_file::decode::{
    ReadLog, corrupt_log, decode_framed, decode_plain, header_error,
};
use dsh_persistence::log_file::header_line::{
    HeaderProblem, parse_header_line, parse_header_line_any_version,
};
use dsh_persistence::log_file::zstd_frames::{FrameDecoder, decode_all, scan_frames_up_to};
use dsh_session::SessionHeader;

use crate::files::read_prefix_until;
use crate::layout::Compression;

/// Decodes a whole log file.
pub fn decode_log(
    bytes: &[u8],
    compression: Compression,
    path: &Path,
) -> Result<ReadLog, BackendError> {
    match compression {
        Compression::None => decode_plain(bytes, path),
        Compression::Zstd => decode_framed(bytes, path),
    }
}

/// The decoded text of a log: every complete frame (a torn final frame omitted), or the raw
/// file.
pub fn decode_text(
    bytes: &[u8],
    compression: Compression,
    path: &Path,
) -> Result<String, BackendError> {
    let plain = match compression {
        Compression::None => bytes.to_vec(),
        Compression::Zstd => {
            let log = decode_all(bytes).map_err(|error| corrupt_log(error, path))?;
            if log.frames.is_empty() {
                return Err(corrupt_log(
                    "empty or header-less Zstandard session log",
                    path,
                ));
            }
            log.plaintext
        }
    };
    String::from_utf8(plain)
        .map_err(|_| corrupt_log("corrupt session log: the text is not UTF-8", path))
}

/// Reads only the header of a log (the first line or the first frame), for listing. A log is
/// published whole (header included), so an empty log, a first line or frame that never
/// ends, or a first line that is not a header is damage, reported naming the file. A header
/// of another format version is returned (opening that log is refused elsewhere).
pub fn read_header_only(
    path: &Path,
    compression: Compression,
) -> Result<SessionHeader, BackendError> {
    const LIMIT: usize = 1 << 20;
    let line = match compression {
        Compression::None => {
            let bytes = read_prefix_until(path, LIMIT, |bytes| bytes.contains(&b'\n'))?;
            match bytes.iter().position(|&byte| byte == b'\n') {
                Some(end) => bytes.get(..end).unwrap_or_default().to_vec(),
                None if bytes.is_empty() => return Err(corrupt_log("empty session log", path)),
                None => {
                    return Err(corrupt_log(
                        "header-less session log: the first line does not end",
                        path,
                    ));
                }
            }
        }
        Compression::Zstd => {
            let complete = |bytes: &[u8]| {
                scan_frames_up_to(bytes, 1).is_ok_and(|scan| !scan.frames.is_empty())
            };
            let bytes = read_prefix_until(path, LIMIT, complete)?;
            let scan = scan_frames_up_to(&bytes, 1).map_err(|error| corrupt_log(error, path))?;
            let Some(frame) = scan.frames.first() else {
                let what = if bytes.is_empty() {
                    "empty Zstandard session log"
                } else {
                    "header-less Zstandard session log: the first frame does not end"
                };
                return Err(corrupt_log(what, path));
            };
            let mut plain = Vec::new();
            FrameDecoder::new()
                .decode_range(&bytes, frame.clone(), &mut plain)
                .map_err(|_| {
                    corrupt_log(
                        "corrupt Zstandard session log: header frame failed validation",
                        path,
                    )
                })?;
            let one_line = plain.last() == Some(&b'\n')
                && plain.iter().filter(|&&byte| byte == b'\n').count() == 1;
            if !one_line {
                return Err(corrupt_log(
                    "corrupt Zstandard session log: first frame is not exactly one header line",
                    path,
                ));
            }
            plain.pop();
            plain
        }
    };
    match parse_header_line(&line) {
        Ok(header) => Ok(header),
        Err(problem @ HeaderProblem::ForeignVersion(_)) => {
            parse_header_line_any_version(&line).ok_or_else(|| header_error(&problem, path))
        }
        Err(problem) => Err(header_error(&problem, path)),
    }
}
