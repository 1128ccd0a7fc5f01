//! What [`crate::SessionMeter::measure`] returns: the estimate of the next request.

use dsh_llm::TokenUsage;
use serde::ser::{Serialize, SerializeMap, Serializer};

/// The anchor a measurement's surface delta is added to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline {
    /// Nothing to price yet: no header and an empty surface (`{kind:'none', tokens:0}`).
    None,
    /// The heuristic price of header and surface (`{kind:'estimated', tokens}`).
    Estimated {
        /// The estimate.
        tokens: u64,
    },
    /// The provider's reported usage of the last call (`{kind:'usage', tokens, usage}`).
    Usage {
        /// `input + cacheRead + cacheWrite + output` (reasoning is inside output).
        tokens: u64,
        /// The usage as reported.
        usage: TokenUsage,
    },
}

impl Baseline {
    /// `none`, `estimated` or `usage`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Estimated { .. } => "estimated",
            Self::Usage { .. } => "usage",
        }
    }

    /// The baseline's tokens (0 for [`Baseline::None`]).
    pub fn tokens(&self) -> u64 {
        match *self {
            Self::None => 0,
            Self::Estimated { tokens } | Self::Usage { tokens, .. } => tokens,
        }
    }
}

impl Serialize for Baseline {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("kind", self.kind())?;
        map.serialize_entry("tokens", &self.tokens())?;
        if let Self::Usage { usage, .. } = self {
            map.serialize_entry("usage", usage)?;
        }
        map.end()
    }
}

/// The estimate of the next request's size at one log revision; its JSON is dsh's
/// `TokenMeasurement` without the node list (read those with
/// [`crate::SessionMeter::nodes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenMeasurement {
    /// Events consumed: the next unread seq.
    pub log_revision: u64,
    /// The anchor.
    pub baseline: Baseline,
    /// The signed repricing of the surface since the anchor (negative after a replace).
    pub surface_delta_tokens: i64,
    /// `max(0, baseline + delta)`: the estimate of the next request.
    pub total_tokens: u64,
    /// The heuristic price of the whole current surface.
    pub surface_tokens: u64,
}
