//! dsh 0.1's default session store: one JSONL log per session, in checksummed zstd frames
//! (default) or plain, under `<root>/--<project>--/<session id>/session.jsonl[.zstd]`.
//!
//! Files written here open in dsh 0.1 and the other way round: the header line, packed chunk
//! rows, frame layout, atomic first write, fsync'd appends with rollback, and the rules that
//! tell a torn tail (cut and repaired) from corruption (refused, naming the file) are dsh's.

pub mod backend;
pub mod decode;
mod files;
pub mod layout;
mod listing;
mod lookup;
pub mod plugin;

pub use backend::{JsonlBackend, JsonlOptions};
pub use layout::Compression;
pub use plugin::{JsonlConfig, JsonlPersistencePlugin, PLUGIN_NAME};
