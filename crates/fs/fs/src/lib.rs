//! The filesystem seam of dsh (dsh's `@deepseek-ai/dsh-fs`): what the file tools call.
//!
//! - [`FileSystem`], the `fs` service ([`FS`]): resolve a path to a [`FsTarget`] (realpath
//!   identity, the path as asked for), stat, read text whole or streamed, read bounded bytes,
//!   list, and the two mutations, [`FileSystem::write_text`] and [`FileSystem::edit_text`],
//!   each under a condition ([`FsWriteIntent`], an expected [`FsVersion`]).
//! - [`FsError`] with dsh's codes ([`FsErrorCode`]) and message texts.
//! - The `fs/*` events ([`events`]): the write and edit intents a policy decides, and the
//!   observations tools report.
//! - [`LocalDisk`], the host-disk implementation both providers serve (`dsh-fs-local` as it
//!   is, `dsh-fs-sandbox` behind the sandbox policy's fence).
//!
//! ```
//! use dsh_fs::{FileSystem, FsWriteIntent, LocalDisk};
//!
//! let dir = tempfile::tempdir()?;
//! let disk = LocalDisk::new(dir.path(), dsh_fs::DEFAULT_DIFF_BASIS_MAX_BYTES);
//! let target = disk.resolve("notes/a.txt", None)?;
//! disk.write_text(&target, "one\n", Some(&FsWriteIntent::CreateIfAbsent), None)?;
//! assert_eq!(disk.read_text(&target)?, "one\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod config;
mod error;
pub mod events;
mod local;
mod service;
mod types;

pub use config::LocalDiskConfig;
pub use error::{FS_ERROR_NAME, FsError, FsErrorCode};
pub use events::{FsActor, FsObserved};
pub use local::{
    BINARY_SNIFF_BYTES, DEFAULT_DIFF_BASIS_MAX_BYTES, LocalDisk, MAX_WHOLE_TEXT_BYTES, quoted,
};
pub use service::{FS, FileSystem, is_own_proc_entry};
pub use types::{
    FsDirEntry, FsEditOutcome, FsEditRequest, FsInfo, FsKind, FsObservation, FsPathInfo,
    FsPathKind, FsTarget, FsVersion, FsWriteIntent, FsWriteOperation, FsWriteOutcome,
};
