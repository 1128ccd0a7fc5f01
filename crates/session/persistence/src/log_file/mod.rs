//! dsh 0.1's session log file: a header line, then one stored record per line, either plain
//! (`session.jsonl`) or in checksummed zstd frames (`session.jsonl.zstd`).
//!
//! The JSONL store keeps its sessions in these files, and anything that reads a recorded
//! session from a file (the replay provider) decodes it here, with the store's own rules for a
//! torn tail and for corruption.

pub mod decode;
pub mod header_line;
pub mod scan;
pub mod zstd_frames;
