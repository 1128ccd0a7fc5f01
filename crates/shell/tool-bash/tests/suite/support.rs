//! A kernel with the shell, the `DSH_*` registry, the tool registry and the bash tool.

use std::sync::Arc;

use dsh_bash_local::BashLocalPlugin;
use dsh_kernel::Kernel;
use dsh_session::SessionHeader;
use dsh_shell_env::ShellEnvPlugin;
use dsh_tool_bash::ToolBashPlugin;
use dsh_tools::{
    CancellationToken, ContentBlock, TOOLS, ToolCaller, ToolExecutionInput, ToolExecutionResult,
    ToolRegistry, ToolsPlugin,
};
use serde_json::{Value, json};

/// A booted kernel and its tool registry.
pub struct Harness {
    /// The kernel (it keeps the plugins loaded).
    pub kernel: Kernel,
    pub tools: Arc<ToolRegistry>,
    pub home: tempfile::TempDir,
}

/// Boots the four plugins; `bash` gets `bash_config` as its row config.
pub async fn harness_with(shell_config: Value, bash_config: Value) -> Harness {
    let home = tempfile::tempdir().unwrap();
    let kernel = Kernel::new().unwrap();
    let ctx = kernel.root();
    ctx.plugin(ShellEnvPlugin, json!({"dshHome": home.path()}))
        .unwrap();
    ctx.plugin(BashLocalPlugin, shell_config).unwrap();
    ctx.plugin(ToolsPlugin, json!({})).unwrap();
    ctx.plugin(ToolBashPlugin, bash_config).unwrap();
    kernel.settle().await;
    let tools = ctx.get(&TOOLS).expect("the tool registry is up");
    Harness {
        kernel,
        tools,
        home,
    }
}

/// The default composition.
pub async fn harness() -> Harness {
    harness_with(json!({}), json!({})).await
}

impl Harness {
    /// Runs one call with no session.
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

    /// Runs one call for a session whose cwd is `cwd`.
    pub async fn call_in_session(&self, cwd: &str, arguments: Value) -> ToolExecutionResult {
        let caller = ToolCaller {
            session_id: Some("session-1".into()),
            session_header: Some(SessionHeader::new("session-1", 1).with_cwd(cwd)),
            ..ToolCaller::default()
        };
        self.tools
            .execute(
                ToolExecutionInput::new("call-1", "bash", arguments, CancellationToken::new())
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

/// `bash` arguments for `command`.
pub fn bash(command: &str) -> Value {
    json!({"command": command, "description": "test command"})
}
