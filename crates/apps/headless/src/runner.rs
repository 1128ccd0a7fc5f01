//! The `dsh-headless` plugin (row `headless-runner`): creates (or resumes) one agent, sends
//! the task, waits for the turn, flushes the session, prints the outcome and asks the
//! launcher to exit: 0 when the turn completed, 1 otherwise.

use std::io::Write;
use std::sync::Arc;

use dsh_agent_loop::{
    AGENT_DEFAULT_MODEL, AGENTS, Agent, AgentOptions, ContentBlock, CreateAgentOptions, Message,
    MessageSource, ResumeAgentOptions, TurnSummary,
};
use dsh_kernel::{BoxError, Context, Plugin, ServiceName};
use dsh_launch::{APP_EXIT, LOADER};
use dsh_persistence::SESSION_PERSISTENCE;
use dsh_session::{EventNotice, SESSIONS, SessionEventAppended};
use serde::Deserialize;

use crate::args::{HeadlessArgs, OutputFormat};
use crate::startup::HEADLESS_STARTUP;
use crate::stream::{Lines, line_writer};

/// The plugin's name in rows.
pub const RUNNER_PLUGIN_NAME: &str = "dsh-headless";

/// Row config of `dsh-headless`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunnerConfig {
    /// The task (the bundle sets it from `ctx.headlessStartup.task`).
    pub task: String,
}

/// The `dsh-headless` plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeadlessRunnerPlugin;

impl Plugin for HeadlessRunnerPlugin {
    type Config = RunnerConfig;

    fn inject(&self) -> &'static [ServiceName] {
        const { &[AGENT_DEFAULT_MODEL.name(), AGENTS.name(), SESSIONS.name()] }
    }

    async fn apply(&self, ctx: Context, config: RunnerConfig) -> Result<(), BoxError> {
        let exit = ctx
            .get(&APP_EXIT)
            .ok_or("headless-runner: the launcher must provide appExit before the tree mounts")?;
        let flags = ctx
            .get(&HEADLESS_STARTUP)
            .map_or_else(HeadlessArgs::default, |flags| (*flags).clone());
        let task_ctx = ctx.clone();
        ctx.spawn(async move {
            let code = match run(&task_ctx, &config.task, &flags).await {
                Ok(code) => code,
                Err(error) => {
                    say(&format!("dsh: {}", dsh_kernel::error_chain(error.as_ref())));
                    1
                }
            };
            exit.request(code);
        })?;
        Ok(())
    }
}

async fn run(ctx: &Context, task: &str, flags: &HeadlessArgs) -> Result<i32, BoxError> {
    // Rows mount concurrently: wait for the whole tree, so no adapter or tool is missing.
    if let Some(loader) = ctx.get(&LOADER) {
        loader.settled().await;
    }
    let agents = ctx.require(&AGENTS)?;
    let mut selection = ctx.require(&AGENT_DEFAULT_MODEL)?.current_selection();
    if let Some(model) = &flags.model {
        selection.model.clone_from(model);
    }
    let agent_options = AgentOptions::route(selection.provider, selection.model);
    let agent = match &flags.resume {
        Some(session_id) => agents
            .resume(ResumeAgentOptions {
                session_id: session_id.clone(),
                agent_options,
                setup: None,
            })
            .await
            .map_err(|error| format!("{error} (`dsh sessions list` shows the stored sessions)"))?,
        None => {
            let cwd = std::env::current_dir()
                .map_err(|error| format!("cannot read the working directory: {error}"))?;
            agents
                .create(CreateAgentOptions {
                    cwd: Some(cwd.display().to_string()),
                    agent_options,
                    ..CreateAgentOptions::default()
                })
                .await?
        }
    };
    if flags.verbose {
        say(&format!("dsh: session {}", agent.id()));
        if let Some(location) = ctx
            .get(&SESSION_PERSISTENCE)
            .and_then(|persistence| persistence.locate(&agent.session().header()))
        {
            say(&format!("dsh: log {}", location.path.display()));
        }
    }
    let streamed = if flags.output == OutputFormat::StreamJson {
        Some(stream_events(ctx, &agent)?)
    } else {
        None
    };
    let message = Message::user(vec![ContentBlock::text(task)], MessageSource::User);
    let outcome = agent.run_turn(message).await;
    // Every event line is out before the result line, or before the error and the exit.
    if let Some(lines) = streamed {
        lines.close().await;
    }
    let summary = outcome?;
    report(&summary, agent.id(), flags.output);
    // dsh's contract: 0 only when the turn completed.
    Ok(if summary.completed() { 0 } else { 1 })
}

/// Writes one line on stderr (a closed stderr is ignored: the exit code still tells).
fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// `--output stream-json`: every event of the session, one JSON line each, as it is logged.
/// The listener only queues the line (it runs under the session's publishing order, so it
/// must not wait for a slow reader); a task of the plugin writes the queue to stdout. A
/// reader that went away does not stop the agent; the exit code still tells.
fn stream_events(ctx: &Context, agent: &Arc<Agent>) -> Result<Lines, BoxError> {
    let (lines, writer) = line_writer(tokio::io::stdout());
    ctx.spawn(writer)?;
    let id = agent.id().to_owned();
    let queue = lines.clone();
    ctx.on::<SessionEventAppended>(move |notice: &EventNotice| -> Result<(), BoxError> {
        if notice.session.id() == id {
            queue.send(dsh_protocol::json::to_js_string(&*notice.event));
        }
        Ok(())
    })?;
    // Unloading (a signal) drains what is queued before the writer is stopped; effects are
    // undone last first, so this runs before the task is aborted.
    let closing = lines.clone();
    ctx.effect_async(move || async move { closing.close().await })?;
    Ok(lines)
}

fn report(summary: &TurnSummary, session_id: &str, output: OutputFormat) {
    let mut out = std::io::stdout().lock();
    let written = match output {
        OutputFormat::Text => writeln!(out, "{}", summary.text),
        OutputFormat::Json => writeln!(out, "{}", summary.to_json(session_id)),
        OutputFormat::StreamJson => {
            let mut result = summary.to_json(session_id);
            if let Some(object) = result.as_object_mut() {
                object.insert("type".into(), "result".into());
            }
            writeln!(out, "{result}")
        }
    };
    let _ = written.and_then(|()| out.flush());
    drop(out);
    if let Some((code, message)) = summary.error() {
        say(&format!("dsh: {code}: {message}"));
    }
}
