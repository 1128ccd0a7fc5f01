//! The plugin's own sections and its runtime-context switch.

use dsh_system_prompt::{
    AssembleContext, AssembledSection, PromptContext, PromptSection, SystemPrompt,
    SystemPromptAssemble, SystemPromptConfig, render_context_snapshot, render_prompt,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Args, AssembleNext, Counter, Harness, IDENTITY, section_names};

#[tokio::test]
async fn registers_the_identity_and_the_configured_persona() {
    let h = Harness::with(json!({"persona": "You are DeepSeek Harness."})).await;
    let assembly = h.assemble().await;
    assert_eq!(
        section_names(&assembly),
        ["harness:identity", "deployment:persona"]
    );
    assert_eq!(
        render_prompt(&assembly).unwrap(),
        format!("{IDENTITY}\n\nYou are DeepSeek Harness.")
    );
    // The names belong to the plugin: one owner per section.
    let imposter = h.prompt.section(
        &h.root(),
        PromptSection::new("deployment:persona", 0.0, "imposter"),
    );
    assert_eq!(
        imposter.unwrap_err().0,
        "prompt section \"deployment:persona\" is already registered (for a per-agent \
         override, register through that agent's `agent.ctx` instead)"
    );
}

#[tokio::test]
async fn an_empty_persona_renders_nothing() {
    let h = Harness::new().await;
    let assembly = h.assemble().await;
    // The slot is still registered, so nothing else can take the name by accident.
    assert_eq!(
        section_names(&assembly),
        ["harness:identity", "deployment:persona"]
    );
    assert_eq!(render_prompt(&assembly).unwrap(), IDENTITY);
}

#[tokio::test]
async fn the_identity_can_be_left_out() {
    let h = Harness::with(json!({
        "includeHarnessIdentity": false,
        "persona": "You are a helpful software engineer assistant.",
    }))
    .await;
    let assembly = h.assemble().await;
    assert_eq!(section_names(&assembly), ["deployment:persona"]);
    assert_eq!(
        render_prompt(&assembly).unwrap(),
        "You are a helpful software engineer assistant."
    );
}

#[tokio::test]
async fn the_persona_is_interpolated_at_render() {
    let h = Harness::with(json!({"persona": "You run on {{model}} in {{cwd}}."})).await;
    let root = h.root();
    h.prompt
        .variable(&root, "model", |_| Some("deepseek-v4".to_owned()))
        .unwrap();
    h.prompt
        .variable(&root, "cwd", |context| context.cwd.clone())
        .unwrap();
    let context = AssembleContext {
        cwd: Some("/work".to_owned()),
        ..AssembleContext::default()
    };
    let assembly = h.prompt.assemble(&context).await.unwrap();
    // Registered as written; resolved only when rendered.
    assert_eq!(
        assembly.sections[1].text,
        "You run on {{model}} in {{cwd}}."
    );
    assert_eq!(
        render_prompt(&assembly).unwrap(),
        format!("{IDENTITY}\n\nYou run on deepseek-v4 in /work.")
    );
}

#[tokio::test]
async fn suppressed_runtime_context_is_neither_evaluated_nor_added_later() {
    let h = Harness::with(json!({"includeRuntimeContext": false})).await;
    assert!(h.prompt.runtime_context_suppressed());
    let calls = Counter::default();
    let counted = calls.clone();
    h.prompt
        .context(
            &h.root(),
            PromptContext::new(
                "policy",
                0.0,
                dsh_system_prompt::PromptText::dynamic(move |_| {
                    format!("policy {}", counted.bump())
                }),
            ),
        )
        .unwrap();
    h.root()
        .on::<SystemPromptAssemble>(
            |(mut assembly, context): Args, next: AssembleNext| async move {
                assembly
                    .contexts
                    .push(AssembledSection::new("late", "late context"));
                next.run((assembly, context)).await
            },
        )
        .unwrap();

    let assembly = h.assemble().await;
    assert_eq!(assembly.contexts, []);
    assert_eq!(calls.get(), 0);
    assert_eq!(render_context_snapshot(&assembly).unwrap(), "");
}

#[tokio::test]
async fn direct_construction_with_defaults() {
    let kernel = dsh_kernel::Kernel::new().unwrap();
    let service = SystemPrompt::new(kernel.root(), &SystemPromptConfig::default()).unwrap();
    let assembly = service.assemble(&AssembleContext::default()).await.unwrap();
    assert_eq!(render_prompt(&assembly).unwrap(), IDENTITY);
    assert!(!service.runtime_context_suppressed());
    kernel.shutdown().await;
}
