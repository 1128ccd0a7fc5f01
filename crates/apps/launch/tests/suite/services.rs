//! The launcher services as an app and a launcher use them.

use std::sync::Arc;
use std::time::Duration;

use dsh_launch::{AppExit, CmdlineArgs, Loader};

#[test]
fn the_command_line_keeps_its_order() {
    let args = CmdlineArgs::new(vec!["--output".to_owned(), "json".to_owned()]);
    assert_eq!(args.args(), ["--output", "json"]);
}

#[tokio::test]
async fn the_first_exit_request_wins() {
    let (exit, mut requests) = AppExit::channel();
    assert_eq!(requests.requested_now(), None);
    exit.request(2);
    exit.request(0);
    assert_eq!(requests.requested_now(), Some(2));
    assert_eq!(requests.requested().await, 2);
}

#[tokio::test]
async fn waiting_for_the_loader_ends_once_the_tree_is_marked_booted() {
    let loader = Arc::new(Loader::new());
    let waiting = tokio::spawn({
        let loader = Arc::clone(&loader);
        async move { loader.settled().await }
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(!waiting.is_finished());
    loader.mark_settled();
    tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .unwrap()
        .unwrap();
    // Once booted, a new waiter returns at once.
    loader.settled().await;
}
