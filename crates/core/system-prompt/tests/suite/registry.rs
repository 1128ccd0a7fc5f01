//! Registrations: ownership by fibers, disposers, refusals, and change notifications.

use std::sync::{Arc, Mutex};

use dsh_kernel::{BoxError, Context};
use dsh_system_prompt::{PromptContext, PromptSection, SystemPromptChange, ToolProviderResult};
use pretty_assertions::assert_eq;

use super::support::{Counter, Harness, contributed, mount_probe, section_names, tool, tool_names};

/// A change listener that fails once, on the next change.
fn fail_next_change(h: &Harness) -> dsh_kernel::Disposer {
    let failed = Arc::new(Mutex::new(false));
    h.root()
        .on::<SystemPromptChange>(move |_: &()| -> Result<(), BoxError> {
            let mut failed = failed.lock().unwrap();
            if *failed {
                return Ok(());
            }
            *failed = true;
            Err("boom change listener".into())
        })
        .unwrap()
}

fn count_changes(h: &Harness) -> Counter {
    let changes = Counter::default();
    let counted = changes.clone();
    h.root()
        .on::<SystemPromptChange>(move |_: &()| -> Result<(), BoxError> {
            counted.bump();
            Ok(())
        })
        .unwrap();
    changes
}

#[tokio::test]
async fn registrations_go_when_their_fiber_unloads() {
    let h = Harness::new().await;
    let prompt = Arc::clone(&h.prompt);
    let fiber = mount_probe(&h, "contributor", move |ctx: Context| {
        let prompt = Arc::clone(&prompt);
        async move {
            prompt.section(&ctx, PromptSection::new("scoped", 0.0, "scoped section"))?;
            prompt.context(
                &ctx,
                PromptContext::new("scoped-context", 0.0, "scoped context"),
            )?;
            prompt.tools(&ctx, |_| ToolProviderResult::new(vec![tool("scoped-tool")]))?;
            prompt.variable(&ctx, "scoped_var", |_| Some("v".to_owned()))?;
            Ok(())
        }
    })
    .await;

    let before = h.assemble().await;
    assert_eq!(contributed(&before), [("scoped", "scoped section")]);
    assert_eq!(before.contexts.len(), 1);
    assert_eq!(tool_names(&before), ["scoped-tool"]);
    assert_eq!(
        before.variables,
        [("scoped_var".to_owned(), Some("v".to_owned()))]
    );

    fiber.dispose().await;
    let after = h.assemble().await;
    // The built-ins belong to the service's fiber and stay.
    assert_eq!(
        section_names(&after),
        ["harness:identity", "deployment:persona"]
    );
    assert_eq!(after.contexts, []);
    assert_eq!(after.tools, []);
    assert_eq!(after.variables, []);
}

#[tokio::test]
async fn the_plugins_unload_removes_the_builtins() {
    let h = Harness::new().await;
    let prompt = Arc::clone(&h.prompt);
    h.kernel.shutdown().await;
    let assembly = prompt
        .assemble(&dsh_system_prompt::AssembleContext::default())
        .await
        .unwrap();
    assert_eq!(assembly.sections, []);
}

#[tokio::test]
async fn disposers_undo_one_registration() {
    let h = Harness::new().await;
    let root = h.root();
    let section = h
        .prompt
        .section(&root, PromptSection::new("direct", 0.0, "direct section"))
        .unwrap();
    let tools = h
        .prompt
        .tools(&root, |_| {
            ToolProviderResult::new(vec![tool("direct-tool")])
        })
        .unwrap();
    let assembly = h.assemble().await;
    assert_eq!(contributed(&assembly).len(), 1);
    assert_eq!(assembly.tools.len(), 1);

    section.dispose().await;
    let assembly = h.assemble().await;
    assert_eq!(contributed(&assembly), []);
    assert_eq!(assembly.tools.len(), 1);

    tools.dispose().await;
    assert_eq!(h.assemble().await.tools, []);
}

#[tokio::test]
async fn duplicate_sections_are_refused_without_leaking() {
    let h = Harness::new().await;
    let root = h.root();
    h.prompt
        .section(&root, PromptSection::new("dup", 0.0, "first"))
        .unwrap();
    let second = h
        .prompt
        .section(&root, PromptSection::new("dup", 1.0, "second"));
    assert_eq!(
        second.unwrap_err().0,
        "prompt section \"dup\" is already registered (for a per-agent override, register \
         through that agent's `agent.ctx` instead)"
    );
    assert_eq!(contributed(&h.assemble().await), [("dup", "first")]);
}

#[tokio::test]
async fn non_finite_section_orders_are_refused() {
    let h = Harness::new().await;
    for order in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let refused = h
            .prompt
            .section(&h.root(), PromptSection::new("bad-order", order, "x"));
        assert_eq!(
            refused.unwrap_err().0,
            "prompt section \"bad-order\" order must be a finite number"
        );
    }
    assert_eq!(contributed(&h.assemble().await), []);
}

