//! `tools/result`: every call's final outcome is published once, as returned.

use dsh_tools::{ToolResultNotice, ToolsResult};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Counter, Harness, Log, call, echo};

#[tokio::test]
async fn every_final_result_is_published_as_returned() {
    let h = Harness::new().await;
    h.add(echo(&Counter::default()));
    let seen = Log::default();
    let observer = seen.clone();
    h.root()
        .on::<ToolsResult>(move |notice: &ToolResultNotice| {
            observer.push((
                notice.execution.name().to_owned(),
                notice.execution.arguments().clone(),
                notice.result.clone(),
            ));
            Ok(())
        })
        .unwrap();
    // A failing observer is logged and changes nothing.
    h.root()
        .on::<ToolsResult>(|_notice: &ToolResultNotice| Err("observer exploded".into()))
        .unwrap();

    let ok = h.tools.execute(call("echo", json!({"text": "hi"}))).await;
    let unknown = h.tools.execute(call("nope", json!({}))).await;
    let aborted_input = call("echo", json!({"text": "hi"}));
    aborted_input.signal.cancel();
    let aborted = h.tools.execute(aborted_input).await;

    assert_eq!(ok.text(), "hi");
    assert_eq!(
        seen.entries(),
        [
            ("echo".to_owned(), json!({"text": "hi"}), ok),
            ("nope".to_owned(), json!({}), unknown),
            ("echo".to_owned(), json!({"text": "hi"}), aborted),
        ]
    );
}
