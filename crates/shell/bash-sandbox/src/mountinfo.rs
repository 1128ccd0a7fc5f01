//! The mount table of the calling thread's mount namespace, parsed from
//! `/proc/thread-self/mountinfo` (see `proc_pid_mountinfo(5)`).
//!
//! Each line starts with five fields this module reads (the rest are ignored):
//!
//! ```text
//! 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//! |  |  |    |     mount point (where the mount is attached, in this namespace)
//! |  |  |    root (the directory of the filesystem the mount shows)
//! |  |  major:minor of the filesystem's device
//! |  parent mount id
//! mount id
//! ```
//!
//! The kernel writes a space, a tab, a newline and a backslash in a path as an octal escape
//! (`\040`, `\011`, `\012`, `\134`); every other byte is written as it is, so the table is
//! read as bytes, not as UTF-8.
//!
//! The thread's own table is read, not the process's: `/proc/self` names the thread group
//! leader, whose mount namespace is not the one a launch thread entered.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

/// The mount table of the calling thread's namespace.
pub const TABLE: &str = "/proc/thread-self/mountinfo";

/// One line of the mount table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// The mount's id.
    pub id: u64,
    /// The id of the mount it is attached to (its own id for the namespace's root).
    pub parent: u64,
    /// The major and minor numbers of the filesystem's device: mounts with the same pair
    /// show the same filesystem.
    pub device: (u32, u32),
    /// The directory of the filesystem the mount shows, as a path within that filesystem
    /// (`/` for a whole filesystem, the source directory for a bind mount).
    pub root: PathBuf,
    /// Where the mount is attached, relative to the process's root directory.
    pub mount_point: PathBuf,
}

/// Reads and parses the calling thread's mount table.
pub fn read() -> Result<Vec<MountEntry>, String> {
    std::fs::read(TABLE)
        .map(|table| parse(&table))
        .map_err(|error| format!("cannot read {TABLE}: {error}"))
}

/// The entries of a mount table, in the order listed; a malformed line is skipped.
pub fn parse(table: &[u8]) -> Vec<MountEntry> {
    table
        .split(|&byte| byte == b'\n')
        .filter_map(parse_line)
        .collect()
}

/// One entry from one line, or `None` if the line does not start with the five fields.
fn parse_line(line: &[u8]) -> Option<MountEntry> {
    let mut fields = line.split(|&byte| byte == b' ');
    let id = number(fields.next()?)?;
    let parent = number(fields.next()?)?;
    let device = device(fields.next()?)?;
    let root = path(fields.next()?)?;
    let mount_point = path(fields.next()?)?;
    Some(MountEntry {
        id,
        parent,
        device,
        root,
        mount_point,
    })
}

/// A decimal number field.
fn number<T: std::str::FromStr>(field: &[u8]) -> Option<T> {
    std::str::from_utf8(field).ok()?.parse().ok()
}

/// A `major:minor` field.
fn device(field: &[u8]) -> Option<(u32, u32)> {
    let colon = field.iter().position(|&byte| byte == b':')?;
    let (major, minor) = field.split_at(colon);
    Some((number(major)?, number(minor.get(1..)?)?))
}

/// A path field, unescaped; it must be absolute.
fn path(field: &[u8]) -> Option<PathBuf> {
    let path = unescape(field);
    path.is_absolute().then_some(path)
}

/// Undoes mountinfo's octal escapes (`\040` for a space, `\011`, `\012`, `\134`); a
/// backslash not followed by three octal digits stays as it is.
pub fn unescape(field: &[u8]) -> PathBuf {
    let mut out = Vec::with_capacity(field.len());
    let mut index = 0;
    while let Some(&byte) = field.get(index) {
        match field.get(index + 1..index + 4).and_then(octal) {
            Some(value) if byte == b'\\' => {
                out.push(value);
                index += 4;
            }
            _ => {
                out.push(byte);
                index += 1;
            }
        }
    }
    PathBuf::from(OsString::from_vec(out))
}

