//! `dsh tools`: list the tools a profile gives the model, or run one call through the tool
//! pipeline outside any model turn.
//!
//! Boots only the rows tools need (session store and persistence, the `DSH_*` registry, the
//! sandbox policy, the shell, the tool registry and the tool plugins), so the same `--profile`/`--patch` that
//! shape a run shape what is listed and called here.

use anyhow::Context as _;
use dsh_protocol::json::to_js_string;
use dsh_tools::{CancellationToken, ContentBlock, TOOLS, ToolExecutionInput, ToolRegistry};
use serde_json::{Value, json};

use crate::args::tools::ToolsAction;
use crate::output;
use crate::subset::with_rows;

/// Plugins `dsh tools` boots: the store, its persistence, the shell and its policy, the
/// registry and its approval service, the filesystem and its policy, and every tool (any
/// `dsh-persistence*`, `dsh-bash-*`, `dsh-fs-*` or `dsh-tool-*` row).
fn is_tool_row(plugin: &str) -> bool {
    [
        dsh_session::PLUGIN_NAME,
        dsh_shell_env::PLUGIN_NAME,
        dsh_sandbox_policy::PLUGIN_NAME,
        dsh_tools::PLUGIN_NAME,
        dsh_tools::USER_APPROVAL_PLUGIN_NAME,
    ]
    .contains(&plugin)
        || [
            crate::builtins::PERSISTENCE_PREFIX,
            crate::builtins::BASH_PREFIX,
            crate::builtins::TOOL_PREFIX,
            crate::builtins::FS_PREFIX,
        ]
        .iter()
        .any(|prefix| plugin.starts_with(prefix))
}

/// Runs one `dsh tools` action; returns the exit code.
pub fn run(profile: &str, patches: &[String], action: &ToolsAction) -> anyhow::Result<i32> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(with_rows(
        profile,
        patches,
        is_tool_row,
        "the tools",
        |ctx, _home| async move {
            match ctx.get(&TOOLS) {
                None => Err(anyhow::anyhow!(
                    "profile \"{profile}\" has no tool registry row (such as tools)"
                )),
                Some(tools) => act(&tools, action).await,
            }
        },
    ))
}

async fn act(tools: &ToolRegistry, action: &ToolsAction) -> anyhow::Result<i32> {
    match action {
        ToolsAction::List { json } => {
            output::stdout(&list(tools, *json));
            Ok(0)
        }
        ToolsAction::Call { name, arguments } => call(tools, name, arguments).await,
    }
}

/// The first sentence (or line) of a description.
fn one_line(description: &str) -> &str {
    let line = description.lines().next().unwrap_or_default();
    match line.find(". ") {
        Some(end) => line.get(..=end).unwrap_or(line),
        None => line,
    }
}

fn list(tools: &ToolRegistry, json: bool) -> String {
    let mut text = String::new();
    for schema in tools.schemas() {
        if json {
            text.push_str(&to_js_string(&json!({
                "name": schema.name,
                "description": schema.description,
                "parameters": schema.parameters,
            })));
        } else {
            text.push_str(&format!(
                "{}\t{}",
                schema.name,
                one_line(&schema.description)
            ));
        }
        text.push('\n');
    }
    text
}

async fn call(tools: &ToolRegistry, name: &str, arguments: &str) -> anyhow::Result<i32> {
    let arguments: Value = serde_json::from_str(arguments).map_err(|error| {
        anyhow::anyhow!("the arguments of `dsh tools call {name}` are not JSON ({error}); pass one JSON object, such as '{{\"command\":\"ls\",\"description\":\"List files\"}}'")
    })?;
    let signal = CancellationToken::new();
    let interrupt = signal.clone();
    let watcher = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            interrupt.cancel();
        }
    });
    let input = ToolExecutionInput::new("dsh-tools-call", name, arguments, signal);
    let result = tools.execute(input).await;
    watcher.abort();
    let mut text: String = result
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("\n");
    if !text.ends_with('\n') {
        text.push('\n');
    }
    output::stdout(&text);
    match &result.error {
        None => Ok(0),
        Some(failure) => {
            let code = failure
                .info
                .as_ref()
                .map(|info| format!(" ({})", info.code))
                .unwrap_or_default();
            output::diagnostic(&format!(
                "tool \"{name}\" failed{code}: {}",
                failure.message
            ));
            Ok(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_is_the_first_sentence() {
        assert_eq!(
            one_line("Execute a bash command (`bash -c`) and return its stdout/stderr. Each call"),
            "Execute a bash command (`bash -c`) and return its stdout/stderr."
        );
        assert_eq!(one_line("List jobs."), "List jobs.");
        assert_eq!(one_line("a\nb"), "a");
    }
}
