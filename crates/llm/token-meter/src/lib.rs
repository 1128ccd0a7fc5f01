//! dsh's token meter (`@deepseek-ai/dsh-token-meter`): how large the next request is, before
//! it is sent.
//!
//! - [`estimate`]: the fixed heuristic: 4 characters (UTF-16 code units) a token, 4 tokens
//!   per block and per message ([`estimate_message`], [`estimate_header`]).
//! - [`SessionMeter`]: one session's incremental fold: the latest `request/header`
//!   ([`PricedHeader`]), the priced surface (the session's positional `replace` fold, a node
//!   per surface event), the open step, and the anchor every `assistant/message` sets (the
//!   provider's usage when it is at least the heuristic price). [`SessionMeter::measure`]
//!   adds the signed change of the surface since the anchor; a different header falls back
//!   to the full estimate. Each event is folded once.
//! - [`TokenMeter`] ([`TOKEN_METER`], `tokenMeter`) holds a fold per live session and keeps
//!   read ones current on `session/event`; [`TokenMeterPlugin`] provides it.
//!
//! ```
//! use dsh_session::{SessionEvent, SurfaceOp};
//! use dsh_token_meter::{Baseline, SessionMeter};
//! use serde_json::json;
//!
//! let mut event = SessionEvent::new("user/message", 0, 0, json!({
//!     "content": [{"type": "text", "text": "abcd"}],
//!     "source": {"kind": "user"}, "role": "user", "id": "u1"}));
//! event.surface_op = Some(SurfaceOp::Append);
//! let mut meter = SessionMeter::new();
//! meter.sync(&[event])?;
//! let measurement = meter.measure(None);
//! assert_eq!(measurement.baseline, Baseline::Estimated { tokens: 9 });
//! assert_eq!(measurement.total_tokens, 9);
//! # Ok::<(), dsh_token_meter::MeterError>(())
//! ```

pub mod error;
pub mod estimate;
pub mod fold;
pub mod header;
pub mod measurement;
pub mod plugin;
pub mod service;
pub mod surface;

pub use error::MeterError;
pub use estimate::{estimate_content, estimate_header, estimate_message, estimate_message_json};
pub use fold::SessionMeter;
pub use header::PricedHeader;
pub use measurement::{Baseline, TokenMeasurement};
pub use plugin::{PLUGIN_NAME, TokenMeterConfig, TokenMeterPlugin};
pub use service::{TOKEN_METER, TokenMeter};
pub use surface::{TokenSurfaceNode, event_tokens};

#[cfg(test)]
mod fold_tests;
