//! Programs the harness starts outside every confinement (the orphan guard's `bash`, the
//! browser opener, bubblewrap) are taken from fixed system directories, never found through
//! `PATH`: a `PATH` entry inside a writable root (a project's `.venv/bin`, `node_modules/.bin`,
//! anything under `/tmp`) could hold a program a confined command planted there, which would
//! then run unconfined the next time the harness starts it.

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use std::path::{Path, PathBuf};

/// Where system programs are looked for, in order: the usual directories, NixOS's profile,
/// and the launchers of snap and Flatpak applications (where a browser often lives). A
/// program run from here gets these as its `PATH` too (see [`system_path`]).
pub const SYSTEM_PROGRAM_DIRS: [&str; 8] = [
    "/usr/bin",
    "/bin",
    "/usr/local/bin",
    "/usr/sbin",
    "/sbin",
    "/run/current-system/sw/bin",
    "/snap/bin",
    "/var/lib/flatpak/exports/bin",
];

/// [`SYSTEM_PROGRAM_DIRS`] as a `PATH` value, for a program started unconfined: the helpers
/// it looks up (`xdg-open` runs `xdg-mime`, `gio`, a browser) come from there too, never
/// from a directory a confined command could write.
pub fn system_path() -> String {
    SYSTEM_PROGRAM_DIRS.join(":")
}

/// The first `<dir>/<name>` of [`SYSTEM_PROGRAM_DIRS`] that a user cannot have planted (see
/// [`root_owned_and_locked`]), with symbolic links resolved; `None` when there is none, or
/// when `name` is not a bare file name.
pub fn system_program(name: &str) -> Option<PathBuf> {
    let bare = !name.is_empty() && !name.contains('/') && name != "." && name != "..";
    if !bare {
        return None;
    }
    SYSTEM_PROGRAM_DIRS
        .iter()
        .filter_map(|dir| std::fs::canonicalize(Path::new(dir).join(name)).ok())
        .find(|path| root_owned_and_locked(path))
}

/// Whether `path` is a regular file owned by root that neither group nor others may write,
/// in directories owned by root that others may not write, and that the group may write only
/// when they are sticky (as `/nix/store` is: there nobody may replace an entry of root's).
pub fn root_owned_and_locked(path: &Path) -> bool {
    let mode = |meta: &std::fs::Metadata| meta.permissions().mode();
    let file_locked = std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.uid() == 0 && mode(&meta) & 0o022 == 0);
    let dir_locked = |meta: &std::fs::Metadata| {
        let bits = mode(meta);
        meta.uid() == 0 && bits & 0o002 == 0 && (bits & 0o020 == 0 || bits & 0o1000 != 0)
    };
    file_locked
        && path
            .ancestors()
            .skip(1)
            .all(|dir| std::fs::metadata(dir).is_ok_and(|meta| dir_locked(&meta)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bare_names_are_looked_up() {
        assert_eq!(system_program(""), None);
        assert_eq!(system_program("../bin/sh"), None);
        assert_eq!(system_program("/bin/sh"), None);
        assert_eq!(system_program(".."), None);
    }

    #[test]
    fn a_system_shell_is_found_and_a_program_in_an_open_directory_is_not_trusted() {
        let shell = system_program("sh").unwrap();
        assert!(shell.is_absolute() && root_owned_and_locked(&shell));
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let planted = dir.path().join("sh");
        std::fs::write(&planted, "#!/bin/sh\n").unwrap();
        assert!(!root_owned_and_locked(&planted));
    }
}
