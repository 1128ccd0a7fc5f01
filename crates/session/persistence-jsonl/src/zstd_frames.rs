//! The `session.jsonl.zstd` container: a concatenation of independent, standard zstd frames
//! (RFC 8878), as dsh 0.1 writes it (`zstd.ts`).
//!
//! Frame 1 holds exactly the header line; every later frame holds one durable append batch.
//! Frames are compressed at zstd's default level 3 with the content checksum on (the low 32
//! bits of XXH64 over the frame's plaintext, checked by the decompressor). Any standard zstd
//! decoder, the `zstd` CLI included, reads the file as one stream.
//!
//! Reading is two-step: [`scan_frames`] finds frame boundaries structurally without
//! decompressing, telling a torn final frame (EOF inside it, to be truncated away) from
//! corruption; [`FrameDecoder`] then decodes complete frames with checksum verification and
//! recovers what it can from a torn one.

use std::cell::RefCell;
use std::fmt;
use std::io;
use std::ops::Range;

use zstd::zstd_safe::{self, CParameter, DCtx, InBuffer, OutBuffer, ResetDirective};

/// The little-endian magic number opening every zstd data frame.
pub const ZSTD_MAGIC: u32 = 0xFD2F_B528;

/// The compression level of every frame: libzstd's default, which dsh 0.1 uses implicitly.
pub const COMPRESSION_LEVEL: i32 = 3;

/// RFC 8878 `Block_Maximum_Size`: no block, of any type, declares more.
const MAX_BLOCK_SIZE: u32 = 128 << 10;

/// Largest output reservation made up front from a frame header's content size; beyond it
/// the output grows as data actually arrives, so a corrupt header cannot force a huge
/// allocation.
const MAX_UPFRONT_RESERVE: usize = 64 << 20;

/// Smallest output growth step while decoding.
const MIN_GROW: usize = 16 << 10;

/// Why a byte range is not a valid zstd session log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CorruptReason {
    /// Four bytes where a frame should start are not [`ZSTD_MAGIC`] (skippable frames
    /// included); the offset is the would-be frame start.
    InvalidMagic,
    /// The frame header descriptor has its reserved or unused bit set (`d & 0x18`); the
    /// offset is the descriptor byte.
    ReservedHeaderBit,
    /// A block header declares the reserved block type 3; the offset is the block header.
    ReservedBlockType,
    /// A block header declares a size above the format's 128 KiB block maximum (RFC 8878
    /// `Block_Maximum_Size`): a damaged header, never a torn write. The offset is the block
    /// header.
    OversizedBlock,
    /// A structurally complete frame failed to decompress: a checksum mismatch, a corrupt
    /// block, or a frame that ends early or carries trailing bytes. The offset is the
    /// frame start and the text is the decoder's diagnosis.
    FailedValidation(String),
}

/// A zstd session log is corrupt (as opposed to merely torn at its end).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// Invalid bytes at `offset`, for the stated reason; the message matches dsh 0.1's.
    #[error("corrupt Zstandard session log: {}", corrupt_message(.offset, .reason))]
    Corrupt {
        /// Byte offset of the offending structure (see [`CorruptReason`]).
        offset: usize,
        /// What is wrong there.
        reason: CorruptReason,
    },
}

impl FrameError {
    /// The same error with its offset moved by `base`, for an error found in a slice that
    /// starts at `base` within a larger buffer.
    #[must_use]
    pub fn rebased(self, base: usize) -> Self {
        match self {
            Self::Corrupt { offset, reason } => Self::Corrupt {
                offset: offset.saturating_add(base),
                reason,
            },
        }
    }

    /// The byte offset the error points at.
    #[must_use]
    pub fn offset(&self) -> usize {
        match self {
            Self::Corrupt { offset, .. } => *offset,
        }
    }
}

/// Message body for [`FrameError::Corrupt`], worded like dsh 0.1's errors.
fn corrupt_message(offset: &usize, reason: &CorruptReason) -> String {
    match reason {
        CorruptReason::InvalidMagic => format!("invalid frame magic at byte {offset}"),
        CorruptReason::ReservedHeaderBit => format!("reserved frame-header bit at byte {offset}"),
        CorruptReason::ReservedBlockType => format!("reserved block type at byte {offset}"),
        CorruptReason::OversizedBlock => {
            format!("block larger than the 128 KiB maximum at byte {offset}")
        }
        CorruptReason::FailedValidation(detail) => {
            format!("frame at byte {offset} failed validation ({detail})")
        }
    }
}

impl fmt::Display for CorruptReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidMagic => f.write_str("invalid frame magic"),
            Self::ReservedHeaderBit => f.write_str("reserved frame-header bit"),
            Self::ReservedBlockType => f.write_str("reserved block type"),
            Self::OversizedBlock => f.write_str("block larger than the 128 KiB maximum"),
            Self::FailedValidation(detail) => write!(f, "frame failed validation ({detail})"),
        }
    }
}

/// Structural scan of a concatenated-frame buffer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FrameScan {
    /// Byte ranges of the structurally complete frames, in file order and contiguous from 0.
    pub frames: Vec<Range<usize>>,
    /// Start of the incomplete final frame when EOF interrupts one; truncating the file
    /// here leaves exactly the complete frames.
    pub torn_start: Option<usize>,
}

