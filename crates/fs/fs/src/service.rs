//! The `fs` service interface (dsh's `FileSystem`, `ctx.fs`).

use std::path::{Path, PathBuf};

use dsh_shell::{SandboxExecutionPolicy, SandboxMode};

use crate::error::FsError;
use crate::types::{
    FsDirEntry, FsEditOutcome, FsEditRequest, FsInfo, FsPathInfo, FsTarget, FsVersion,
    FsWriteIntent, FsWriteOutcome,
};

/// The filesystem the file tools use. One provider per context.
///
/// Every method does blocking I/O: async callers run them on a blocking thread
/// (`tokio::task::spawn_blocking`). A caller that is cancelled mid-stream stops by returning
/// an error from the sink of [`FileSystem::stream_text`].
pub trait FileSystem: Send + Sync + 'static {
    /// The standing mode of a confining provider, `None` for one that does not confine
    /// (tools offer sandbox escalation only when this is `Some`).
    fn sandbox_mode(&self) -> Option<SandboxMode> {
        None
    }

    /// Resolves `path` against `cwd` (else the provider's default directory); `cwd` is
    /// ignored for an absolute path. Aliases of one file give the same `target_key`.
    fn resolve(&self, path: &str, cwd: Option<&str>) -> Result<FsTarget, FsError>;

    /// The path a subprocess can open for `target`.
    fn process_path(&self, target: &FsTarget) -> PathBuf {
        target.target_key.clone()
    }

    /// Whether `child` is `parent` or inside it.
    fn contains(&self, parent: &FsTarget, child: &FsTarget) -> bool {
        child.target_key.starts_with(&parent.target_key)
    }

    /// Metadata, links followed; `None` when nothing is there.
    fn stat(&self, target: &FsTarget) -> Result<Option<FsInfo>, FsError>;

    /// Metadata of the entry `path` names itself (its last component not followed).
    fn lstat(&self, path: &str, cwd: Option<&str>) -> Result<Option<FsPathInfo>, FsError>;

    /// The whole text of a regular UTF-8 file (a leading byte-order mark removed); binary
    /// content and invalid UTF-8 are refused.
    fn read_text(&self, target: &FsTarget) -> Result<String, FsError>;

    /// The same text as [`FileSystem::read_text`], handed to `sink` in decoded chunks
    /// (chunk boundaries mean nothing). Memory stays bounded by the chunk size.
    fn stream_text(
        &self,
        target: &FsTarget,
        sink: &mut dyn FnMut(&str) -> Result<(), FsError>,
    ) -> Result<(), FsError>;

    /// The raw bytes, at most `max_bytes` (inclusive); more is `FS_TOO_LARGE`, never a
    /// truncated result.
    fn read_bytes(&self, target: &FsTarget, max_bytes: u64) -> Result<Vec<u8>, FsError>;

    /// The direct children, in name order; no content is read.
    fn list_dir(&self, target: &FsTarget) -> Result<Vec<FsDirEntry>, FsError>;

    /// Creates or replaces the file atomically under `expected`. A confining provider checks
    /// `policy` (else its standing policy) first; others ignore it.
    fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&FsWriteIntent>,
        policy: Option<&SandboxExecutionPolicy>,
    ) -> Result<FsWriteOutcome, FsError>;

    /// Checks `expected`, matches the literal edit and rewrites the file, in one critical
    /// section per target. `policy` as for [`FileSystem::write_text`].
    fn edit_text(
        &self,
        target: &FsTarget,
        edit: &FsEditRequest,
        expected: Option<&FsVersion>,
        policy: Option<&SandboxExecutionPolicy>,
    ) -> Result<FsEditOutcome, FsError>;
}

/// The `fs` service.
pub const FS: dsh_kernel::ServiceKey<dyn FileSystem> = dsh_kernel::ServiceKey::new("fs");

/// Whether `path` is the harness's own `/proc` entry or inside it (`/proc/self`,
/// `/proc/thread-self`, `/proc/<this process>`, `/proc/<any of its threads>`): they hold
/// its memory, environment and descriptors.
pub fn is_own_proc_entry(path: &Path) -> bool {
    if path.starts_with("/proc/self") || path.starts_with("/proc/thread-self") {
        return true;
    }
    let Ok(rest) = path.strip_prefix("/proc") else {
        return false;
    };
    let Some(id) = rest
        .components()
        .next()
        .and_then(|first| first.as_os_str().to_str())
        .filter(|id| !id.is_empty() && id.bytes().all(|byte| byte.is_ascii_digit()))
    else {
        return false;
    };
    id == std::process::id().to_string() || PathBuf::from(format!("/proc/self/task/{id}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_harness_proc_entries_and_its_threads() {
        let pid = std::process::id();
        assert!(is_own_proc_entry(Path::new(&format!(
            "/proc/{pid}/environ"
        ))));
        assert!(is_own_proc_entry(Path::new("/proc/self/mem")));
        let (started, wait) = std::sync::mpsc::channel();
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let worker = std::thread::spawn(move || {
            let _ = started.send(());
            let _ = stopped.recv();
        });
        wait.recv().unwrap();
        let thread = std::fs::read_dir("/proc/self/task")
            .unwrap()
            .flatten()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .find(|id| id != &pid.to_string())
            .unwrap();
        assert!(is_own_proc_entry(Path::new(&format!(
            "/proc/{thread}/maps"
        ))));
        stop.send(()).unwrap();
        worker.join().unwrap();
        assert!(!is_own_proc_entry(Path::new("/proc/cpuinfo")));
        assert!(!is_own_proc_entry(Path::new("/etc/passwd")));
    }
}
