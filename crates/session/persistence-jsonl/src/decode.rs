//! Turning a log file's bytes into a header and events: zstd frames or plain JSONL, with the
//! torn-tail and corruption rules of dsh 0.1.

use std::ops::Range;
use std::path::Path;

use dsh_persistence::BackendError;
use dsh_session::{SessionEvent, SessionHeader};

use crate::backend::JsonlTornMarker;
use crate::files::read_prefix_until;
use crate::header_line::{
    HeaderProblem, parse_header_line, parse_header_line_any_version, parse_header_record,
};
use crate::layout::Compression;
use crate::scan::{DecodedLines, LogScanner, decode_plaintext};
use crate::zstd_frames::{FrameDecoder, FrameError, decode_all, scan_frames, scan_frames_up_to};

/// A decoded log.
#[derive(Debug)]
pub struct ReadLog {
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

/// A header problem as a backend error: a format refusal, or corruption naming the file.
pub(crate) fn header_error(problem: &HeaderProblem, path: &Path) -> BackendError {
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
) -> Result<ReadLog, BackendError> {
    match compression {
        Compression::None => decode_raw(bytes, path),
        Compression::Zstd => decode_zstd(bytes, path),
    }
}

fn decode_raw(bytes: &[u8], path: &Path) -> Result<ReadLog, BackendError> {
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
    Ok(ReadLog {
        header,
        events: outcome.events,
        torn,
    })
}

fn decode_zstd(bytes: &[u8], path: &Path) -> Result<ReadLog, BackendError> {
    let scan = scan_frames(bytes).map_err(|error| corrupt(error, path))?;
    let Some((first, body)) = scan.frames.split_first() else {
        return Err(corrupt("empty or header-less Zstandard session log", path));
    };
    let mut decoder = FrameDecoder::new();
    let mut record = Vec::new();
    decoder
        .decode_range(bytes, first.clone(), &mut record)
        .map_err(|error| corrupt(error, path))?;
    let one_line =
        record.last() == Some(&b'\n') && record.iter().filter(|&&byte| byte == b'\n').count() == 1;
    if !one_line {
        return Err(corrupt(
            "corrupt Zstandard session log: first frame is not exactly one header line",
            path,
        ));
    }
    let header = parse_header_record(&record).map_err(|problem| header_error(&problem, path))?;
    let mut scanner = LogScanner::new(record.len());
    match decode_frames_in_parallel(bytes, body) {
        Ok(Some(groups)) => {
            scanner.reserve(groups.iter().map(DecodedLines::event_count).sum());
            for lines in groups {
                scanner
                    .accept_lines(lines)
                    .map_err(|message| corrupt(message, path))?;
            }
        }
        Ok(None) => {
            // A record runs across frames: decode in order, joining fragments.
            let mut plain = Vec::new();
            for frame in body {
                plain.clear();
                decoder
                    .decode_range(bytes, frame.clone(), &mut plain)
                    .map_err(|error| corrupt(error, path))?;
                scanner
                    .write(&plain)
                    .map_err(|message| corrupt(message, path))?;
            }
        }
        Err(error) => return Err(corrupt(error, path)),
    }
    let (input, committed, complete_events) = scanner.checkpoint();
    if committed != input {
        return Err(corrupt(
            "corrupt Zstandard session log: complete frame contains a torn JSONL record",
            path,
        ));
    }
    let Some(torn_start) = scan.torn_start else {
        let outcome = scanner.finish();
        return Ok(ReadLog {
            header,
            events: outcome.events,
            torn: None,
        });
    };
    let recovered = decoder.decode_torn(bytes.get(torn_start..).unwrap_or_default());
    scanner
        .write(&recovered)
        .map_err(|message| corrupt(message, path))?;
    let outcome = scanner.finish();
    let recovered = outcome
        .events
        .get(complete_events..)
        .unwrap_or_default()
        .to_vec();
    Ok(ReadLog {
        header,
        events: outcome.events,
        torn: Some(JsonlTornMarker {
            truncate_to: torn_start as u64,
            recovered,
        }),
    })
}

/// Below this many compressed bytes, frames are decoded on the calling thread.
const PARALLEL_FRAMES_THRESHOLD: usize = 64 * 1024;

/// Decodes complete frames and their lines, split in file order across the available cores,
/// each worker reusing one decoder and one buffer (no whole-log plaintext is ever held).
/// `Ok(None)` when some frame does not end at a line end; the first frame error otherwise.
fn decode_frames_in_parallel(
    bytes: &[u8],
    frames: &[Range<usize>],
) -> Result<Option<Vec<DecodedLines>>, FrameError> {
    let compressed: usize = frames.iter().map(ExactSizeIterator::len).sum();
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let workers = if compressed < PARALLEL_FRAMES_THRESHOLD {
        1
    } else {
        cores.clamp(1, 8)
    };
    let mut groups: Vec<&[Range<usize>]> = Vec::with_capacity(workers);
    let mut rest = frames;
    for worker in 0..workers {
        let remaining_workers = workers - worker;
        let take = rest.len().div_ceil(remaining_workers.max(1));
        let (group, tail) = rest.split_at(take.min(rest.len()));
        groups.push(group);
        rest = tail;
    }
    let decode_group = |group: &[Range<usize>]| -> Result<Option<Vec<DecodedLines>>, FrameError> {
        let mut decoder = FrameDecoder::new();
        let mut plain = Vec::new();
        let mut decoded = Vec::with_capacity(group.len());
        for frame in group {
            plain.clear();
            decoder.decode_range(bytes, frame.clone(), &mut plain)?;
            match decode_plaintext(&plain) {
                Some(lines) => decoded.push(lines),
                None => return Ok(None),
            }
        }
        Ok(Some(decoded))
    };
    let results: Vec<Result<Option<Vec<DecodedLines>>, FrameError>> = if workers == 1 {
        vec![decode_group(frames)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = groups
                .iter()
                .skip(1)
                .map(|group| scope.spawn(move || decode_group(group)))
                .collect();
            let mut results = vec![decode_group(groups.first().copied().unwrap_or_default())];
            for handle in handles {
                results.push(handle.join().unwrap_or(Ok(None)));
            }
            results
        })
    };
    let mut all = Vec::with_capacity(frames.len());
    for result in results {
        match result? {
            Some(decoded) => all.extend(decoded),
            None => return Ok(None),
        }
    }
    Ok(Some(all))
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
                None if bytes.is_empty() => return Err(corrupt("empty session log", path)),
                None => {
                    return Err(corrupt(
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
            let scan = scan_frames_up_to(&bytes, 1).map_err(|error| corrupt(error, path))?;
            let Some(frame) = scan.frames.first() else {
                let what = if bytes.is_empty() {
                    "empty Zstandard session log"
                } else {
                    "header-less Zstandard session log: the first frame does not end"
                };
                return Err(corrupt(what, path));
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
        Ok(header) => Ok(header),
        Err(problem @ HeaderProblem::ForeignVersion(_)) => {
            parse_header_line_any_version(&line).ok_or_else(|| header_error(&problem, path))
        }
        Err(problem) => Err(header_error(&problem, path)),
    }
}
