//! `write` and `edit` under the observation policy: read before you write.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Disk, code, harness, s, text};

#[tokio::test]
async fn edit_needs_a_read_and_fails_after_an_outside_change() {
    let h = harness(Disk::Local).await;
    let file = h.path("settings.txt");
    std::fs::write(&file, "mode=DEBUG\nlevel=info\n").unwrap();
    let edit = json!({"file_path": "settings.txt", "old_string": "DEBUG", "new_string": "RELEASE"});
    let before = h.session_call("edit", edit.clone()).await;
    assert_eq!(
        text(&before),
        format!(
            "Error: edit requires reading \"{}\" first — read the file, then retry",
            s(&file)
        )
    );
    assert_eq!(code(&before).as_deref(), Some("FS_NOT_OBSERVED"));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "mode=DEBUG\nlevel=info\n"
    );

    h.session_call("read", json!({"file_path": "settings.txt"}))
        .await;
    let done = h.session_call("edit", edit.clone()).await;
    assert_eq!(
        text(&done),
        format!("The file {} has been updated successfully.", s(&file))
    );
    assert_eq!(
        done.meta,
        Some(
            json!({"diffs": [{"path": "settings.txt", "oldText": "mode=DEBUG\nlevel=info", "newText": "mode=RELEASE\nlevel=info"}]})
        )
    );

    std::fs::write(&file, "mode=RELEASE\nlevel=warn\n").unwrap();
    let stale = h
        .session_call(
            "edit",
            json!({"file_path": "settings.txt", "old_string": "warn", "new_string": "error"}),
        )
        .await;
    assert_eq!(
        text(&stale),
        format!(
            "Error: cannot edit \"{}\": file changed since it was read — re-read the file, then retry",
            s(&file)
        )
    );
    assert_eq!(code(&stale).as_deref(), Some("FS_STALE_VERSION"));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "mode=RELEASE\nlevel=warn\n"
    );
    h.kernel.shutdown().await;
}

#[tokio::test]
async fn replace_all_and_ambiguous_matches() {
    let h = harness(Disk::Local).await;
    let file = h.path("list.txt");
    std::fs::write(&file, "a=1\r\nb=1\r\nc=2\r\n").unwrap();
    h.session_call("read", json!({"file_path": "list.txt"}))
        .await;
    let ambiguous = h
        .session_call(
            "edit",
            json!({"file_path": "list.txt", "old_string": "=1", "new_string": "=9"}),
        )
        .await;
    assert_eq!(
        text(&ambiguous),
        format!(
            "Error: old_string matched 2 times in \"{}\"; provide a more specific old_string or set replace_all to true",
            s(&file)
        )
    );
    assert_eq!(code(&ambiguous).as_deref(), Some("FS_AMBIGUOUS_EDIT"));
    let all = h
        .session_call("edit", json!({"file_path": "list.txt", "old_string": "=1", "new_string": "=9", "replace_all": true}))
        .await;
    assert_eq!(
        text(&all),
        format!(
            "The file {} has been updated. All occurrences were successfully replaced.",
            s(&file)
        )
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "a=9\r\nb=9\r\nc=2\r\n",
        "CRLF is kept"
    );
    let missing = h
        .session_call(
            "edit",
            json!({"file_path": "list.txt", "old_string": "zzz", "new_string": "y"}),
        )
        .await;
    assert_eq!(code(&missing).as_deref(), Some("FS_EDIT_NOT_FOUND"));
    let same = h
        .session_call(
            "edit",
            json!({"file_path": "list.txt", "old_string": "a", "new_string": "a"}),
        )
        .await;
    assert_eq!(text(&same), "Error: old_string and new_string must differ");
    h.kernel.shutdown().await;
}

#[tokio::test]
async fn write_creates_refuses_unread_files_and_updates_read_ones() {
    let h = harness(Disk::Local).await;
    let file = h.path("notes/new.md");
    let created = h
        .session_call(
            "write",
            json!({"file_path": "notes/new.md", "content": "hello\n"}),
        )
        .await;
    assert_eq!(
        text(&created),
        format!(
            "<path>{}</path>\n<type>file</type>\n<content>\nCreated file\n</content>",
            s(&file)
        )
    );
    assert_eq!(created.meta, Some(json!({"diffs": []})));
    std::fs::write(h.path("old.md"), "theirs\n").unwrap();
    let unread = h
        .session_call("write", json!({"file_path": "old.md", "content": "mine\n"}))
        .await;
    assert_eq!(
        text(&unread),
        format!(
            "Error: cannot overwrite existing \"{}\" without reading it first — read the file, then retry",
            s(&h.path("old.md"))
        )
    );
    assert_eq!(
        std::fs::read_to_string(h.path("old.md")).unwrap(),
        "theirs\n"
    );
    h.session_call("read", json!({"file_path": "old.md"})).await;
    let updated = h
        .session_call("write", json!({"file_path": "old.md", "content": "mine\n"}))
        .await;
    assert!(text(&updated).contains("Updated file"));
    assert_eq!(
        updated.meta,
        Some(json!({"diffs": [{"path": "old.md", "oldText": "theirs", "newText": "mine"}]}))
    );
    // Written by this session: an edit needs no new read.
    let edited = h
        .session_call(
            "edit",
            json!({"file_path": "old.md", "old_string": "mine", "new_string": "ours"}),
        )
        .await;
    assert!(!edited.is_error, "{}", text(&edited));
    h.kernel.shutdown().await;
}

