//! What a confined command may and may not write, through the executor and the real
//! Landlock runner: the acceptance of each mode, inherited by every descendant.

use std::path::Path;

use dsh_shell::{
    NetworkPolicy, SandboxMode, ShellExecRequest, canonical_path, sandbox_denial_marker,
};

use super::support::{executor, outside_dir, policy, run, run_in, shell_quote};

fn assert_denied(result: &dsh_shell::ShellRunResult, mode: SandboxMode) {
    let sandbox = result
        .sandbox
        .as_ref()
        .expect("confined results carry facts");
    assert_ne!(result.exit_code, Some(0), "{result:?}");
    assert!(sandbox.denied, "{result:?}");
    assert_eq!(sandbox.mode, mode.as_str());
    assert_eq!(sandbox.enforcement.as_deref(), Some("full"));
    assert_eq!(sandbox.runner_failed, None);
    assert!(
        result
            .stderr
            .text
            .to_lowercase()
            .contains("permission denied"),
        "{result:?}"
    );
    // The bash tool appends this marker to the text of a denied call.
    assert_eq!(
        sandbox_denial_marker(mode),
        format!("[sandbox: file access denied under {} mode]", mode.as_str())
    );
}

fn assert_allowed(result: &dsh_shell::ShellRunResult) {
    assert_eq!(result.exit_code, Some(0), "{result:?}");
    let sandbox = result.sandbox.as_ref().unwrap();
    assert!(!sandbox.denied);
    assert_eq!(sandbox.enforcement.as_deref(), Some("full"));
}

#[tokio::test]
async fn workspace_write_allows_the_workspace_and_tmp() {
    let (_workspace, root) = outside_dir();
    let fixture = executor(policy(
        SandboxMode::WorkspaceWrite,
        &root,
        NetworkPolicy::Allow,
    ));
    let tmp_file = tempfile::NamedTempFile::new_in("/tmp").unwrap();
    let tmp = tmp_file.path().to_path_buf();
    let command = format!(
        "echo inside > inside.txt && mkdir -p sub/deeper && echo x > sub/deeper/f && \
         mv sub/deeper/f sub/g && rm sub/g && echo tmp > {tmp} && cat {tmp} && echo null > /dev/null",
        tmp = shell_quote(&tmp)
    );
    let result = run_in(&fixture, &command, &root, &[]).await;
    assert_allowed(&result);
    assert_eq!(result.stdout.text, "tmp\n");
    assert_eq!(
        std::fs::read_to_string(root.join("inside.txt")).unwrap(),
        "inside\n"
    );
    assert_eq!(std::fs::read_to_string(&tmp).unwrap(), "tmp\n");
    let sandbox = result.sandbox.unwrap();
    assert_eq!(sandbox.mode, "workspace-write");
}

#[tokio::test]
async fn workspace_write_denies_etc_home_and_other_directories() {
    let (_workspace, root) = outside_dir();
    let (_home, home) = outside_dir();
    let (_other, other) = outside_dir();
    let fixture = executor(policy(
        SandboxMode::WorkspaceWrite,
        &root,
        NetworkPolicy::Allow,
    ));
    let etc_probe = Path::new("/etc/dsh-probe");
    let cases = [
        ("touch /etc/dsh-probe".to_owned(), etc_probe.to_path_buf()),
        (
            "echo x > ~/.bashrc-probe".to_owned(),
            home.join(".bashrc-probe"),
        ),
        (
            format!("echo x > {}", shell_quote(&other.join("f"))),
            other.join("f"),
        ),
        (
            format!("mkdir {}", shell_quote(&other.join("d"))),
            other.join("d"),
        ),
    ];
    for (command, path) in cases {
        let result = run_in(
            &fixture,
            &command,
            &root,
            &[("HOME", home.to_str().unwrap())],
        )
        .await;
        let exists = path.exists();
        if exists && path == etc_probe {
            let _ = std::fs::remove_file(etc_probe);
        }
        assert!(!exists, "{command}: {} was written", path.display());
        assert_denied(&result, SandboxMode::WorkspaceWrite);
    }
}

#[tokio::test]
async fn the_real_home_is_not_writable() {
    let Some(home) = std::env::var_os("HOME").map(std::path::PathBuf::from) else {
        return;
    };
    let home = canonical_path(&home);
    let (_workspace, root) = outside_dir();
    if home.starts_with(&root) || home.starts_with("/tmp") {
        return;
    }
    let fixture = executor(policy(
        SandboxMode::WorkspaceWrite,
        &root,
        NetworkPolicy::Allow,
    ));
    let probe = home.join(".bashrc-probe");
    let result = run_in(&fixture, "echo x > ~/.bashrc-probe", &root, &[]).await;
    let exists = probe.exists();
    if exists {
        let _ = std::fs::remove_file(&probe);
    }
    assert!(!exists);
    assert_denied(&result, SandboxMode::WorkspaceWrite);
}

