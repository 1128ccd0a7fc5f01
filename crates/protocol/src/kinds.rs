//! Event kinds: the `type` of every event dsh 0.1 writes, one constant each.
//!
//! Code that writes or matches an event names its kind through these constants, so a typo is a
//! compile error and every writer of a kind can be found from its constant.

/// The agent preset a session was started with (web agent presets).
pub const AGENT_PRESET_SELECTED: &str = "agent-preset/selected";
/// A change to an agent's inbox of messages queued for the next turn or step.
pub const AGENT_INBOX_SPLICED: &str = "agent/inbox/spliced";
/// A tool asked the user for approval: the question, its tool and call.
pub const APPROVAL_ASKED: &str = "approval/asked";
/// The outcome of an approval question (allowed once, rejected, ...).
pub const APPROVAL_DECIDED: &str = "approval/decided";
/// The session's approval policy changed (`ask` or `never`).
pub const APPROVAL_POLICY: &str = "approval/policy";
/// One streamed delta of an assistant message (text, reasoning, a tool call's arguments).
pub const ASSISTANT_CHUNK: &str = "assistant/chunk";
/// A finished assistant message (surface).
pub const ASSISTANT_MESSAGE: &str = "assistant/message";
/// A slash command finished, with its outcome and reply.
pub const COMMAND_DONE: &str = "command/done";
/// A slash command started, with its name and arguments.
pub const COMMAND_RUN: &str = "command/run";
/// A compaction ended, or failed with its error.
pub const COMPACTION_END: &str = "compaction/end";
/// A tool result was pruned from the context; the replacement follows it.
pub const COMPACTION_PRUNE: &str = "compaction/prune";
/// A compaction began (the durable bracket around it opens).
pub const COMPACTION_START: &str = "compaction/start";
/// The summary a compaction wrote for the messages it replaces.
pub const COMPACTION_SUMMARY: &str = "compaction/summary";
/// Feedback the user left about the session.
pub const FEEDBACK_RECORD: &str = "feedback/record";
/// The session goal's whole state after a change, or its removal.
pub const GOAL_CHANGE: &str = "goal/change";
/// A hook handler was started for a hook point.
pub const HOOK_INVOKED: &str = "hook/invoked";
/// What a hook handler decided, with its exit code and duration.
pub const HOOK_RESULT: &str = "hook/result";
/// A failed model attempt that will be retried.
pub const LLM_RETRY: &str = "llm/retry";
/// The retried model attempt began.
pub const LLM_RETRY_STARTED: &str = "llm/retry-started";
/// The permission preset the session follows (sandbox mode plus approval policy).
pub const PERMISSION_PRESET: &str = "permission/preset";
/// Plan mode was entered or left.
pub const PLAN_MODE: &str = "plan/mode";
/// The provider, model and context window a request was made for.
pub const REQUEST_CONTEXT: &str = "request/context";
/// The request a step sent to the model.
pub const REQUEST_HEADER: &str = "request/header";
/// The sandbox mode shell commands run under changed.
pub const SANDBOX_MODE: &str = "sandbox/mode";
/// A scheduled prompt of the session was created, dispatched or deleted.
pub const SCHEDULE_CHANGE: &str = "schedule/change";
/// The end of an inherited or restored prefix: what follows was written live.
pub const SESSION_END_SEED: &str = "session/end-seed";
/// The session's title; the last one wins.
pub const SESSION_TITLE: &str = "session/title";
/// The model request made to title the session (logged before it is sent).
pub const SESSION_TITLE_LLM_REQUEST: &str = "session/title-llm-request";
/// A model step ended.
pub const STEP_END: &str = "step/end";
/// A model step began inside a turn.
pub const STEP_START: &str = "step/start";
/// What a subagent session is: its mode, label and parent.
pub const SUBAGENT_DESCRIPTOR: &str = "subagent/descriptor";
/// A member joined or changed in an agent team.
pub const TEAM_MEMBER: &str = "team/member";
/// A message between team members was delivered.
pub const TEAM_MESSAGE_DELIVERED: &str = "team/message/delivered";
/// A message between team members was queued.
pub const TEAM_MESSAGE_QUEUED: &str = "team/message/queued";
/// A task of an agent team was created or changed.
pub const TEAM_TASK: &str = "team/task";
/// The whole todo list as the model last wrote it.
pub const TODO_WRITE: &str = "todo/write";
/// An agent of a tool workflow run ended, with its outcome.
pub const TOOL_WORKFLOW_AGENT_END: &str = "tool-workflow/agent-end";
/// A tool workflow run started one of its agents.
pub const TOOL_WORKFLOW_AGENT_START: &str = "tool-workflow/agent-start";
/// A tool workflow run ended.
pub const TOOL_WORKFLOW_RUN_END: &str = "tool-workflow/run-end";
/// A tool workflow run started.
pub const TOOL_WORKFLOW_RUN_START: &str = "tool-workflow/run-start";
/// A tool call the model asked for.
pub const TOOL_CALL: &str = "tool/call";
/// The tool calls a code-mode program dispatched, and their results.
pub const TOOL_CODE_DISPATCH: &str = "tool/code-dispatch";
/// A code-mode program started dispatching tool calls.
pub const TOOL_CODE_DISPATCH_START: &str = "tool/code-dispatch-start";
/// The result of a tool call (surface).
pub const TOOL_RESULT: &str = "tool/result";
/// A turn ended, with its reason.
pub const TURN_END: &str = "turn/end";
/// A turn began.
pub const TURN_START: &str = "turn/start";
/// A user message (surface).
pub const USER_MESSAGE: &str = "user/message";
/// The request a web search made to DeepSeek (logged before it is sent, without the key).
pub const WEB_DEEPSEEK_SEARCH_LLM_REQUEST: &str = "web/deepseek-search-llm-request";
/// A retired kind (`request/header-delta`) that old logs may still hold.
pub const REQUEST_HEADER_DELTA: &str = "request/header-delta";
/// A retired kind (`mode/set`) that old logs may still hold.
pub const MODE_SET: &str = "mode/set";
/// A pre-react-loop kind (`steering/message`) that old logs may hold; it is read as a
/// `user/message`.
pub const STEERING_MESSAGE: &str = "steering/message";