/// Locate every complete frame without decompressing, like dsh 0.1's `scanZstdFrames`.
///
/// EOF anywhere inside a frame (fewer than four bytes left for a magic included) reports
/// that frame's start as `torn_start`; it never is an error.
///
/// # Errors
/// [`FrameError::Corrupt`] for a wrong magic, a reserved descriptor bit or a reserved
/// block type inside the available bytes.
pub fn scan_frames(bytes: &[u8]) -> Result<FrameScan, FrameError> {
    scan_frames_up_to(bytes, usize::MAX)
}

/// Like [`scan_frames`], but stop after `max_frames` complete frames (for readers that
/// need only the header frame). A stop at the limit reports no torn tail, and nothing
/// after the last returned frame is examined.
///
/// # Errors
/// As [`scan_frames`], for the examined bytes.
pub fn scan_frames_up_to(bytes: &[u8], max_frames: usize) -> Result<FrameScan, FrameError> {
    let mut frames = Vec::new();
    let mut offset = 0;
    while offset < bytes.len() && frames.len() < max_frames {
        match scan_one_frame(bytes, offset)? {
            Some(end) => {
                frames.push(offset..end);
                offset = end;
            }
            None => {
                return Ok(FrameScan {
                    frames,
                    torn_start: Some(offset),
                });
            }
        }
    }
    Ok(FrameScan {
        frames,
        torn_start: None,
    })
}

/// Whether at least `n` bytes are available at `offset`.
fn available(bytes: &[u8], offset: usize, n: usize) -> bool {
    bytes.len().saturating_sub(offset) >= n
}

/// Read an `n`-byte (at most 4) little-endian integer at `offset`, if all bytes exist.
fn read_le(bytes: &[u8], offset: usize, n: usize) -> Option<u32> {
    let field = bytes.get(offset..offset.checked_add(n)?)?;
    Some(
        field
            .iter()
            .rev()
            .fold(0, |acc, &b| (acc << 8) | u32::from(b)),
    )
}

/// Scan the frame starting at `start`: `Some(end)` when it is complete, `None` when EOF
/// interrupts it.
fn scan_one_frame(bytes: &[u8], start: usize) -> Result<Option<usize>, FrameError> {
    let Some(magic) = read_le(bytes, start, 4) else {
        return Ok(None);
    };
    if magic != ZSTD_MAGIC {
        return Err(FrameError::Corrupt {
            offset: start,
            reason: CorruptReason::InvalidMagic,
        });
    }
    let mut offset = start + 4;

    let Some(&descriptor) = bytes.get(offset) else {
        return Ok(None);
    };
    if descriptor & 0x18 != 0 {
        return Err(FrameError::Corrupt {
            offset,
            reason: CorruptReason::ReservedHeaderBit,
        });
    }
    offset += 1;
    let content_size_flag = descriptor >> 6;
    let single_segment = descriptor & 0x20 != 0;
    let has_checksum = descriptor & 0x04 != 0;
    let dictionary_bytes = match descriptor & 0x03 {
        3 => 4,
        flag => usize::from(flag),
    };
    let content_size_bytes = match content_size_flag {
        0 => usize::from(single_segment),
        flag => 1 << flag,
    };
    let window_bytes = usize::from(!single_segment);
    let remaining_header = window_bytes + dictionary_bytes + content_size_bytes;
    if !available(bytes, offset, remaining_header) {
        return Ok(None);
    }
    offset += remaining_header;

    loop {
        let Some(block_header) = read_le(bytes, offset, 3) else {
            return Ok(None);
        };
        let last_block = block_header & 1 != 0;
        let block_type = (block_header >> 1) & 0x03;
        if block_type == 3 {
            return Err(FrameError::Corrupt {
                offset,
                reason: CorruptReason::ReservedBlockType,
            });
        }
        if (block_header >> 3) > MAX_BLOCK_SIZE {
            return Err(FrameError::Corrupt {
                offset,
                reason: CorruptReason::OversizedBlock,
            });
        }
        offset += 3;
        // RLE blocks carry one byte; raw and compressed blocks carry `Block_Size` bytes.
        let payload = if block_type == 1 {
            1
        } else {
            // The header is 24 bits, so the size fits any usize.
            (block_header >> 3) as usize
        };
        if !available(bytes, offset, payload) {
            return Ok(None);
        }
        offset += payload;
        if last_block {
            break;
        }
    }

    if has_checksum {
        if !available(bytes, offset, 4) {
            return Ok(None);
        }
        offset += 4;
    }
    Ok(Some(offset))
}

/// A reusable compressor producing one checksummed level-3 frame per call.
pub struct FrameEncoder {
    inner: zstd::bulk::Compressor<'static>,
}

impl fmt::Debug for FrameEncoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrameEncoder").finish_non_exhaustive()
    }
}

impl FrameEncoder {
    /// A compressor at level 3 with the content checksum and content size on.
    ///
    /// # Errors
    /// If libzstd refuses a parameter (not expected with a bundled libzstd).
    pub fn new() -> io::Result<Self> {
        let mut inner = zstd::bulk::Compressor::new(COMPRESSION_LEVEL)?;
        inner.set_parameter(CParameter::ChecksumFlag(true))?;
        inner.set_parameter(CParameter::ContentSizeFlag(true))?;
        Ok(Self { inner })
    }

