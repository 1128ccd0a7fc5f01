//! A kernel with the tool registry, a disk provider, the observation policy and the file
//! tools, and helpers to call them as a session would.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use dsh_fs_local::FsLocalPlugin;
use dsh_fs_observation_policy::FsObservationPolicyPlugin;
use dsh_fs_sandbox::FsSandboxPlugin;
use dsh_kernel::Kernel;
use dsh_session::SessionHeader;
use dsh_shell::{
    NetworkPolicy, SANDBOX_POLICY, SandboxExecutionPolicy, SandboxMode, SandboxPolicyService,
};
use dsh_tool_fs::ToolFsPlugin;
use dsh_tools::{
    APPROVAL, ApprovalOutcome, ApprovalRequest, ApprovalService, CancellationToken, ContentBlock,
    TOOLS, ToolCaller, ToolError, ToolExecutionInput, ToolExecutionResult, ToolRegistry,
    ToolsPlugin,
};
use serde_json::{Value, json};

/// A policy service with one standing mode.
pub struct FixedPolicy(pub SandboxExecutionPolicy);

impl SandboxPolicyService for FixedPolicy {
    fn resolve(
        &self,
        _session_id: Option<&str>,
        _session_cwd: Option<&str>,
        approved: Option<SandboxMode>,
    ) -> SandboxExecutionPolicy {
        let mut policy = self.0.clone();
        if let Some(mode) = approved {
            policy.mode = mode;
        }
        policy
    }
}

/// An approver that answers every question the same way and keeps the questions.
pub struct Approver(pub ApprovalOutcome, pub Mutex<Vec<ApprovalRequest>>);

#[dsh_tools::async_trait]
impl ApprovalService for Approver {
    async fn request(&self, request: ApprovalRequest) -> Result<ApprovalOutcome, ToolError> {
        self.1.lock().unwrap().push(request);
        Ok(self.0)
    }
}

/// How the disk is provided.
pub enum Disk {
    /// `dsh-fs-local`.
    Local,
    /// `dsh-fs-local` without the observation policy (no decider: every write and edit is
    /// unconditional).
    LocalWithoutPolicy,
    /// `dsh-fs-sandbox` under this standing mode, with an approver answering this way.
    Sandboxed(SandboxMode, Option<ApprovalOutcome>),
}

/// A booted kernel over a temporary workspace.
pub struct Harness {
    pub kernel: Kernel,
    pub tools: Arc<ToolRegistry>,
    /// The workspace (canonical).
    pub root: PathBuf,
    /// A directory outside the workspace.
    pub outside: PathBuf,
    pub approver: Option<Arc<Approver>>,
    _dir: tempfile::TempDir,
}

pub async fn harness(disk: Disk) -> Harness {
    // Not under /tmp: that is a writable root of workspace-write, which would hide escapes.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("ws");
    let outside = base.join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let kernel = Kernel::new().unwrap();
    let ctx = kernel.root();
    ctx.plugin(ToolsPlugin, json!({})).unwrap();
    if !matches!(disk, Disk::LocalWithoutPolicy) {
        ctx.plugin(FsObservationPolicyPlugin, Value::Null).unwrap();
    }
    let mut approver = None;
    match disk {
        Disk::Local | Disk::LocalWithoutPolicy => {
            ctx.plugin(FsLocalPlugin, json!({"cwd": root})).unwrap();
        }
        Disk::Sandboxed(mode, answer) => {
            let policy = SandboxExecutionPolicy {
                mode,
                workspace_root: root.clone(),
                session_id: None,
                network: NetworkPolicy::Allow,
                protected_paths: Vec::new(),
            };
            let policies: Arc<dyn SandboxPolicyService> = Arc::new(FixedPolicy(policy));
            ctx.provide(&SANDBOX_POLICY, policies).unwrap();
            if let Some(answer) = answer {
                let answering = Arc::new(Approver(answer, Mutex::new(Vec::new())));
                let service: Arc<dyn ApprovalService> = answering.clone();
                ctx.provide(&APPROVAL, service).unwrap();
                approver = Some(answering);
            }
            ctx.plugin(FsSandboxPlugin, json!({"cwd": root})).unwrap();
        }
    }
    ctx.plugin(ToolFsPlugin, json!({})).unwrap();
    kernel.settle().await;
    let tools = ctx.get(&TOOLS).expect("the tool registry is up");
    Harness {
        kernel,
        tools,
        root,
        outside,
        approver,
        _dir: dir,
    }
}

impl Harness {
    /// A path in the workspace.
    pub fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// Runs one call outside any session.
    pub async fn call(&self, name: &str, arguments: Value) -> ToolExecutionResult {
        self.tools
            .execute(ToolExecutionInput::new(
                "call-1",
                name,
                arguments,
                CancellationToken::new(),
            ))
            .await
    }

    /// Runs one call for session `session-1`, whose cwd is the workspace.
    pub async fn session_call(&self, name: &str, arguments: Value) -> ToolExecutionResult {
        let caller = ToolCaller {
            session_id: Some("session-1".into()),
            session_header: Some(
                SessionHeader::new("session-1", 1).with_cwd(self.root.to_string_lossy()),
            ),
            ..ToolCaller::default()
        };
        self.tools
            .execute(
                ToolExecutionInput::new("call-1", name, arguments, CancellationToken::new())
                    .with_caller(caller),
            )
            .await
    }
}

/// The text the model reads.
pub fn text(result: &ToolExecutionResult) -> String {
    result
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The error code of a failed result.
pub fn code(result: &ToolExecutionResult) -> Option<String> {
    result
        .error
        .as_ref()
        .and_then(|failure| failure.info.as_ref())
        .map(|info| info.code.clone())
}

/// `path` as a string.
pub fn s(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
