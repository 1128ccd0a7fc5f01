//! The `dsh-agent-instructions` plugin (row `agent-instructions`): an `agent/pre-step`
//! listener that adds the instructions message to an entering step, a `tools/result`
//! listener that records file touches, and a `session/disposed` listener that forgets a
//! retired session's caches.

use std::collections::HashSet;
use std::sync::Arc;

use dsh_agent_loop::Agent;
use dsh_agent_loop::events::{AgentPreStep, PreStep, PreStepDecision};
use dsh_fs::FS;
use dsh_kernel::{BoxError, Context, Next, Plugin};
use dsh_protocol::Message;
use dsh_session::{LiveSession, SessionDisposed};
use dsh_tools::{CancellationToken, ToolResultNotice, ToolsResult};
use serde_json::Value;

use crate::compose::{ComposeInput, compose};
use crate::config::{AgentInstructionsConfig, ResolvedConfig};
use crate::discover::Probe;
use crate::paths;
use crate::state::States;

/// The plugin's name in rows.
pub const PLUGIN_NAME: &str = "dsh-agent-instructions";

/// The tools whose successful `file_path` counts as a touch (`str_replace_editor`, bash and
/// glob do not).
const TOUCH_TOOLS: [&str; 3] = ["read", "write", "edit"];

/// The `dsh-agent-instructions` plugin. It injects nothing: the `fs` provider is looked up at
/// each step, and without one the plugin does nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct AgentInstructionsPlugin;

type Decision = Result<PreStepDecision, BoxError>;

impl Plugin for AgentInstructionsPlugin {
    type Config = AgentInstructionsConfig;

    async fn apply(&self, ctx: Context, config: AgentInstructionsConfig) -> Result<(), BoxError> {
        let config = Arc::new(config.resolve()?);
        let states = Arc::new(States::default());
        let listener = Listener {
            ctx: ctx.clone(),
            config,
            states: Arc::clone(&states),
        };
        ctx.on::<AgentPreStep>(move |args: PreStep, next: Next<PreStep, Decision>| {
            let listener = listener.clone();
            async move {
                let agent = Arc::clone(&args.agent);
                let claimed = args.messages.clone();
                let step = args.step;
                let signal = args.signal.clone();
                let decision = next.run(args).await?;
                Ok(listener
                    .enter(&agent, claimed, step, signal, decision)
                    .await)
            }
        })?;
        let touches = Arc::clone(&states);
        ctx.on::<ToolsResult>(move |notice: &ToolResultNotice| {
            if let Some((session_id, path)) = touch_of(notice) {
                touches.touch(&session_id, path);
            }
            Ok(())
        })?;
        let retired = Arc::clone(&states);
        ctx.on::<SessionDisposed>(move |session: &Arc<LiveSession>| {
            retired.forget(session.id());
            Ok(())
        })?;
        ctx.effect(move || states.clear())?;
        Ok(())
    }
}

/// The session and `file_path` of a successful, not cancelled read/write/edit an agent made.
fn touch_of(notice: &ToolResultNotice) -> Option<(String, String)> {
    let execution = &notice.execution;
    if !TOUCH_TOOLS.contains(&execution.name())
        || notice.result.is_error
        || execution.signal().is_cancelled()
    {
        return None;
    }
    let session_id = execution.caller()?.session_id.clone()?;
    let path = execution
        .arguments()
        .get("file_path")
        .and_then(Value::as_str)
        .map(crate::digest::js_trim)
        .filter(|path| !path.is_empty())?;
    Some((session_id, path.to_owned()))
}

#[derive(Clone)]
struct Listener {
    ctx: Context,
    config: Arc<ResolvedConfig>,
    states: Arc<States>,
}