    /// Compress `plain` into one complete, independent zstd frame.
    ///
    /// # Errors
    /// If libzstd fails to compress (not expected for in-memory input).
    pub fn frame(&mut self, plain: &[u8]) -> io::Result<Vec<u8>> {
        self.inner.compress(plain)
    }
}

thread_local! {
    /// Per-thread compressor reused by [`compress_frame`].
    static ENCODER: RefCell<Option<FrameEncoder>> = const { RefCell::new(None) };
}

/// Compress `plain` into one complete, checksummed level-3 zstd frame, reusing a
/// per-thread [`FrameEncoder`].
///
/// # Errors
/// If libzstd fails to compress (not expected for in-memory input).
pub fn compress_frame(plain: &[u8]) -> io::Result<Vec<u8>> {
    ENCODER.with(|cell| {
        let Ok(mut slot) = cell.try_borrow_mut() else {
            return FrameEncoder::new()?.frame(plain);
        };
        let encoder = match slot.as_mut() {
            Some(encoder) => encoder,
            None => slot.insert(FrameEncoder::new()?),
        };
        encoder.frame(plain)
    })
}

/// A reusable decompression context for complete and torn frames.
pub struct FrameDecoder {
    dctx: DCtx<'static>,
}

impl fmt::Debug for FrameDecoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrameDecoder").finish_non_exhaustive()
    }
}

impl Default for FrameDecoder {
    fn default() -> Self {
        Self::new()
    }
}

/// Outcome of one streaming step.
enum Step {
    /// The frame is fully decoded, checksum verified.
    Finished,
    /// The output buffer is full; grow it and continue.
    NeedsRoom,
    /// Input or output moved; call again.
    Progressed,
    /// Nothing moved although output room is left: the decoder wants more input.
    Stalled,
}

impl FrameDecoder {
    /// A fresh decoder; its context is reused by every call.
    #[must_use]
    pub fn new() -> Self {
        Self {
            dctx: DCtx::create(),
        }
    }

    /// Decompress one complete frame, appending its plaintext to `out`, and verify its
    /// content checksum. On error `out` is left as it was.
    ///
    /// `frame` must be exactly one frame (a range from [`scan_frames`]); error offsets are
    /// relative to its start (use [`FrameDecoder::decode_range`] for absolute ones).
    ///
    /// # Errors
    /// [`CorruptReason::FailedValidation`] at offset 0 for a checksum mismatch, corrupt
    /// block data, a frame that ends early, or bytes after the frame end.
    pub fn decode_complete(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), FrameError> {
        let before = out.len();
        self.decode_one(frame, out).map_err(|detail| {
            out.truncate(before);
            FrameError::Corrupt {
                offset: 0,
                reason: CorruptReason::FailedValidation(detail),
            }
        })
    }

    /// [`FrameDecoder::decode_complete`] on `bytes[range]`, with error offsets relative to
    /// `bytes` (the frame start, as dsh 0.1 reports it).
    ///
    /// # Errors
    /// As [`FrameDecoder::decode_complete`]; an out-of-bounds range also fails validation.
    pub fn decode_range(
        &mut self,
        bytes: &[u8],
        range: Range<usize>,
        out: &mut Vec<u8>,
    ) -> Result<(), FrameError> {
        let start = range.start;
        let Some(frame) = bytes.get(range) else {
            return Err(FrameError::Corrupt {
                offset: start,
                reason: CorruptReason::FailedValidation("frame range out of bounds".to_owned()),
            });
        };
        self.decode_complete(frame, out)
            .map_err(|error| error.rebased(start))
    }

    /// Best-effort decompression of a torn final frame (its bytes from the frame start to
    /// EOF), returning the plaintext of its fully received blocks. The checksum cannot be
    /// verified. Like Node's `zlib` with `finishFlush: ZSTD_e_flush` as dsh 0.1 uses it, a
    /// decoder error discards everything and yields an empty result, so the caller keeps
    /// just the complete frames.
    pub fn decode_torn(&mut self, frame_prefix: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        if self.dctx.reset(ResetDirective::SessionOnly).is_err() {
            return out;
        }
        let mut input = InBuffer::around(frame_prefix);
        loop {
            reserve_room(&mut out, frame_prefix.len().saturating_mul(4));
            match self.step(&mut input, &mut out) {
                Err(_) => return Vec::new(),
                Ok(Step::Finished | Step::Stalled) => return out,
                Ok(Step::NeedsRoom | Step::Progressed) => {}
            }
        }
    }

    /// Decode exactly one complete frame into `out`; the error text says what failed.
    fn decode_one(&mut self, frame: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        self.dctx
            .reset(ResetDirective::SessionOnly)
            .map_err(error_name)?;
        // With the declared size reserved, libzstd decodes a whole frame straight into `out`.
        let expected = match zstd_safe::get_frame_content_size(frame) {
            Ok(Some(size)) => usize::try_from(size).unwrap_or(usize::MAX),
            _ => frame.len().saturating_mul(4),
        };
        out.reserve(expected.min(MAX_UPFRONT_RESERVE));
        let mut input = InBuffer::around(frame);
        loop {
            reserve_room(out, MIN_GROW);
            match self.step(&mut input, out).map_err(error_name)? {
                Step::Finished if input.pos() == frame.len() => return Ok(()),
                Step::Finished => return Err("trailing bytes after the frame end".to_owned()),
                Step::NeedsRoom | Step::Progressed => {}
                Step::Stalled if input.pos() == frame.len() => {
                    return Err("frame ends before its last block".to_owned());
                }
                Step::Stalled => return Err("decoder made no progress".to_owned()),
            }
        }
    }

