//! Prompt variables: registration, evaluation, and strict interpolation at render.

use std::sync::{Arc, Mutex};

use dsh_system_prompt::{
    AssembleContext, AssembledSection, PromptAssembly, PromptSection, SystemPromptAssemble,
    render_prompt,
};
use pretty_assertions::assert_eq;

use super::support::{Args, AssembleNext, Counter, Harness, IDENTITY};

fn value(name: &str, value: Option<&str>) -> (String, Option<String>) {
    (name.to_owned(), value.map(str::to_owned))
}

#[tokio::test]
async fn values_follow_the_assemble_context() {
    let h = Harness::new().await;
    let changes = Counter::default();
    let counted = changes.clone();
    h.root()
        .on::<dsh_system_prompt::SystemPromptChange>(move |_: &()| {
            counted.bump();
            Ok(())
        })
        .unwrap();
    let variable = h
        .prompt
        .variable(&h.root(), "who", |context| context.session_id.clone())
        .unwrap();
    assert_eq!(changes.get(), 1);

    let alice = AssembleContext {
        session_id: Some("alice".into()),
        ..AssembleContext::default()
    };
    assert_eq!(
        h.prompt.assemble(&alice).await.unwrap().variables,
        [value("who", Some("alice"))]
    );
    // `None`: registered, but without a value in this assembly.
    assert_eq!(h.assemble().await.variables, [value("who", None)]);

    variable.dispose().await;
    assert_eq!(changes.get(), 2);
    assert_eq!(h.assemble().await.variables, []);
}

#[tokio::test]
async fn a_variable_registered_while_evaluating_is_evaluated_too() {
    let h = Harness::new().await;
    let prompt = Arc::clone(&h.prompt);
    let root = h.root();
    let added = Arc::new(Mutex::new(false));
    h.prompt
        .variable(&h.root(), "first", move |_| {
            let mut added = added.lock().unwrap();
            if !*added {
                *added = true;
                prompt
                    .variable(&root, "late", |_| Some("second value".into()))
                    .unwrap();
            }
            Some("first value".into())
        })
        .unwrap();
    assert_eq!(
        h.assemble().await.variables,
        [
            value("first", Some("first value")),
            value("late", Some("second value"))
        ]
    );
}

#[tokio::test]
async fn duplicate_and_unreferenceable_names_are_refused() {
    let h = Harness::new().await;
    let root = h.root();
    h.prompt
        .variable(&root, "model", |_| Some("m1".into()))
        .unwrap();
    assert_eq!(
        h.prompt
            .variable(&root, "model", |_| Some("m2".into()))
            .unwrap_err()
            .0,
        "prompt variable \"model\" is already registered (for a per-agent value, register \
         through that agent's `agent.ctx` instead)"
    );
    for bad in ["Not Valid", "", "1st", "_x", "a-b"] {
        assert_eq!(
            h.prompt.variable(&root, bad, |_| None).unwrap_err().0,
            format!("invalid prompt variable name \"{bad}\" (must match /^[a-z][a-z0-9_]*$/)")
        );
    }
    assert_eq!(h.assemble().await.variables, [value("model", Some("m1"))]);
}

#[tokio::test]
async fn a_listener_may_add_or_override_variables() {
    let h = Harness::new().await;
    let root = h.root();
    h.prompt
        .section(&root, PromptSection::new("s", 0.0, "{{extra}} {{model}}"))
        .unwrap();
    h.prompt
        .variable(&root, "model", |_| Some("registered".into()))
        .unwrap();
    root.on::<SystemPromptAssemble>(|(mut assembly, context): Args, next: AssembleNext| {
        assembly.set_variable("extra", Some("from-waterfall".into()));
        assembly.set_variable("model", Some("overridden".into()));
        next.run((assembly, context))
    })
    .unwrap();
    let assembly = h.assemble().await;
    assert_eq!(assembly.variable("model"), Some(Some("overridden")));
    assert_eq!(assembly.variable("nope"), None);
    assert_eq!(
        render_prompt(&assembly).unwrap(),
        format!("{IDENTITY}\n\nfrom-waterfall overridden")
    );
}

#[tokio::test]
async fn unknown_references_list_the_registered_variables() {
    let h = Harness::new().await;
    let root = h.root();
    h.prompt
        .section(&root, PromptSection::new("persona", 0.0, "on {{modle}}"))
        .unwrap();
    h.prompt
        .variable(&root, "model", |_| Some("m".into()))
        .unwrap();
    assert_eq!(
        render_prompt(&h.assemble().await).unwrap_err().0,
        "unknown prompt variable \"{{modle}}\" in section \"persona\"; registered variables: \
         model"
    );
}

#[tokio::test]
async fn prototype_like_names_are_ordinary_names() {
    let unregistered = PromptAssembly {
        sections: vec![AssembledSection::new("s", "on {{constructor}}")],
        variables: vec![value("model", Some("m"))],
        ..PromptAssembly::default()
    };
    assert_eq!(
        render_prompt(&unregistered).unwrap_err().0,
        "unknown prompt variable \"{{constructor}}\" in section \"s\"; registered variables: \
         model"
    );

    let h = Harness::new().await;
    let root = h.root();
    h.prompt
        .section(&root, PromptSection::new("s", 0.0, "{{constructor}}"))
        .unwrap();
    h.prompt
        .variable(&root, "constructor", |_| Some("own-value".into()))
        .unwrap();
    assert_eq!(
        render_prompt(&h.assemble().await).unwrap(),
        format!("{IDENTITY}\n\nown-value")
    );
}

#[tokio::test]
async fn a_reference_without_a_value_fails_at_render() {
    let h = Harness::new().await;
    let root = h.root();
    h.prompt
        .section(&root, PromptSection::new("persona", 0.0, "in {{cwd}}"))
        .unwrap();
    h.prompt
        .variable(&root, "cwd", |context| context.cwd.clone())
        .unwrap();
    let assembly = h.assemble().await;
    assert_eq!(
        render_prompt(&assembly).unwrap_err().0,
        "prompt variable \"{{cwd}}\" has no value for this assembly (section \"persona\")"
    );
}
