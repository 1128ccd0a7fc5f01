//! Carve-outs: protected paths kept read-only inside a writable root, by bind-mounting each
//! onto itself read-only in a private mount namespace (as bubblewrap's `--ro-bind` does).
//! Landlock grants only add up, so it cannot take a subtree back out of a writable root.
//!
//! A mount point can be neither removed nor renamed (`EBUSY`), but its parent directories
//! could be: `mv sub elsewhere; mkdir -p sub/home` would put a directory of the command's
//! own where a protected `sub/home` was. So each directory between a writable root and a
//! carve-out is bind-mounted onto itself too (staying writable), which pins it in place.
//!
//! Read-only is a property of a mount, not of a file, while Landlock grants inodes: where
//! the host has another mount of the same filesystem showing a carve-out under another path
//! (`/tmp` also bound at `/var/tmp/alt`, a project bound at `/workspace`), a command could
//! write the carve-out through that path. So each carve-out is made read-only at every path
//! where the namespace's mount table ([`crate::mountinfo`]) shows it: its [`aliases`] (a
//! mount whose root holds it), and the mount points of its [`parts_elsewhere`] (a mount
//! whose root lies inside it). Each is bound only where `stat` finds the same file there (a
//! path hidden under another mount, or resolving elsewhere, is left alone); one that cannot
//! be bound is an error. Those paths need no pinning: the kernel refuses to rename or remove
//! a directory that is a mount point in the namespace through any path to it.
//!
//! The namespace is entered before Landlock restricts the caller; once Landlock handles
//! file accesses it refuses every mount operation, so a confined command cannot undo a
//! carve-out (nor can it in a nested namespace, where inherited mounts are locked).

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::statvfs::{FsFlags, statvfs};

use crate::mountinfo::{self, MountEntry};

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
/// where each of `paths` is read-only, at its own path and at every other path the mount
/// table shows it under, and each directory between it and the writable root holding it
/// (one of `roots`) is pinned. Does nothing for no paths.
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
    .map_err(|error| {
        cannot_carve(
            paths,
            &format!("its mount namespace cannot be made private ({error})"),
        )
    })?;
    for directory in pinned_ancestors(paths, roots) {
        mount(
            Some(&directory),
            &directory,
            None::<&str>,
            MsFlags::MS_BIND,
            None::<&str>,
        )
        .map_err(|error| {
            cannot_carve(
                paths,
                &format!(
                    "{} cannot be pinned in place ({error})",
                    directory.display()
                ),
            )
        })?;
    }
    // The table as the host made it (with the pins, which add no other path to anything).
    let table = mountinfo::read()?;
    for path in paths {
        bind_read_only(path)?;
        keep_other_paths_read_only(path, &table)?;
    }
    Ok(())
}

/// Binds read-only each other path at which `table` shows `path` or a part of it, where that
/// path is the same file; fails on the first one that cannot be bound.
fn keep_other_paths_read_only(path: &Path, table: &[MountEntry]) -> Result<(), String> {
    let carved = std::fs::metadata(path)
        .map_err(|error| format!("cannot keep {} read-only: {error}", path.display()))?;
    let others = aliases(path, table)
        .into_iter()
        .filter(|alias| is_same_file(&carved, alias))
        .chain(
            parts_elsewhere(path, table)
                .into_iter()
                .filter(|(point, part)| {
                    std::fs::metadata(part).is_ok_and(|part| is_same_file(&part, point))
                })
                .map(|(point, _)| point),
        );
    for other in others {
        bind_read_only(&other).map_err(|error| {
            format!(
                "{} is also reachable at {}, which cannot be kept read-only: {error}",
                path.display(),
                other.display()
            )
        })?;
    }
    Ok(())
}

/// Whether `other` exists and is the file `known` describes (same device, same inode).
fn is_same_file(known: &Metadata, other: &Path) -> bool {
    std::fs::metadata(other)
        .is_ok_and(|other| other.dev() == known.dev() && other.ino() == known.ino())
}