    /// One `ZSTD_decompressStream` call appending to `out`'s spare capacity.
    fn step(
        &mut self,
        input: &mut InBuffer<'_>,
        out: &mut Vec<u8>,
    ) -> Result<Step, zstd_safe::ErrorCode> {
        let in_before = input.pos();
        let out_before = out.len();
        let hint = {
            let mut output = OutBuffer::around_pos(out, out_before);
            self.dctx.decompress_stream(&mut output, input)?
        };
        if hint == 0 {
            Ok(Step::Finished)
        } else if out.len() == out.capacity() {
            Ok(Step::NeedsRoom)
        } else if input.pos() != in_before || out.len() != out_before {
            Ok(Step::Progressed)
        } else {
            Ok(Step::Stalled)
        }
    }
}

/// Ensure `out` has spare capacity, growing by at least `at_least` (amortized doubling).
fn reserve_room(out: &mut Vec<u8>, at_least: usize) {
    if out.len() == out.capacity() {
        out.reserve(at_least.max(MIN_GROW));
    }
}

/// libzstd's description of an error code.
fn error_name(code: zstd_safe::ErrorCode) -> String {
    zstd_safe::get_error_name(code).to_owned()
}

/// One complete frame of a [`DecodedLog`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedFrame {
    /// The frame's byte range in the compressed input.
    pub compressed: Range<usize>,
    /// The frame's plaintext range within [`DecodedLog::plaintext`].
    pub plain: Range<usize>,
}

/// A whole `.jsonl.zstd` buffer, decoded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DecodedLog {
    /// The plaintext of all complete frames, concatenated in file order.
    pub plaintext: Vec<u8>,
    /// Each complete frame's compressed range and plaintext range, in file order.
    pub frames: Vec<DecodedFrame>,
    /// For a torn final frame: its start offset (the truncation point) and the plaintext
    /// recovered from it by [`FrameDecoder::decode_torn`] (possibly empty).
    pub torn: Option<(usize, Vec<u8>)>,
}

/// Scan and decode a whole concatenated-frame buffer: every complete frame is decompressed
/// and checksum-verified into one flat plaintext buffer, and a torn final frame is
/// recovered best-effort.
///
/// # Errors
/// [`FrameError::Corrupt`] from [`scan_frames`], or for a complete frame that fails
/// validation (offset = that frame's start).
pub fn decode_all(bytes: &[u8]) -> Result<DecodedLog, FrameError> {
    let scan = scan_frames(bytes)?;
    let mut decoder = FrameDecoder::new();
    let mut plaintext = Vec::with_capacity(bytes.len().saturating_mul(4).min(MAX_UPFRONT_RESERVE));
    let mut frames = Vec::with_capacity(scan.frames.len());
    for range in scan.frames {
        let plain_start = plaintext.len();
        decoder.decode_range(bytes, range.clone(), &mut plaintext)?;
        frames.push(DecodedFrame {
            compressed: range,
            plain: plain_start..plaintext.len(),
        });
    }
    let torn = scan.torn_start.map(|start| {
        let prefix = bytes.get(start..).unwrap_or_default();
        (start, decoder.decode_torn(prefix))
    });
    Ok(DecodedLog {
        plaintext,
        frames,
        torn,
    })
}

