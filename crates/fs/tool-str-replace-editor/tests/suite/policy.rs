//! The editor among other plugins: observations, an observation policy deciding the
//! intents, the sandbox policy on every mutation, registration and config.

use dsh_fs::FsObservation;
use dsh_kernel::FiberState;
use dsh_shell::SandboxMode;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{SESSION, Setup, err, harness, harness_with, ok, record_observations};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observations_follow_dshs_table() {
    let harness = harness().await;
    let seen = record_observations(&harness.kernel.root());
    let path = harness.write("a.txt", "one\n");
    let missing = harness.path("missing.txt");
    ok(&harness.call(json!({"command": "view", "path": path})).await);
    err(&harness
        .call(json!({"command": "view", "path": missing}))
        .await);
    err(&harness
        .call(json!({"command": "view", "path": path, "view_range": [5, 6]}))
        .await);
    ok(&harness
        .call(json!({"command": "str_replace", "path": path, "old_str": "one", "new_str": "two"}))
        .await);
    err(&harness
        .call(json!({"command": "create", "path": path, "file_text": "x"}))
        .await);
    err(&harness
        .call_without_session(
            json!({"command": "insert", "path": missing, "insert_line": 0, "new_str": "x"}),
        )
        .await);
    let seen = seen.lock().unwrap().clone();
    let summary: Vec<(String, &str, Option<String>)> = seen
        .iter()
        .map(|(display, observation, session, tool)| {
            assert_eq!(tool, "str_replace_editor");
            let kind = match observation {
                FsObservation::Present(version) => {
                    assert!(!version.as_str().is_empty());
                    "present"
                }
                FsObservation::Absent => "absent",
            };
            (display.clone(), kind, session.clone())
        })
        .collect();
    let owner = Some(SESSION.to_owned());
    assert_eq!(
        summary,
        [
            (path.clone(), "present", owner.clone()),
            (missing.clone(), "absent", owner.clone()),
            (path.clone(), "present", owner.clone()),
            (path.clone(), "present", owner),
            (missing, "absent", None),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_observation_policy_decides_the_intents() {
    let harness = Setup {
        observation_policy: true,
        ..Setup::default()
    }
    .boot()
    .await;
    let existing = harness.write("existing.txt", "before");
    let blind = harness
        .call(json!({"command": "str_replace", "path": existing, "old_str": "before", "new_str": "after"}))
        .await;
    assert_eq!(
        err(&blind),
        format!("Error: edit requires reading \"{existing}\" first")
    );
    assert_eq!(blind.code(), Some("FS_NOT_OBSERVED"));
    let unchecked = harness
        .call(json!({"command": "str_replace", "path": existing}))
        .await;
    assert_eq!(
        unchecked.code(),
        Some("FS_NOT_OBSERVED"),
        "the intent comes first"
    );
    assert_eq!(harness.read("existing.txt"), "before");

    ok(&harness
        .call(json!({"command": "view", "path": existing}))
        .await);
    ok(&harness
        .call(json!({"command": "str_replace", "path": existing, "old_str": "before", "new_str": "after"}))
        .await);
    ok(&harness
        .call(json!({"command": "insert", "path": existing, "insert_line": 1, "new_str": "tail"}))
        .await);
    assert_eq!(harness.read("existing.txt"), "after\ntail");

    harness.write("existing.txt", "changed behind its back");
    let stale = harness
        .call(json!({"command": "insert", "path": existing, "insert_line": 0, "new_str": "x"}))
        .await;
    assert_eq!(
        err(&stale),
        format!("Error: cannot write \"{existing}\": file changed since it was read")
    );
    assert_eq!(stale.code(), Some("FS_STALE_VERSION"));
    assert_eq!(harness.read("existing.txt"), "changed behind its back");

    let created = harness.path("created.txt");
    ok(&harness
        .call(json!({"command": "create", "path": created, "file_text": "new"}))
        .await);
    assert_eq!(harness.read("created.txt"), "new");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_view_records_absence_so_create_recovers() {
    let harness = Setup {
        observation_policy: true,
        ..Setup::default()
    }
    .boot()
    .await;
    let path = harness.write("deleted.txt", "original");
    ok(&harness.call(json!({"command": "view", "path": path})).await);
    std::fs::remove_file(&path).unwrap();
    let recreate = harness
        .call(json!({"command": "create", "path": path, "file_text": "too early"}))
        .await;
    assert_eq!(
        err(&recreate),
        format!("Error: cannot write \"{path}\": file no longer exists")
    );
    assert_eq!(recreate.code(), Some("FS_STALE_VERSION"));

    let missing = harness.call(json!({"command": "view", "path": path})).await;
    assert_eq!(missing.code(), Some("FS_NOT_FOUND"));
    let edit = harness
        .call(json!({"command": "str_replace", "path": path, "old_str": "original", "new_str": "edited"}))
        .await;
    assert_eq!(
        err(&edit),
        format!("Error: cannot edit \"{path}\": not found")
    );
    assert_eq!(edit.code(), Some("FS_NOT_FOUND"));
    ok(&harness
        .call(json!({"command": "create", "path": path, "file_text": "fresh"}))
        .await);
    assert_eq!(harness.read("deleted.txt"), "fresh");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_policy_denies_every_mutation_with_the_bare_marker() {
    let harness = Setup {
        sandbox: Some(SandboxMode::ReadOnly),
        with_policy_service: true,
        ..Setup::default()
    }
    .boot()
    .await;
    let existing = harness.write("existing.txt", "keep\n");
    let blocked = harness.path("blocked.txt");
    let marker = "Error: [sandbox: file access denied under read-only mode]";
    let calls = [
        json!({"command": "create", "path": blocked, "file_text": "blocked"}),
        json!({"command": "str_replace", "path": existing, "old_str": "keep", "new_str": "x"}),
        json!({"command": "insert", "path": existing, "insert_line": 0, "new_str": "x"}),
    ];
    for args in calls {
        let result = harness.call(args.clone()).await;
        assert_eq!(err(&result), marker, "{args}");
        assert_eq!(result.code(), Some("FS_SANDBOX_DENIED"));
        assert_eq!(
            result
                .error
                .as_ref()
                .and_then(|e| e.info.as_ref())
                .map(|i| i.name.as_str()),
            Some("FsError")
        );
    }
    let ownerless = harness
        .call_without_session(json!({"command": "create", "path": blocked, "file_text": "x"}))
        .await;
    assert_eq!(err(&ownerless), marker);
    assert!(!std::path::Path::new(&blocked).exists());
    assert_eq!(harness.read("existing.txt"), "keep\n");
    ok(&harness
        .call(json!({"command": "view", "path": existing}))
        .await);

    let policies = harness.disk.policies.lock().unwrap().clone();
    assert_eq!(
        policies.len(),
        4,
        "every mutation reached the filesystem with a policy"
    );
    let first = policies[0].clone().expect("a policy is passed");
    assert_eq!(first.mode, SandboxMode::ReadOnly);
    assert_eq!(first.session_id.as_deref(), Some(SESSION));
    assert_eq!(first.workspace_root, harness.root);
    let last = policies[3]
        .clone()
        .expect("a policy is passed without a session too");
    assert_eq!(last.session_id, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_write_denies_a_link_out_of_the_workspace() {
    let harness = Setup {
        sandbox: Some(SandboxMode::WorkspaceWrite),
        with_policy_service: true,
        ..Setup::default()
    }
    .boot()
    .await;
    let outside = tempfile::tempdir().unwrap();
    let outside = std::fs::canonicalize(outside.path()).unwrap();
    std::os::unix::fs::symlink(&outside, harness.root.join("out")).unwrap();
    let escaped = harness.path("out/escaped.txt");
    let result = harness
        .call(json!({"command": "create", "path": escaped, "file_text": "x"}))
        .await;
    assert_eq!(
        err(&result),
        "Error: [sandbox: file access denied under workspace-write mode]"
    );
    assert_eq!(result.code(), Some("FS_SANDBOX_DENIED"));
    assert!(!outside.join("escaped.txt").exists());
    let inside = harness.path("inside.txt");
    ok(&harness
        .call(json!({"command": "create", "path": inside, "file_text": "fine"}))
        .await);
    assert_eq!(harness.read("inside.txt"), "fine");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_confining_filesystem_gets_no_policy_and_other_failures_pass_through() {
    let harness = Setup {
        fail_writes: true,
        ..Setup::default()
    }
    .boot()
    .await;
    let path = harness.write("backend-error.txt", "old\n");
    for args in [
        json!({"command": "str_replace", "path": path, "old_str": "old", "new_str": "new"}),
        json!({"command": "insert", "path": path, "insert_line": 1, "new_str": "new"}),
    ] {
        let result = harness.call(args).await;
        assert_eq!(err(&result), "Error: backend write failed");
        assert_eq!(result.error.as_ref().unwrap().info, None, "a plain error");
    }
    assert_eq!(*harness.disk.policies.lock().unwrap(), [None, None]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confining_filesystem_without_a_policy_service_fails_the_load() {
    let harness = Setup {
        sandbox: Some(SandboxMode::ReadOnly),
        with_policy_service: false,
        ..Setup::default()
    }
    .boot()
    .await;
    assert_eq!(harness.editor.state(), FiberState::Failed);
    let error = harness.editor.error().unwrap_or_default();
    assert!(
        error.contains(
            "tool-str-replace-editor: the mounted filesystem confines but ctx.sandboxPolicy is \
             missing"
        ),
        "{error}"
    );
    assert!(harness.tools.names().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registration_schema_and_configured_description() {
    let harness = harness_with(json!({"description": "custom editor description"})).await;
    let schemas = harness.tools.schemas();
    assert_eq!(schemas.len(), 1);
    assert_eq!(schemas[0].name, "str_replace_editor");
    assert_eq!(schemas[0].description, "custom editor description");
    let parameters = &schemas[0].parameters;
    assert_eq!(parameters["properties"]["insert_line"]["type"], "integer");
    assert_eq!(
        parameters["properties"]["view_range"]["items"],
        json!({"type": "integer"})
    );
    assert!(parameters["properties"].get("replace_all").is_none());
    let shape = parameters.to_string();
    assert!(!shape.contains("sandbox_permissions"));
    let path = harness.write("a.txt", "x");
    let call = dsh_tools::ToolExecutionInput::new(
        "c",
        "str_replace_editor",
        json!({"command": "view", "path": path}),
        dsh_tools::CancellationToken::new(),
    );
    assert_eq!(
        harness.tools.execution_mode(&call),
        dsh_tools::ExecutionMode::Exclusive
    );
    harness.editor.dispose().await;
    assert!(harness.tools.schemas().is_empty());

    let default = harness_with(json!({})).await;
    assert_eq!(
        default.tools.schemas()[0].description,
        dsh_tool_str_replace_editor::DEFAULT_DESCRIPTION
    );
    insta::assert_snapshot!(
        "default_description",
        dsh_tool_str_replace_editor::DEFAULT_DESCRIPTION
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_config_fails_the_load() {
    for (config, message) in [
        (
            json!({"maxOutputChars": 0}),
            "tool-str-replace-editor: maxOutputChars must be a positive safe integer",
        ),
        (
            json!({"maxOutputChars": 2.5}),
            "tool-str-replace-editor: maxOutputChars must be a positive safe integer",
        ),
        (
            json!({"description": " "}),
            "tool-str-replace-editor: description must be non-empty",
        ),
        (json!({"maxChars": 10}), "maxChars"),
    ] {
        let harness = harness_with(config.clone()).await;
        assert_eq!(harness.editor.state(), FiberState::Failed, "{config}");
        let error = harness.editor.error().unwrap_or_default();
        assert!(error.contains(message), "{config}: {error}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_stops_before_the_disk() {
    let harness = harness().await;
    let signal = dsh_tools::CancellationToken::new();
    signal.cancel();
    let path = harness.path("never.txt");
    let result = harness
        .run(dsh_tools::ToolExecutionInput::new(
            "c",
            "str_replace_editor",
            json!({"command": "create", "path": path, "file_text": "x"}),
            signal,
        ))
        .await;
    assert_eq!(result.code(), Some("ABORTED_BEFORE_DISPATCH"));
    assert!(!std::path::Path::new(&path).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cancelled_midway_stops_at_the_next_filesystem_step() {
    type EditNext = dsh_kernel::Next<
        dsh_fs::events::FsIntentArgs,
        Result<Option<dsh_fs::FsVersion>, dsh_fs::FsError>,
    >;
    let harness = harness().await;
    let path = harness.write("a.txt", "old");
    let signal = dsh_tools::CancellationToken::new();
    let cancel = signal.clone();
    harness
        .kernel
        .root()
        .on::<dsh_fs::events::FsEditIntentEvent>(
            move |args: dsh_fs::events::FsIntentArgs, next: EditNext| {
                let cancel = cancel.clone();
                async move {
                    cancel.cancel();
                    // Let the pipeline see the caller's cancellation.
                    tokio::task::yield_now().await;
                    next.run(args).await
                }
            },
        )
        .unwrap();
    let result = harness
        .run(dsh_tools::ToolExecutionInput::new(
            "c",
            "str_replace_editor",
            json!({"command": "str_replace", "path": path, "old_str": "old", "new_str": "new"}),
            signal,
        ))
        .await;
    assert_eq!(err(&result), "Error: stat aborted");
    assert_eq!(result.code(), Some("FS_ABORTED"));
    assert_eq!(harness.read("a.txt"), "old");
}
