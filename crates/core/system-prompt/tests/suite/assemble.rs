//! Assembly: order, evaluation per call, the waterfall, complete sections, suppression.

use std::sync::{Arc, Mutex};

use dsh_system_prompt::{
    AssembleContext, AssembledSection, PromptAssembly, PromptContext, PromptError, PromptSection,
    PromptText, SystemPromptAssemble, ToolProviderResult, render_context_snapshot, render_prompt,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{
    Args, AssembleNext, Harness, IDENTITY, contributed, described, section_names,
};

#[tokio::test]
async fn sections_contexts_and_tools_in_order() {
    let h = Harness::with(json!({"persona": "You are DeepSeek Harness."})).await;
    let root = h.root();
    let p = &h.prompt;
    p.section(
        &root,
        PromptSection::new("cwd", 20.0, PromptText::dynamic(|_| "cwd: /tmp".into())),
    )
    .unwrap();
    p.section(&root, PromptSection::new("rules", 10.0, "Be precise."))
        .unwrap();
    p.context(
        &root,
        PromptContext::new("later", 20.0, PromptText::dynamic(|_| "context 2".into())),
    )
    .unwrap();
    p.context(&root, PromptContext::new("earlier", 10.0, "context 1"))
        .unwrap();
    p.tools(&root, |_| {
        ToolProviderResult::new(vec![dsh_system_prompt::ToolSchema {
            name: "echo".into(),
            description: "echo back".into(),
            parameters: json!({}),
        }])
    })
    .unwrap();

    let assembly = h.assemble().await;
    assert_eq!(
        assembly.sections,
        [
            AssembledSection::new("harness:identity", IDENTITY),
            AssembledSection::new("deployment:persona", "You are DeepSeek Harness."),
            AssembledSection::new("rules", "Be precise."),
            AssembledSection::new("cwd", "cwd: /tmp"),
        ]
    );
    assert_eq!(
        assembly.contexts,
        [
            AssembledSection::new("earlier", "context 1"),
            AssembledSection::new("later", "context 2"),
        ]
    );
    assert_eq!(assembly.tools.len(), 1);
    assert_eq!(assembly.tools[0].description, "echo back");
    assert_eq!(assembly.variables, []);
    assert_eq!(
        render_prompt(&assembly).unwrap(),
        format!("{IDENTITY}\n\nYou are DeepSeek Harness.\n\nBe precise.\n\ncwd: /tmp")
    );
    assert_eq!(
        render_context_snapshot(&assembly).unwrap(),
        "Current runtime context. This snapshot supersedes earlier runtime-context \
         snapshots.\n\ncontext 1\n\ncontext 2"
    );
}

#[tokio::test]
async fn equal_orders_keep_registration_order_and_negatives_precede_the_persona() {
    let h = Harness::new().await;
    let root = h.root();
    for (name, order) in [
        ("b", 5.0),
        ("a", 5.0),
        ("early", -1.0),
        ("c", 5.0),
        ("first", -200.0),
    ] {
        h.prompt
            .section(&root, PromptSection::new(name, order, name))
            .unwrap();
    }
    assert_eq!(
        section_names(&h.assemble().await),
        [
            "first",
            "harness:identity",
            "early",
            "deployment:persona",
            "b",
            "a",
            "c"
        ]
    );
}

#[tokio::test]
async fn texts_are_resolved_at_each_assembly_with_its_context() {
    let h = Harness::new().await;
    let calls = Arc::new(Mutex::new(0));
    h.prompt
        .section(
            &h.root(),
            PromptSection::new(
                "dynamic",
                0.0,
                PromptText::dynamic(move |context| {
                    let mut calls = calls.lock().unwrap();
                    *calls += 1;
                    let who = context.session_id.as_deref().unwrap_or("nobody");
                    format!("call {calls} for {who}")
                }),
            ),
        )
        .unwrap();
    let alice = AssembleContext {
        session_id: Some("alice".into()),
        ..AssembleContext::default()
    };
    let first = h.prompt.assemble(&alice).await.unwrap();
    assert_eq!(contributed(&first), [("dynamic", "call 1 for alice")]);
    let second = h.assemble().await;
    assert_eq!(contributed(&second), [("dynamic", "call 2 for nobody")]);
}

#[tokio::test]
async fn waterfall_listeners_compose_in_order_and_get_the_context() {
    let h = Harness::new().await;
    let root = h.root();
    h.prompt
        .section(&root, PromptSection::new("base", 0.0, "base"))
        .unwrap();
    let models: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let seen: Arc<Mutex<Vec<Vec<String>>>> = Arc::default();
    let log = Arc::clone(&models);
    root.on::<SystemPromptAssemble>(move |(mut assembly, context): Args, next: AssembleNext| {
        log.lock().unwrap().push(context.model.clone());
        assembly.sections.push(AssembledSection::new("from-a", "a"));
        next.run((assembly, context))
    })
    .unwrap();
    let log = Arc::clone(&seen);
    root.on::<SystemPromptAssemble>(move |(assembly, context): Args, next: AssembleNext| {
        let names = assembly.sections.iter().map(|s| s.name.clone()).collect();
        log.lock().unwrap().push(names);
        next.run((assembly, context))
    })
    .unwrap();

    let context = AssembleContext {
        model: Some("m".into()),
        ..AssembleContext::default()
    };
    let assembly = h.prompt.assemble(&context).await.unwrap();
    let expected = ["harness:identity", "deployment:persona", "base", "from-a"];
    assert_eq!(*seen.lock().unwrap(), [expected.map(String::from).to_vec()]);
    assert_eq!(section_names(&assembly), expected);
    assert_eq!(*models.lock().unwrap(), [Some("m".to_owned())]);
}

#[tokio::test]
async fn a_listener_may_short_circuit_or_fail() {
    let h = Harness::new().await;
    let root = h.root();
    h.prompt
        .section(&root, PromptSection::new("real", 0.0, "real"))
        .unwrap();
    let listener = root
        .on::<SystemPromptAssemble>(|_args: Args, _next: AssembleNext| async {
            Ok(PromptAssembly::default())
        })
        .unwrap();
    assert_eq!(h.assemble().await, PromptAssembly::default());
    listener.dispose().await;

    root.on::<SystemPromptAssemble>(|_args: Args, _next: AssembleNext| async {
        Err(PromptError::new("listener says no"))
    })
    .unwrap();
    assert_eq!(h.assemble_err().await, "listener says no");
}

#[tokio::test]
async fn a_complete_section_is_restored_after_the_waterfall() {
    let h = Harness::new().await;
    let root = h.root();
    h.prompt
        .section(
            &root,
            PromptSection::new("complete", 10.0, "Exact prompt.").complete(),
        )
        .unwrap();
    h.prompt
        .section(&root, PromptSection::new("extra", 20.0, "extra"))
        .unwrap();
    root.on_first::<SystemPromptAssemble>(
        |(mut assembly, context): Args, next: AssembleNext| async move {
            // Before the waterfall every section is there.
            assert_eq!(
                section_names(&assembly),
                [
                    "harness:identity",
                    "deployment:persona",
                    "complete",
                    "extra"
                ]
            );
            for section in &mut assembly.sections {
                if section.name == "complete" {
                    section.text = "mutated".into();
                }
            }
            assembly
                .sections
                .push(AssembledSection::new("late", "late"));
            next.run((assembly, context)).await
        },
    )
    .unwrap();

    let assembly = h.assemble().await;
    assert_eq!(
        assembly.sections,
        [AssembledSection::new("complete", "Exact prompt.")]
    );
    assert_eq!(render_prompt(&assembly).unwrap(), "Exact prompt.");
}

#[tokio::test]
async fn two_complete_sections_fail_the_assembly() {
    let h = Harness::new().await;
    let root = h.root();
    h.prompt
        .section(
            &root,
            PromptSection::new("second", 20.0, "second").complete(),
        )
        .unwrap();
    h.prompt
        .section(&root, PromptSection::new("first", 10.0, "first").complete())
        .unwrap();
    assert_eq!(
        h.assemble_err().await,
        "multiple complete prompt sections are active: \"first\", \"second\""
    );
}

#[tokio::test]
async fn assemblies_are_independent_snapshots() {
    let h = Harness::new().await;
    let root = h.root();
    h.prompt
        .section(&root, PromptSection::new("base", 0.0, "base"))
        .unwrap();
    h.prompt
        .tools(&root, |_| {
            ToolProviderResult::new(vec![described("t", "tool")])
        })
        .unwrap();

    let mut first = h.assemble().await;
    first.sections[0].name = "mutated".into();
    first
        .contexts
        .push(AssembledSection::new("mutated", "mutated"));
    first.tools[0].description = "mutated".into();
    first.tools[0].parameters["properties"]["leak"] = json!({"type": "string"});

    let second = h.assemble().await;
    assert_eq!(
        section_names(&second),
        ["harness:identity", "deployment:persona", "base"]
    );
    assert_eq!(second.contexts, []);
    assert_eq!(second.tools, [described("t", "tool")]);
}

#[tokio::test]
async fn a_suppression_registration_empties_contexts_until_disposed() {
    let h = Harness::new().await;
    let root = h.root();
    h.prompt
        .context(&root, PromptContext::new("policy", 0.0, "current"))
        .unwrap();
    let first = h.prompt.suppress_runtime_context(&root).unwrap();
    let second = h.prompt.suppress_runtime_context(&root).unwrap();
    assert_eq!(h.assemble().await.contexts, []);
    first.dispose().await;
    // One suppression left is enough.
    assert_eq!(h.assemble().await.contexts, []);
    second.dispose().await;
    assert!(!h.prompt.runtime_context_suppressed());
    assert_eq!(
        h.assemble().await.contexts,
        [AssembledSection::new("policy", "current")]
    );
}

#[tokio::test]
async fn empty_contexts_render_no_snapshot() {
    let h = Harness::new().await;
    let root = h.root();
    h.prompt
        .context(&root, PromptContext::new("empty", 0.0, ""))
        .unwrap();
    assert_eq!(render_context_snapshot(&h.assemble().await).unwrap(), "");
    h.prompt
        .variable(&root, "mode", |_| Some("read-only".into()))
        .unwrap();
    h.prompt
        .context(&root, PromptContext::new("policy", 1.0, "Mode: {{mode}}."))
        .unwrap();
    assert_eq!(
        render_context_snapshot(&h.assemble().await).unwrap(),
        "Current runtime context. This snapshot supersedes earlier runtime-context \
         snapshots.\n\nMode: read-only."
    );
}
