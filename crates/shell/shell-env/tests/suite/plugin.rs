//! The plugin: the service, the config, the session-persistence contributor, and
//! fiber-scoped registrations.

use std::path::PathBuf;
use std::sync::Arc;

use dsh_kernel::{BoxError, Context, FiberState, Kernel, Plugin, ServiceName};
use dsh_persistence::{LocationKind, SESSION_PERSISTENCE, SessionPersistence};
use dsh_session::SessionHeader;
use dsh_shell_env::{
    SESSION_JSONL_DESCRIPTION, SHELL_ENV, ShellEnvContributor, ShellEnvFacts, ShellEnvPlugin,
    ShellEnvVariableInfo,
};
use serde_json::json;

use super::support::Locator;

fn facts(id: &str) -> ShellEnvFacts {
    ShellEnvFacts {
        session: Some(SessionHeader::new(id, 0)),
    }
}

async fn boot(config: serde_json::Value) -> Kernel {
    let kernel = Kernel::new().unwrap();
    let fiber = kernel.root().plugin(ShellEnvPlugin, config).unwrap();
    kernel.settle().await;
    kernel.audit(&[fiber.id()]).unwrap();
    kernel
}

#[tokio::test]
async fn provides_the_registry_with_the_persistence_contributor() {
    let kernel = boot(json!({"dshHome": "/srv/dsh/../dsh-home"})).await;
    let env = kernel.root().require(&SHELL_ENV).unwrap();
    assert_eq!(env.dsh_home(), "/srv/dsh-home");
    assert_eq!(
        env.list(),
        vec![ShellEnvVariableInfo {
            key: "DSH_SESSION_JSONL".into(),
            contributor: "session-persistence".into(),
            description: SESSION_JSONL_DESCRIPTION.into(),
        }]
    );
    kernel.shutdown().await;
}

#[tokio::test]
async fn a_relative_dsh_home_is_made_absolute() {
    let kernel = boot(json!({"dshHome": "./test-dsh-home"})).await;
    let env = kernel.root().require(&SHELL_ENV).unwrap();
    let expected: PathBuf = std::env::current_dir().unwrap().join("test-dsh-home");
    assert_eq!(
        env.collect(&ShellEnvFacts::default()).unwrap()["DSH_HOME"],
        expected.to_str().unwrap()
    );
    kernel.shutdown().await;
}

#[tokio::test]
async fn the_base_row_needs_no_config_and_unknown_keys_are_refused() {
    let kernel = Kernel::new().unwrap();
    let fine = kernel.root().plugin(ShellEnvPlugin, json!(null)).unwrap();
    kernel.settle().await;
    kernel.audit(&[fine.id()]).unwrap();
    let env = kernel.root().require(&SHELL_ENV).unwrap();
    let values = env.collect(&ShellEnvFacts::default()).unwrap();
    assert!(PathBuf::from(&values["DSH_HOME"]).is_absolute());
    assert_eq!(values["DSH_SHELL"], "1");
    kernel.shutdown().await;

    let kernel = Kernel::new().unwrap();
    let bad = kernel
        .root()
        .plugin(ShellEnvPlugin, json!({"home": "/x"}))
        .unwrap();
    kernel.settle().await;
    assert_eq!(bad.state(), FiberState::Failed);
    assert!(bad.error().unwrap().contains("unknown field `home`"));
    kernel.shutdown().await;
}

async fn jsonl_value(kind: Option<LocationKind>, with_persistence: bool) -> Option<String> {
    let kernel = boot(json!({"dshHome": "/h"})).await;
    if with_persistence {
        let persistence: Arc<dyn SessionPersistence> = Arc::new(Locator(kind));
        kernel
            .root()
            .provide(&SESSION_PERSISTENCE, persistence)
            .unwrap();
    }
    let env = kernel.root().require(&SHELL_ENV).unwrap();
    let without_session = env.collect(&ShellEnvFacts::default()).unwrap();
    assert!(!without_session.contains_key("DSH_SESSION_JSONL"));
    let values = env.collect(&facts("sess-p")).unwrap();
    assert_eq!(values["DSH_SESSION_ID"], "sess-p");
    kernel.shutdown().await;
    values.get("DSH_SESSION_JSONL").cloned()
}

#[tokio::test]
async fn dsh_session_jsonl_only_for_a_jsonl_backend() {
    assert_eq!(
        jsonl_value(Some(LocationKind::Jsonl), true)
            .await
            .as_deref(),
        Some("/sessions/sess-p.jsonl")
    );
    assert_eq!(
        jsonl_value(Some(LocationKind::Other("sqlite")), true).await,
        None
    );
    assert_eq!(jsonl_value(None, true).await, None);
    assert_eq!(jsonl_value(None, false).await, None);
}

struct Temporary;

impl Plugin for Temporary {
    type Config = ();

    fn inject(&self) -> &'static [ServiceName] {
        const { &[SHELL_ENV.name()] }
    }

    async fn apply(&self, ctx: Context, (): ()) -> Result<(), BoxError> {
        let env = ctx.require(&SHELL_ENV)?;
        let contributor = ShellEnvContributor::new("temporary", |_| {
            [("DSH_TEMPORARY".to_owned(), "present".to_owned())].into()
        })
        .variable("DSH_TEMPORARY", "Temporary fact.");
        env.register_in(&ctx, contributor)?;
        Ok(())
    }
}

#[tokio::test]
async fn a_plugins_contribution_leaves_with_its_fiber() {
    let kernel = boot(json!({"dshHome": "/h"})).await;
    let fiber = kernel.root().plugin(Temporary, json!(null)).unwrap();
    kernel.settle().await;
    kernel.audit(&[fiber.id()]).unwrap();
    let env = kernel.root().require(&SHELL_ENV).unwrap();
    assert_eq!(
        env.collect(&ShellEnvFacts::default()).unwrap()["DSH_TEMPORARY"],
        "present"
    );
    fiber.dispose().await;
    assert!(
        !env.collect(&ShellEnvFacts::default())
            .unwrap()
            .contains_key("DSH_TEMPORARY")
    );
    kernel.shutdown().await;
}
