//! Boot: mount the composed rows, resolve configs lazily, audit the result.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

use dsh_compose::BootError;
use dsh_compose::Registry;
use dsh_compose::boot;
use dsh_compose::compose;
use dsh_compose::expr::LaunchEnv;
use dsh_kernel::BoxError;
use dsh_kernel::Context;
use dsh_kernel::Kernel;
use dsh_kernel::Plugin;
use dsh_kernel::ServiceKey;
use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;

use super::support::layer;

const STARTUP: ServiceKey<String> = ServiceKey::new("startup");

/// Provides `startup`, exposing `{task}` to config expressions.
struct Startup;
impl Plugin for Startup {
    type Config = Value;
    async fn apply(&self, ctx: Context, config: Value) -> Result<(), BoxError> {
        let task = config["task"].as_str().unwrap_or_default().to_owned();
        ctx.provide_with_fields(&STARTUP, Arc::new(task.clone()), json!({ "task": task }))?;
        Ok(())
    }
}

/// Records the config it was started with.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Value>>>);
impl Plugin for Recorder {
    type Config = Value;
    async fn apply(&self, _: Context, config: Value) -> Result<(), BoxError> {
        self.0.lock().unwrap().push(config);
        Ok(())
    }
}

struct Failing;
impl Plugin for Failing {
    type Config = ();
    async fn apply(&self, _: Context, (): ()) -> Result<(), BoxError> {
        Err("the disk is full".into())
    }
}

fn registry(recorder: &Recorder) -> Registry {
    let mut registry = Registry::new();
    registry.register("test-startup", Startup).unwrap();
    registry
        .register("test-recorder", recorder.clone())
        .unwrap();
    registry.register("test-failing", Failing).unwrap();
    registry
}

fn launch() -> Arc<LaunchEnv> {
    Arc::new(LaunchEnv {
        env: [("MODE".to_owned(), "fast".to_owned())]
            .into_iter()
            .collect(),
        cwd: "/work".to_owned(),
        dsh_home: PathBuf::from("/home/me/.dsh"),
        platform: "linux".to_owned(),
        arch: "x64".to_owned(),
    })
}

async fn boot_text(
    text: &str,
    recorder: &Recorder,
) -> (Kernel, Result<Vec<dsh_kernel::FiberId>, BootError>) {
    let composition = compose(&[layer("test", text)]).unwrap();
    let kernel = Kernel::new().unwrap();
    let result = boot(&kernel, &composition, &registry(recorder), launch())
        .await
        .map(|tree| tree.fibers(&kernel));
    (kernel, result)
}

#[tokio::test]
async fn rows_boot_with_configs_resolved_from_injected_services_at_activation() {
    let recorder = Recorder::default();
    let (kernel, fibers) = boot_text(
        "
- insert:
    - id: runner
      name: test-recorder
      inject: [startup]
      config:
        task: !!js ctx.startup.task
        home: !!js dshHomePath('sessions')
        mode: !!js process.env.MODE
        unset: !!js process.env.NOPE
        fixed: [1, 2]
    - id: startup
      name: test-startup
      config: {task: run the tests}
",
        &recorder,
    )
    .await;
    assert_eq!(fibers.unwrap().len(), 2);
    assert_eq!(
        *recorder.0.lock().unwrap(),
        [
            json!({"task": "run the tests", "home": "/home/me/.dsh/sessions", "mode": "fast", "fixed": [1, 2]})
        ]
    );
    kernel.shutdown().await;
}

#[tokio::test]
async fn rows_whose_plugin_is_not_built_fail_before_anything_mounts() {
    let recorder = Recorder::default();
    let (kernel, result) = boot_text(
        "
- insert:
    - {id: fine, name: test-recorder}
    - {id: session, name: dsh-session}
    - {id: llm, name: dsh-llm}
",
        &recorder,
    )
    .await;
    let error = result.unwrap_err();
    assert_eq!(
        error.to_string(),
        "2 problems with rows:\n  \
         row \"session\": plugin \"dsh-session\" is not built into this dsh\n  \
         row \"llm\": plugin \"dsh-llm\" is not built into this dsh\n\
         This dsh is built with the plugins: test-failing, test-recorder, test-startup. \
         To boot without a row, patch it off with an entry such as \
         `- {id: \"session\", disabled: true}`."
    );
    assert!(
        kernel.children(kernel.root().fiber()).is_empty(),
        "nothing was mounted"
    );
    assert!(recorder.0.lock().unwrap().is_empty());
}

