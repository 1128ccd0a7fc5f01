//! A kernel with the tool registry, a disk-backed `fs` service and the editor, plus the test
//! doubles the policy cases need: a confining wrapper around the disk, a sandbox policy
//! service, a small observation policy and an observation recorder.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use dsh_fs::events::{FsEditIntentEvent, FsIntentArgs, FsObservedEvent, FsWriteIntentEvent};
use dsh_fs::{
    FS, FileSystem, FsDirEntry, FsEditOutcome, FsEditRequest, FsError, FsErrorCode, FsInfo,
    FsObservation, FsObserved, FsPathInfo, FsTarget, FsVersion, FsWriteIntent, FsWriteOutcome,
    LocalDisk, quoted,
};
use dsh_kernel::{BoxError, Context, FiberHandle, Kernel, Next, Plugin};
use dsh_session::SessionHeader;
use dsh_shell::{
    NetworkPolicy, SANDBOX_POLICY, SandboxExecutionPolicy, SandboxMode, SandboxPolicyService,
};
use dsh_tool_str_replace_editor::StrReplaceEditorPlugin;
use dsh_tools::{
    CancellationToken, TOOLS, ToolCaller, ToolExecutionInput, ToolExecutionResult, ToolRegistry,
    ToolsPlugin,
};
use serde_json::{Value, json};

/// The session every owned call runs for.
pub const SESSION: &str = "session-1";

/// Provides a filesystem as `fs`.
struct ProvideFs(Arc<dyn FileSystem>);

impl Plugin for ProvideFs {
    type Config = Value;

    async fn apply(&self, ctx: Context, _config: Value) -> Result<(), BoxError> {
        ctx.provide(&FS, Arc::clone(&self.0))?;
        Ok(())
    }
}

/// Provides a sandbox policy service.
struct ProvidePolicy(Arc<dyn SandboxPolicyService>);

impl Plugin for ProvidePolicy {
    type Config = Value;

    async fn apply(&self, ctx: Context, _config: Value) -> Result<(), BoxError> {
        ctx.provide(&SANDBOX_POLICY, Arc::clone(&self.0))?;
        Ok(())
    }
}

/// A standing mode for every session; the workspace root is the session's cwd, else `root`.
pub struct FakePolicy {
    pub mode: SandboxMode,
    pub root: PathBuf,
}

impl SandboxPolicyService for FakePolicy {
    fn resolve(
        &self,
        session_id: Option<&str>,
        session_cwd: Option<&str>,
        approved: Option<SandboxMode>,
    ) -> SandboxExecutionPolicy {
        SandboxExecutionPolicy {
            mode: approved.unwrap_or(self.mode),
            workspace_root: session_cwd.map_or_else(|| self.root.clone(), PathBuf::from),
            session_id: session_id.map(str::to_owned),
            network: NetworkPolicy::Allow,
            protected_paths: Vec::new(),
        }
    }
}

/// The disk with knobs: a standing sandbox mode (a fence on writes and edits, as
/// `dsh-fs-sandbox` has), failing writes, and a record of the policies writes got.
pub struct TestDisk {
    pub inner: LocalDisk,
    pub standing: Option<SandboxMode>,
    pub root: PathBuf,
    pub fail_writes: bool,
    pub policies: Mutex<Vec<Option<SandboxExecutionPolicy>>>,
}

impl TestDisk {
    pub fn new(root: &Path) -> Self {
        Self {
            inner: LocalDisk::new(root, dsh_fs::DEFAULT_DIFF_BASIS_MAX_BYTES),
            standing: None,
            root: root.to_path_buf(),
            fail_writes: false,
            policies: Mutex::new(Vec::new()),
        }
    }

    fn fence(
        &self,
        target: &FsTarget,
        policy: Option<&SandboxExecutionPolicy>,
    ) -> Result<(), FsError> {
        self.policies.lock().unwrap().push(policy.cloned());
        let Some(standing) = self.standing else {
            return Ok(());
        };
        let mode = policy.map_or(standing, |policy| policy.mode);
        let root = policy.map_or_else(|| self.root.clone(), |policy| policy.workspace_root.clone());
        let allowed = match mode {
            SandboxMode::DangerFullAccess => true,
            SandboxMode::ReadOnly => false,
            SandboxMode::WorkspaceWrite => {
                let fresh = self.inner.resolve(&target.display_path, None)?;
                fresh.target_key.starts_with(&root)
            }
        };
        if allowed {
            return Ok(());
        }
        Err(FsError::new(
            FsErrorCode::SandboxDenied,
            format!(
                "cannot write {}: file access denied under {} mode",
                quoted(&target.display_path),
                mode.as_str()
            ),
        ))
    }
}