#[tokio::test]
async fn duplicate_and_non_finite_contexts_are_refused_without_leaking() {
    let h = Harness::new().await;
    let root = h.root();
    h.prompt
        .context(&root, PromptContext::new("policy", 1.0, "first"))
        .unwrap();
    assert_eq!(
        h.prompt
            .context(&root, PromptContext::new("policy", 2.0, "second"))
            .unwrap_err()
            .0,
        "prompt context \"policy\" is already registered (for a per-agent override, register \
         through that agent's `agent.ctx` instead)"
    );
    assert_eq!(
        h.prompt
            .context(&root, PromptContext::new("bad", f64::NAN, "x"))
            .unwrap_err()
            .0,
        "prompt context \"bad\" order must be a finite number"
    );
    let contexts = h.assemble().await.contexts;
    assert_eq!(contexts.len(), 1);
    assert_eq!(
        (contexts[0].name.as_str(), contexts[0].text.as_str()),
        ("policy", "first")
    );
}

#[tokio::test]
async fn a_failing_change_listener_undoes_the_registration() {
    let h = Harness::new().await;
    let root = h.root();

    let listener = fail_next_change(&h);
    let error = h
        .prompt
        .section(&root, PromptSection::new("p", 0.0, "persona"))
        .unwrap_err();
    assert!(error.0.contains("boom change listener"), "{error}");
    assert_eq!(contributed(&h.assemble().await), []);
    listener.dispose().await;
    h.prompt
        .section(&root, PromptSection::new("p", 0.0, "persona"))
        .unwrap();
    assert_eq!(contributed(&h.assemble().await), [("p", "persona")]);

    let listener = fail_next_change(&h);
    let error = h
        .prompt
        .tools(&root, |_| ToolProviderResult::new(vec![tool("t")]))
        .unwrap_err();
    assert!(error.0.contains("boom change listener"), "{error}");
    assert_eq!(h.assemble().await.tools, []);
    listener.dispose().await;
    h.prompt
        .tools(&root, |_| ToolProviderResult::new(vec![tool("t")]))
        .unwrap();
    assert_eq!(tool_names(&h.assemble().await), ["t"]);

    let listener = fail_next_change(&h);
    let error = h
        .prompt
        .variable(&root, "v", |_| Some("x".to_owned()))
        .unwrap_err();
    assert!(error.0.contains("boom change listener"), "{error}");
    assert_eq!(h.assemble().await.variables, []);
    listener.dispose().await;
    h.prompt
        .variable(&root, "v", |_| Some("x".to_owned()))
        .unwrap();
    assert_eq!(
        h.assemble().await.variables,
        [("v".to_owned(), Some("x".to_owned()))]
    );
}

#[tokio::test]
async fn every_registration_and_removal_announces_a_change() {
    let h = Harness::new().await;
    let root = h.root();
    let changes = count_changes(&h);

    let tools = h
        .prompt
        .tools(&root, |_| ToolProviderResult::default())
        .unwrap();
    assert_eq!(changes.get(), 1);
    tools.dispose().await;
    assert_eq!(changes.get(), 2);

    let context = h
        .prompt
        .context(&root, PromptContext::new("policy", 0.0, "current"))
        .unwrap();
    assert_eq!(changes.get(), 3);
    context.dispose().await;
    assert_eq!(changes.get(), 4);

    let suppression = h.prompt.suppress_runtime_context(&root).unwrap();
    assert_eq!(changes.get(), 5);
    suppression.dispose().await;
    assert_eq!(changes.get(), 6);

    // Refusals change nothing.
    h.prompt.variable(&root, "Bad", |_| None).unwrap_err();
    assert_eq!(changes.get(), 6);
}

#[tokio::test]
async fn registering_through_an_unloaded_fiber_fails_and_leaks_nothing() {
    let h = Harness::new().await;
    let kept: Arc<Mutex<Option<Context>>> = Arc::default();
    let slot = Arc::clone(&kept);
    let fiber = mount_probe(&h, "gone", move |ctx: Context| {
        let slot = Arc::clone(&slot);
        async move {
            *slot.lock().unwrap() = Some(ctx);
            Ok(())
        }
    })
    .await;
    fiber.dispose().await;
    let ctx = kept.lock().unwrap().take().unwrap();
    let error = h
        .prompt
        .section(&ctx, PromptSection::new("late", 0.0, "late"))
        .unwrap_err();
    assert!(
        error.0.contains("can no longer register effects"),
        "{error}"
    );
    assert_eq!(contributed(&h.assemble().await), []);
    // The name is free again.
    h.prompt
        .section(&h.root(), PromptSection::new("late", 0.0, "late"))
        .unwrap();
}

#[tokio::test]
async fn tool_providers_registered_during_an_assembly_count_from_the_next() {
    let h = Harness::new().await;
    let prompt = Arc::clone(&h.prompt);
    let root = h.root();
    let added = Arc::new(Mutex::new(false));
    h.prompt
        .tools(&h.root(), move |_| {
            let mut added = added.lock().unwrap();
            if !*added {
                *added = true;
                prompt
                    .tools(&root, |_| ToolProviderResult::new(vec![tool("late")]))
                    .unwrap();
            }
            ToolProviderResult::new(vec![tool("first")])
        })
        .unwrap();
    assert_eq!(tool_names(&h.assemble().await), ["first"]);
    assert_eq!(tool_names(&h.assemble().await), ["first", "late"]);
}
