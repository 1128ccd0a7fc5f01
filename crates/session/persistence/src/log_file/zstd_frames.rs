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
