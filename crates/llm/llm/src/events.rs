//! The runtime's events.
//!
//! | event | mode | listener gets | end of the chain |
//! |---|---|---|---|
//! | [`LlmStreamEvent`] `llm/stream` | waterfall | [`GenerateOptions`] | the adapter's stream, failures normalized |
//! | [`AdaptersUpdated`] `llm/adapters-updated` | emit | `()` | – |

use dsh_kernel::{Emit, Event, Waterfall};

use crate::adapter::ChunkStream;
use crate::options::GenerateOptions;

/// `llm/stream`: around every streaming call (replay, routing, logging, retries).
///
/// A listener gets the request and [`dsh_kernel::Next`]; `next.run(options).await` gives the
/// stream of the rest of the chain (in the end, the adapter's), which it may pass on,
/// wrap, or replace with chunks of its own (a short-circuit). Its stream is infallible: a
/// listener that fails says so with an `error` finish. The runtime enforces the stream
/// contract on what the outermost listener returns (see [`crate::LlmRuntime::stream`]).
#[derive(Debug)]
pub struct LlmStreamEvent;
impl Event for LlmStreamEvent {
    const NAME: &'static str = "llm/stream";
    type Mode = Waterfall<GenerateOptions, ChunkStream>;
}

/// `llm/adapters-updated`: the provider routes changed (a registration came or went).
/// Listeners re-read [`crate::LlmRuntime::providers`]; their failures are logged and change
/// nothing.
#[derive(Debug)]
pub struct AdaptersUpdated;
impl Event for AdaptersUpdated {
    const NAME: &'static str = "llm/adapters-updated";
    type Mode = Emit<()>;
}
