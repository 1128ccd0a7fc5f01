//! The three steps of embedding dsh: register plugins, compose a profile, drive an agent.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use dsh_agent_loop::{
    AGENTS, AgentLoopPlugin, AgentOptions, ContentBlock, CreateAgentOptions, LlmRetryPlugin,
    Message, MessageSource, TurnSummary,
};
use dsh_compose::expr::LaunchEnv;
use dsh_compose::{Composition, Layer, Registry, boot, compose};
use dsh_kernel::{DynPlugin, Kernel};
use dsh_llm::LlmPlugin;
use dsh_llm_deepseek::DeepSeekPlugin;
use dsh_persistence_jsonl::JsonlPersistencePlugin;
use dsh_session::SessionPlugin;
use dsh_system_prompt::SystemPromptPlugin;
use dsh_tools::ToolsPlugin;

use crate::word_count::{self, WordCountPlugin};
use crate::{PROFILE, PROFILE_LABEL};

/// Step 1: the plugins this binary can mount, by the names its rows use. Only what
/// [`PROFILE`] names is registered: dsh's plugins, and [`WordCountPlugin`].
pub fn registry() -> anyhow::Result<Registry> {
    let mut registry = Registry::new();
    register(&mut registry, dsh_llm::PLUGIN_NAME, LlmPlugin)?;
    register(
        &mut registry,
        dsh_agent_loop::RETRY_PLUGIN_NAME,
        LlmRetryPlugin,
    )?;
    register(&mut registry, dsh_session::PLUGIN_NAME, SessionPlugin)?;
    register(
        &mut registry,
        dsh_persistence_jsonl::PLUGIN_NAME,
        JsonlPersistencePlugin,
    )?;
    register(&mut registry, dsh_tools::PLUGIN_NAME, ToolsPlugin)?;
    register(&mut registry, word_count::PLUGIN_NAME, WordCountPlugin)?;
    register(
        &mut registry,
        dsh_system_prompt::PLUGIN_NAME,
        SystemPromptPlugin,
    )?;
    register(&mut registry, dsh_agent_loop::PLUGIN_NAME, AgentLoopPlugin)?;
    register(&mut registry, dsh_llm_deepseek::PLUGIN_NAME, DeepSeekPlugin)?;
    Ok(registry)
}

fn register(registry: &mut Registry, name: &str, plugin: impl DynPlugin) -> anyhow::Result<()> {
    registry
        .register(name, plugin)
        .with_context(|| format!("cannot register plugin {name}"))
}

/// Step 2: [`PROFILE`] parsed as a patch list and composed as the only layer. A patch entry
/// that matched nothing is an error here: the profile is this binary's own.
pub fn composition() -> anyhow::Result<Composition> {
    let layer = Layer::bundle(PROFILE_LABEL, PROFILE)?;
    let composition = compose(&[layer])?;
    if let Some(warning) = composition.warnings().first() {
        anyhow::bail!("[{}] {}", warning.layer, warning.message);
    }
    Ok(composition)
}

/// Step 3a: mounts [`composition`] on `kernel` with [`registry`] and waits until every row is
/// active. `home` is what `dshHomePath(...)` in the profile joins onto. On an error, still
/// shut the kernel down: rows that did start are mounted.
pub async fn boot_profile(kernel: &Kernel, home: PathBuf) -> anyhow::Result<()> {
    let composition = composition()?;
    let registry = registry()?;
    let launch = Arc::new(LaunchEnv::capture(home));
    boot(kernel, &composition, &registry, launch)
        .await
        .context("the plugin tree failed to load")?;
    Ok(())
}

/// What [`run_turn`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnReport {
    /// The agent's session id (its log is under the home's `sessions/`).
    pub session_id: String,
    /// What the turn did, folded from the log.
    pub summary: TurnSummary,
}

/// Step 3b: creates an agent on `model` of DeepSeek working in the current directory, and runs
/// one turn with `task` ([`dsh_agent_loop::Agent::run_turn`]: it waits for the turn, flushes
/// the session and folds the log). A failed turn (a model error, say) is an `Ok` report whose
/// summary says so; `Err` is for the harness refusing the agent or the message.
pub async fn run_turn(kernel: &Kernel, task: &str, model: &str) -> anyhow::Result<TurnReport> {
    let root = kernel.root();
    let agents = root.require(&AGENTS)?;
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let agent = agents
        .create(CreateAgentOptions {
            cwd: Some(cwd.display().to_string()),
            agent_options: AgentOptions::route(dsh_llm_deepseek::PROVIDER, model),
            ..CreateAgentOptions::default()
        })
        .await?;
    let message = Message::user(vec![ContentBlock::text(task)], MessageSource::User);
    let summary = agent.run_turn(message).await?;
    Ok(TurnReport {
        session_id: agent.id().to_owned(),
        summary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_of_the_profile_has_its_plugin() {
        let registry = registry().unwrap();
        let composition = composition().unwrap();
        let names: Vec<&str> = composition
            .rows()
            .iter()
            .filter_map(|row| row.as_map()?.get("name")?.as_str())
            .collect();
        assert_eq!(names.len(), 9);
        for name in names {
            assert!(registry.get(name).is_some(), "{name} is not registered");
        }
    }
}
