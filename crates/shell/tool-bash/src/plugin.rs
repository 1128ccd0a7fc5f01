//! The `dsh-tool-bash` plugin: registers `bash` (and, with background jobs, `job_output`,
//! `job_list` and `job_kill`).

use std::sync::Arc;

use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_shell::{SANDBOX_POLICY, SHELL};
use dsh_shell_env::SHELL_ENV;
use dsh_tools::TOOLS;
use serde::Deserialize;

use crate::jobs::{JobKillTool, JobListTool, JobOutputTool, JobRegistry};
use crate::prompt::BashPromptSection;
use crate::tool::BashTool;

/// Row config of `dsh-tool-bash` (dsh's key).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolBashConfig {
    /// Offer `run_in_background` and the job tools (default true).
    #[serde(default = "default_true")]
    pub enable_run_in_background: bool,
}

impl Default for ToolBashConfig {
    fn default() -> Self {
        Self {
            enable_run_in_background: true,
        }
    }
}

fn default_true() -> bool {
    true
}

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-tool-bash";

/// The `dsh-tool-bash` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolBashPlugin;

impl Plugin for ToolBashPlugin {
    type Config = ToolBashConfig;

    fn inject(&self) -> &'static [ServiceName] {
        const { &[TOOLS.name(), SHELL.name(), SHELL_ENV.name()] }
    }

    async fn apply(&self, ctx: Context, config: ToolBashConfig) -> Result<(), BoxError> {
        let tools = ctx.require(&TOOLS)?;
        let shell = ctx.require(&SHELL)?;
        let policy = match shell.sandbox_mode() {
            None => None,
            Some(_) => Some(ctx.get(&SANDBOX_POLICY).ok_or(
                "tool-bash: the mounted bash executor confines but ctx.sandboxPolicy is missing",
            )?),
        };
        let escalation = policy.is_some();
        let shell_env = ctx.require(&SHELL_ENV)?;
        let jobs = config
            .enable_run_in_background
            .then(|| Arc::new(JobRegistry::default()));
        let bash = BashTool::new(ctx.clone(), shell, shell_env, policy, jobs.clone());
        tools.register(&ctx, Arc::new(bash))?;
        ctx.plugin(BashPromptSection, serde_json::Value::Null)?;
        if let Some(jobs) = jobs {
            tools.register(
                &ctx,
                Arc::new(JobOutputTool::new(Arc::clone(&jobs), escalation)),
            )?;
            tools.register(&ctx, Arc::new(JobListTool::new(Arc::clone(&jobs))))?;
            tools.register(&ctx, Arc::new(JobKillTool::new(Arc::clone(&jobs))))?;
            ctx.effect(move || jobs.kill_all())?;
        }
        Ok(())
    }
}
