//! The `source_event_seqs` column: a list of seqs as varints.
//!
//! The first seq is an unsigned LEB128 varint; each later one is the ZigZag of its difference
//! from the one before (`d >= 0` is `2d`, `d < 0` is `2|d| - 1`), also a varint. Order and
//! duplicates are kept exactly. An empty list is an empty blob (a missing list is SQL NULL).

use dsh_protocol::json::MAX_SAFE_INTEGER;

/// A `source_event_seqs` value that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed source_event_seqs storage value: {0}")]
pub struct VarintError(&'static str);

/// Encodes seqs (each at most 2^53 - 1).
pub fn encode_seqs(seqs: &[u64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(seqs.len() * 2);
    let mut previous = 0u64;
    for (index, &seq) in seqs.iter().enumerate() {
        let value = if index == 0 {
            seq
        } else if seq >= previous {
            (seq - previous) * 2
        } else {
            (previous - seq) * 2 - 1
        };
        push_varint(&mut out, value);
        previous = seq;
    }
    out
}

fn push_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        // Truncation keeps the low seven bits, which is the point.
        out.push((value & 0x7f) as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Decodes seqs, refusing non-canonical or truncated varints and seqs outside `0..2^53`.
pub fn decode_seqs(bytes: &[u8]) -> Result<Vec<u64>, VarintError> {
    let mut seqs = Vec::new();
    let mut previous = 0u64;
    let mut rest = bytes;
    while !rest.is_empty() {
        let first = seqs.is_empty();
        let limit = if first {
            MAX_SAFE_INTEGER
        } else {
            MAX_SAFE_INTEGER * 2
        };
        let (value, tail) = read_varint(rest, limit)?;
        rest = tail;
        let seq = if first {
            value
        } else if value % 2 == 0 {
            previous
                .checked_add(value / 2)
                .ok_or(VarintError("decoded seq is out of range"))?
        } else {
            previous
                .checked_sub(value.div_ceil(2))
                .ok_or(VarintError("decoded seq is out of range"))?
        };
        if seq > MAX_SAFE_INTEGER {
            return Err(VarintError("decoded seq is out of range"));
        }
        seqs.push(seq);
        previous = seq;
    }
    Ok(seqs)
}

fn read_varint(bytes: &[u8], limit: u64) -> Result<(u64, &[u8]), VarintError> {
    let mut value = 0u64;
    let mut shift = 0u32;
    for (index, &byte) in bytes.iter().enumerate() {
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            if shift > 0 && byte & 0x7f == 0 {
                return Err(VarintError("non-canonical varint"));
            }
            if value > limit {
                return Err(VarintError("varint is out of range"));
            }
            return Ok((value, bytes.get(index + 1..).unwrap_or_default()));
        }
        shift += 7;
        if shift > 56 {
            return Err(VarintError("varint is out of range"));
        }
    }
    Err(VarintError("truncated varint"))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn encoding_matches_dsh() {
        assert_eq!(encode_seqs(&[]), Vec::<u8>::new());
        assert_eq!(encode_seqs(&[5]), vec![5]);
        // 300 = 0xac 0x02; then +1 → 2; then -2 → 3; then same → 0.
        assert_eq!(
            encode_seqs(&[300, 301, 299, 299]),
            vec![0xac, 0x02, 2, 3, 0]
        );
        assert_eq!(
            decode_seqs(&[0xac, 0x02, 2, 3, 0]).unwrap(),
            vec![300, 301, 299, 299]
        );
    }

    #[test]
    fn malformed_values_are_refused() {
        let cases: [(&[u8], &str); 5] = [
            (&[0x80], "truncated varint"),
            (&[0x80, 0x00], "non-canonical varint"),
            (&[0xff; 9], "varint is out of range"),
            (
                &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10],
                "varint is out of range",
            ),
            (&[1, 5], "decoded seq is out of range"),
        ];
        for (bytes, reason) in cases {
            assert_eq!(
                decode_seqs(bytes).unwrap_err().to_string(),
                format!("malformed source_event_seqs storage value: {reason}"),
                "{bytes:?}"
            );
        }
    }

    proptest! {
        #[test]
        fn seqs_round_trip(seqs in proptest::collection::vec(0..=MAX_SAFE_INTEGER, 0..20)) {
            prop_assert_eq!(decode_seqs(&encode_seqs(&seqs)).unwrap(), seqs);
        }

        #[test]
        fn small_seqs_round_trip(seqs in proptest::collection::vec(0u64..2000, 0..40)) {
            prop_assert_eq!(decode_seqs(&encode_seqs(&seqs)).unwrap(), seqs);
        }
    }
}
