//! The DeepSeek provider for the dsh LLM seam (dsh's `@deepseek-ai/dsh-llm-deepseek`,
//! runtime spec §3.3).
//!
//! - [`DeepSeekPlugin`] (`dsh-llm-deepseek`) registers a [`DeepSeekAdapter`] for the route
//!   [`PROVIDER`] (`deepseek-official`) in the `llm` runtime ([`dsh_llm::LLM`]).
//! - [`DeepSeekAdapter`] sends `POST {baseURL}/chat/completions` over `reqwest` (rustls with
//!   ring, Mozilla roots compiled in) and streams the answer as [`dsh_llm::StreamChunk`]s.
//! - The parts, usable alone: [`serialize`] (the request body), [`sse`] (a spec-strict SSE
//!   parser fed by byte chunks), [`translate`] (DeepSeek chunks to stream chunks), [`errors`]
//!   (HTTP error mapping), [`config`].

mod adapter;
mod client;
pub mod config;
mod deadline;
pub mod errors;
mod plugin;
pub mod serialize;
pub mod sse;
pub mod translate;

pub use adapter::{DeepSeekAdapter, EnvLookup, PROVIDER_NAME};
pub use config::{DeepSeekConfig, Thinking};
pub use plugin::{DeepSeekPlugin, PLUGIN_NAME, PROVIDER};