/// The byte three octal digits stand for, if they are three octal digits of at most `\377`.
fn octal(digits: &[u8]) -> Option<u8> {
    if !digits.iter().all(|digit| (b'0'..=b'7').contains(digit)) {
        return None;
    }
    u8::from_str_radix(std::str::from_utf8(digits).ok()?, 8).ok()
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    use proptest::prelude::*;

    use super::*;

    /// What the kernel writes for `path` (`mangle_path` with `" \t\n\\"`).
    fn escape(path: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(path.len());
        for &byte in path {
            if b" \t\n\\".contains(&byte) {
                out.extend_from_slice(format!("\\{byte:03o}").as_bytes());
            } else {
                out.push(byte);
            }
        }
        out
    }

    fn entry(id: u64, parent: u64, device: (u32, u32), root: &str, point: &str) -> MountEntry {
        MountEntry {
            id,
            parent,
            device,
            root: PathBuf::from(root),
            mount_point: PathBuf::from(point),
        }
    }

    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(unescape(br"/home/a\040b"), PathBuf::from("/home/a b"));
        assert_eq!(unescape(br"/x\134y\011z\012"), PathBuf::from("/x\\y\tz\n"));
        assert_eq!(unescape(br"/plain"), PathBuf::from("/plain"));
        assert_eq!(unescape(br"/odd\04"), PathBuf::from(r"/odd\04"));
        assert_eq!(unescape(br"/not\089"), PathBuf::from(r"/not\089"));
        assert_eq!(unescape(br"/too-big\400"), PathBuf::from(r"/too-big\400"));
        assert_eq!(unescape(br"/end\\"), PathBuf::from(r"/end\\"));
    }

    #[test]
    fn bytes_that_are_not_utf8_are_kept() {
        assert_eq!(
            unescape(b"/caf\xe9\\040x").as_os_str(),
            OsStr::from_bytes(b"/caf\xe9 x")
        );
    }

    #[test]
    fn a_real_looking_table_is_parsed() {
        let table = b"\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
61 27 254:0 /tmp /var/tmp/alt rw,relatime shared:1 - ext4 /dev/vda rw
62 27 254:0 /home/me/project /workspace rw,relatime shared:1 - ext4 /dev/vda rw
70 27 0:45 / /var/lib/docker/overlay2/abc/merged rw,relatime - overlay overlay \
rw,lowerdir=/l1:/l2,upperdir=/u,workdir=/w
71 27 254:0 /home/me/with\\040space /mnt/a\\011tab rw - ext4 /dev/vda rw
";
        let entries = parse(table);
        assert_eq!(
            entries,
            vec![
                entry(22, 27, (0, 21), "/", "/proc"),
                entry(27, 1, (254, 0), "/", "/"),
                entry(61, 27, (254, 0), "/tmp", "/var/tmp/alt"),
                entry(62, 27, (254, 0), "/home/me/project", "/workspace"),
                entry(70, 27, (0, 45), "/", "/var/lib/docker/overlay2/abc/merged"),
                entry(71, 27, (254, 0), "/home/me/with space", "/mnt/a\ttab"),
            ]
        );
    }

    #[test]
    fn stacked_mounts_are_listed_in_order() {
        let table = b"\
27 1 254:0 / / rw - ext4 /dev/vda rw
80 27 254:0 /srv /data rw - ext4 /dev/vda rw
81 80 0:50 / /data rw - tmpfs tmpfs rw
";
        let entries = parse(table);
        assert_eq!(
            entries,
            vec![
                entry(27, 1, (254, 0), "/", "/"),
                entry(80, 27, (254, 0), "/srv", "/data"),
                entry(81, 80, (0, 50), "/", "/data"),
            ]
        );
    }

    #[test]
    fn malformed_lines_are_skipped() {
        let table = b"\
\n\
x 27 254:0 / /a rw\n\
28 27 254 / /b rw\n\
29 27 254:0 relative /c rw\n\
30 27 254:0 /\n\
31 27 254:0 / /kept rw - ext4 /dev/vda rw\n";
        assert_eq!(parse(table), vec![entry(31, 27, (254, 0), "/", "/kept")]);
    }

    #[test]
    fn this_thread_s_table_is_read() {
        let entries = read().unwrap();
        assert!(
            entries
                .iter()
                .any(|entry| entry.mount_point == Path::new("/")),
            "{entries:?}"
        );
    }

    proptest! {
        #[test]
        fn escaping_then_unescaping_gives_the_path_back(
            path in proptest::collection::vec(
                prop_oneof![
                    Just(b' '), Just(b'\t'), Just(b'\n'), Just(b'\\'), b'0'..=b'7', any::<u8>()
                ],
                0..64,
            )
        ) {
            let unescaped = unescape(&escape(&path));
            prop_assert_eq!(unescaped.as_os_str(), OsStr::from_bytes(&path));
        }
    }
}
