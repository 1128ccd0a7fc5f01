//! Carve-outs: protected paths kept read-only inside a writable root, by bind-mounting each
//! onto itself read-only in a private mount namespace (as bubblewrap's `--ro-bind` does).
//! Landlock grants only add up, so it cannot take a subtree back out of a writable root.
//!
//! A mount point can be neither removed nor renamed (`EBUSY`), but its parent directories
//! could be: `mv sub elsewhere; mkdir -p sub/home` would put a directory of the command's
//! own where a protected `sub/home` was. So each directory between a writable root and a
//! carve-out is bind-mounted onto itself too (staying writable), which pins it in place.
//!
//! The namespace is entered before Landlock restricts the caller; once Landlock handles
//! file accesses it refuses every mount operation, so a confined command cannot undo a
//! carve-out (nor can it in a nested namespace, where inherited mounts are locked).

use std::path::{Path, PathBuf};

use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::statvfs::{FsFlags, statvfs};

/// How a carve-out gets its mount namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamespaceMode {
    /// A mount namespace alone: needs `CAP_SYS_ADMIN` (root); works on a single thread.
    MountOnly,
    /// A user namespace mapping the caller's own ids, then a mount namespace in it: works
    /// unprivileged where the kernel allows user namespaces, in a single-threaded process.
    WithUser,
}

/// Enters a private mount namespace (with a user namespace for [`NamespaceMode::WithUser`])
/// where each of `paths` is read-only and each directory between it and the writable root
/// holding it (one of `roots`) is pinned. Does nothing for no paths.
pub fn keep_read_only(
    paths: &[PathBuf],
    roots: &[PathBuf],
    mode: NamespaceMode,
) -> Result<(), String> {
    if paths.is_empty() {
        return Ok(());
    }
    match mode {
        NamespaceMode::MountOnly => unshare(CloneFlags::CLONE_NEWNS)
            .map_err(|error| no_namespace(paths, "a mount namespace", error))?,
        NamespaceMode::WithUser => enter_user_namespace()
            .map_err(|error| no_namespace(paths, "a user namespace", error))?,
    }
    // Our mounts stay ours; the host's later mounts still reach us.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_SLAVE,
        None::<&str>,
    )
    .map_err(|error| format!("cannot make the mount namespace private: {error}"))?;
    for directory in pinned_ancestors(paths, roots) {
        mount(
            Some(&directory),
            &directory,
            None::<&str>,
            MsFlags::MS_BIND,
            None::<&str>,
        )
        .map_err(|error| format!("cannot pin {} in place: {error}", directory.display()))?;
    }
    for path in paths {
        bind_read_only(path)?;
    }
    Ok(())
}

/// The directories strictly inside a writable root and strictly above a carve-out, outermost
/// first, without duplicates.
pub fn pinned_ancestors(paths: &[PathBuf], roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut pinned: Vec<PathBuf> = Vec::new();
    for path in paths {
        for ancestor in path.ancestors().skip(1) {
            let inside = roots
                .iter()
                .any(|root| ancestor != root.as_path() && ancestor.starts_with(root));
            if inside && !pinned.iter().any(|kept| kept == ancestor) {
                pinned.push(ancestor.to_path_buf());
            }
        }
    }
    pinned.sort_by_key(|path| path.components().count());
    pinned
}

/// Why the carve-outs of `paths` cannot be made, and what to do instead.
fn no_namespace(paths: &[PathBuf], what: &str, error: impl std::fmt::Display) -> String {
    let listed: Vec<String> = paths
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    format!(
        "cannot keep {} read-only inside the writable area: this host does not let dsh create \
         {what} ({error}); move them out of the workspace and the temp directories (for \
         $DSH_HOME: set DSH_HOME to a directory outside them), or run in read-only mode",
        listed.join(", ")
    )
}

/// A user namespace in which this process keeps its own uid and gid, plus a mount
/// namespace owned by it.
fn enter_user_namespace() -> Result<(), String> {
    let uid = nix::unistd::geteuid();
    let gid = nix::unistd::getegid();
    unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS)
        .map_err(|error| error.to_string())?;
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|error| format!("cannot write {file}: {error}"))
    };
    write("/proc/self/setgroups", "deny".to_owned())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    Ok(())
}