#[cfg(test)]
#[expect(
    clippy::single_range_in_vec_init,
    reason = "the expected frame lists are vectors of one byte range, not a range meant to be collected"
)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

    const FIXTURE_ZSTD: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/dsh-0.1.1/01-zstd-default-one-bash/session.jsonl.zstd"
    );
    const FIXTURE_PLAIN: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/dsh-0.1.1/01-zstd-default-one-bash/session.decoded.jsonl"
    );

    fn cat(parts: &[&[u8]]) -> Vec<u8> {
        parts.concat()
    }

    /// A deterministic, poorly compressible string of printable ASCII.
    fn noise(len: usize, seed: u64) -> Vec<u8> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..len).map(|_| rng.u8(33..123)).collect()
    }

    /// Offset of the first block header of a well-formed frame.
    fn first_block_offset(frame: &[u8]) -> usize {
        let d = frame[4];
        let single = d & 0x20 != 0;
        let dict = [0, 1, 2, 4][usize::from(d & 3)];
        let fcs = match d >> 6 {
            0 => usize::from(single),
            f => 1 << f,
        };
        5 + usize::from(!single) + dict + fcs
    }

    /// Port of dsh's `emptyStructuralFrame`: header, one empty last raw block, checksum.
    fn empty_structural_frame(descriptor: u8) -> Vec<u8> {
        let single = descriptor & 0x20 != 0;
        let dict = [0, 1, 2, 4][usize::from(descriptor & 3)];
        let fcs = match descriptor >> 6 {
            0 => usize::from(single),
            f => 1 << f,
        };
        let mut frame = MAGIC.to_vec();
        frame.push(descriptor);
        frame.extend(std::iter::repeat_n(0, usize::from(!single) + dict + fcs));
        frame.extend([1, 0, 0]);
        if descriptor & 0x04 != 0 {
            frame.extend([0; 4]);
        }
        frame
    }

    fn corrupt_reason(result: Result<FrameScan, FrameError>) -> (usize, CorruptReason) {
        match result.unwrap_err() {
            FrameError::Corrupt { offset, reason } => (offset, reason),
        }
    }

    fn three_frames() -> (Vec<u8>, Vec<Range<usize>>, Vec<Vec<u8>>) {
        let plains = vec![
            b"{\"type\":\"session\",\"version\":0,\"id\":\"s\",\"createdAt\":1}\n".to_vec(),
            b"{\"type\":\"turn/start\",\"seq\":0}\n{\"type\":\"turn/end\",\"seq\":1}\n".to_vec(),
            [
                noise(300, 7),
                b"\n".to_vec(),
                b"x".repeat(500),
                b"\n".to_vec(),
            ]
            .concat(),
        ];
        let mut bytes = Vec::new();
        let mut ranges = Vec::new();
        for plain in &plains {
            let frame = compress_frame(plain).unwrap();
            ranges.push(bytes.len()..bytes.len() + frame.len());
            bytes.extend(frame);
        }
        (bytes, ranges, plains)
    }

    #[test]
    fn scans_concatenated_checksummed_frames_and_honors_a_frame_limit() {
        let first = compress_frame(b"header\n").unwrap();
        let second = compress_frame(b"event\n").unwrap();
        let stream = cat(&[&first, &second]);
        assert_eq!(scan_frames(&[]).unwrap(), FrameScan::default());
        assert_eq!(
            scan_frames(&stream).unwrap(),
            FrameScan {
                frames: vec![0..first.len(), first.len()..stream.len()],
                torn_start: None,
            }
        );
        assert_eq!(
            scan_frames_up_to(&stream, 1).unwrap(),
            FrameScan {
                frames: vec![0..first.len()],
                torn_start: None,
            }
        );
        // The limit also stops before garbage that a full scan would reject.
        let garbage = cat(&[&first, b"garbage!"]);
        assert_eq!(
            scan_frames_up_to(&garbage, 1).unwrap().frames,
            vec![0..first.len()]
        );
        assert!(scan_frames(&garbage).is_err());
        assert_eq!(first[4] & 0x04, 0x04, "checksum flag");
        assert_eq!(second[4] & 0x04, 0x04, "checksum flag");
        assert_eq!(
            zstd_safe::get_frame_content_size(&first).ok(),
            Some(Some(7))
        );
        assert_eq!(&first[..4], &MAGIC);

        let mut decoder = FrameDecoder::new();
        let mut out = Vec::new();
        decoder.decode_complete(&first, &mut out).unwrap();
        assert_eq!(out, b"header\n");
        decoder.decode_complete(&second, &mut out).unwrap();
        assert_eq!(out, b"header\nevent\n");
    }

    #[test]
    fn round_trips_concatenated_frames() {
        let (bytes, ranges, plains) = three_frames();
        let log = decode_all(&bytes).unwrap();
        assert_eq!(log.plaintext, plains.concat());
        assert_eq!(log.torn, None);
        assert_eq!(log.frames.len(), 3);
        for ((frame, range), plain) in log.frames.iter().zip(&ranges).zip(&plains) {
            assert_eq!(&frame.compressed, range);
            assert_eq!(&log.plaintext[frame.plain.clone()], plain.as_slice());
        }
    }

    #[test]
    fn frames_decode_as_one_stream_with_the_reference_decoder() {
        let (bytes, _, plains) = three_frames();
        assert_eq!(
            zstd::stream::decode_all(bytes.as_slice()).unwrap(),
            plains.concat()
        );
        let mut reference = Vec::new();
        let mut reader = zstd::stream::read::Decoder::new(bytes.as_slice()).unwrap();
        io::Read::read_to_end(&mut reader, &mut reference).unwrap();
        assert_eq!(reference, plains.concat());
    }

    #[test]
    fn decodes_frames_without_a_content_size_like_node_writes() {
        // Node's streaming compressor omits the content size; build such frames here.
        let plains = [
            b"header\n".to_vec(),
            noise(300_000, 3),
            b"x".repeat(400_000),
        ];
        let mut bytes = Vec::new();
        for plain in &plains {
            let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
            encoder.include_checksum(true).unwrap();
            encoder.include_contentsize(false).unwrap();
            io::Write::write_all(&mut encoder, plain).unwrap();
            let frame = encoder.finish().unwrap();
            assert_eq!(frame[4] >> 6, 0, "no content size");
            assert_eq!(frame[4] & 0x24, 0x04, "checksum, multi-segment");
            bytes.extend(frame);
        }
        let scan = scan_frames(&bytes).unwrap();
        assert_eq!(scan.frames.len(), 3);
        let log = decode_all(&bytes).unwrap();
        assert_eq!(log.plaintext, plains.concat());
    }

    #[test]
    fn large_frames_span_several_blocks() {
        let plain = cat(&[&noise(400_000, 11), &b"y".repeat(300_000), &noise(100, 12)]);
        let frame = compress_frame(&plain).unwrap();
        let scan = scan_frames(&frame).unwrap();
        assert_eq!(scan.frames, vec![0..frame.len()]);
        let mut out = b"prefix".to_vec();
        FrameDecoder::new()
            .decode_complete(&frame, &mut out)
            .unwrap();
        assert_eq!(&out[..6], b"prefix");
        assert_eq!(&out[6..], plain.as_slice());
    }

    #[test]
    fn empty_payload_round_trips() {
        let frame = compress_frame(b"").unwrap();
        assert_eq!(scan_frames(&frame).unwrap().frames, vec![0..frame.len()]);
        let mut out = Vec::new();
        FrameDecoder::new()
            .decode_complete(&frame, &mut out)
            .unwrap();
        assert!(out.is_empty());
    }

    #[test]
    fn distinguishes_incomplete_frame_regions_from_invalid_complete_structure() {
        let torn_at_zero = FrameScan {
            frames: vec![],
            torn_start: Some(0),
        };
        assert_eq!(scan_frames(&MAGIC[..2]).unwrap(), torn_at_zero);
        assert_eq!(scan_frames(&MAGIC).unwrap(), torn_at_zero);
        // Fewer than four bytes of anything are a torn frame, not a bad magic.
        assert_eq!(scan_frames(&[0, 0, 0]).unwrap(), torn_at_zero);
        assert_eq!(
            corrupt_reason(scan_frames(&[0; 4])),
            (0, CorruptReason::InvalidMagic)
        );
        assert_eq!(
            corrupt_reason(scan_frames(&cat(&[&MAGIC, &[0x08]]))),
            (4, CorruptReason::ReservedHeaderBit)
        );
        assert_eq!(
            corrupt_reason(scan_frames(&cat(&[&MAGIC, &[0x10]]))),
            (4, CorruptReason::ReservedHeaderBit)
        );
        // Non-single-segment descriptor with no window descriptor.
        assert_eq!(scan_frames(&cat(&[&MAGIC, &[0x00]])).unwrap(), torn_at_zero);
        // Single-segment header followed by only two bytes of the three-byte block header.
        assert_eq!(
            scan_frames(&cat(&[&MAGIC, &[0x20, 0x00, 0x01, 0x00]])).unwrap(),
            torn_at_zero
        );
        let raw_five_bytes = [(5 << 3) | 1, 0, 0];
        assert_eq!(
            scan_frames(&cat(&[
                &MAGIC,
                &[0x20, 0x00],
                &raw_five_bytes,
                &[0x01, 0x02]
            ]))
            .unwrap(),
            torn_at_zero
        );
        let reserved_block = cat(&[&MAGIC, &[0x20, 0x00, 0x07, 0x00, 0x00]]);
        assert_eq!(
            corrupt_reason(scan_frames(&reserved_block)),
            (6, CorruptReason::ReservedBlockType)
        );
    }

    #[test]
    fn covers_standard_header_variants_rle_blocks_multiple_blocks_and_checksums() {
        for descriptor in [0x00, 0x21, 0x42, 0x83, 0xE3] {
            let frame = empty_structural_frame(descriptor);
            assert_eq!(
                scan_frames(&frame).unwrap(),
                FrameScan {
                    frames: vec![0..frame.len()],
                    torn_start: None,
                },
                "descriptor {descriptor:#x}"
            );
        }
        let rle = cat(&[
            &MAGIC,
            &[0x20, 0x01],
            &[(1 << 3) | (1 << 1) | 1, 0, 0],
            &[0x41],
        ]);
        assert_eq!(scan_frames(&rle).unwrap().frames, vec![0..rle.len()]);
        // The RLE frame is valid zstd: one `A`.
        let mut out = Vec::new();
        FrameDecoder::new().decode_complete(&rle, &mut out).unwrap();
        assert_eq!(out, b"A");
        let two_blocks = cat(&[&MAGIC, &[0x20, 0x00], &[0, 0, 0], &[1, 0, 0]]);
        assert_eq!(
            scan_frames(&two_blocks).unwrap().frames,
            vec![0..two_blocks.len()]
        );
        let checksummed = empty_structural_frame(0x24);
        assert_eq!(
            scan_frames(&checksummed[..checksummed.len() - 1]).unwrap(),
            FrameScan {
                frames: vec![],
                torn_start: Some(0),
            }
        );
        assert_eq!(
            scan_frames(&checksummed).unwrap().frames,
            vec![0..checksummed.len()]
        );
    }

    #[test]
    fn flipped_structure_bits_are_corruption_at_their_offset() {
        let (bytes, ranges, _) = three_frames();
        for range in &ranges {
            let frame = &bytes[range.clone()];
            let start = range.start;

            let mut magic = bytes.clone();
            magic[start] ^= 0x01;
            assert_eq!(
                corrupt_reason(scan_frames(&magic)),
                (start, CorruptReason::InvalidMagic)
            );

            // A skippable frame magic is corruption too.
            let mut skippable = bytes.clone();
            skippable[start..start + 4].copy_from_slice(&[0x50, 0x2A, 0x4D, 0x18]);
            assert_eq!(
                corrupt_reason(scan_frames(&skippable)),
                (start, CorruptReason::InvalidMagic)
            );

            let mut descriptor = bytes.clone();
            descriptor[start + 4] |= 0x08;
            assert_eq!(
                corrupt_reason(scan_frames(&descriptor)),
                (start + 4, CorruptReason::ReservedHeaderBit)
            );

            let block = start + first_block_offset(frame);
            let mut reserved = bytes.clone();
            reserved[block] |= 0x06;
            assert_eq!(
                corrupt_reason(scan_frames(&reserved)),
                (block, CorruptReason::ReservedBlockType)
            );
            assert!(decode_all(&reserved).is_err());
        }
    }

    #[test]
    fn checksum_and_payload_flips_are_detected() {
        // Incompressible text goes into a raw block, so only the checksum can catch a flip.
        for plain in [noise(200, 5), b"hello hello hello hello hello\n".repeat(20)] {
            let frame = compress_frame(&plain).unwrap();
            let mut decoder = FrameDecoder::new();

            let mut checksum = frame.clone();
            *checksum.last_mut().unwrap() ^= 0xFF;
            let mut out = b"kept".to_vec();
            let err = decoder.decode_complete(&checksum, &mut out).unwrap_err();
            assert_eq!(out, b"kept", "output untouched on error");
            assert_eq!(err.offset(), 0);
            assert!(matches!(
                &err,
                FrameError::Corrupt {
                    reason: CorruptReason::FailedValidation(detail),
                    ..
                } if detail.contains("checksum")
            ));
            assert!(
                err.to_string().starts_with(
                    "corrupt Zstandard session log: frame at byte 0 failed validation"
                )
            );

            let mut payload = frame.clone();
            let middle =
                first_block_offset(&frame) + 3 + (frame.len() - first_block_offset(&frame) - 7) / 2;
            payload[middle] ^= 0x20;
            assert!(decoder.decode_complete(&payload, &mut out).is_err());
            assert_eq!(out, b"kept");

            // The decoder recovers after errors.
            decoder.decode_complete(&frame, &mut out).unwrap();
            assert_eq!(out, cat(&[b"kept", &plain]));
        }
    }

    #[test]
    fn checksum_flip_in_a_later_frame_reports_that_frame_start() {
        let (mut bytes, ranges, _) = three_frames();
        let end = ranges[1].end;
        bytes[end - 2] ^= 0x01;
        let err = decode_all(&bytes).unwrap_err();
        assert_eq!(err.offset(), ranges[1].start);
        assert!(err.to_string().contains(&format!(
            "frame at byte {} failed validation",
            ranges[1].start
        )));
    }

    #[test]
    fn decode_complete_rejects_short_and_overlong_input() {
        let frame = compress_frame(b"one line\n").unwrap();
        let mut decoder = FrameDecoder::new();
        let mut out = Vec::new();
        let short = decoder.decode_complete(&frame[..frame.len() - 1], &mut out);
        assert!(matches!(
            short,
            Err(FrameError::Corrupt {
                reason: CorruptReason::FailedValidation(_),
                ..
            })
        ));
        let long = cat(&[&frame, &frame]);
        assert!(decoder.decode_complete(&long, &mut out).is_err());
        assert!(out.is_empty());
        let err = decoder.decode_range(&frame, 3..1000, &mut out).unwrap_err();
        assert_eq!(err.offset(), 3);
    }

    #[test]
    fn truncation_at_every_offset_is_torn_never_corrupt() {
        let (bytes, ranges, plains) = three_frames();
        for cut in 0..=bytes.len() {
            let prefix = &bytes[..cut];
            let scan = scan_frames(prefix).unwrap();
            let complete: Vec<_> = ranges.iter().filter(|r| r.end <= cut).cloned().collect();
            assert_eq!(scan.frames, complete, "cut {cut}");
            let torn = ranges.iter().find(|r| r.start < cut && cut < r.end);
            assert_eq!(scan.torn_start, torn.map(|r| r.start), "cut {cut}");

            let log = decode_all(prefix).unwrap();
            let n = complete.len();
            assert_eq!(log.plaintext, plains[..n].concat(), "cut {cut}");
            if let Some((start, recovered)) = log.torn {
                assert_eq!(start, ranges[n].start);
                assert!(plains[n].starts_with(&recovered), "cut {cut}");
            }
        }
    }

    #[test]
    fn torn_frame_missing_its_checksum_recovers_all_plaintext() {
        let header = compress_frame(b"{\"type\":\"session\"}\n").unwrap();
        let event = compress_frame(b"{\"type\":\"turn/start\",\"seq\":0,\"turn\":1}\n").unwrap();
        let missing_checksum_byte = &event[..event.len() - 1];
        assert_eq!(
            scan_frames(missing_checksum_byte).unwrap(),
            FrameScan {
                frames: vec![],
                torn_start: Some(0),
            }
        );
        let recovered = FrameDecoder::new().decode_torn(missing_checksum_byte);
        assert_eq!(
            recovered,
            b"{\"type\":\"turn/start\",\"seq\":0,\"turn\":1}\n"
        );

        let file = cat(&[&header, missing_checksum_byte]);
        let log = decode_all(&file).unwrap();
        assert_eq!(log.plaintext, b"{\"type\":\"session\"}\n");
        assert_eq!(
            log.torn,
            Some((
                header.len(),
                b"{\"type\":\"turn/start\",\"seq\":0,\"turn\":1}\n".to_vec()
            ))
        );
    }

    #[test]
    fn torn_multi_block_frame_recovers_whole_blocks() {
        let plain = noise(600_000, 9);
        let frame = compress_frame(&plain).unwrap();
        let recovered = FrameDecoder::new().decode_torn(&frame[..frame.len() * 3 / 4]);
        assert!(!recovered.is_empty());
        assert!(recovered.len() < plain.len());
        assert!(plain.starts_with(&recovered));
    }

    #[test]
    fn torn_frame_with_corrupt_data_recovers_nothing() {
        // 600 kB need several blocks (at most 128 KiB of plaintext each).
        let plain = noise(600_000, 10);
        let frame = compress_frame(&plain).unwrap();
        let first = first_block_offset(&frame);
        let header = u32::from_le_bytes([frame[first], frame[first + 1], frame[first + 2], 0]);
        assert_ne!((header >> 1) & 3, 1, "not an RLE block");
        assert_eq!(header & 1, 0, "not the last block");
        let second = first + 3 + (header >> 3) as usize;
        let torn = &frame[..frame.len() - 10];
        let intact = FrameDecoder::new().decode_torn(torn);
        assert!(intact.len() > (header >> 3) as usize && plain.starts_with(&intact));
        // A reserved type in the second block fails after the first block decoded; like
        // Node, nothing is recovered then.
        let mut corrupt = torn.to_vec();
        corrupt[second] |= 0x06;
        let mut decoder = FrameDecoder::new();
        assert!(decoder.decode_torn(&corrupt).is_empty());
        // The decoder is still usable afterwards.
        assert_eq!(decoder.decode_torn(torn), intact);
        assert!(decoder.decode_torn(&[]).is_empty());
        assert!(decoder.decode_torn(&MAGIC).is_empty());
    }

    #[test]
    fn decodes_the_dsh_0_1_1_fixture() {
        let bytes = std::fs::read(FIXTURE_ZSTD).unwrap();
        let expected = std::fs::read(FIXTURE_PLAIN).unwrap();
        let scan = scan_frames(&bytes).unwrap();
        assert_eq!(scan.frames.len(), 9);
        assert_eq!(scan.torn_start, None);
        assert_eq!(scan.frames.last().unwrap().end, bytes.len());
        let log = decode_all(&bytes).unwrap();
        assert_eq!(log.torn, None);
        assert_eq!(log.plaintext, expected);
        // Frame 1 holds exactly the header line.
        let header = &log.plaintext[log.frames[0].plain.clone()];
        assert!(header.starts_with(b"{\"type\":\"session\""));
        assert_eq!(header.iter().filter(|&&b| b == b'\n').count(), 1);
        assert_eq!(header.last(), Some(&b'\n'));
        // Every batch frame ends on a line boundary.
        for frame in &log.frames {
            assert_eq!(log.plaintext[frame.plain.end - 1], b'\n');
        }
        // Appending a frame of ours keeps the file readable by both decoders.
        let appended = cat(&[&bytes, &compress_frame(b"{\"extra\":1}\n").unwrap()]);
        let both = decode_all(&appended).unwrap();
        assert_eq!(both.plaintext, cat(&[&expected, b"{\"extra\":1}\n"]));
        assert_eq!(
            zstd::stream::decode_all(appended.as_slice()).unwrap(),
            both.plaintext
        );
    }

    #[test]
    fn error_messages_match_dsh() {
        let err = scan_frames(&[0; 4]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "corrupt Zstandard session log: invalid frame magic at byte 0"
        );
        let err = scan_frames(&cat(&[&MAGIC, &[0x08]])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "corrupt Zstandard session log: reserved frame-header bit at byte 4"
        );
        let err = scan_frames(&cat(&[&MAGIC, &[0x20, 0x00, 0x07, 0x00, 0x00]])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "corrupt Zstandard session log: reserved block type at byte 6"
        );
        assert_eq!(err.rebased(10).offset(), 16);
        assert_eq!(
            CorruptReason::ReservedBlockType.to_string(),
            "reserved block type"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn any_payload_sequence_round_trips(
            payloads in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..2048), 0..8),
        ) {
            let mut encoder = FrameEncoder::new().unwrap();
            let mut bytes = Vec::new();
            for payload in &payloads {
                bytes.extend(encoder.frame(payload).unwrap());
            }
            let log = decode_all(&bytes).unwrap();
            prop_assert_eq!(log.torn, None);
            prop_assert_eq!(log.frames.len(), payloads.len());
            prop_assert_eq!(&log.plaintext, &payloads.concat());
            for (frame, payload) in log.frames.iter().zip(&payloads) {
                prop_assert_eq!(&log.plaintext[frame.plain.clone()], payload.as_slice());
            }
            if !bytes.is_empty() {
                let reference = zstd::stream::decode_all(bytes.as_slice()).unwrap();
                prop_assert_eq!(reference, payloads.concat());
            }
        }

        #[test]
        fn torn_prefix_recovers_a_plaintext_prefix(
            seed in any::<u64>(),
            len in 0usize..300_000,
            repetitive in any::<bool>(),
            cut_ratio in 0.0f64..1.0,
        ) {
            let plain = if repetitive {
                b"{\"type\":\"assistant/chunk\",\"seq\":1}\n".repeat(len / 36 + 1)
            } else {
                noise(len, seed)
            };
            let frame = compress_frame(&plain).unwrap();
            let cut = ((frame.len() as f64) * cut_ratio) as usize;
            let prefix = &frame[..cut.min(frame.len() - 1)];
            let scan = scan_frames(prefix).unwrap();
            prop_assert!(scan.frames.is_empty());
            prop_assert_eq!(scan.torn_start, (!prefix.is_empty()).then_some(0));
            let recovered = FrameDecoder::new().decode_torn(prefix);
            prop_assert!(plain.starts_with(&recovered));
        }
    }
}
