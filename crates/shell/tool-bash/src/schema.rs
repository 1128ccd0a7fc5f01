//! What the model is told about the `bash` tool: dsh's description and parameter schema.

use serde_json::{Value, json};

/// The sentence about background jobs, when they are enabled and when not.
fn background_sentence(enabled: bool) -> &'static str {
    if enabled {
        "Set `run_in_background: true` for long-running commands: the call returns a job id \
         immediately; read its output with `job_output` and stop it with `job_kill`."
    } else {
        "Background execution is not available; long-running commands must finish within the \
         timeout."
    }
}

/// The paragraph added when the executor confines and escalation is offered.
const ESCALATION_PARAGRAPH: &str = " Attempting a command the sandbox may deny is safe and \
    expected: run it and read the marker rather than assuming the denial. When a command is \
    denied and a wider mode would let it succeed, escalate immediately in the same turn — the \
    one sanctioned exception to a denial: retry the exact same command once with \
    `sandbox_permissions` (the narrowest wider mode that suffices) plus a one-sentence \
    `justification`. Do not detour through chat to ask permission first — the approval prompt \
    raised by that retry is how the user consents. If the session states approval prompts are \
    disabled, there is no exception: a denial is final — do not set `sandbox_permissions`. \
    Never escalate speculatively: ground the request in a real denial — normally the one this \
    command just hit; escalating up front is fine only when this session already denied the \
    same access. A rejected escalation is final for that command — stop and explain, never \
    work around it — but it does not forbid attempting or escalating other commands later.";

/// dsh's `bashDescription()`; `escalation` when the executor confines.
pub fn description(background: bool, escalation: bool) -> String {
    let base = format!(
        "Execute a bash command (`bash -c`) and return its stdout/stderr. Each call runs in a \
         fresh shell: no state (cwd, variables, functions) persists between calls — pass \
         `workdir` instead of using `cd`. Non-zero exits are reported as `[exit code: N]`. \
         Current harness environment facts are exposed through managed `$DSH_*` variables; \
         inspect them when needed. Commands may run under a file sandbox; a blocked file \
         operation is reported as `[sandbox: file access denied under <mode> mode]` — a policy \
         denial, not a bug in the command; do not retry another way. Long output is truncated \
         to its tail; the full output is saved to a file whose path is reported when available. \
         {}",
        background_sentence(background)
    );
    if escalation {
        base + ESCALATION_PARAGRAPH
    } else {
        base
    }
}

/// The compiled parameter schema (an open object: extra keys are allowed and ignored);
/// `escalation` adds `sandbox_permissions` and `justification`.
pub fn parameters(background: bool, escalation: bool) -> Value {
    let mut properties = json!({
        "command": {"type": "string", "description": "The bash command to execute."},
        "description": {
            "type": "string",
            "description": "Clear, concise description of what this command does in active \
                voice, 5-10 words (shown in the UI). Examples: \"ls\" → \"List files in current \
                directory\"; \"git status\" → \"Show working tree status\"; \"npm install\" → \
                \"Install package dependencies\"."
        },
        "timeoutMs": {
            "type": "number",
            "description": "Timeout in milliseconds. The executor applies its configured default \
                and cap, and kills the command on expiry."
        },
        "workdir": {
            "type": "string",
            "description": "Working directory for this command. Defaults to the session \
                workspace; a relative path is resolved against it."
        }
    });
    if background && let Some(map) = properties.as_object_mut() {
        map.insert(
            "run_in_background".into(),
            json!({
                "type": "boolean",
                "description": "Run in the background and return a job id immediately (collect \
                    with job_output, stop with job_kill). No timeout applies."
            }),
        );
    }
    if escalation && let Some(map) = properties.as_object_mut() {
        map.insert(
            "sandbox_permissions".into(),
            json!({
                "type": "string",
                "description": "The wider sandbox mode this command needs. Only valid as a \
                    one-shot retry of a command the sandbox just denied; requires justification \
                    and user approval.",
                "enum": ["workspace-write", "danger-full-access"]
            }),
        );
        map.insert(
            "justification".into(),
            json!({
                "type": "string",
                "description": "Required with sandbox_permissions: one sentence for the user \
                    explaining why this exact command needs the wider access."
            }),
        );
    }
    json!({"type": "object", "properties": properties, "required": ["command", "description"]})
}

/// The system-prompt section the tool adds (`tool:bash`, order 105).
pub const PROMPT_SECTION: &str =
    "Check the [exit code: N] marker on every bash result; investigate failures before moving on.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_dshs() {
        let schema = parameters(true, false);
        let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "command",
                "description",
                "timeoutMs",
                "workdir",
                "run_in_background"
            ]
        );
        assert_eq!(schema["required"], json!(["command", "description"]));
        assert!(
            schema["properties"]["description"]["description"]
                .as_str()
                .unwrap()
                .starts_with("Clear, concise description of what this command does in active voice, 5-10 words (shown in the UI). Examples: \"ls\" → ")
        );
        assert!(
            parameters(false, false)["properties"]
                .get("run_in_background")
                .is_none()
        );
        assert!(description(true, false).ends_with("stop it with `job_kill`."));
        assert!(description(false, false).contains("Background execution is not available"));
        let confined = parameters(true, true);
        assert_eq!(
            confined["properties"]["sandbox_permissions"]["enum"],
            json!(["workspace-write", "danger-full-access"])
        );
        assert!(description(true, true).ends_with("escalating other commands later."));
    }
}
