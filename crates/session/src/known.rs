//! The event types this harness knows how to read (dsh 0.1's `KNOWN_SESSION_EVENT_TYPES`).

/// Every event type dsh 0.1 reads, sorted so lookups can binary-search.
pub const KNOWN_EVENT_TYPES: [&str; 48] = [
    "agent-preset/selected",
    "agent/inbox/spliced",
    "approval/asked",
    "approval/decided",
    "approval/policy",
    "assistant/chunk",
    "assistant/message",
    "command/done",
    "command/run",
    "compaction/end",
    "compaction/prune",
    "compaction/start",
    "compaction/summary",
    "feedback/record",
    "goal/change",
    "hook/invoked",
    "hook/result",
    "llm/retry",
    "llm/retry-started",
    "permission/preset",
    "plan/mode",
    "request/context",
    "request/header",
    "sandbox/mode",
    "schedule/change",
    "session/end-seed",
    "session/title",
    "session/title-llm-request",
    "step/end",
    "step/start",
    "subagent/descriptor",
    "team/member",
    "team/message/delivered",
    "team/message/queued",
    "team/task",
    "todo/write",
    "tool-workflow/agent-end",
    "tool-workflow/agent-start",
    "tool-workflow/run-end",
    "tool-workflow/run-start",
    "tool/call",
    "tool/code-dispatch",
    "tool/code-dispatch-start",
    "tool/result",
    "turn/end",
    "turn/start",
    "user/message",
    "web/deepseek-search-llm-request",
];

/// The static name of a known type, so events of known types share one string.
pub fn known_type(kind: &str) -> Option<&'static str> {
    KNOWN_EVENT_TYPES
        .binary_search(&kind)
        .ok()
        .and_then(|index| KNOWN_EVENT_TYPES.get(index).copied())
}

/// Whether `kind` is a type this harness reads.
pub fn is_known_type(kind: &str) -> bool {
    known_type(kind).is_some()
}

/// Event types dsh retired; a log or append carrying them is refused.
pub const RETIRED_EVENT_TYPES: [&str; 2] = ["request/header-delta", "mode/set"];

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
