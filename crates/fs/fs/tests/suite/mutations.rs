//! Writes and edits: intents, versions, the diff basis, refusals that leave the file alone.

use std::os::unix::fs::MetadataExt as _;

use dsh_fs::{FileSystem, FsEditRequest, FsErrorCode, FsWriteIntent, FsWriteOperation, LocalDisk};
use pretty_assertions::assert_eq;

fn setup() -> (tempfile::TempDir, std::path::PathBuf, LocalDisk) {
    let dir = tempfile::tempdir().unwrap();
    let real = std::fs::canonicalize(dir.path()).unwrap();
    let disk = LocalDisk::new(&real, 64);
    (dir, real, disk)
}

fn edit(old: &str, new: &str) -> FsEditRequest {
    FsEditRequest {
        old_string: old.into(),
        new_string: new.into(),
        replace_all: false,
    }
}

#[test]
fn a_same_size_rewrite_with_the_old_mtime_still_changes_the_version() {
    let (_dir, real, disk) = setup();
    let target = disk.resolve("f", None).unwrap();
    disk.write_text(&target, "aaaa", None, None).unwrap();
    let first = disk.stat(&target).unwrap().unwrap();
    let mtime = std::fs::metadata(real.join("f"))
        .unwrap()
        .modified()
        .unwrap();
    let written = disk.write_text(&target, "bbbb", None, None).unwrap();
    std::fs::File::options()
        .write(true)
        .open(real.join("f"))
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let second = disk.stat(&target).unwrap().unwrap();
    assert_ne!(first.version, second.version);
    assert_ne!(first.version, written.version);
}

#[test]
fn guarded_writes_check_their_version_and_create_only_creates() {
    let (_dir, real, disk) = setup();
    let target = disk.resolve("g.txt", None).unwrap();
    let created = disk
        .write_text(&target, "one\n", Some(&FsWriteIntent::CreateIfAbsent), None)
        .unwrap();
    assert_eq!(
        (created.operation, created.before),
        (FsWriteOperation::Create, None)
    );
    let again = disk
        .write_text(&target, "two\n", Some(&FsWriteIntent::CreateIfAbsent), None)
        .unwrap_err();
    assert_eq!(again.code(), Some(FsErrorCode::NotObserved));
    let stale = FsWriteIntent::ReplaceIfVersion(dsh_fs::FsVersion("old".into()));
    let error = disk
        .write_text(&target, "two\n", Some(&stale), None)
        .unwrap_err();
    assert_eq!(
        error.message(),
        format!(
            "cannot write \"{}\": file changed since it was read",
            real.join("g.txt").display()
        )
    );
    let fresh = FsWriteIntent::ReplaceIfVersion(created.version);
    let updated = disk
        .write_text(&target, "two\r\n", Some(&fresh), None)
        .unwrap();
    assert_eq!(
        (
            updated.operation,
            updated.before.as_deref(),
            updated.after.as_str()
        ),
        (FsWriteOperation::Update, Some("one\n"), "two\n")
    );
    std::fs::remove_file(real.join("g.txt")).unwrap();
    let gone = FsWriteIntent::ReplaceIfVersion(updated.version);
    let error = disk
        .write_text(&target, "x", Some(&gone), None)
        .unwrap_err();
    assert!(
        error.message().ends_with("file no longer exists"),
        "{}",
        error.message()
    );
}

#[test]
fn create_only_keeps_a_dangling_link_in_place() {
    let (_dir, real, disk) = setup();
    std::os::unix::fs::symlink(real.join("nowhere"), real.join("dangling")).unwrap();
    let target = disk.resolve("dangling", None).unwrap();
    // dsh: the link is in the way of a create-only write, which neither replaces it nor
    // follows it to create its target.
    let error = disk
        .write_text(&target, "x", Some(&FsWriteIntent::CreateIfAbsent), None)
        .unwrap_err();
    assert_eq!(error.code(), Some(FsErrorCode::NotRegularFile));
    assert!(!real.join("nowhere").exists());
    assert!(
        std::fs::symlink_metadata(real.join("dangling"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn the_diff_basis_is_bounded_and_text_only() {
    let (_dir, real, disk) = setup();
    let target = disk.resolve("d", None).unwrap();
    std::fs::write(real.join("d"), b"bin\0ary").unwrap();
    assert_eq!(
        disk.write_text(&target, "text", None, None).unwrap().before,
        None
    );
    std::fs::write(real.join("d"), b"caf\xe9").unwrap();
    assert_eq!(
        disk.write_text(&target, "text", None, None).unwrap().before,
        None
    );
    std::fs::write(real.join("d"), "x".repeat(64)).unwrap();
    assert_eq!(
        disk.write_text(&target, "short", None, None)
            .unwrap()
            .before,
        None,
        "old side at the bound"
    );
    std::fs::write(real.join("d"), "short").unwrap();
    assert_eq!(
        disk.write_text(&target, &"y".repeat(64), None, None)
            .unwrap()
            .before,
        None,
        "new side at the bound"
    );
    // 21 characters of three bytes: 63 bytes, under the bound of 64 bytes.
    std::fs::write(real.join("d"), "é".repeat(21)).unwrap();
    assert!(
        disk.write_text(&target, "z", None, None)
            .unwrap()
            .before
            .is_some()
    );
}

#[test]
fn refused_edits_leave_the_file_as_it_was() {
    let (_dir, real, disk) = setup();
    let target = disk.resolve("e", None).unwrap();
    for content in [
        &b"caf\xe9 x"[..],
        &[b"x".repeat(9000), b"\0".to_vec()].concat()[..],
    ] {
        std::fs::write(real.join("e"), content).unwrap();
        let error = disk
            .edit_text(&target, &edit("x", "y"), None, None)
            .unwrap_err();
        assert_eq!(error.code(), Some(FsErrorCode::NotText));
        assert_eq!(std::fs::read(real.join("e")).unwrap(), content);
    }
    let missing = disk.resolve("missing", None).unwrap();
    let error = disk
        .edit_text(&missing, &edit("x", "y"), None, None)
        .unwrap_err();
    assert_eq!(
        error.code(),
        Some(FsErrorCode::StaleVersion),
        "a missing file is stale even unguarded"
    );
}

#[test]
fn edits_keep_crlf_and_the_mode_and_drop_a_bom() {
    let (_dir, real, disk) = setup();
    let path = real.join("c");
    std::fs::write(&path, "\u{feff}a\r\nb\r\nc\r\n").unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o640)).unwrap();
    let target = disk.resolve("c", None).unwrap();
    let outcome = disk
        .edit_text(&target, &edit("b\nc", "B\nC\r"), None, None)
        .unwrap();
    assert_eq!(outcome.before, "a\nb\nc\n");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\r\nB\r\nC\r\n");
    assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o640);
}