impl Listener {
    /// Adds the instructions message to an entering step, right after its last claimed
    /// message (so after the prompt and before the runtime-context snapshot). A rejected
    /// step, and a first step entering with nothing, are left alone; their touches wait.
    async fn enter(
        &self,
        agent: &Arc<Agent>,
        claimed: Vec<Message>,
        step: u64,
        signal: CancellationToken,
        decision: PreStepDecision,
    ) -> PreStepDecision {
        let PreStepDecision::Enter(mut messages) = decision else {
            return decision;
        };
        if step == 1 && messages.is_empty() {
            return PreStepDecision::Enter(messages);
        }
        let Some(fs) = self.ctx.get(&FS) else {
            return PreStepDecision::Enter(messages);
        };
        if self.config.max_bytes.limit().is_none() {
            return PreStepDecision::Enter(messages);
        }
        let session = Arc::clone(agent.session());
        let (touched, mut caches) = self.states.take(&session);
        let cwd = session.header().cwd.unwrap_or_else(paths::process_cwd);
        let config = Arc::clone(&self.config);
        let job_session = Arc::clone(&session);
        let job_claimed = claimed.clone();
        let job_touched = touched.clone();
        let job = tokio::task::spawn_blocking(move || {
            let probe = Probe {
                fs: fs.as_ref(),
                signal: &signal,
            };
            let input = ComposeInput {
                config: &config,
                session: &job_session,
                cwd: &cwd,
                claimed: &job_claimed,
                touched: &job_touched,
            };
            let composed = compose(&probe, &input, &mut caches);
            (composed, caches)
        });
        let desired = match job.await {
            Ok((Ok(desired), caches)) => {
                self.states.commit(&session, caches);
                desired
            }
            Ok((Err(_aborted), _)) => {
                self.states.restore(session.id(), touched);
                None
            }
            Err(error) => {
                tracing::warn!(session = %session.id(), "agent instructions failed: {error}");
                self.states.restore(session.id(), touched);
                None
            }
        };
        if let Some(desired) = desired {
            insert_after_claimed(&mut messages, &claimed, desired);
        }
        PreStepDecision::Enter(messages)
    }
}

/// Inserts `desired` after the last of `claimed` in `messages` (at the front when none is
/// there), unless the same content with the same source is already entering.
fn insert_after_claimed(messages: &mut Vec<Message>, claimed: &[Message], desired: Message) {
    if messages
        .iter()
        .any(|message| message.content == desired.content && message.source == desired.source)
    {
        return;
    }
    let ids: HashSet<&str> = claimed.iter().map(|message| message.id.as_str()).collect();
    let at = messages
        .iter()
        .rposition(|message| ids.contains(message.id.as_str()))
        .map_or(0, |last| last + 1);
    messages.insert(at, desired);
}

#[cfg(test)]
mod tests {
    use dsh_protocol::{ContentBlock, MessageSource};

    use super::*;

    fn text(text: &str, source: MessageSource) -> Message {
        Message::user(vec![ContentBlock::text(text)], source)
    }

    #[test]
    fn the_message_goes_after_the_last_claimed_one() {
        let prompt = text("prompt", MessageSource::User);
        let snapshot = text(
            "snapshot",
            MessageSource::plugin("@deepseek-ai/dsh-system-prompt"),
        );
        let desired = text("rules", MessageSource::plugin("x"));
        let mut messages = vec![prompt.clone(), snapshot.clone()];
        insert_after_claimed(
            &mut messages,
            std::slice::from_ref(&prompt),
            desired.clone(),
        );
        let order: Vec<&str> = messages.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(
            order,
            [
                prompt.id.as_str(),
                desired.id.as_str(),
                snapshot.id.as_str()
            ]
        );

        let mut unclaimed = vec![snapshot];
        insert_after_claimed(&mut unclaimed, &[], desired.clone());
        assert_eq!(
            unclaimed.first().map(|m| m.id.as_str()),
            Some(desired.id.as_str())
        );

        // The same payload (under another id) is not entered twice.
        let again = text("rules", MessageSource::plugin("x"));
        insert_after_claimed(&mut unclaimed, &[], again);
        assert_eq!(unclaimed.len(), 2);
    }
}
