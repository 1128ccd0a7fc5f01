//! The row config: dsh's required sampling choice, its load errors, and caps that reach the
//! tools.

use dsh_kernel::{FiberState, Kernel};
use dsh_system_prompt::SystemPromptPlugin;
use dsh_tool_fs_search::ToolFsSearchPlugin;
use dsh_tools::{TOOLS, ToolsPlugin};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// Loads the plugin with `config` and returns its fiber's error, if any.
async fn load(config: Value) -> Option<String> {
    let kernel = Kernel::new().unwrap();
    let ctx = kernel.root();
    ctx.plugin(SystemPromptPlugin, json!({})).unwrap();
    ctx.plugin(ToolsPlugin, json!({})).unwrap();
    let fiber = ctx.plugin(ToolFsSearchPlugin, config).unwrap();
    kernel.settle().await;
    let error = fiber.error();
    assert_eq!(
        fiber.state() == FiberState::Failed,
        error.is_some(),
        "a failed fiber has an error"
    );
    kernel.shutdown().await;
    error
}

#[tokio::test]
async fn the_sampling_choice_is_required() {
    let missing = load(json!({})).await.unwrap();
    assert!(
        missing.contains("missing field `sampleOverCapGlobResults`"),
        "{missing}"
    );
    let absent = load(Value::Null).await.unwrap();
    assert!(absent.contains("sampleOverCapGlobResults"), "{absent}");
    assert_eq!(load(json!({"sampleOverCapGlobResults": true})).await, None);
}

#[tokio::test]
async fn caps_must_be_positive_integers() {
    for (key, value) in [
        ("globMaxResults", json!(0)),
        ("grepMaxMatches", json!(-3)),
        ("grepMaxLineBytes", json!(2.5)),
        ("searchMetaMaxBytes", json!(0)),
        ("rawOutputMaxBytes", json!(0)),
        ("graceMs", json!(0)),
        ("stderrMaxBytes", json!(0.1)),
        ("timeoutMs", json!(0)),
    ] {
        let error = load(json!({"sampleOverCapGlobResults": false, key: value})).await;
        assert_eq!(
            error.as_deref(),
            Some(format!("tool-fs-search: {key} must be a positive integer").as_str())
        );
    }
    let grace =
        load(json!({"sampleOverCapGlobResults": false, "graceMs": 2_147_483_648_u64})).await;
    assert_eq!(
        grace.as_deref(),
        Some("tool-fs-search: graceMs must be no greater than 2147483647")
    );
    let unknown = load(json!({"sampleOverCapGlobResults": false, "maxResults": 1})).await;
    assert!(unknown.unwrap().contains("unknown field `maxResults`"));
}

#[tokio::test]
async fn a_full_dsh_config_loads_and_shapes_the_descriptions() {
    let kernel = Kernel::new().unwrap();
    let ctx = kernel.root();
    ctx.plugin(SystemPromptPlugin, json!({})).unwrap();
    ctx.plugin(ToolsPlugin, json!({})).unwrap();
    let config = json!({
        "sampleOverCapGlobResults": true,
        "globMaxResults": 4,
        "grepMaxMatches": 7,
        "grepMaxLineBytes": 100,
        "searchMetaMaxBytes": 1000,
        "rawOutputMaxBytes": 1_000_000,
        "graceMs": 2_147_483_647_u64,
        "stderrMaxBytes": 10,
        "timeoutMs": 1000
    });
    let fiber = ctx.plugin(ToolFsSearchPlugin, config).unwrap();
    kernel.settle().await;
    assert_eq!(fiber.error(), None);
    let tools = ctx.require(&TOOLS).unwrap();
    let glob = tools.get("glob").unwrap();
    assert!(glob.description().contains("Up to 4 paths"));
    assert!(
        glob.description()
            .contains("shows 4 paths sampled across its top-level entries")
    );
    let grep = tools.get("grep").unwrap();
    assert!(grep.description().contains("The first 7 matches"));
    kernel.shutdown().await;
}