impl FileSystem for TestDisk {
    fn sandbox_mode(&self) -> Option<SandboxMode> {
        self.standing
    }
    fn resolve(&self, path: &str, cwd: Option<&str>) -> Result<FsTarget, FsError> {
        self.inner.resolve(path, cwd)
    }
    fn stat(&self, target: &FsTarget) -> Result<Option<FsInfo>, FsError> {
        self.inner.stat(target)
    }
    fn lstat(&self, path: &str, cwd: Option<&str>) -> Result<Option<FsPathInfo>, FsError> {
        self.inner.lstat(path, cwd)
    }
    fn read_text(&self, target: &FsTarget) -> Result<String, FsError> {
        self.inner.read_text(target)
    }
    fn stream_text(
        &self,
        target: &FsTarget,
        sink: &mut dyn FnMut(&str) -> Result<(), FsError>,
    ) -> Result<(), FsError> {
        self.inner.stream_text(target, sink)
    }
    fn read_bytes(&self, target: &FsTarget, max_bytes: u64) -> Result<Vec<u8>, FsError> {
        self.inner.read_bytes(target, max_bytes)
    }
    fn list_dir(&self, target: &FsTarget) -> Result<Vec<FsDirEntry>, FsError> {
        self.inner.list_dir(target)
    }
    fn write_text(
        &self,
        target: &FsTarget,
        content: &str,
        expected: Option<&FsWriteIntent>,
        policy: Option<&SandboxExecutionPolicy>,
    ) -> Result<FsWriteOutcome, FsError> {
        self.fence(target, policy)?;
        if self.fail_writes {
            return Err(FsError::plain(
                "backend write failed",
                std::io::Error::other("backend write failed"),
            ));
        }
        self.inner.write_text(target, content, expected, policy)
    }
    fn edit_text(
        &self,
        target: &FsTarget,
        edit: &FsEditRequest,
        expected: Option<&FsVersion>,
        policy: Option<&SandboxExecutionPolicy>,
    ) -> Result<FsEditOutcome, FsError> {
        self.fence(target, policy)?;
        self.inner.edit_text(target, edit, expected, policy)
    }
}

/// What `fs/observed` reported: display path, observation, session and tool.
pub type Seen = Arc<Mutex<Vec<(String, FsObservation, Option<String>, String)>>>;

/// Records every `fs/observed`.
pub fn record_observations(ctx: &Context) -> Seen {
    let seen: Seen = Arc::default();
    let sink = Arc::clone(&seen);
    ctx.on::<FsObservedEvent>(move |observed: &FsObserved| {
        sink.lock().unwrap().push((
            observed.target.display_path.clone(),
            observed.observation.clone(),
            observed.actor.session_id.clone(),
            observed.actor.tool_name.clone(),
        ));
        Ok(())
    })
    .unwrap();
    seen
}

type State = Arc<Mutex<HashMap<(String, PathBuf), FsObservation>>>;
type WriteNext = Next<FsIntentArgs, Result<Option<FsWriteIntent>, FsError>>;
type EditNext = Next<FsIntentArgs, Result<Option<FsVersion>, FsError>>;

/// dsh's read-before-write decision table (`fs-observation-policy`), per session.
pub fn observation_policy(ctx: &Context) {
    let state: State = Arc::default();
    let record = Arc::clone(&state);
    ctx.on::<FsObservedEvent>(move |observed: &FsObserved| {
        if let Some(owner) = &observed.actor.session_id {
            record.lock().unwrap().insert(
                (owner.clone(), observed.target.target_key.clone()),
                observed.observation.clone(),
            );
        }
        Ok(())
    })
    .unwrap();
    let writes = Arc::clone(&state);
    ctx.on::<FsWriteIntentEvent>(move |args: FsIntentArgs, _next: WriteNext| {
        let seen = lookup(&writes, &args);
        async move {
            Ok(Some(match seen {
                Some(FsObservation::Present(version)) => FsWriteIntent::ReplaceIfVersion(version),
                _ => FsWriteIntent::CreateIfAbsent,
            }))
        }
    })
    .unwrap();
    ctx.on::<FsEditIntentEvent>(move |args: FsIntentArgs, _next: EditNext| {
        let seen = lookup(&state, &args);
        let display = quoted(&args.target.display_path);
        async move {
            match seen {
                Some(FsObservation::Present(version)) => Ok(Some(version)),
                Some(FsObservation::Absent) => Err(FsError::new(
                    FsErrorCode::NotFound,
                    format!("cannot edit {display}: not found"),
                )),
                None => Err(FsError::new(
                    FsErrorCode::NotObserved,
                    format!("edit requires reading {display} first"),
                )),
            }
        }
    })
    .unwrap();
}