#[tokio::test]
async fn a_deleted_file_is_stale_then_recreated_after_a_read() {
    let h = harness(Disk::Local).await;
    let file = h.path("gone.txt");
    std::fs::write(&file, "x\n").unwrap();
    h.session_call("read", json!({"file_path": "gone.txt"}))
        .await;
    std::fs::remove_file(&file).unwrap();
    let stale = h
        .session_call("write", json!({"file_path": "gone.txt", "content": "y\n"}))
        .await;
    assert_eq!(code(&stale).as_deref(), Some("FS_STALE_VERSION"));
    assert!(text(&stale).contains("file no longer exists — re-read the file, then retry"));
    let missing = h
        .session_call("read", json!({"file_path": "gone.txt"}))
        .await;
    assert_eq!(code(&missing).as_deref(), Some("FS_NOT_FOUND"));
    let edit = h
        .session_call(
            "edit",
            json!({"file_path": "gone.txt", "old_string": "x", "new_string": "y"}),
        )
        .await;
    assert_eq!(
        text(&edit),
        format!("Error: cannot edit \"{}\": not found", s(&file))
    );
    let recreated = h
        .session_call("write", json!({"file_path": "gone.txt", "content": "y\n"}))
        .await;
    assert!(text(&recreated).contains("Created file"));
    h.kernel.shutdown().await;
}

#[tokio::test]
async fn outside_a_session_nothing_is_remembered() {
    let h = harness(Disk::Local).await;
    let file = h.path("one.txt");
    std::fs::write(&file, "a\n").unwrap();
    let read = h.call("read", json!({"file_path": s(&file)})).await;
    assert!(!read.is_error);
    let edit = h
        .call(
            "edit",
            json!({"file_path": s(&file), "old_string": "a", "new_string": "b"}),
        )
        .await;
    assert_eq!(code(&edit).as_deref(), Some("FS_NOT_OBSERVED"));
    let created = h
        .call(
            "write",
            json!({"file_path": s(&h.path("two.txt")), "content": ""}),
        )
        .await;
    assert!(text(&created).contains("Created file"));
    assert_eq!(std::fs::read_to_string(h.path("two.txt")).unwrap(), "");
    h.kernel.shutdown().await;
}

#[tokio::test]
async fn without_a_policy_writes_and_edits_are_unconditional() {
    let h = harness(Disk::LocalWithoutPolicy).await;
    std::fs::write(h.path("free.txt"), "a\n").unwrap();
    let written = h
        .session_call("write", json!({"file_path": "free.txt", "content": "b\n"}))
        .await;
    assert!(
        text(&written).contains("Updated file"),
        "{}",
        text(&written)
    );
    let edited = h
        .session_call(
            "edit",
            json!({"file_path": "free.txt", "old_string": "b", "new_string": "c"}),
        )
        .await;
    assert!(!edited.is_error, "{}", text(&edited));
    let missing = h
        .session_call(
            "edit",
            json!({"file_path": "none.txt", "old_string": "b", "new_string": "c"}),
        )
        .await;
    assert_eq!(code(&missing).as_deref(), Some("FS_STALE_VERSION"));
    h.kernel.shutdown().await;
}

#[tokio::test]
async fn a_failing_recorder_fails_the_call_after_the_write_landed() {
    let h = harness(Disk::Local).await;
    h.kernel
        .root()
        .on::<dsh_fs::events::FsObservedEvent>(|_observed: &dsh_fs::FsObserved| {
            Err("recorder broke".into())
        })
        .unwrap();
    let result = h
        .session_call("write", json!({"file_path": "landed.txt", "content": "x"}))
        .await;
    assert!(result.is_error);
    assert!(
        text(&result).contains("recorder broke"),
        "{}",
        text(&result)
    );
    assert_eq!(std::fs::read_to_string(h.path("landed.txt")).unwrap(), "x");
    h.kernel.shutdown().await;
}
