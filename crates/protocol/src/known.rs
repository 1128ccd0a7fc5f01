//! The event types this harness knows how to read (dsh 0.1's `KNOWN_SESSION_EVENT_TYPES`).

use crate::kinds;

/// Every event type dsh 0.1 reads, sorted so lookups can binary-search.
pub const KNOWN_EVENT_TYPES: [&str; 48] = [
    kinds::AGENT_PRESET_SELECTED,
    kinds::AGENT_INBOX_SPLICED,
    kinds::APPROVAL_ASKED,
    kinds::APPROVAL_DECIDED,
    kinds::APPROVAL_POLICY,
    kinds::ASSISTANT_CHUNK,
    kinds::ASSISTANT_MESSAGE,
    kinds::COMMAND_DONE,
    kinds::COMMAND_RUN,
    kinds::COMPACTION_END,
    kinds::COMPACTION_PRUNE,
    kinds::COMPACTION_START,
    kinds::COMPACTION_SUMMARY,
    kinds::FEEDBACK_RECORD,
    kinds::GOAL_CHANGE,
    kinds::HOOK_INVOKED,
    kinds::HOOK_RESULT,
    kinds::LLM_RETRY,
    kinds::LLM_RETRY_STARTED,
    kinds::PERMISSION_PRESET,
    kinds::PLAN_MODE,
    kinds::REQUEST_CONTEXT,
    kinds::REQUEST_HEADER,
    kinds::SANDBOX_MODE,
    kinds::SCHEDULE_CHANGE,
    kinds::SESSION_END_SEED,
    kinds::SESSION_TITLE,
    kinds::SESSION_TITLE_LLM_REQUEST,
    kinds::STEP_END,
    kinds::STEP_START,
    kinds::SUBAGENT_DESCRIPTOR,
    kinds::TEAM_MEMBER,
    kinds::TEAM_MESSAGE_DELIVERED,
    kinds::TEAM_MESSAGE_QUEUED,
    kinds::TEAM_TASK,
    kinds::TODO_WRITE,
    kinds::TOOL_WORKFLOW_AGENT_END,
    kinds::TOOL_WORKFLOW_AGENT_START,
    kinds::TOOL_WORKFLOW_RUN_END,
    kinds::TOOL_WORKFLOW_RUN_START,
    kinds::TOOL_CALL,
    kinds::TOOL_CODE_DISPATCH,
    kinds::TOOL_CODE_DISPATCH_START,
    kinds::TOOL_RESULT,
    kinds::TURN_END,
    kinds::TURN_START,
    kinds::USER_MESSAGE,
    kinds::WEB_DEEPSEEK_SEARCH_LLM_REQUEST,
];

/// The static name of a known type, so events of known types share one string.
#[inline]
pub fn known_type(kind: &str) -> Option<&'static str> {
    KNOWN_EVENT_TYPES
        .binary_search(&kind)
        .ok()
        .and_then(|index| KNOWN_EVENT_TYPES.get(index).copied())
}

/// Whether `kind` is a type this harness reads.
#[inline]
pub fn is_known_type(kind: &str) -> bool {
    known_type(kind).is_some()
}

/// Event types dsh retired; a log or append carrying them is refused.
pub const RETIRED_EVENT_TYPES: [&str; 2] = [kinds::REQUEST_HEADER_DELTA, kinds::MODE_SET];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_and_unique() {
        assert!(KNOWN_EVENT_TYPES.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn lookups_find_every_known_type() {
        for kind in KNOWN_EVENT_TYPES {
            assert_eq!(known_type(kind), Some(kind));
        }
        assert_eq!(known_type("plugin/custom"), None);
    }
}
