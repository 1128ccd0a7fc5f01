//! The provider-neutral vocabulary: content blocks, messages, stream chunks, finish reasons
//! and token usage, serialized exactly as dsh's session log stores them. They live in
//! `dsh-protocol` (the session log's typed views are built from them too) and are re-exported
//! here.

pub use dsh_protocol::model::types::*;
