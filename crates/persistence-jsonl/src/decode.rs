//! Turning a log file's bytes into a header and events: zstd frames or plain JSONL, with the
//! torn-tail and corruption rules of dsh 0.1.

use std::path::Path;

use dsh_persistence::BackendError;
use dsh_session::{SessionEvent, SessionHeader};

use crate::backend::JsonlTornMarker;
use crate::files::read_prefix_until;
use crate::header_line::{
    HeaderProblem, parse_header_line, parse_header_line_any_version, parse_header_record,
};
use crate::layout::Compression;
use crate::scan::LogScanner;
use crate::zstd_frames::{FrameDecoder, decode_all, scan_frames_up_to};

/// A decoded log.
#[derive(Debug)]
pub struct DecodedLog {
    /// The header.
    pub header: SessionHeader,
    /// The committed events (plus events recovered from a torn final frame).
    pub events: Vec<SessionEvent>,
    /// How to cut the torn tail, when there is one.
    pub torn: Option<JsonlTornMarker>,
}

fn corrupt(message: impl std::fmt::Display, path: &Path) -> BackendError {
    BackendError::Corrupt(format!("{message} (file: {})", path.display()))
}

fn header_error(problem: &HeaderProblem, path: &Path) -> BackendError {
    match problem {
        HeaderProblem::ForeignVersion(text) => {
            BackendError::FormatUnsupported(format!("{text} (raw log: {})", path.display()))
        }
        other => corrupt(other.message(), path),
    }
}

/// Decodes a whole log file.
pub fn decode_log(
    bytes: &[u8],
    compression: Compression,
    path: &Path,
) -> Result<DecodedLog, BackendError> {
    match compression {
        Compression::None => decode_raw(bytes, path),
        Compression::Zstd => decode_zstd(bytes, path),
    }
}

fn decode_raw(bytes: &[u8], path: &Path) -> Result<DecodedLog, BackendError> {
    let Some(header_end) = bytes.iter().position(|&byte| byte == b'\n') else {
        return Err(corrupt("empty or header-less session log", path));
    };
    let (record, rest) = bytes.split_at(header_end + 1);
    let header = parse_header_record(record).map_err(|problem| header_error(&problem, path))?;
    let mut scanner = LogScanner::new(record.len());
    scanner
        .write(rest)
        .map_err(|message| corrupt(message, path))?;
    let outcome = scanner.finish();
    let torn = (outcome.committed_bytes < bytes.len()).then(|| JsonlTornMarker {
        truncate_to: outcome.committed_bytes as u64,
        recovered: Vec::new(),
    });
    Ok(DecodedLog {
        header,
        events: outcome.events,
        torn,
    })
}

fn decode_zstd(bytes: &[u8], path: &Path) -> Result<DecodedLog, BackendError> {
    let log = decode_all(bytes).map_err(|error| corrupt(error, path))?;
    let Some(first) = log.frames.first() else {
        return Err(corrupt("empty or header-less Zstandard session log", path));
    };
    let record = log.plaintext.get(first.plain.clone()).unwrap_or_default();
    let one_line =
        record.last() == Some(&b'\n') && record.iter().filter(|&&byte| byte == b'\n').count() == 1;
    if !one_line {
        return Err(corrupt(
            "corrupt Zstandard session log: first frame is not exactly one header line",
            path,
        ));
    }
    let header = parse_header_record(record).map_err(|problem| header_error(&problem, path))?;
    let mut scanner = LogScanner::new(record.len());
    let body = log.plaintext.get(first.plain.end..).unwrap_or_default();
    scanner
        .write(body)
        .map_err(|message| corrupt(message, path))?;
    let (input, committed, complete_events) = scanner.checkpoint();
    if committed != input {
        return Err(corrupt(
            "corrupt Zstandard session log: complete frame contains a torn JSONL record",
            path,
        ));
    }
    let Some((torn_start, recovered)) = log.torn else {
        let outcome = scanner.finish();
        return Ok(DecodedLog {
            header,
            events: outcome.events,
            torn: None,
        });
    };
    scanner
        .write(&recovered)
        .map_err(|message| corrupt(message, path))?;
    let outcome = scanner.finish();
    let recovered = outcome
        .events
        .get(complete_events..)
        .unwrap_or_default()
        .to_vec();
    Ok(DecodedLog {
        header,
        events: outcome.events,
        torn: Some(JsonlTornMarker {
            truncate_to: torn_start as u64,
            recovered,
        }),
    })
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
            let log = decode_all(bytes).map_err(|error| corrupt(error, path))?;
            if log.frames.is_empty() {
                return Err(corrupt("empty or header-less Zstandard session log", path));
            }
            log.plaintext
        }
    };
    String::from_utf8(plain)
        .map_err(|_| corrupt("corrupt session log: the text is not UTF-8", path))
}

/// Reads only the header of a log (the first line or the first frame), for listing.
/// `Ok(None)` for an empty, half-written, or non-header file.
pub fn read_header_only(
    path: &Path,
    compression: Compression,
) -> Result<Option<SessionHeader>, BackendError> {
    const LIMIT: usize = 1 << 20;
    let line = match compression {
        Compression::None => {
            let bytes = read_prefix_until(path, LIMIT, |bytes| bytes.contains(&b'\n'))?;
            match bytes.iter().position(|&byte| byte == b'\n') {
                Some(end) => bytes.get(..end).unwrap_or_default().to_vec(),
                None => return Ok(None),
            }
        }
        Compression::Zstd => {
            let complete = |bytes: &[u8]| {
                scan_frames_up_to(bytes, 1).is_ok_and(|scan| !scan.frames.is_empty())
            };
            let bytes = read_prefix_until(path, LIMIT, complete)?;
            let scan = scan_frames_up_to(&bytes, 1).map_err(|error| corrupt(error, path))?;
            let Some(frame) = scan.frames.first() else {
                return Ok(None);
            };
            let mut plain = Vec::new();
            FrameDecoder::new()
                .decode_range(&bytes, frame.clone(), &mut plain)
                .map_err(|_| {
                    corrupt(
                        "corrupt Zstandard session log: header frame failed validation",
                        path,
                    )
                })?;
            let one_line = plain.last() == Some(&b'\n')
                && plain.iter().filter(|&&byte| byte == b'\n').count() == 1;
            if !one_line {
                return Err(corrupt(
                    "corrupt Zstandard session log: first frame is not exactly one header line",
                    path,
                ));
            }
            plain.pop();
            plain
        }
    };
    match parse_header_line(&line) {
        Ok(header) => Ok(Some(header)),
        Err(HeaderProblem::ForeignVersion(_)) => Ok(parse_header_line_any_version(&line)),
        // A header of the right shape that dsh refuses to read: refused here too, not hidden.
        Err(problem @ HeaderProblem::Retired) => Err(corrupt(problem.message(), path)),
        Err(_) => Ok(None),
    }
}
