//! The canonical tool order and `toolOrder`.

use std::sync::{Arc, Mutex};

use dsh_system_prompt::{
    SystemPrompt, SystemPromptAssemble, SystemPromptConfig, TOOL_ORDER_REST, ToolProviderResult,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Args, AssembleNext, Harness, described, load_error, tool, tool_names};

fn provide(h: &Harness, names: &[&'static str]) {
    let schemas: Vec<_> = names.iter().map(|name| tool(name)).collect();
    h.prompt
        .tools(&h.root(), move |_| ToolProviderResult::new(schemas.clone()))
        .unwrap();
}

#[test]
fn the_rest_entry() {
    assert_eq!(TOOL_ORDER_REST, "<unlisted-tools>");
}

#[tokio::test]
async fn name_order_without_a_configured_order() {
    let h = Harness::new().await;
    provide(&h, &["charlie", "alpha"]);
    provide(&h, &["bravo"]);
    assert_eq!(
        tool_names(&h.assemble().await),
        ["alpha", "bravo", "charlie"]
    );

    let backward = Harness::new().await;
    provide(&backward, &["zulu"]);
    provide(&backward, &["alpha"]);
    assert_eq!(tool_names(&backward.assemble().await), ["alpha", "zulu"]);
}

#[tokio::test]
async fn a_configured_order() {
    let h = Harness::with(json!({"toolOrder": ["todo_write", TOOL_ORDER_REST, "bash"]})).await;
    provide(&h, &["bash", "echo_b", "todo_write", "echo_a"]);
    assert_eq!(
        tool_names(&h.assemble().await),
        ["todo_write", "echo_a", "echo_b", "bash"]
    );
}

#[tokio::test]
async fn known_names_may_be_absent_from_one_assembly() {
    let h = Harness::with(json!({"toolOrder": ["hidden", TOOL_ORDER_REST]})).await;
    h.prompt
        .tools(&h.root(), |_| ToolProviderResult {
            schemas: vec![tool("bash")],
            known_names: Some(vec!["bash".into(), "hidden".into()]),
        })
        .unwrap();
    assert_eq!(tool_names(&h.assemble().await), ["bash"]);
}

#[tokio::test]
async fn unregistered_names_fail_the_assembly() {
    let h = Harness::with(json!({
        "toolOrder": ["todo_write", "ghost", TOOL_ORDER_REST, "wraith"]
    }))
    .await;
    provide(&h, &["bash", "todo_write"]);
    assert_eq!(
        h.assemble_err().await,
        "toolOrder lists unregistered tools \"ghost\", \"wraith\"; known tools: bash, todo_write"
    );

    let none = Harness::with(json!({"toolOrder": ["ghost", TOOL_ORDER_REST]})).await;
    assert_eq!(
        none.assemble_err().await,
        "toolOrder lists unregistered tool \"ghost\"; known tools: (none)"
    );
}

#[tokio::test]
async fn the_reserved_name_fails_the_assembly() {
    for config in [json!({}), json!({"toolOrder": [TOOL_ORDER_REST]})] {
        let h = Harness::with(config).await;
        provide(&h, &[TOOL_ORDER_REST]);
        assert_eq!(
            h.assemble_err().await,
            "tool provider returned reserved tool name \"<unlisted-tools>\" (reserved for \
             toolOrder's rest entry)"
        );
    }
}

#[tokio::test]
async fn equal_names_keep_collection_order() {
    let h = Harness::new().await;
    h.prompt
        .tools(&h.root(), |_| {
            ToolProviderResult::new(vec![
                described("dup", "first"),
                described("anchor", "anchor"),
                described("dup", "second"),
            ])
        })
        .unwrap();
    let assembly = h.assemble().await;
    let descriptions: Vec<&str> = assembly
        .tools
        .iter()
        .map(|t| t.description.as_str())
        .collect();
    assert_eq!(descriptions, ["anchor", "first", "second"]);
}

#[tokio::test]
async fn listeners_see_the_canonical_order_and_own_their_additions() {
    let h = Harness::new().await;
    provide(&h, &["zulu", "alpha"]);
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = Arc::clone(&seen);
    h.root()
        .on::<SystemPromptAssemble>(move |(mut assembly, context): Args, next: AssembleNext| {
            *log.lock().unwrap() = assembly.tools.iter().map(|t| t.name.clone()).collect();
            assembly.tools.push(tool("aardvark"));
            next.run((assembly, context))
        })
        .unwrap();
    let assembly = h.assemble().await;
    assert_eq!(*seen.lock().unwrap(), ["alpha", "zulu"]);
    assert_eq!(tool_names(&assembly), ["alpha", "zulu", "aardvark"]);
}

#[tokio::test]
async fn a_malformed_order_fails_the_plugin() {
    for tool_order in [json!([]), json!(["bash", "todo_write"])] {
        assert_eq!(
            load_error(json!({ "toolOrder": tool_order })).await,
            "toolOrder must contain the \"<unlisted-tools>\" rest entry (where unlisted tools \
             are inserted)"
        );
    }
    assert_eq!(
        load_error(json!({"toolOrder": ["bash", "bash", TOOL_ORDER_REST]})).await,
        "toolOrder lists \"bash\" more than once"
    );
    assert_eq!(
        load_error(json!({"toolOrder": [TOOL_ORDER_REST, "bash", TOOL_ORDER_REST]})).await,
        "toolOrder lists \"<unlisted-tools>\" more than once"
    );
    let unknown_key = load_error(json!({"toolOrdr": []})).await;
    assert!(unknown_key.contains("toolOrdr"), "{unknown_key}");
}

#[tokio::test]
async fn direct_construction_checks_the_order_too() {
    let kernel = dsh_kernel::Kernel::new().unwrap();
    let config = SystemPromptConfig {
        tool_order: Some(vec!["bash".into()]),
        ..SystemPromptConfig::default()
    };
    let error = SystemPrompt::new(kernel.root(), &config).unwrap_err();
    assert!(error.0.contains("rest entry"), "{error}");
    kernel.shutdown().await;
}
