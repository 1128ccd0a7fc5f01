//! Mutations of one file from many threads: the lock per target serializes them, and a
//! guarded mutation that lost the race is stale, never a lost update.

use std::sync::Arc;

use dsh_fs::{FileSystem, FsEditRequest, FsErrorCode, FsWriteIntent, LocalDisk};

#[test]
fn of_two_guarded_writes_at_one_version_exactly_one_wins() {
    let dir = tempfile::tempdir().unwrap();
    let disk = Arc::new(LocalDisk::new(dir.path(), 1 << 20));
    let target = disk.resolve("race.txt", None).unwrap();
    let first = disk.write_text(&target, "base\n", None, None).unwrap();
    let intent = FsWriteIntent::ReplaceIfVersion(first.version);
    let outcomes: Vec<_> = (0..8)
        .map(|n| {
            let (disk, target, intent) = (Arc::clone(&disk), target.clone(), intent.clone());
            std::thread::spawn(move || {
                disk.write_text(&target, &format!("writer {n}\n"), Some(&intent), None)
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|thread| thread.join().unwrap())
        .collect();
    let won = outcomes.iter().filter(|outcome| outcome.is_ok()).count();
    assert_eq!(won, 1);
    for outcome in &outcomes {
        if let Err(error) = outcome {
            assert_eq!(error.code(), Some(FsErrorCode::StaleVersion));
        }
    }
}

#[test]
fn unguarded_edits_of_one_file_all_land() {
    let dir = tempfile::tempdir().unwrap();
    let disk = Arc::new(LocalDisk::new(dir.path(), 1 << 20));
    let target = disk.resolve("count.txt", None).unwrap();
    let lines: String = (0..16).map(|n| format!("line {n}\n")).collect();
    disk.write_text(&target, &lines, None, None).unwrap();
    let threads: Vec<_> = (0..16)
        .map(|n| {
            let (disk, target) = (Arc::clone(&disk), target.clone());
            std::thread::spawn(move || {
                let edit = FsEditRequest {
                    old_string: format!("line {n}\n"),
                    new_string: format!("done {n}\n"),
                    replace_all: false,
                };
                disk.edit_text(&target, &edit, None, None)
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap().unwrap();
    }
    let text = disk.read_text(&target).unwrap();
    assert_eq!(
        text,
        (0..16).map(|n| format!("done {n}\n")).collect::<String>()
    );
}
