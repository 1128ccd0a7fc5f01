//! The registry on its own.

use std::collections::BTreeMap;
use std::path::Path;

use dsh_session::SessionHeader;
use dsh_shell_env::{
    ShellEnv, ShellEnvContributor, ShellEnvError, ShellEnvFacts, ShellEnvVariableInfo,
};

fn registry() -> ShellEnv {
    ShellEnv::new(Path::new("/home/me/.dsh"))
}

fn facts(session: Option<&str>) -> ShellEnvFacts {
    ShellEnvFacts {
        session: session.map(|id| SessionHeader::new(id, 0)),
    }
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
        .collect()
}

fn constant(name: &str, key: &'static str, value: &'static str) -> ShellEnvContributor {
    ShellEnvContributor::new(name, move |_| map(&[(key, value)])).variable(key, "A test fact.")
}

#[test]
fn collects_the_built_ins_and_the_session_id() {
    let env = registry();
    assert_eq!(env.dsh_home(), "/home/me/.dsh");
    assert_eq!(
        env.collect(&facts(None)).unwrap(),
        map(&[("DSH_HOME", "/home/me/.dsh"), ("DSH_SHELL", "1")])
    );
    assert_eq!(
        env.collect(&facts(Some("session-a"))).unwrap(),
        map(&[
            ("DSH_HOME", "/home/me/.dsh"),
            ("DSH_SESSION_ID", "session-a"),
            ("DSH_SHELL", "1"),
        ])
    );
    assert!(env.list().is_empty());
}

#[test]
fn collects_declared_values_and_omits_unavailable_ones() {
    let env = registry();
    let _optional = env
        .register(
            ShellEnvContributor::new("optional-session-fact", |facts| {
                facts
                    .session
                    .as_ref()
                    .map(|header| map(&[("DSH_SESSION_OPTIONAL", header.id.as_str())]))
                    .unwrap_or_default()
            })
            .variable("DSH_SESSION_OPTIONAL", "Optional session-scoped test fact."),
        )
        .unwrap();
    let _always = env
        .register(
            ShellEnvContributor::new("always-available-fact", |_| {
                map(&[("DSH_ALWAYS_AVAILABLE", "yes")])
            })
            .variable("DSH_ALWAYS_AVAILABLE", "Always-available test fact."),
        )
        .unwrap();
    let without = env.collect(&facts(None)).unwrap();
    assert!(!without.contains_key("DSH_SESSION_OPTIONAL"));
    assert_eq!(without["DSH_ALWAYS_AVAILABLE"], "yes");
    let with = env.collect(&facts(Some("session-b"))).unwrap();
    assert_eq!(with["DSH_SESSION_OPTIONAL"], "session-b");
    assert_eq!(
        env.list(),
        vec![
            ShellEnvVariableInfo {
                key: "DSH_ALWAYS_AVAILABLE".into(),
                contributor: "always-available-fact".into(),
                description: "Always-available test fact.".into(),
            },
            ShellEnvVariableInfo {
                key: "DSH_SESSION_OPTIONAL".into(),
                contributor: "optional-session-fact".into(),
                description: "Optional session-scoped test fact.".into(),
            },
        ]
    );
}

#[test]
fn a_key_has_one_owner() {
    let env = registry();
    let _first = env
        .register(constant("first", "DSH_SHARED", "first"))
        .unwrap();
    let error = env
        .register(constant("second", "DSH_SHARED", "second"))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "bash env key \"DSH_SHARED\" is already owned by contributor \"first\"; contributor \
         \"second\" cannot also own it"
    );
    assert_eq!(env.collect(&facts(None)).unwrap()["DSH_SHARED"], "first");
}

#[test]
fn refuses_bad_names_and_declarations() {
    let env = registry();
    let _declared = env
        .register(constant("declared", "DSH_DECLARED", "x"))
        .unwrap();
    let cases = [
        (
            constant("declared", "DSH_ANOTHER", "x"),
            "bash env contributor \"declared\" is already registered",
        ),
        (
            constant(" ", "DSH_BLANK_NAME", "x"),
            "bash env contributor name must be non-empty",
        ),
        (
            constant("invalid-key", "dsh_invalid", "x"),
            "bash env contributor \"invalid-key\" declared invalid key \"dsh_invalid\"",
        ),
        (
            constant("reserved-key", "DSH_HOME", "x"),
            "bash env contributor \"reserved-key\" cannot own reserved key \"DSH_HOME\"",
        ),
        (
            constant("reserved-id", "DSH_SESSION_ID", "x"),
            "bash env contributor \"reserved-id\" cannot own reserved key \"DSH_SESSION_ID\"",
        ),
        (
            ShellEnvContributor::new("blank-description", |_| BTreeMap::new())
                .variable("DSH_BLANK_DESCRIPTION", " "),
            "bash env contributor \"blank-description\" must describe \"DSH_BLANK_DESCRIPTION\"",
        ),
    ];
    for (contributor, message) in cases {
        assert_eq!(env.register(contributor).unwrap_err().to_string(), message);
    }
    // A refused registration leaves nothing behind.
    assert_eq!(env.list().len(), 1);
}

#[test]
fn an_undeclared_key_fails_the_collection() {
    let env = registry();
    let _drifted = env
        .register(
            ShellEnvContributor::new("drifted-provider", |_| map(&[("DSH_UNDECLARED", "bad")]))
                .variable("DSH_DECLARED", "Declared fact."),
        )
        .unwrap();
    assert_eq!(
        env.collect(&facts(None)).unwrap_err(),
        ShellEnvError::Undeclared {
            contributor: "drifted-provider".into(),
            key: "DSH_UNDECLARED".into(),
        }
    );
}

#[test]
fn disposing_or_dropping_a_registration_unregisters_it() {
    let env = registry();
    let registration = env
        .register(constant("explicit", "DSH_EXPLICIT", "present"))
        .unwrap();
    assert_eq!(
        env.collect(&facts(None)).unwrap()["DSH_EXPLICIT"],
        "present"
    );
    registration.dispose();
    assert!(
        !env.collect(&facts(None))
            .unwrap()
            .contains_key("DSH_EXPLICIT")
    );
    // The key and the name are free again.
    let again = env
        .register(constant("explicit", "DSH_EXPLICIT", "again"))
        .unwrap();
    assert_eq!(env.collect(&facts(None)).unwrap()["DSH_EXPLICIT"], "again");
    drop(again);
    assert!(env.list().is_empty());
}

#[test]
fn contributors_run_in_name_order_and_may_use_the_registry() {
    let env = std::sync::Arc::new(registry());
    let inner = std::sync::Arc::clone(&env);
    let _reentrant = env
        .register(
            ShellEnvContributor::new("b-reentrant", move |_| {
                let count = inner.list().len().to_string();
                map(&[("DSH_COUNT", count.as_str())])
            })
            .variable("DSH_COUNT", "How many keys are declared."),
        )
        .unwrap();
    let _first = env.register(constant("a-first", "DSH_FIRST", "1")).unwrap();
    let values = env.collect(&facts(None)).unwrap();
    assert_eq!(values["DSH_COUNT"], "2");
    assert_eq!(values["DSH_FIRST"], "1");
}