/// The other paths at which `entries` show `path`: for each mount of the filesystem holding
/// `path` whose root is `path`'s location in that filesystem or an ancestor of it, the
/// mount point joined with the rest of the location. Without `path` itself or duplicates;
/// a path listed may be hidden under another mount (the caller checks what it finds there).
pub(crate) fn aliases(path: &Path, entries: &[MountEntry]) -> Vec<PathBuf> {
    let Some((holder, location)) = location(path, entries) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = Vec::new();
    for entry in entries.iter().filter(|entry| entry.device == holder.device) {
        let Ok(rest) = location.strip_prefix(&entry.root) else {
            continue;
        };
        let alias = joined(&entry.mount_point, rest);
        if alias != path && !found.contains(&alias) {
            found.push(alias);
        }
    }
    found
}

/// The mounts elsewhere that show a part of `path`: for each mount of the filesystem holding
/// `path` whose root lies strictly inside `path`'s location and whose mount point is not
/// beneath `path` (those go read-only with `path`), its mount point and the path beneath
/// `path` it shows. Without duplicates.
pub(crate) fn parts_elsewhere(path: &Path, entries: &[MountEntry]) -> Vec<(PathBuf, PathBuf)> {
    let Some((holder, location)) = location(path, entries) else {
        return Vec::new();
    };
    let mut found: Vec<(PathBuf, PathBuf)> = Vec::new();
    for entry in entries.iter().filter(|entry| entry.device == holder.device) {
        let Ok(inner) = entry.root.strip_prefix(&location) else {
            continue;
        };
        let point = &entry.mount_point;
        let fresh = !found.iter().any(|(kept, _)| kept == point);
        if !inner.as_os_str().is_empty() && !point.starts_with(path) && fresh {
            found.push((point.clone(), path.join(inner)));
        }
    }
    found
}

/// The mount holding `path` (the one with the longest mount point above or at it; of
/// several at that point, the last listed, which is on top) and `path`'s location in its
/// filesystem.
fn location<'a>(path: &Path, entries: &'a [MountEntry]) -> Option<(&'a MountEntry, PathBuf)> {
    let holder = entries
        .iter()
        .filter(|entry| path.starts_with(&entry.mount_point))
        .max_by_key(|entry| entry.mount_point.components().count())?;
    let rest = path.strip_prefix(&holder.mount_point).ok()?;
    Some((holder, joined(&holder.root, rest)))
}