fn lookup(state: &State, args: &FsIntentArgs) -> Option<FsObservation> {
    let owner = args.actor.session_id.clone()?;
    state
        .lock()
        .unwrap()
        .get(&(owner, args.target.target_key.clone()))
        .cloned()
}

/// A booted kernel, its registry, the editor's fiber and a workspace directory.
pub struct Harness {
    pub kernel: Kernel,
    pub tools: Arc<ToolRegistry>,
    pub editor: FiberHandle,
    pub disk: Arc<TestDisk>,
    /// The workspace (symbolic links resolved).
    pub root: PathBuf,
    _dir: tempfile::TempDir,
}

/// What to compose besides the registry and the disk.
#[derive(Default)]
pub struct Setup {
    pub config: Option<Value>,
    pub sandbox: Option<SandboxMode>,
    pub with_policy_service: bool,
    pub observation_policy: bool,
    pub fail_writes: bool,
}

impl Setup {
    pub async fn boot(self) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let mut disk = TestDisk::new(&root);
        disk.standing = self.sandbox;
        disk.fail_writes = self.fail_writes;
        let disk = Arc::new(disk);
        let kernel = Kernel::new().unwrap();
        let ctx = kernel.root();
        ctx.plugin(ToolsPlugin, json!({})).unwrap();
        ctx.plugin(
            ProvideFs(Arc::clone(&disk) as Arc<dyn FileSystem>),
            Value::Null,
        )
        .unwrap();
        if self.sandbox.is_some() && self.with_policy_service {
            let policy = FakePolicy {
                mode: self.sandbox.unwrap_or(SandboxMode::ReadOnly),
                root: root.clone(),
            };
            ctx.plugin(ProvidePolicy(Arc::new(policy)), Value::Null)
                .unwrap();
        }
        if self.observation_policy {
            observation_policy(&ctx);
        }
        kernel.settle().await;
        let editor = ctx
            .plugin(StrReplaceEditorPlugin, self.config.unwrap_or(Value::Null))
            .unwrap();
        kernel.settle().await;
        let tools = ctx.get(&TOOLS).expect("the tool registry is up");
        Harness {
            kernel,
            tools,
            editor,
            disk,
            root,
            _dir: dir,
        }
    }
}

/// The default composition: the bare disk, no policy.
pub async fn harness() -> Harness {
    Setup::default().boot().await
}

/// The default composition with a row config.
pub async fn harness_with(config: Value) -> Harness {
    Setup {
        config: Some(config),
        ..Setup::default()
    }
    .boot()
    .await
}

impl Harness {
    /// `name` inside the workspace, as a string.
    pub fn path(&self, name: &str) -> String {
        self.root.join(name).to_string_lossy().into_owned()
    }

    /// Writes `content` to `name` directly.
    pub fn write(&self, name: &str, content: &str) -> String {
        let path = self.path(name);
        if let Some(parent) = Path::new(&path).parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, content).unwrap();
        path
    }

    /// The content of `name`, read directly.
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap()
    }

    /// One call for the session, whose cwd is the workspace.
    pub async fn call(&self, arguments: Value) -> ToolExecutionResult {
        let caller = ToolCaller {
            session_id: Some(SESSION.into()),
            session_header: Some(
                SessionHeader::new(SESSION, 1).with_cwd(self.root.to_string_lossy()),
            ),
            ..ToolCaller::default()
        };
        self.run(
            ToolExecutionInput::new(
                "call-1",
                "str_replace_editor",
                arguments,
                CancellationToken::new(),
            )
            .with_caller(caller),
        )
        .await
    }

    /// One call with no agent.
    pub async fn call_without_session(&self, arguments: Value) -> ToolExecutionResult {
        self.run(ToolExecutionInput::new(
            "call-1",
            "str_replace_editor",
            arguments,
            CancellationToken::new(),
        ))
        .await
    }

    /// Runs `input` through the registry's pipeline.
    pub async fn run(&self, input: ToolExecutionInput) -> ToolExecutionResult {
        self.tools.execute(input).await
    }
}

/// The model's text of a successful call (panics on a failure, showing it).
pub fn ok(result: &ToolExecutionResult) -> String {
    assert!(!result.is_error, "the call failed: {}", result.text());
    result.text()
}

/// The model's text of a failed call (panics on a success, showing it).
pub fn err(result: &ToolExecutionResult) -> String {
    assert!(result.is_error, "the call succeeded: {}", result.text());
    result.text()
}
