//! The plugins built into this binary, by the names rows use.
//!
//! Each plugin crate exports its plugins and the names rows give them; this is the one place
//! that lists them all. A row whose plugin is not registered here fails at boot with an error
//! naming the row and the plugin.

use dsh_agent_instructions::AgentInstructionsPlugin;
use dsh_agent_loop::{AgentDefaultModelPlugin, AgentLoopPlugin, LlmRetryPlugin};
use dsh_bash_local::BashLocalPlugin;
use dsh_bash_sandbox::BashSandboxPlugin;
use dsh_compose::Registry;
use dsh_fs_local::FsLocalPlugin;
use dsh_fs_observation_policy::FsObservationPolicyPlugin;
use dsh_fs_sandbox::FsSandboxPlugin;
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
use dsh_tool_fs::ToolFsPlugin;
use dsh_tool_fs_search::ToolFsSearchPlugin;
use dsh_tool_str_replace_editor::StrReplaceEditorPlugin;
use dsh_tools::{ToolsPlugin, UserApprovalPlugin};
use dsh_web::{ApiPlugin, WebRuntimePlugin, WebServerPlugin, WebStartupPlugin};

/// The name prefix of every persistence provider's row (`dsh-persistence-jsonl`, ...).
pub const PERSISTENCE_PREFIX: &str = "dsh-persistence";
/// The name prefix of every bash provider's row (`dsh-bash-local`, `dsh-bash-sandbox`).
pub const BASH_PREFIX: &str = "dsh-bash-";
/// The name prefix of every model-facing tool's row (`dsh-tool-bash`, ...).
pub const TOOL_PREFIX: &str = "dsh-tool-";
/// The name prefix of every filesystem row (`dsh-fs-sandbox`, `dsh-fs-observation-policy`, ...).
pub const FS_PREFIX: &str = "dsh-fs-";

/// The registry of built-in plugins.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    add(&mut registry, dsh_session::PLUGIN_NAME, SessionPlugin);
    add(&mut registry, dsh_llm::PLUGIN_NAME, LlmPlugin);
    add(&mut registry, dsh_llm_deepseek::PLUGIN_NAME, DeepSeekPlugin);
    add(&mut registry, dsh_llm_replay::PLUGIN_NAME, ReplayPlugin);
    add(
        &mut registry,
        dsh_persistence_jsonl::PLUGIN_NAME,
        JsonlPersistencePlugin,
    );
    add(
        &mut registry,
        dsh_persistence_sqlite::PLUGIN_NAME,
        SqlitePersistencePlugin,
    );
    add(&mut registry, dsh_shell_env::PLUGIN_NAME, ShellEnvPlugin);
    add(
        &mut registry,
        dsh_sandbox_policy::PLUGIN_NAME,
        SandboxPolicyPlugin,
    );
    add(
        &mut registry,
        dsh_bash_sandbox::PLUGIN_NAME,
        BashSandboxPlugin,
    );
    add(&mut registry, dsh_bash_local::PLUGIN_NAME, BashLocalPlugin);
    add(&mut registry, dsh_tools::PLUGIN_NAME, ToolsPlugin);
    add(
        &mut registry,
        dsh_tools::USER_APPROVAL_PLUGIN_NAME,
        UserApprovalPlugin,
    );
    add(&mut registry, dsh_tool_bash::PLUGIN_NAME, ToolBashPlugin);
    add(&mut registry, dsh_fs_local::PLUGIN_NAME, FsLocalPlugin);
    add(&mut registry, dsh_fs_sandbox::PLUGIN_NAME, FsSandboxPlugin);
    add(
        &mut registry,
        dsh_fs_observation_policy::PLUGIN_NAME,
        FsObservationPolicyPlugin,
    );
    add(&mut registry, dsh_tool_fs::PLUGIN_NAME, ToolFsPlugin);
    add(
        &mut registry,
        dsh_tool_fs_search::PLUGIN_NAME,
        ToolFsSearchPlugin,
    );
    add(
        &mut registry,
        dsh_tool_str_replace_editor::PLUGIN_NAME,
        StrReplaceEditorPlugin,
    );
    add(
        &mut registry,
        dsh_agent_instructions::PLUGIN_NAME,
        AgentInstructionsPlugin,
    );
    add(
        &mut registry,
        dsh_system_prompt::PLUGIN_NAME,
        SystemPromptPlugin,
    );
    add(&mut registry, dsh_agent_loop::PLUGIN_NAME, AgentLoopPlugin);
    add(
        &mut registry,
        dsh_agent_loop::DEFAULT_MODEL_PLUGIN_NAME,
        AgentDefaultModelPlugin,
    );
    add(
        &mut registry,
        dsh_agent_loop::RETRY_PLUGIN_NAME,
        LlmRetryPlugin,
    );
    add(
        &mut registry,
        dsh_headless::STARTUP_PLUGIN_NAME,
        HeadlessStartupPlugin,
    );
    add(
        &mut registry,
        dsh_headless::RUNNER_PLUGIN_NAME,
        HeadlessRunnerPlugin,
    );
    add(
        &mut registry,
        dsh_web::STARTUP_PLUGIN_NAME,
        WebStartupPlugin,
    );
    add(&mut registry, dsh_web::SERVER_PLUGIN_NAME, WebServerPlugin);
    add(
        &mut registry,
        dsh_web::RUNTIME_PLUGIN_NAME,
        WebRuntimePlugin,
    );
    add(&mut registry, dsh_web::API_PLUGIN_NAME, ApiPlugin);
    registry
}

/// Registers one plugin; a duplicate name is a bug in this list, reported rather than fatal.
fn add(registry: &mut Registry, name: &str, plugin: impl DynPlugin) {
    if let Err(error) = registry.register(name, plugin) {
        tracing::error!("built-in plugin {name} was not registered: {error}");
    }
}
