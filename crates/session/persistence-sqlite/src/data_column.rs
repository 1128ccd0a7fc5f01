//! The `data` column: JSON text, zstd-compressed when that pays.
//!
//! Text under [`ZSTD_DATA_THRESHOLD_BYTES`] stays TEXT. Longer text is compressed at level 3
//! and stored as a BLOB only when the frame is smaller; otherwise it stays TEXT. A BLOB is
//! always a zstd frame of UTF-8 JSON.

use std::io::Read;

use rusqlite::types::{ToSqlOutput, ValueRef};

/// Data shorter than this many bytes is never compressed.
pub const ZSTD_DATA_THRESHOLD_BYTES: usize = 4096;

/// The zstd level dsh uses.
const ZSTD_LEVEL: i32 = 3;

/// A `data` value ready to bind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataColumn {
    /// Stored as TEXT.
    Text(String),
    /// Stored as a BLOB: a zstd frame.
    Compressed(Vec<u8>),
}

impl DataColumn {
    /// Encodes serialized data.
    pub fn encode(json: String) -> Self {
        Self::encode_with(json, |bytes| zstd::bulk::compress(bytes, ZSTD_LEVEL).ok())
    }

    /// [`DataColumn::encode`] with the compressor given (tests use one that cannot shrink).
    fn encode_with(json: String, compress: impl FnOnce(&[u8]) -> Option<Vec<u8>>) -> Self {
        if json.len() < ZSTD_DATA_THRESHOLD_BYTES {
            return Self::Text(json);
        }
        match compress(json.as_bytes()) {
            Some(frame) if frame.len() < json.len() => Self::Compressed(frame),
            _ => Self::Text(json),
        }
    }

    /// The value to bind.
    pub fn to_sql(&self) -> ToSqlOutput<'_> {
        match self {
            Self::Text(text) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
            Self::Compressed(frame) => ToSqlOutput::Borrowed(ValueRef::Blob(frame)),
        }
    }
}

/// Reads a stored `data` value back to JSON text; a BLOB inflating past `max_bytes` (when
/// given) is refused.
pub fn decode_data(value: ValueRef<'_>, max_bytes: Option<usize>) -> Result<String, String> {
    match value {
        ValueRef::Text(bytes) => String::from_utf8(bytes.to_vec())
            .map_err(|_| "stored data is not valid UTF-8".to_owned()),
        ValueRef::Blob(frame) => {
            let mut decoder = zstd::stream::read::Decoder::with_buffer(frame)
                .map_err(|error| format!("stored data is not a zstd frame: {error}"))?;
            let mut bytes = Vec::with_capacity(frame.len() * 4);
            let limit = max_bytes.map_or(u64::MAX, |max| max as u64 + 1);
            (&mut decoder)
                .take(limit)
                .read_to_end(&mut bytes)
                .map_err(|error| format!("stored data is not a valid zstd frame: {error}"))?;
            if let Some(max) = max_bytes
                && bytes.len() > max
            {
                return Err(format!("data exceeds {max} UTF-8 bytes"));
            }
            String::from_utf8(bytes).map_err(|_| "stored data is not valid UTF-8".to_owned())
        }
        ValueRef::Null | ValueRef::Integer(_) | ValueRef::Real(_) => {
            Err("stored data must be a string or blob".to_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(json: &str) -> DataColumn {
        let column = DataColumn::encode(json.to_owned());
        let value = match &column {
            DataColumn::Text(text) => ValueRef::Text(text.as_bytes()),
            DataColumn::Compressed(frame) => ValueRef::Blob(frame),
        };
        assert_eq!(decode_data(value, None).unwrap(), json);
        column
    }

    #[test]
    fn short_data_stays_text_and_long_data_compresses() {
        assert!(matches!(round_trip(r#"{"a":1}"#), DataColumn::Text(_)));
        let long = format!(r#"{{"text":"{}"}}"#, "ab".repeat(4000));
        assert!(matches!(round_trip(&long), DataColumn::Compressed(_)));
        let just_under = format!(r#"{{"t":"{}"}}"#, "a".repeat(ZSTD_DATA_THRESHOLD_BYTES - 9));
        assert_eq!(just_under.len(), ZSTD_DATA_THRESHOLD_BYTES - 1);
        assert!(matches!(round_trip(&just_under), DataColumn::Text(_)));
    }

    #[test]
    fn data_zstd_cannot_shrink_stays_text() {
        let json = format!(r#""{}""#, "x".repeat(ZSTD_DATA_THRESHOLD_BYTES));
        let no_gain = |bytes: &[u8]| Some(vec![0; bytes.len()]);
        assert_eq!(
            DataColumn::encode_with(json.clone(), no_gain),
            DataColumn::Text(json.clone())
        );
        assert_eq!(
            DataColumn::encode_with(json.clone(), |_| None),
            DataColumn::Text(json)
        );
    }

    #[test]
    fn bounded_inflation_and_bad_values_are_refused() {
        let DataColumn::Compressed(frame) =
            DataColumn::encode(format!(r#""{}""#, "x".repeat(10_000)))
        else {
            unreachable!("compressible")
        };
        let error = decode_data(ValueRef::Blob(&frame), Some(5000)).unwrap_err();
        assert_eq!(error, "data exceeds 5000 UTF-8 bytes");
        assert!(decode_data(ValueRef::Blob(b"nope"), None).is_err());
        assert!(decode_data(ValueRef::Integer(3), None).is_err());
        assert!(decode_data(ValueRef::Text(&[0xff]), None).is_err());
    }
}