/// `base` joined with `rest`, without the trailing separator `join` adds for an empty `rest`.
fn joined(base: &Path, rest: &Path) -> PathBuf {
    if rest.as_os_str().is_empty() {
        base.to_path_buf()
    } else {
        base.join(rest)
    }
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

/// Why the carve-outs of `paths` cannot be made: the host refuses the namespace.
fn no_namespace(paths: &[PathBuf], what: &str, error: impl std::fmt::Display) -> String {
    cannot_carve(
        paths,
        &format!("this host does not let dsh create {what} ({error})"),
    )
}

/// The carve-outs of `paths` cannot be made because of `reason`, and what to do instead.
fn cannot_carve(paths: &[PathBuf], reason: &str) -> String {
    let listed: Vec<String> = paths
        .iter()
        .map(|path| path.display().to_string())
        .collect();
    format!(
        "cannot keep {} read-only inside the writable area: {reason}; move them out of the \
         workspace and the temp directories (for $DSH_HOME: set DSH_HOME to a directory \
         outside them), or run in read-only mode",
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

/// Binds `path` onto itself, with the mounts beneath it, and remounts each of them read-only.
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
    let table = mountinfo::read()
        .map_err(|error| format!("cannot keep {} read-only: {error}", path.display()))?;
    for point in mounts_at_or_under(path, &table) {
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

/// `path` and the mount points of `entries` beneath it (`path` first), without duplicates.
fn mounts_at_or_under(path: &Path, entries: &[MountEntry]) -> Vec<PathBuf> {
    let mut points = vec![path.to_path_buf()];
    for entry in entries {
        if entry.mount_point.starts_with(path) && !points.contains(&entry.mount_point) {
            points.push(entry.mount_point.clone());
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The entries of a mount table given as `(device, root, mount point)`, ids in order.
    fn table(mounts: &[((u32, u32), &str, &str)]) -> Vec<MountEntry> {
        (1..)
            .zip(mounts)
            .map(|(id, &(device, root, point))| MountEntry {
                id,
                parent: 1,
                device,
                root: PathBuf::from(root),
                mount_point: PathBuf::from(point),
            })
            .collect()
    }

    fn paths(list: &[&str]) -> Vec<PathBuf> {
        list.iter().map(PathBuf::from).collect()
    }

    const DISK: (u32, u32) = (254, 0);
    const OTHER: (u32, u32) = (0, 45);

    #[test]
    fn a_bind_of_tmp_elsewhere_is_an_alias() {
        let entries = table(&[(DISK, "/", "/"), (DISK, "/tmp", "/var/tmp/alt")]);
        assert_eq!(
            aliases(Path::new("/tmp/x/dh"), &entries),
            paths(&["/var/tmp/alt/x/dh"])
        );
        // Seen from the other side, the original path is the alias.
        assert_eq!(
            aliases(Path::new("/var/tmp/alt/x/dh"), &entries),
            paths(&["/tmp/x/dh"])
        );
    }

    #[test]
    fn a_bind_of_a_subdirectory_is_an_alias() {
        let entries = table(&[
            (DISK, "/", "/"),
            (DISK, "/home/me/project", "/workspace"),
            (DISK, "/home/me/project/.dsh", "/srv/exact"),
        ]);
        assert_eq!(
            aliases(Path::new("/home/me/project/.dsh"), &entries),
            paths(&["/workspace/.dsh", "/srv/exact"])
        );
    }

    #[test]
    fn a_mount_of_another_device_is_no_alias() {
        let entries = table(&[(DISK, "/", "/"), (OTHER, "/tmp", "/var/tmp/alt")]);
        assert_eq!(aliases(Path::new("/tmp/x/dh"), &entries), paths(&[]));
    }

    #[test]
    fn a_mount_whose_root_is_below_the_location_is_no_alias() {
        let entries = table(&[(DISK, "/", "/"), (DISK, "/tmp/x/dh/profiles", "/mnt/p")]);
        assert_eq!(aliases(Path::new("/tmp/x/dh"), &entries), paths(&[]));
        // It shows a part of the carve-out elsewhere, though.
        assert_eq!(
            parts_elsewhere(Path::new("/tmp/x/dh"), &entries),
            vec![(PathBuf::from("/mnt/p"), PathBuf::from("/tmp/x/dh/profiles"))]
        );
    }

    #[test]
    fn nested_mount_points_pick_the_deepest() {
        // /tmp is its own filesystem, also bound at /alt; the root filesystem's /tmp (hidden
        // under it) is bound at /hidden and says nothing of /tmp/x/dh.
        let entries = table(&[
            (DISK, "/", "/"),
            (OTHER, "/", "/tmp"),
            (OTHER, "/", "/alt"),
            (DISK, "/tmp", "/hidden"),
        ]);
        assert_eq!(
            aliases(Path::new("/tmp/x/dh"), &entries),
            paths(&["/alt/x/dh"])
        );
    }

    #[test]
    fn of_stacked_mounts_the_last_listed_holds_the_path() {
        let entries = table(&[
            (DISK, "/", "/"),
            (DISK, "/srv", "/data"),
            (OTHER, "/", "/data"),
            (OTHER, "/", "/alt"),
        ]);
        assert_eq!(
            aliases(Path::new("/data/dh"), &entries),
            paths(&["/alt/dh"])
        );
    }

    #[test]
    fn aliases_come_without_duplicates_or_the_path_itself() {
        let entries = table(&[
            (DISK, "/", "/"),
            (DISK, "/tmp/x", "/tmp/x"),
            (DISK, "/tmp", "/var/tmp/alt"),
            (DISK, "/tmp", "/var/tmp/alt"),
        ]);
        assert_eq!(
            aliases(Path::new("/tmp/x/dh"), &entries),
            paths(&["/var/tmp/alt/x/dh"])
        );
        assert_eq!(
            aliases(Path::new("/"), &table(&[(DISK, "/", "/")])),
            paths(&[])
        );
        assert_eq!(aliases(Path::new("/tmp/x"), &[]), paths(&[]));
    }

    #[test]
    fn parts_beneath_the_carve_out_itself_are_left_to_its_own_bind() {
        let entries = table(&[
            (DISK, "/", "/"),
            (DISK, "/w/.dsh/a", "/w/.dsh/b"),
            (DISK, "/w/.dsh", "/w/.dsh"),
        ]);
        assert_eq!(parts_elsewhere(Path::new("/w/.dsh"), &entries), vec![]);
        assert_eq!(
            mounts_at_or_under(Path::new("/w/.dsh"), &entries),
            paths(&["/w/.dsh", "/w/.dsh/b"])
        );
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
