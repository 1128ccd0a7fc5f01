//! The plugins built into this binary, by the names rows use.
//!
//! Each seam crate exports its plugins; this is the one place that names them all. A row
//! whose plugin is not registered here fails at boot with an error naming the row and the
//! plugin. Plugin crates still to come (the web UI) add their line here when they land.

use dsh_agent_loop::{AgentDefaultModelPlugin, AgentLoopPlugin, LlmRetryPlugin};
use dsh_bash_local::BashLocalPlugin;
use dsh_bash_sandbox::BashSandboxPlugin;
use dsh_compose::Registry;
use dsh_headless::{HeadlessRunnerPlugin, HeadlessStartupPlugin};
use dsh_kernel::DynPlugin;
use dsh_llm::LlmPlugin;
use dsh_llm_deepseek::DeepSeekPlugin;
use dsh_llm_replay::ReplayPlugin;
use dsh_persistence_jsonl::JsonlPersistencePlugin;
use dsh_persistence_sqlite::SqlitePersistencePlugin;
use dsh_sandbox_policy::SandboxPolicyPlugin;
use dsh_session::SessionPlugin;
use dsh_shell_env::ShellEnvPlugin;
use dsh_system_prompt::SystemPromptPlugin;
use dsh_tool_bash::ToolBashPlugin;
use dsh_tools::{ToolsPlugin, UserApprovalPlugin};
use dsh_web::{ApiPlugin, WebRuntimePlugin, WebServerPlugin, WebStartupPlugin};

/// The registry of built-in plugins.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    add(&mut registry, "dsh-session", SessionPlugin);
    add(&mut registry, "dsh-llm", LlmPlugin);
    add(&mut registry, "dsh-llm-deepseek", DeepSeekPlugin);
    add(&mut registry, "dsh-llm-replay", ReplayPlugin);
    add(
        &mut registry,
        "dsh-persistence-jsonl",
        JsonlPersistencePlugin,
    );
    add(
        &mut registry,
        "dsh-persistence-sqlite",
        SqlitePersistencePlugin,
    );
    add(&mut registry, "dsh-shell-env", ShellEnvPlugin);
    add(&mut registry, "dsh-sandbox-policy", SandboxPolicyPlugin);
    add(&mut registry, "dsh-bash-sandbox", BashSandboxPlugin);
    add(&mut registry, "dsh-bash-local", BashLocalPlugin);
    add(&mut registry, "dsh-tools", ToolsPlugin);
    add(&mut registry, "dsh-user-approval", UserApprovalPlugin);
    add(&mut registry, "dsh-tool-bash", ToolBashPlugin);
    add(&mut registry, "dsh-system-prompt", SystemPromptPlugin);
    add(&mut registry, "dsh-agent-loop", AgentLoopPlugin);
    add(
        &mut registry,
        "dsh-agent-default-model",
        AgentDefaultModelPlugin,
    );
    add(&mut registry, "dsh-llm-retry", LlmRetryPlugin);
    add(&mut registry, "dsh-headless/startup", HeadlessStartupPlugin);
    add(&mut registry, "dsh-headless", HeadlessRunnerPlugin);
    add(&mut registry, "dsh-web-app/startup", WebStartupPlugin);
    add(&mut registry, "dsh-host-webserver", WebServerPlugin);
    add(&mut registry, "dsh-web-app", WebRuntimePlugin);
    add(&mut registry, "dsh-host-apiproxy", ApiPlugin);
    registry
}

/// Registers one plugin; a duplicate name is a bug in this list, reported rather than fatal.
fn add(registry: &mut Registry, name: &str, plugin: impl DynPlugin) {
    if let Err(error) = registry.register(name, plugin) {
        tracing::error!("built-in plugin {name} was not registered: {error}");
    }
}
