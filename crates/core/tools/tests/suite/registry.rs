//! Registration: scoping to the registering fiber, duplicates, schema refusals, listing.

use std::sync::Arc;

use dsh_tools::{FnTool, ToolOutput, ToolSchema};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Counter, Harness, echo, echo_parameters, mount_probe};

fn named(name: &str) -> FnTool {
    FnTool::new(
        name,
        format!("The {name} tool."),
        echo_parameters(),
        |_, _| async { Ok(ToolOutput::text("ok")) },
    )
}

#[tokio::test]
async fn lists_definitions_and_schemas_sorted_by_name() {
    let h = Harness::new().await;
    h.add(named("zeta"));
    h.add(named("alpha"));
    h.add(named("mid"));
    assert_eq!(h.tools.names(), ["alpha", "mid", "zeta"]);
    let listed: Vec<String> = h.tools.list().iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(listed, ["alpha", "mid", "zeta"]);
    assert_eq!(
        h.tools.schemas().first(),
        Some(&ToolSchema {
            name: "alpha".into(),
            description: "The alpha tool.".into(),
            parameters: echo_parameters(),
        })
    );
    assert_eq!(
        serde_json::to_value(&h.tools.schemas()[0]).unwrap(),
        json!({"name": "alpha", "description": "The alpha tool.", "parameters": echo_parameters()})
    );
    assert!(h.tools.get("mid").is_some());
    assert!(h.tools.get("nope").is_none());
}

#[tokio::test]
async fn duplicate_names_are_refused() {
    let h = Harness::new().await;
    h.add(echo(&Counter::default()));
    let error = h
        .tools
        .register(&h.root(), Arc::new(echo(&Counter::default())))
        .unwrap_err();
    assert_eq!(error.to_string(), "tool \"echo\" is already registered");
    assert_eq!(error.info(), None);
    assert_eq!(h.tools.names(), ["echo"]);
}

#[tokio::test]
async fn run_code_is_reserved() {
    let h = Harness::new().await;
    let error = h
        .tools
        .register(&h.root(), Arc::new(named("run_code")))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "tool name \"run_code\" is reserved for the Code Mode presentation transport and cannot \
         be registered or shadowed"
    );
}

#[tokio::test]
async fn a_plugins_tools_disappear_when_it_unloads() {
    let h = Harness::new().await;
    h.add(named("global"));
    let fiber = mount_probe(&h.root(), "probe", |ctx| async move {
        let tools = ctx.require(&dsh_tools::TOOLS)?;
        tools.register(&ctx, Arc::new(named("scoped")))?;
        tools.register_guard(&ctx, |_| Some("probe guard".to_owned()))?;
        Ok(())
    });
    h.kernel.settle().await;
    h.kernel.audit(&[fiber.id()]).unwrap();
    assert_eq!(h.tools.names(), ["global", "scoped"]);
    let denied = h
        .tools
        .execute(super::support::call("global", json!({"text": "x"})))
        .await;
    assert_eq!(denied.text(), "Error: probe guard");

    fiber.dispose().await;
    assert_eq!(h.tools.names(), ["global"]);
    let allowed = h
        .tools
        .execute(super::support::call("global", json!({"text": "x"})))
        .await;
    assert_eq!(allowed.text(), "ok");
}

#[tokio::test]
async fn the_disposer_unregisters_and_the_name_is_free_again() {
    let h = Harness::new().await;
    let disposer = h
        .tools
        .register(&h.root(), Arc::new(named("temp")))
        .unwrap();
    assert_eq!(h.tools.names(), ["temp"]);
    disposer.dispose().await;
    assert!(h.tools.names().is_empty());
    h.add(named("temp"));
    assert_eq!(h.tools.names(), ["temp"]);
}

#[tokio::test]
async fn schemas_outside_the_subset_are_refused_at_registration() {
    let h = Harness::new().await;
    let tool = FnTool::new(
        "bad",
        "Bad schemas.",
        json!({"type": "object", "properties": {"path": {"type": "string", "pattern": "^/"}}}),
        |_, _| async { Ok(ToolOutput::text("")) },
    )
    .with_output_schema(json!({"type": "number", "minimum": 0}));
    let error = h.tools.register(&h.root(), Arc::new(tool)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "unsupported JSON schema: parameters.properties.path.pattern is not a supported keyword \
         (subset: type/oneOf/properties/required/additionalProperties/items/enum/const + \
         annotations); schema.minimum is not a supported keyword (subset: \
         type/oneOf/properties/required/additionalProperties/items/enum/const + annotations)"
    );
    assert_eq!(error.code(), Some("UNSUPPORTED_SCHEMA"));
    assert!(h.tools.names().is_empty());
}

#[tokio::test]
async fn pipeline_futures_can_be_spawned() {
    fn spawnable<T: Send + 'static>(_: &T) {}
    let h = Harness::new().await;
    h.add(named("spawned"));
    let tools = Arc::clone(&h.tools);
    let task = async move {
        let single = tools
            .execute(super::support::call("spawned", json!({"text": "x"})))
            .await;
        let batch = tools
            .execute_batch(vec![super::support::call("spawned", json!({"text": "y"}))])
            .await;
        (single, batch)
    };
    spawnable(&task);
    let (single, batch) = tokio::spawn(task).await.unwrap();
    assert_eq!(single.text(), "ok");
    assert_eq!(batch.len(), 1);
}
