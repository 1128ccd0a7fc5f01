//! The `dsh-bash-local` plugin: the `shell` service, its config, one provider per context,
//! and disposal.

use std::time::{Duration, Instant};

use dsh_bash_local::BashLocalPlugin;
use dsh_kernel::FiberState;
use dsh_shell::{ShellExecRequest, ShellProcessStatus};
use serde_json::json;

use super::support::{boot, grace, pid_running, read_until};

#[tokio::test]
async fn provides_the_shell_service() {
    let (kernel, _fiber, shell) = boot(json!({"timeoutMs": 60_000})).await;
    assert_eq!(shell.sandbox_mode(), None);
    let spec = shell.resolve(ShellExecRequest::new("echo hi")).unwrap();
    assert_eq!(spec.timeout_ms, 60_000);
    let result = shell.run(spec).await.unwrap();
    assert_eq!(result.stdout.text, "hi\n");
    kernel.shutdown().await;
}

#[tokio::test]
async fn a_second_provider_fails() {
    let (kernel, first, _shell) = boot(json!(null)).await;
    let second = kernel.root().plugin(BashLocalPlugin, json!(null)).unwrap();
    kernel.settle().await;
    assert_eq!(first.state(), FiberState::Active);
    assert_eq!(second.state(), FiberState::Failed);
    let error = second.error().unwrap();
    assert!(
        error.contains("service \"shell\" is already provided"),
        "{error}"
    );
    kernel.shutdown().await;
}

#[tokio::test]
async fn invalid_config_fails_the_row_with_dshs_message() {
    for (config, message) in [
        (
            json!({"timeoutMs": 0}),
            "bash-local: timeoutMs must be a positive finite number",
        ),
        (
            json!({"maxOutputBytes": -1}),
            "bash-local: maxOutputBytes must be a positive finite number",
        ),
        (
            json!({"graceMs": 2_147_483_648_u64}),
            "bash-local: graceMs must be no greater than 2147483647",
        ),
        (json!({"shell": "zsh"}), "unknown field `shell`"),
    ] {
        let kernel = dsh_kernel::Kernel::new().unwrap();
        let fiber = kernel.root().plugin(BashLocalPlugin, config).unwrap();
        kernel.settle().await;
        assert_eq!(fiber.state(), FiberState::Failed);
        let error = fiber.error().unwrap();
        assert!(error.contains(message), "{error}");
        kernel.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disposal_kills_and_awaits_every_process() {
    let (kernel, fiber, shell) = boot(grace(200)).await;
    let finished = shell
        .start(shell.resolve(ShellExecRequest::new("echo done")).unwrap())
        .unwrap();
    finished.done().await;
    let command = "trap '' TERM; echo $$; sleep 60";
    let trapping = shell
        .start(shell.resolve(ShellExecRequest::new(command)).unwrap())
        .unwrap();
    let pid: i32 = read_until(&trapping, "\n").await.trim().parse().unwrap();
    assert!(pid_running(pid));

    let started = Instant::now();
    fiber.dispose().await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(!pid_running(pid));
    trapping.done().await;
    assert_eq!(trapping.status(), ShellProcessStatus::Killed);
    assert_eq!(trapping.signal().as_deref(), Some("SIGKILL"));
    assert_eq!(finished.status(), ShellProcessStatus::Completed);

    // The disposed executor starts nothing more.
    let error = shell
        .start(shell.resolve(ShellExecRequest::new("true")).unwrap())
        .unwrap_err();
    assert!(error.to_string().contains("shut down"));
    kernel.shutdown().await;
}
