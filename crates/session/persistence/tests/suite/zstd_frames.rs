//! The zstd frame container: frames found without decompressing, torn finals told from
//! corruption, checksums verified, torn frames recovered.

#![expect(
    clippy::single_range_in_vec_init,
    reason = "the expected frame lists are vectors of one byte range, not a range meant to be collected"
)]

use std::io;
use std::ops::Range;

use dsh_persistence::log_file::zstd_frames::*;
use proptest::prelude::*;
use zstd::zstd_safe;

const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

const FIXTURE_ZSTD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../persistence-jsonl/tests/fixtures/dsh-0.1.1/01-zstd-default-one-bash/session.jsonl.zstd"
);
const FIXTURE_PLAIN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../persistence-jsonl/tests/fixtures/dsh-0.1.1/01-zstd-default-one-bash/session.decoded.jsonl"
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
            err.to_string()
                .starts_with("corrupt Zstandard session log: frame at byte 0 failed validation")
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
