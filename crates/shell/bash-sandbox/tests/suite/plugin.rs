//! The `dsh-bash-sandbox` plugin: it waits for `sandboxPolicy`, provides `shell`, and
//! disposes of its processes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use dsh_bash_sandbox::{BashSandboxPlugin, FixedPolicy};
use dsh_kernel::{BoxError, Context, FiberState, Kernel, Plugin};
use dsh_shell::{
    NetworkPolicy, SANDBOX_POLICY, SHELL, SandboxExecutionPolicy, SandboxMode,
    SandboxPolicyService, ShellExecRequest, ShellProcessStatus,
};
use serde_json::json;

use super::support::{outside_dir, policy, runner, shell_quote};

/// Provides a fixed `sandboxPolicy`.
struct PolicyPlugin(SandboxExecutionPolicy);

impl Plugin for PolicyPlugin {
    type Config = serde_json::Value;

    async fn apply(&self, ctx: Context, _config: serde_json::Value) -> Result<(), BoxError> {
        let policy: Arc<dyn SandboxPolicyService> = Arc::new(FixedPolicy(self.0.clone()));
        ctx.provide(&SANDBOX_POLICY, policy)?;
        Ok(())
    }
}

fn config() -> serde_json::Value {
    json!({
        "graceMs": 200,
        "timeoutMs": 30_000,
        "runner": [runner().program.to_str().unwrap()],
        "probeTimeoutMs": 5000,
    })
}

#[tokio::test]
async fn provides_a_confining_shell_over_the_policy() {
    let (_workspace, root) = outside_dir();
    let (_other, other) = outside_dir();
    let kernel = Kernel::new().unwrap();
    let sandbox = kernel.root().plugin(BashSandboxPlugin, config()).unwrap();
    kernel.settle().await;
    assert_eq!(sandbox.state(), FiberState::Pending);
    let audit = kernel.audit(&[sandbox.id()]).unwrap_err().to_string();
    assert!(
        audit.contains("waiting for service(s): sandboxPolicy"),
        "{audit}"
    );

    let standing = policy(SandboxMode::WorkspaceWrite, &root, NetworkPolicy::Allow);
    let provider = kernel
        .root()
        .plugin(PolicyPlugin(standing), serde_json::Value::Null)
        .unwrap();
    kernel.settle().await;
    kernel.audit(&[provider.id(), sandbox.id()]).unwrap();
    let shell = kernel.root().require(&SHELL).unwrap();
    assert_eq!(shell.sandbox_mode().as_deref(), Some("workspace-write"));

    let command = format!(
        "echo ok > mine.txt && touch {}",
        shell_quote(&other.join("theirs"))
    );
    let spec = shell
        .resolve(ShellExecRequest {
            workdir: Some(root.clone()),
            ..ShellExecRequest::new(command)
        })
        .unwrap();
    assert_eq!(spec.timeout_ms, 30_000);
    let result = shell.run(spec).await.unwrap();
    assert!(root.join("mine.txt").exists());
    assert!(!other.join("theirs").exists());
    let facts = result.sandbox.unwrap();
    assert!(facts.denied);
    assert_eq!(facts.enforcement.as_deref(), Some("full"));
    kernel.shutdown().await;
}

#[tokio::test]
async fn invalid_config_fails_the_row() {
    let (_workspace, root) = outside_dir();
    for (config, message) in [
        (
            json!({"probeTimeoutMs": -1}),
            "sandbox-local: probeTimeoutMs must be a positive finite number",
        ),
        (
            json!({"runner": []}),
            "bash-sandbox: runner must be a non-empty list of strings",
        ),
        (
            json!({"timeoutMs": 0}),
            "bash-local: timeoutMs must be a positive finite number",
        ),
    ] {
        let kernel = Kernel::new().unwrap();
        kernel
            .root()
            .plugin(
                PolicyPlugin(policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow)),
                serde_json::Value::Null,
            )
            .unwrap();
        let fiber = kernel.root().plugin(BashSandboxPlugin, config).unwrap();
        kernel.settle().await;
        assert_eq!(fiber.state(), FiberState::Failed);
        let error = fiber.error().unwrap();
        assert!(error.contains(message), "{error}");
        kernel.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disposal_kills_and_awaits_confined_processes() {
    let (_workspace, root) = outside_dir();
    let kernel = Kernel::new().unwrap();
    kernel
        .root()
        .plugin(
            PolicyPlugin(policy(SandboxMode::ReadOnly, &root, NetworkPolicy::Allow)),
            serde_json::Value::Null,
        )
        .unwrap();
    let fiber = kernel.root().plugin(BashSandboxPlugin, config()).unwrap();
    kernel.settle().await;
    let shell = kernel.root().require(&SHELL).unwrap();
    let spec = shell
        .resolve(ShellExecRequest {
            workdir: Some(root.clone()),
            ..ShellExecRequest::new("trap '' TERM; sleep 60")
        })
        .unwrap();
    let process = shell.start(spec).unwrap();
    let started = Instant::now();
    fiber.dispose().await;
    assert!(started.elapsed() < Duration::from_secs(5));
    process.done().await;
    assert_eq!(process.status(), ShellProcessStatus::Killed);
    kernel.shutdown().await;
}
