//! Turning a log file's bytes into a header and events, zstd frames or plain JSONL, with the
//! torn-tail and corruption rules of dsh 0.1.

use std::ops::Range;
use std::path::Path;

use dsh_session::{SessionEvent, SessionHeader};

use super::header_line::{HeaderProblem, parse_header_record};
use super::scan::{DecodedLines, LogScanner, decode_plaintext};
use super::zstd_frames::{FrameDecoder, FrameError, scan_frames};
use crate::error::BackendError;

/// A decoded log.
#[derive(Debug)]
pub struct ReadLog {
    /// The header.
    pub header: SessionHeader,
    /// The committed events (plus events recovered from a torn final frame).
    pub events: Vec<SessionEvent>,
    /// How to cut the torn tail, when there is one.
    pub torn: Option<TornTail>,
}

/// What a load needs to cut a torn tail: the byte offset to keep, and the complete events
/// recovered from a torn final zstd frame (re-appended after the cut).
#[derive(Debug)]
pub struct TornTail {
    /// Bytes to keep.
    pub truncate_to: u64,
    /// Events read from the torn frame.
    pub recovered: Vec<SessionEvent>,
}

/// Damage in the log at `path`: `message`, naming the file.
pub fn corrupt_log(message: impl std::fmt::Display, path: &Path) -> BackendError {
    BackendError::Corrupt(format!("{message} (file: {})", path.display()))
}

/// A header problem as a backend error: a format refusal, or corruption naming the file.
pub fn header_error(problem: &HeaderProblem, path: &Path) -> BackendError {
    match problem {
        HeaderProblem::ForeignVersion(text) => {
            BackendError::FormatUnsupported(format!("{text} (raw log: {})", path.display()))
        }
        other => corrupt_log(other.message(), path),
    }
}

/// Decodes a plain JSONL log file (`session.jsonl`): the header line, then every complete
/// event; a torn final line is left for the caller to cut.
pub fn decode_plain(bytes: &[u8], path: &Path) -> Result<ReadLog, BackendError> {
    let Some(header_end) = bytes.iter().position(|&byte| byte == b'\n') else {
        return Err(corrupt_log("empty or header-less session log", path));
    };
    let (record, rest) = bytes.split_at(header_end + 1);
    let header = parse_header_record(record).map_err(|problem| header_error(&problem, path))?;
    let mut scanner = LogScanner::new(record.len());
    scanner
        .write(rest)
        .map_err(|message| corrupt_log(message, path))?;
    let outcome = scanner.finish();
    let torn = (outcome.committed_bytes < bytes.len()).then(|| TornTail {
        truncate_to: outcome.committed_bytes as u64,
        recovered: Vec::new(),
    });
    Ok(ReadLog {
        header,
        events: outcome.events,
        torn,
    })
}

/// Decodes a log in zstd frames (`session.jsonl.zstd`): the header frame, then every complete
/// frame's events, plus what a torn final frame still yields.
pub fn decode_framed(bytes: &[u8], path: &Path) -> Result<ReadLog, BackendError> {
    let scan = scan_frames(bytes).map_err(|error| corrupt_log(error, path))?;
    let Some((first, body)) = scan.frames.split_first() else {
        return Err(corrupt_log(
            "empty or header-less Zstandard session log",
            path,
        ));
    };
    let mut decoder = FrameDecoder::new();
    let mut record = Vec::new();
    decoder
        .decode_range(bytes, first.clone(), &mut record)
        .map_err(|error| corrupt_log(error, path))?;
    let one_line =
        record.last() == Some(&b'\n') && record.iter().filter(|&&byte| byte == b'\n').count() == 1;
    if !one_line {
        return Err(corrupt_log(
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
                    .map_err(|message| corrupt_log(message, path))?;
            }
        }
        Ok(None) => {
            // A record runs across frames: decode in order, joining fragments.
            let mut plain = Vec::new();
            for frame in body {
                plain.clear();
                decoder
                    .decode_range(bytes, frame.clone(), &mut plain)
                    .map_err(|error| corrupt_log(error, path))?;
                scanner
                    .write(&plain)
                    .map_err(|message| corrupt_log(message, path))?;
            }
        }
        Err(error) => return Err(corrupt_log(error, path)),
    }
    let (input, committed, complete_events) = scanner.checkpoint();
    if committed != input {
        return Err(corrupt_log(
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
        .map_err(|message| corrupt_log(message, path))?;
    let outcome = scanner.finish();
    let recovered = outcome
        .events
        .get(complete_events..)
        .unwrap_or_default()
        .to_vec();
    Ok(ReadLog {
        header,
        events: outcome.events,
        torn: Some(TornTail {
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
