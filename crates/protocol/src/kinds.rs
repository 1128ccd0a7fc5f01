//! Event kinds: the `type` of every event dsh 0.1 writes, one constant each.
//!
//! Code that writes or matches an event names its kind through these constants, so a typo is a
//! compile error and every writer of a kind can be found from its constant.

/// dsh's `agent-preset/selected` event.
pub const AGENT_PRESET_SELECTED: &str = "agent-preset/selected";
/// dsh's `agent/inbox/spliced` event.
pub const AGENT_INBOX_SPLICED: &str = "agent/inbox/spliced";
/// dsh's `approval/asked` event.
pub const APPROVAL_ASKED: &str = "approval/asked";
/// dsh's `approval/decided` event.
pub const APPROVAL_DECIDED: &str = "approval/decided";
/// dsh's `approval/policy` event.
pub const APPROVAL_POLICY: &str = "approval/policy";
/// One streamed delta of an assistant message.
pub const ASSISTANT_CHUNK: &str = "assistant/chunk";
/// A finished assistant message (surface).
pub const ASSISTANT_MESSAGE: &str = "assistant/message";
/// dsh's `command/done` event.
pub const COMMAND_DONE: &str = "command/done";
/// dsh's `command/run` event.
pub const COMMAND_RUN: &str = "command/run";
/// dsh's `compaction/end` event.
pub const COMPACTION_END: &str = "compaction/end";
/// dsh's `compaction/prune` event.
pub const COMPACTION_PRUNE: &str = "compaction/prune";
/// dsh's `compaction/start` event.
pub const COMPACTION_START: &str = "compaction/start";
/// dsh's `compaction/summary` event.
pub const COMPACTION_SUMMARY: &str = "compaction/summary";
/// dsh's `feedback/record` event.
pub const FEEDBACK_RECORD: &str = "feedback/record";
/// dsh's `goal/change` event.
pub const GOAL_CHANGE: &str = "goal/change";
/// dsh's `hook/invoked` event.
pub const HOOK_INVOKED: &str = "hook/invoked";
/// dsh's `hook/result` event.
pub const HOOK_RESULT: &str = "hook/result";
/// A failed model attempt that will be retried.
pub const LLM_RETRY: &str = "llm/retry";
/// The retried model attempt began.
pub const LLM_RETRY_STARTED: &str = "llm/retry-started";
/// dsh's `permission/preset` event.
pub const PERMISSION_PRESET: &str = "permission/preset";
/// dsh's `plan/mode` event.
pub const PLAN_MODE: &str = "plan/mode";
/// Context recorded for a request.
pub const REQUEST_CONTEXT: &str = "request/context";
/// The request a step sent to the model.
pub const REQUEST_HEADER: &str = "request/header";
/// dsh's `sandbox/mode` event.
pub const SANDBOX_MODE: &str = "sandbox/mode";
/// dsh's `schedule/change` event.
pub const SCHEDULE_CHANGE: &str = "schedule/change";
/// The end of a forked session's inherited prefix.
pub const SESSION_END_SEED: &str = "session/end-seed";
/// The session's title.
pub const SESSION_TITLE: &str = "session/title";
/// dsh's `session/title-llm-request` event.
pub const SESSION_TITLE_LLM_REQUEST: &str = "session/title-llm-request";
/// A model step ended.
pub const STEP_END: &str = "step/end";
/// A model step began inside a turn.
pub const STEP_START: &str = "step/start";
/// dsh's `subagent/descriptor` event.
pub const SUBAGENT_DESCRIPTOR: &str = "subagent/descriptor";
/// dsh's `team/member` event.
pub const TEAM_MEMBER: &str = "team/member";
/// dsh's `team/message/delivered` event.
pub const TEAM_MESSAGE_DELIVERED: &str = "team/message/delivered";
/// dsh's `team/message/queued` event.
pub const TEAM_MESSAGE_QUEUED: &str = "team/message/queued";
/// dsh's `team/task` event.
pub const TEAM_TASK: &str = "team/task";
/// dsh's `todo/write` event.
pub const TODO_WRITE: &str = "todo/write";
/// dsh's `tool-workflow/agent-end` event.
pub const TOOL_WORKFLOW_AGENT_END: &str = "tool-workflow/agent-end";
/// dsh's `tool-workflow/agent-start` event.
pub const TOOL_WORKFLOW_AGENT_START: &str = "tool-workflow/agent-start";
/// dsh's `tool-workflow/run-end` event.
pub const TOOL_WORKFLOW_RUN_END: &str = "tool-workflow/run-end";
/// dsh's `tool-workflow/run-start` event.
pub const TOOL_WORKFLOW_RUN_START: &str = "tool-workflow/run-start";
/// A tool call the model asked for.
pub const TOOL_CALL: &str = "tool/call";
/// dsh's `tool/code-dispatch` event.
pub const TOOL_CODE_DISPATCH: &str = "tool/code-dispatch";
/// dsh's `tool/code-dispatch-start` event.
pub const TOOL_CODE_DISPATCH_START: &str = "tool/code-dispatch-start";
/// The result of a tool call (surface).
pub const TOOL_RESULT: &str = "tool/result";
/// A turn ended, with its reason.
pub const TURN_END: &str = "turn/end";
/// A turn began.
pub const TURN_START: &str = "turn/start";
/// A user message (surface).
pub const USER_MESSAGE: &str = "user/message";
/// dsh's `web/deepseek-search-llm-request` event.
pub const WEB_DEEPSEEK_SEARCH_LLM_REQUEST: &str = "web/deepseek-search-llm-request";
/// A retired kind (`request/header-delta`) that old logs may still hold.
pub const REQUEST_HEADER_DELTA: &str = "request/header-delta";
/// A retired kind (`mode/set`) that old logs may still hold.
pub const MODE_SET: &str = "mode/set";
