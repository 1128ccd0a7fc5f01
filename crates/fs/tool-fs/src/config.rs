//! The row config of `dsh-tool-fs` (dsh's keys and defaults).

use dsh_kernel::BoxError;
use serde::Deserialize;

/// dsh's `tool-fs` config.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolFsConfig {
    /// The most lines one read returns (default 2000).
    pub read_limit: Option<serde_json::Number>,
    /// The longest line shown whole, in UTF-16 code units (default 2000).
    pub read_max_line_length: Option<serde_json::Number>,
    /// The most bytes of line text one read returns (default 51200).
    pub read_max_bytes: Option<serde_json::Number>,
    /// Accepted for dsh patches and checked; every read streams here, so it changes nothing.
    pub read_stream_min_size: Option<serde_json::Number>,
}

/// The checked read caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadCaps {
    /// `readLimit`.
    pub limit: u64,
    /// `readMaxLineLength`.
    pub max_line_length: usize,
    /// `readMaxBytes`.
    pub max_bytes: usize,
    /// `readStreamMinSize` (checked, not used: every read streams).
    pub stream_min_size: u64,
}

fn positive(value: Option<&serde_json::Number>, key: &str, default: u64) -> Result<u64, BoxError> {
    match value {
        None => Ok(default),
        Some(number) => number
            .as_u64()
            .filter(|n| *n >= 1)
            .ok_or_else(|| format!("tool-fs: {key} must be a positive integer").into()),
    }
}

impl ToolFsConfig {
    /// The caps, or dsh's load error for a bad one.
    pub fn caps(&self) -> Result<ReadCaps, BoxError> {
        let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        Ok(ReadCaps {
            limit: positive(self.read_limit.as_ref(), "readLimit", 2000)?,
            max_line_length: size(positive(
                self.read_max_line_length.as_ref(),
                "readMaxLineLength",
                2000,
            )?),
            max_bytes: size(positive(
                self.read_max_bytes.as_ref(),
                "readMaxBytes",
                51200,
            )?),
            stream_min_size: positive(
                self.read_stream_min_size.as_ref(),
                "readStreamMinSize",
                10_485_760,
            )?,
        })
    }
}
