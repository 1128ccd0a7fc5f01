//! Spill files: where a stream that overflowed its budget is written in full.
//!
//! The directory is `dsh-subprocess-XXXXXX`, made once per process (mode 0700) under
//! `$XDG_RUNTIME_DIR` when that is a private directory of ours (outside every writable root
//! of a confined command), else under the temp directory. Each file is
//! `dsh-subprocess-<pid>-<counter>-<12 hex>-<stdout|stderr>.log`, created exclusively
//! (`O_EXCL`, so a planted file or symlink is never followed) with mode 0600.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use dsh_kernel::sync::lock;

static DEFAULT_DIR: Mutex<Option<PathBuf>> = Mutex::new(None);
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The process's private spill directory, created on first use (and again if something
/// removed it, such as a temp-directory cleaner).
pub fn default_spill_dir() -> io::Result<PathBuf> {
    let mut dir = lock(&DEFAULT_DIR);
    if let Some(dir) = dir.as_ref().filter(|dir| still_private(dir)) {
        return Ok(dir.clone());
    }
    let template = spill_parent().join("dsh-subprocess-XXXXXX");
    let created = nix::unistd::mkdtemp(&template).map_err(io::Error::from)?;
    *dir = Some(created.clone());
    Ok(created)
}

/// Removes the process's spill directory if nothing was spilled into it (call it when the
/// process ends): a directory holding spill files stays, for the results that name them.
pub fn remove_spill_dir_if_empty() {
    let dir = lock(&DEFAULT_DIR).take();
    if let Some(dir) = dir.filter(|dir| still_private(dir)) {
        // Fails, and so keeps the directory, when it holds anything.
        let _ = std::fs::remove_dir(dir);
    }
}

/// `$XDG_RUNTIME_DIR` when it is a real directory owned by us with mode 0700, else the
/// temp directory (dsh's choice).
fn spill_parent() -> PathBuf {
    std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute() && still_private(dir))
        .unwrap_or_else(std::env::temp_dir)
}

/// Whether `dir` is still our private directory: a real directory (not a symlink planted in
/// its place) owned by us with mode 0700.
fn still_private(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir).is_ok_and(|meta| {
        meta.is_dir()
            && meta.uid() == nix::unistd::geteuid().as_raw()
            && meta.mode() & 0o777 == 0o700
    })
}

/// Creates a new spill file for stream `label` in `dir` (the default directory when `None`).
pub(crate) fn create_spill_file(dir: Option<&Path>, label: &str) -> io::Result<(PathBuf, File)> {
    let dir = match dir {
        Some(dir) => dir.to_path_buf(),
        None => default_spill_dir()?,
    };
    let counter = COUNTER.fetch_add(1, Ordering::Relaxed) + 1;
    let suffix = fastrand::u64(..) & 0xffff_ffff_ffff;
    let name = format!(
        "dsh-subprocess-{}-{counter}-{suffix:012x}-{label}.log",
        std::process::id()
    );
    let path = dir.join(name);
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    Ok((path, file))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn default_dir_is_private_and_stable() {
        let dir = default_spill_dir().unwrap();
        assert_eq!(dir, default_spill_dir().unwrap());
        let name = dir.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("dsh-subprocess-") && name.len() == 21,
            "{name}"
        );
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        // A removed directory is made again.
        std::fs::remove_dir(&dir).unwrap();
        let again = default_spill_dir().unwrap();
        assert_ne!(again, dir);
        assert!(again.is_dir());
        std::fs::remove_dir(&again).unwrap();
    }

    #[test]
    fn an_unused_directory_is_removed_at_the_end_and_a_used_one_kept() {
        let unused = default_spill_dir().unwrap();
        remove_spill_dir_if_empty();
        assert!(!unused.exists());
        let used = default_spill_dir().unwrap();
        let (path, _file) = create_spill_file(None, "stdout").unwrap();
        remove_spill_dir_if_empty();
        assert!(path.exists() && used.is_dir());
        std::fs::remove_dir_all(&used).unwrap();
    }

    #[test]
    fn files_are_exclusive_and_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _file) = create_spill_file(Some(dir.path()), "stdout").unwrap();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let prefix = format!("dsh-subprocess-{}-", std::process::id());
        assert!(
            name.starts_with(&prefix) && name.ends_with("-stdout.log"),
            "{name}"
        );
        let middle = &name[prefix.len()..name.len() - "-stdout.log".len()];
        let (counter, hex) = middle.split_once('-').unwrap();
        assert!(counter.parse::<u64>().unwrap() >= 1);
        assert_eq!(hex.len(), 12);
        assert!(hex.bytes().all(|b| b.is_ascii_hexdigit()));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