fn bind_read_only(path: &Path) -> Result<(), String> {
    let failed = |what: &str, error: nix::Error| {
        format!("cannot keep {} read-only ({what}): {error}", path.display())
    };
    mount(
        Some(path),
        path,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )
    .map_err(|error| failed("bind", error))?;
    for point in mounts_at_or_under(path) {
        // A remount must restate the flags the mount has, or the kernel refuses it in a
        // user namespace (they are locked there).
        let kept = statvfs(&point)
            .map(|stat| kept_flags(stat.flags()))
            .map_err(|error| failed("statvfs", error))?;
        mount(
            None::<&str>,
            &point,
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | kept,
            None::<&str>,
        )
        .map_err(|error| failed("remount", error))?;
    }
    Ok(())
}

/// The mount flags of `flags` a read-only remount must keep.
fn kept_flags(flags: FsFlags) -> MsFlags {
    let mut kept = MsFlags::empty();
    for (fs, ms) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if flags.contains(fs) {
            kept |= ms;
        }
    }
    kept
}

/// `path` and the mount points beneath it, from `/proc/self/mountinfo` (`path` first).
fn mounts_at_or_under(path: &Path) -> Vec<PathBuf> {
    let mut points = vec![path.to_path_buf()];
    let Ok(table) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return points;
    };
    for line in table.lines() {
        let Some(point) = line.split(' ').nth(4).map(unescape) else {
            continue;
        };
        let point = PathBuf::from(point);
        if point != path && point.starts_with(path) && !points.contains(&point) {
            points.push(point);
        }
    }
    points
}

/// Undoes mountinfo's octal escapes (`\040` for a space, `\011`, `\012`, `\134`).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        let digits = bytes.get(index + 1..index + 4);
        let octal = digits
            .filter(|digits| byte == b'\\' && digits.iter().all(|d| (b'0'..=b'7').contains(d)))
            .and_then(|digits| std::str::from_utf8(digits).ok())
            .and_then(|digits| u8::from_str_radix(digits, 8).ok());
        match octal {
            Some(value) => {
                out.push(value);
                index += 4;
            }
            None => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(unescape(r"/home/a\040b"), "/home/a b");
        assert_eq!(unescape(r"/x\134y\011z"), "/x\\y\tz");
        assert_eq!(unescape(r"/plain"), "/plain");
        assert_eq!(unescape(r"/odd\04"), r"/odd\04");
    }

    #[test]
    fn a_host_without_namespaces_is_told_what_to_move() {
        let message = no_namespace(
            &[
                PathBuf::from("/home/me/.dsh"),
                PathBuf::from("/home/me/p.yml"),
            ],
            "a user namespace",
            "EPERM: Operation not permitted",
        );
        assert_eq!(
            message,
            "cannot keep /home/me/.dsh, /home/me/p.yml read-only inside the writable area: this \
             host does not let dsh create a user namespace (EPERM: Operation not permitted); \
             move them out of the workspace and the temp directories (for $DSH_HOME: set \
             DSH_HOME to a directory outside them), or run in read-only mode"
        );
    }

    #[test]
    fn the_directories_between_a_root_and_a_carve_out_are_pinned() {
        let roots = [PathBuf::from("/w"), PathBuf::from("/tmp")];
        let paths = [
            PathBuf::from("/w/sub/deeper/.dsh"),
            PathBuf::from("/w/sub/p.yml"),
            PathBuf::from("/w/.dsh"),
            PathBuf::from("/tmp/x/home"),
        ];
        assert_eq!(
            pinned_ancestors(&paths, &roots),
            ["/w/sub", "/tmp/x", "/w/sub/deeper"]
                .map(PathBuf::from)
                .to_vec()
        );
    }

    #[test]
    fn remounts_keep_the_locked_flags() {
        let flags = FsFlags::ST_NOSUID | FsFlags::ST_NODEV | FsFlags::ST_RDONLY;
        assert_eq!(kept_flags(flags), MsFlags::MS_NOSUID | MsFlags::MS_NODEV);
    }
}
