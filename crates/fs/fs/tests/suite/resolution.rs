//! Targets: identity through links, keys stable across creation, refusals.

use dsh_fs::{FileSystem, FsErrorCode, FsKind, LocalDisk};
use pretty_assertions::assert_eq;

fn disk(dir: &std::path::Path) -> LocalDisk {
    LocalDisk::new(dir, dsh_fs::DEFAULT_DIFF_BASIS_MAX_BYTES)
}

#[test]
fn aliases_share_a_key_and_a_missing_suffix_keeps_it_across_creation() {
    let dir = tempfile::tempdir().unwrap();
    let real = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(real.join("data")).unwrap();
    std::os::unix::fs::symlink(real.join("data"), real.join("link")).unwrap();
    let disk = disk(&real);
    let before = disk.resolve("link/new/file.txt", None).unwrap();
    assert_eq!(before.target_key, real.join("data/new/file.txt"));
    assert_eq!(
        before.display_path,
        real.join("link/new/file.txt").to_string_lossy()
    );
    std::fs::create_dir(real.join("data/new")).unwrap();
    std::fs::write(real.join("data/new/file.txt"), "x").unwrap();
    let after = disk.resolve("link/new/file.txt", None).unwrap();
    assert_eq!(after.target_key, before.target_key);
    let direct = disk
        .resolve(
            &real.join("data/new/file.txt").to_string_lossy(),
            Some("/elsewhere"),
        )
        .unwrap();
    assert_eq!(
        direct.target_key, before.target_key,
        "cwd is ignored for an absolute path"
    );
}

#[test]
fn a_file_in_the_middle_of_a_path_and_blank_paths_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let real = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(real.join("afile"), "x").unwrap();
    let disk = disk(&real);
    let error = disk.resolve("afile/child", None).unwrap_err();
    assert_eq!(error.code(), Some(FsErrorCode::NotFound));
    assert_eq!(
        error.message(),
        format!(
            "cannot resolve \"{}\": a parent path segment is not a directory",
            real.join("afile/child").display()
        )
    );
    assert_eq!(
        disk.resolve("  ", None).unwrap_err().message(),
        "file_path must be a non-empty string"
    );
    assert_eq!(
        disk.lstat("afile/child", None).unwrap(),
        None,
        "a file in the middle of the path means nothing is there"
    );
}

#[test]
fn stat_and_lstat_tell_links_from_targets() {
    let dir = tempfile::tempdir().unwrap();
    let real = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(real.join("f"), "abc").unwrap();
    std::os::unix::fs::symlink(real.join("f"), real.join("l")).unwrap();
    std::os::unix::fs::symlink(real.join("gone"), real.join("dangling")).unwrap();
    let disk = disk(&real);
    let info = disk
        .stat(&disk.resolve("l", None).unwrap())
        .unwrap()
        .unwrap();
    assert_eq!((info.kind, info.size), (FsKind::File, Some(3)));
    assert_eq!(
        disk.lstat("l", None).unwrap().unwrap().kind,
        dsh_fs::FsPathKind::Symlink
    );
    assert_eq!(
        disk.stat(&disk.resolve("dangling", None).unwrap()).unwrap(),
        None
    );
    let listed = disk.list_dir(&disk.resolve(".", None).unwrap()).unwrap();
    let names: Vec<(&str, FsKind)> = listed
        .iter()
        .map(|entry| (entry.name.as_str(), entry.kind))
        .collect();
    assert_eq!(
        names,
        [
            ("dangling", FsKind::Other),
            ("f", FsKind::File),
            ("l", FsKind::File)
        ]
    );
}