#[tokio::test]
async fn disabled_rows_are_not_mounted_even_when_their_plugin_is_missing() {
    let recorder = Recorder::default();
    let (_kernel, fibers) = boot_text(
        "
- insert:
    - {id: off, name: dsh-missing, disabled: true}
    - {id: windows-only, name: dsh-missing, disabled: !!js process.platform !== 'win32'}
    - {id: on, name: test-recorder, disabled: !!js process.platform === 'win32'}
",
        &recorder,
    )
    .await;
    assert_eq!(fibers.unwrap().len(), 1);
    assert_eq!(recorder.0.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn the_audit_reports_failed_and_pending_rows() {
    let recorder = Recorder::default();
    let (_kernel, result) = boot_text(
        "
- insert:
    - {id: storage, name: test-failing}
    - {id: runner, name: test-recorder, inject: [startup, llm]}
    - {id: bad-expression, name: test-recorder, inject: [startup], config: {x: !!js ctx.startup.nope.deeper}}
    - {id: startup, name: test-startup, config: {task: t}}
",
        &recorder,
    )
    .await;
    let BootError::Audit(audit) = result.unwrap_err() else {
        panic!("expected an audit failure")
    };
    assert_eq!(
        audit.to_string(),
        "3 entries did not activate:\n  \
         row \"storage\" (test-failing): failed: the disk is full\n  \
         row \"runner\" (test-recorder): pending (waiting for service(s): llm)\n  \
         row \"bad-expression\" (test-recorder): failed: config: config.x: expression \
         `ctx.startup.nope.deeper`: cannot read property \"deeper\" of undefined"
    );
}

#[tokio::test]
async fn group_rows_mount_their_members_and_the_audit_covers_them() {
    let recorder = Recorder::default();
    let (_kernel, result) = boot_text(
        "
- insert:
    - id: team
      name: 'cordis:group'
      group: true
      config:
        - {id: member, name: test-recorder, config: {n: 1}}
        - {id: broken-member, name: test-failing}
        - {id: off-member, name: test-failing, disabled: true}
",
        &recorder,
    )
    .await;
    let BootError::Audit(audit) = result.unwrap_err() else {
        panic!("expected an audit failure")
    };
    assert_eq!(
        audit.to_string(),
        "1 entry did not activate:\n  row \"broken-member\" (test-failing): failed: the disk is full"
    );
    assert_eq!(*recorder.0.lock().unwrap(), [json!({"n": 1})]);
}

#[tokio::test]
async fn malformed_rows_are_reported_together() {
    let recorder = Recorder::default();
    let (_kernel, result) = boot_text(
        "
- insert:
    - {id: typo, name: test-recorder, confg: {}}
    - {id: realm, name: test-recorder, isolate: {sessions: true}}
    - {id: inject, name: test-recorder, inject: 3}
    - {id: nameless}
    - {id: bad-disabled, name: test-recorder, disabled: !!js process.env.X ==}
    - {id: bad-config, name: test-recorder, config: {a: !!js (}}
",
        &recorder,
    )
    .await;
    let BootError::Rows { errors, hint } = result.unwrap_err() else {
        panic!("expected row errors")
    };
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        messages,
        [
            "row \"typo\": unknown key `confg` (a row has id, name, config, disabled, inject, group, isolate, intercept)",
            "row \"realm\": `isolate` is not supported by this dsh: all rows share one service realm",
            "row \"inject\": `inject` must be a list of service names",
            "row \"nameless\": needs a `name` naming its plugin",
            "row \"bad-disabled\": disabled: expression `process.env.X ==`: `==` is not supported in dsh config expressions (use === or !==)",
            "row \"bad-config\": config.a: expression `(`: unexpected end of expression",
        ]
    );
    assert_eq!(hint, None);
}
