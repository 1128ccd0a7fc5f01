//! The process contract outside a turn: a blank task is a usage error.

use dsh_test_support::fake_deepseek::FakeDeepSeek;

use super::support::{Sandbox, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blank_task_is_a_usage_error() {
    let sandbox = Sandbox::new();
    let fake = FakeDeepSeek::start().await.unwrap();
    for args in [&[][..], &["  ", ""][..]] {
        let done = run(sandbox.command(&fake, args)).await;
        assert_eq!(done.code, Some(2), "{done:?}");
        assert_eq!(done.stdout, "");
        assert!(
            done.stderr
                .starts_with("usage: dsh-embed-example <task...>"),
            "{}",
            done.stderr
        );
        assert_eq!(done.stderr.lines().count(), 1, "{}", done.stderr);
    }
    assert!(fake.requests().is_empty());
    assert!(!sandbox.home().exists());
}
