//! The vocabulary of the filesystem seam.

use std::path::PathBuf;

/// A resolved path: the file's identity and the path the model and UIs see.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FsTarget {
    /// The file's identity: absolute, symbolic links resolved (a missing suffix appended to
    /// the nearest existing ancestor's real path), so aliases of one file share it.
    pub target_key: PathBuf,
    /// The absolute path as asked for, links not resolved.
    pub display_path: String,
}

/// An opaque version of a file's content; it changes with every write or edit.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FsVersion(pub String);

impl FsVersion {
    /// The token.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What a tool saw of a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FsObservation {
    /// The file existed at this version.
    Present(FsVersion),
    /// Nothing was there.
    Absent,
}

/// The type of what a path names, links followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// Anything else (devices, sockets, FIFOs, broken links).
    Other,
}

/// What `stat` reports (links followed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsInfo {
    /// The content version.
    pub version: FsVersion,
    /// The type.
    pub kind: FsKind,
    /// The size in bytes (files only).
    pub size: Option<u64>,
}

/// The type of what a path names, its last component not followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsPathKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link.
    Symlink,
    /// Anything else.
    Other,
}

/// What `lstat` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsPathInfo {
    /// The version of the entry itself.
    pub version: FsVersion,
    /// The type of the entry itself.
    pub kind: FsPathKind,
    /// The size in bytes (files only).
    pub size: Option<u64>,
}

/// One child of a listed directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsDirEntry {
    /// The child's name.
    pub name: String,
    /// Its type, links followed (a broken link is [`FsKind::Other`]).
    pub kind: FsKind,
    /// The child as a target.
    pub target: FsTarget,
    /// Its version, when it could be probed.
    pub version: Option<FsVersion>,
    /// Its size (files only).
    pub size: Option<u64>,
}

/// The condition a write must meet; no intent means an unconditional write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FsWriteIntent {
    /// Create the file; fail if something is there.
    CreateIfAbsent,
    /// Replace the file only while it is still at `version`.
    ReplaceIfVersion(FsVersion),
}

/// Whether a write created the file or replaced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsWriteOperation {
    /// There was no file.
    Create,
    /// A file was replaced.
    Update,
}

impl FsWriteOperation {
    /// dsh's spelling: `create` or `update`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Update => "update",
        }
    }
}

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsWriteOutcome {
    /// Created or replaced.
    pub operation: FsWriteOperation,
    /// The new version.
    pub version: FsVersion,
    /// The previous text with line endings as `\n`, when there was a diffable one (a text
    /// file under the diff bound, replaced by content under it too).
    pub before: Option<String>,
    /// The written text with line endings as `\n`.
    pub after: String,
}

/// A literal replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsEditRequest {
    /// The text to find (non-empty).
    pub old_string: String,
    /// Its replacement.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    pub replace_all: bool,
}

/// What an edit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsEditOutcome {
    /// The new version.
    pub version: FsVersion,
    /// The text before, line endings as `\n`.
    pub before: String,
    /// The text after, line endings as `\n`.
    pub after: String,
}