#[tokio::test]
async fn read_only_denies_every_write_but_dev_null_and_reads_work() {
    let (_workspace, root) = outside_dir();
    std::fs::write(root.join("readme"), "content\n").unwrap();
    let fixture = executor(policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow));

    let result = run_in(
        &fixture,
        "cat readme && head -c 4 /etc/hostname >/dev/null && ls / >/dev/null && echo gone > /dev/null && echo ok",
        &root,
        &[],
    )
    .await;
    assert_allowed(&result);
    assert_eq!(result.stdout.text, "content\nok\n");
    assert_eq!(result.sandbox.unwrap().mode, "read-only");

    let tmp = std::env::temp_dir().join(format!("dsh-ro-probe-{}", std::process::id()));
    for (command, path) in [
        ("echo x > written".to_owned(), root.join("written")),
        (format!("touch {}", shell_quote(&tmp)), tmp.clone()),
        (
            "touch /tmp/dsh-ro-probe-tmp".to_owned(),
            "/tmp/dsh-ro-probe-tmp".into(),
        ),
        ("rm readme".to_owned(), root.join("never-created")),
        ("echo y >> readme".to_owned(), root.join("never-created")),
    ] {
        let result = run_in(&fixture, &command, &root, &[]).await;
        let exists = path.exists();
        let _ = std::fs::remove_file(&path);
        assert!(!exists, "{command}");
        assert_denied(&result, SandboxMode::ReadOnly);
    }
    assert_eq!(
        std::fs::read_to_string(root.join("readme")).unwrap(),
        "content\n"
    );
}

#[tokio::test]
async fn children_and_grandchildren_inherit_the_confinement() {
    let (_workspace, root) = outside_dir();
    let (_other, other) = outside_dir();
    let fixture = executor(policy(
        SandboxMode::WorkspaceWrite,
        &root,
        NetworkPolicy::Allow,
    ));
    let other_q = shell_quote(&other);

    // A nested bash: allowed in the workspace, denied outside.
    let nested = format!(
        "bash -c 'bash -c \"echo deep > nested-ok\"' && bash -c 'bash -c \"touch {other}/nested\"'",
        other = other.display()
    );
    let result = run_in(&fixture, &nested, &root, &[]).await;
    assert!(root.join("nested-ok").exists());
    assert!(!other.join("nested").exists());
    assert_denied(&result, SandboxMode::WorkspaceWrite);

    // A python3 child.
    let python = format!(
        "python3 -c 'open(\"py-ok\", \"w\").write(\"1\")' && python3 -c 'open(\"{}/py\", \"w\")'",
        other.display()
    );
    let result = run_in(&fixture, &python, &root, &[]).await;
    assert!(root.join("py-ok").exists(), "{result:?}");
    assert!(!other.join("py").exists());
    assert_denied(&result, SandboxMode::WorkspaceWrite);
    assert!(result.stderr.text.contains("PermissionError"), "{result:?}");

    // A detached grandchild that leaves the process group and outlives the call.
    let detached = format!(
        "setsid bash -c 'sleep 0.2; touch {other_q}/escaped; echo $? > {root_q}/escape-status' \
         </dev/null >/dev/null 2>&1 & echo started",
        root_q = shell_quote(&root)
    );
    let result = run_in(&fixture, &detached, &root, &[]).await;
    assert_eq!(result.exit_code, Some(0));
    assert!(
        super::support::eventually(|| root.join("escape-status").exists()).await,
        "the detached grandchild never finished"
    );
    assert!(!other.join("escaped").exists());
    let status = std::fs::read_to_string(root.join("escape-status")).unwrap();
    assert_ne!(status.trim(), "0");
}

#[tokio::test]
async fn danger_full_access_runs_unconfined() {
    let (_workspace, root) = outside_dir();
    let (_other, other) = outside_dir();
    let fixture = executor(policy(
        SandboxMode::DangerFullAccess,
        &root,
        NetworkPolicy::Deny,
    ));
    let command = format!("echo x > {}", shell_quote(&other.join("free")));
    let result = run_in(&fixture, &command, &root, &[]).await;
    assert_eq!(result.exit_code, Some(0));
    assert!(other.join("free").exists());
    let sandbox = result.sandbox.unwrap();
    assert_eq!(sandbox.mode, "danger-full-access");
    assert!(!sandbox.denied);
    assert_eq!(sandbox.enforcement, None);
    // A failing unconfined command is never a denial.
    let result = run_in(&fixture, "echo 'Permission denied' >&2; exit 1", &root, &[]).await;
    assert!(!result.sandbox.unwrap().denied);
}

#[tokio::test]
async fn the_request_policy_wins_over_the_standing_one() {
    let (_workspace, root) = outside_dir();
    let fixture = executor(policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow));
    assert_eq!(fixture.shell.sandbox_mode().as_deref(), Some("read-only"));

    let standing = fixture
        .shell
        .resolve(ShellExecRequest::new("true"))
        .unwrap();
    assert_eq!(
        standing.sandbox_policy,
        Some(policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow))
    );

    let wider = policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Allow);
    let request = ShellExecRequest {
        workdir: Some(root.clone()),
        sandbox_policy: Some(wider.clone()),
        ..ShellExecRequest::new("echo escalated > e.txt")
    };
    let spec = fixture.shell.resolve(request.clone()).unwrap();
    assert_eq!(spec.sandbox_policy, Some(wider));
    let result = run(&fixture, request).await.unwrap();
    assert_eq!(result.exit_code, Some(0), "{result:?}");
    assert_eq!(result.sandbox.unwrap().mode, "workspace-write");
    assert!(root.join("e.txt").exists());
}

#[tokio::test]
async fn a_denial_needs_the_dialect_and_a_failure() {
    let (_workspace, root) = outside_dir();
    let fixture = executor(policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow));
    // Saying it and succeeding is no denial; failing otherwise is no denial.
    let result = run_in(&fixture, "echo 'Permission denied' >&2", &root, &[]).await;
    assert!(!result.sandbox.unwrap().denied);
    let result = run_in(&fixture, "cat /nonexistent", &root, &[]).await;
    assert_eq!(result.exit_code, Some(1));
    assert!(!result.sandbox.unwrap().denied);
}
