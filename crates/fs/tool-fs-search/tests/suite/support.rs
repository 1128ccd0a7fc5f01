//! A kernel with the system prompt, the tool registry and the search tools.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dsh_kernel::Kernel;
use dsh_session::SessionHeader;
use dsh_system_prompt::SystemPromptPlugin;
use dsh_tool_fs_search::ToolFsSearchPlugin;
use dsh_tools::{
    CancellationToken, TOOLS, ToolCaller, ToolExecutionInput, ToolExecutionResult, ToolRegistry,
    ToolsPlugin,
};
use serde_json::{Value, json};

/// A booted kernel and its tool registry.
pub struct Harness {
    /// The kernel (it keeps the plugins loaded).
    pub kernel: Kernel,
    pub tools: Arc<ToolRegistry>,
}

/// Boots the plugins; the search tools get `config` (with `sampleOverCapGlobResults: false`
/// unless it says otherwise).
pub async fn harness_with(config: Value) -> Harness {
    let kernel = Kernel::new().unwrap();
    let ctx = kernel.root();
    ctx.plugin(SystemPromptPlugin, json!({})).unwrap();
    ctx.plugin(ToolsPlugin, json!({})).unwrap();
    let mut config = config;
    if config.get("sampleOverCapGlobResults").is_none() {
        config["sampleOverCapGlobResults"] = json!(false);
    }
    let fiber = ctx.plugin(ToolFsSearchPlugin, config).unwrap();
    kernel.settle().await;
    assert_eq!(fiber.error(), None, "the search tools loaded");
    let tools = ctx.get(&TOOLS).expect("the tool registry is up");
    Harness { kernel, tools }
}

/// The default composition.
pub async fn harness() -> Harness {
    harness_with(json!({})).await
}

/// A caller whose session runs in `cwd`.
pub fn session(cwd: &Path) -> ToolCaller {
    ToolCaller {
        session_id: Some("session-1".into()),
        session_header: Some(SessionHeader::new("session-1", 1).with_cwd(cwd.to_str().unwrap())),
        ..ToolCaller::default()
    }
}

impl Harness {
    /// Runs one call with no caller.
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
    pub async fn call_in(&self, cwd: &Path, name: &str, arguments: Value) -> ToolExecutionResult {
        self.tools
            .execute(
                ToolExecutionInput::new("call-1", name, arguments, CancellationToken::new())
                    .with_caller(session(cwd)),
            )
            .await
    }

    /// Runs one nested call (made by another tool) for a session whose cwd is `cwd`.
    pub async fn call_nested(
        &self,
        cwd: &Path,
        name: &str,
        arguments: Value,
    ) -> ToolExecutionResult {
        let mut input =
            ToolExecutionInput::new("call-2", name, arguments, CancellationToken::new())
                .with_caller(session(cwd));
        input.root_call_id = Some("call-1".into());
        self.tools.execute(input).await
    }
}

/// The text the model reads.
pub fn text(result: &ToolExecutionResult) -> String {
    result.text()
}

/// The code of a failed result.
pub fn code(result: &ToolExecutionResult) -> Option<String> {
    result.code().map(str::to_owned)
}

/// The class name of a failed result.
pub fn error_name(result: &ToolExecutionResult) -> Option<String> {
    result
        .error
        .as_ref()
        .and_then(|failure| failure.info.as_ref())
        .map(|info| info.name.clone())
}

/// The installed ripgrep, or a failure telling the reader to install it.
pub fn rg() -> PathBuf {
    for candidate in ["/usr/bin/rg", "/usr/local/bin/rg"] {
        if Path::new(candidate).is_file() {
            return PathBuf::from(candidate);
        }
    }
    let found = std::process::Command::new("rg").arg("--version").output();
    match found {
        Ok(output) if output.status.success() => PathBuf::from("rg"),
        _ => panic!(
            "ripgrep (`rg`) is not installed: these tests compare the search tools with the real \
             ripgrep; install it (for example `apt-get install ripgrep`) and run them again"
        ),
    }
}
