//! Helpers the unit tests share: a temporary project tree with a harness home, and a disk
//! whose `stat` fails on chosen paths and that counts its reads.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use dsh_fs::{
    DEFAULT_DIFF_BASIS_MAX_BYTES, FileSystem, FsDirEntry, FsEditOutcome, FsEditRequest, FsError,
    FsErrorCode, FsInfo, FsPathInfo, FsTarget, FsVersion, FsWriteIntent, FsWriteOutcome, LocalDisk,
};
use dsh_shell::SandboxExecutionPolicy;
use serde_json::json;

use crate::config::{AgentInstructionsConfig, ResolvedConfig};
use crate::paths;

/// A project directory and a harness home, both temporary.
pub(crate) struct Tree {
    pub(crate) root: tempfile::TempDir,
    pub(crate) home: tempfile::TempDir,
}

impl Tree {
    pub(crate) fn new() -> Self {
        Self {
            root: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    pub(crate) fn root(&self) -> String {
        self.root.path().to_str().unwrap().to_owned()
    }

    pub(crate) fn path(&self, relative: &str) -> String {
        paths::join(&self.root(), relative)
    }

    pub(crate) fn write(&self, relative: &str, content: &str) {
        write_at(&self.root.path().join(relative), content);
    }

    pub(crate) fn mkdir(&self, relative: &str) {
        std::fs::create_dir_all(self.root.path().join(relative)).unwrap();
    }

    pub(crate) fn config(&self, extra: serde_json::Value) -> ResolvedConfig {
        let mut value = json!({"maxBytes": 65536, "dshHome": self.home.path()});
        if let (Some(map), serde_json::Value::Object(extra)) = (value.as_object_mut(), extra) {
            map.extend(extra);
        }
        serde_json::from_value::<AgentInstructionsConfig>(value)
            .unwrap()
            .resolve_with(None, "/nonexistent-home")
            .unwrap()
    }
}

/// Writes `content` at `path`, creating its directories.
pub(crate) fn write_at(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// A disk whose `stat` fails for chosen paths.
pub(crate) struct Flaky {
    pub(crate) disk: LocalDisk,
    pub(crate) failing: Mutex<Vec<String>>,
    pub(crate) reads: AtomicUsize,
}

impl FileSystem for Flaky {
    fn resolve(&self, path: &str, cwd: Option<&str>) -> Result<FsTarget, FsError> {
        self.disk.resolve(path, cwd)
    }
    fn stat(&self, target: &FsTarget) -> Result<Option<FsInfo>, FsError> {
        let failing = self.failing.lock().unwrap();
        if failing
            .iter()
            .any(|path| Path::new(path) == target.target_key)
        {
            return Err(FsError::new(FsErrorCode::IoError, "stat failed"));
        }
        self.disk.stat(target)
    }
    fn lstat(&self, path: &str, cwd: Option<&str>) -> Result<Option<FsPathInfo>, FsError> {
        self.disk.lstat(path, cwd)
    }
    fn read_text(&self, target: &FsTarget) -> Result<String, FsError> {
        self.disk.read_text(target)
    }
    fn stream_text(
        &self,
        target: &FsTarget,
        sink: &mut dyn FnMut(&str) -> Result<(), FsError>,
    ) -> Result<(), FsError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.disk.stream_text(target, sink)
    }
    fn read_bytes(&self, target: &FsTarget, max_bytes: u64) -> Result<Vec<u8>, FsError> {
        self.disk.read_bytes(target, max_bytes)
    }
    fn list_dir(&self, target: &FsTarget) -> Result<Vec<FsDirEntry>, FsError> {
        self.disk.list_dir(target)
    }
    fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&FsWriteIntent>,
        policy: Option<&SandboxExecutionPolicy>,
    ) -> Result<FsWriteOutcome, FsError> {
        self.disk.write_text(target, content, expected, policy)
    }
    fn edit_text(
        &self,
        target: &FsTarget,
        edit: &FsEditRequest,
        expected: Option<&FsVersion>,
        policy: Option<&SandboxExecutionPolicy>,
    ) -> Result<FsEditOutcome, FsError> {
        self.disk.edit_text(target, edit, expected, policy)
    }
}

/// The host disk, relative paths taken from `/`.
pub(crate) fn disk() -> LocalDisk {
    LocalDisk::new("/", DEFAULT_DIFF_BASIS_MAX_BYTES)
}

impl Flaky {
    /// A disk failing nowhere yet.
    pub(crate) fn new() -> Self {
        Self {
            disk: disk(),
            failing: Mutex::new(Vec::new()),
            reads: AtomicUsize::new(0),
        }
    }

    /// Makes `stat` of the real path of `path` fail.
    pub(crate) fn fail(&self, path: &str) {
        let real = std::fs::canonicalize(path).unwrap();
        self.failing
            .lock()
            .unwrap()
            .push(real.to_str().unwrap().to_owned());
    }

    /// Lets every `stat` succeed again.
    pub(crate) fn heal(&self) {
        self.failing.lock().unwrap().clear();
    }

    /// How many texts were read.
    pub(crate) fn reads(&self) -> usize {
        self.reads.load(Ordering::SeqCst)
    }
}
