//! The `bash` tool itself: arguments in, one shell call, dsh's result text out.

use std::sync::Arc;

use dsh_kernel::Context;
use dsh_shell::{
    SANDBOX_UNAVAILABLE, SandboxMode, SandboxPolicyService, ShellError, ShellExecRequest,
    ShellExecutor, ShellRunResult,
};
use dsh_shell_env::{ShellEnv, ShellEnvFacts};
use dsh_tools::{
    APPROVAL, ContentBlock, EscalationAsk, ToolDefinition, ToolError, ToolOutput, ToolRunContext,
    approve_escalation,
};
use serde_json::{Value, json};

use crate::args::BashArgs;
use crate::jobs::JobRegistry;
use crate::render::render_result;
use crate::schema;
use crate::workdir::resolve_workdir;

/// The model-facing `bash` tool over a shell executor.
pub struct BashTool {
    ctx: Context,
    shell: Arc<dyn ShellExecutor>,
    shell_env: Arc<ShellEnv>,
    /// Present when the executor confines: the policy each call runs under.
    policy: Option<Arc<dyn SandboxPolicyService>>,
    /// Present when background jobs are enabled.
    jobs: Option<Arc<JobRegistry>>,
    description: String,
    parameters: Value,
    output_schema: Value,
}

impl BashTool {
    /// The tool; `jobs` enables `run_in_background`, `policy` (required when the executor
    /// confines) enables confinement and escalation. `ctx` supplies the approval service.
    pub fn new(
        ctx: Context,
        shell: Arc<dyn ShellExecutor>,
        shell_env: Arc<ShellEnv>,
        policy: Option<Arc<dyn SandboxPolicyService>>,
        jobs: Option<Arc<JobRegistry>>,
    ) -> Self {
        let background = jobs.is_some();
        let escalation = policy.is_some();
        Self {
            ctx,
            shell,
            shell_env,
            policy,
            jobs,
            description: schema::description(background, escalation),
            parameters: schema::parameters(background, escalation),
            output_schema: output_schema(),
        }
    }

    /// Whether escalation is offered (the executor confines).
    fn escalation(&self) -> bool {
        self.policy.is_some()
    }

    /// The shell request of a call: its policy (escalated when approved), workdir and
    /// managed environment.
    async fn request(
        &self,
        args: &BashArgs,
        run: &ToolRunContext,
    ) -> Result<ShellExecRequest, ToolError> {
        let header = run
            .caller
            .as_ref()
            .and_then(|caller| caller.session_header.clone());
        let session_id = run
            .caller
            .as_ref()
            .and_then(|caller| caller.session_id.clone());
        let cwd = header.as_ref().and_then(|header| header.cwd.clone());
        let mut policy = self
            .policy
            .as_ref()
            .map(|policy| policy.resolve(session_id.as_deref(), cwd.as_deref(), None));
        if let (Some(requested), Some(justification)) =
            (&args.sandbox_permissions, &args.justification)
        {
            let Some(standing) = policy.as_mut() else {
                return Err(ToolError::new(
                    "sandbox_permissions is not available in this composition (no sandboxing \
                     executor to escalate)",
                ));
            };
            let requested = SandboxMode::parse(requested).ok_or_else(|| {
                ToolError::new(format!("invalid sandbox_permissions \"{requested}\""))
            })?;
            let approver = self.ctx.get(&APPROVAL);
            let ask = EscalationAsk {
                requested: requested.as_str(),
                effective: standing.mode.as_str(),
                strictly_wider: requested.is_wider_than(standing.mode),
                justification,
                subject: "command",
            };
            approve_escalation(ask, approver.as_deref(), run).await?;
            standing.mode = requested;
        }
        let workdir = match &policy {
            Some(policy) => resolve_workdir(
                args.workdir.as_deref(),
                Some(&policy.workspace_root.to_string_lossy()),
            ),
            None => resolve_workdir(args.workdir.as_deref(), cwd.as_deref()),
        };
        let dsh_env = self
            .shell_env
            .collect(&ShellEnvFacts { session: header })
            .map_err(|error| ToolError::new(error.to_string()))?;
        let mut request = ShellExecRequest::new(args.command.clone());
        request.workdir = workdir;
        request.timeout_ms = args.timeout_ms;
        request.dsh_env = dsh_env;
        request.sandbox_policy = policy;
        Ok(request)
    }

    fn start_background(
        &self,
        request: ShellExecRequest,
        args: &BashArgs,
        run: &ToolRunContext,
    ) -> Result<ToolOutput, ToolError> {
        let Some(jobs) = &self.jobs else {
            return Err(ToolError::new(
                "run_in_background is disabled for this deployment (enableRunInBackground: false)",
            ));
        };
        if run.signal.is_cancelled() {
            return Err(ToolError::aborted());
        }
        let spec = self.shell.resolve(request).map_err(shell_error)?;
        let process = self.shell.start(spec).map_err(shell_error)?;
        let id = jobs.add(&args.command, process);
        Ok(background_output(&id))
    }
}

/// A shell failure as the model reads it; a refusal to run unconfined keeps its code.
fn shell_error(error: ShellError) -> ToolError {
    match error {
        ShellError::SandboxUnavailable { message } => {
            ToolError::harness("SandboxUnavailableError", SANDBOX_UNAVAILABLE, message)
        }
        other => ToolError::new(other.to_string()),
    }
}

fn background_output(id: &str) -> ToolOutput {
    ToolOutput::new(
        json!({"kind": "background", "jobId": id}),
        vec![ContentBlock::text(format!("started background job {id}"))],
    )
}

/// A value (`kind` first, as dsh's) and its text, from a foreground value.
fn foreground_output(value: &ShellRunResult, escalation: bool) -> Result<ToolOutput, ToolError> {
    let fields = serde_json::to_value(value).map_err(|error| ToolError::new(error.to_string()))?;
    let mut json = serde_json::Map::new();
    json.insert("kind".into(), json!("foreground"));
    if let Value::Object(fields) = fields {
        json.extend(fields);
    }
    Ok(ToolOutput::new(
        Value::Object(json),
        vec![ContentBlock::text(render_result(value, escalation))],
    ))
}

#[dsh_tools::async_trait]
impl ToolDefinition for BashTool {
    fn name(&self) -> &str {
        "bash"
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(&self.output_schema)
    }

    async fn execute(&self, args: Value, run: ToolRunContext) -> Result<ToolOutput, ToolError> {
        let args = BashArgs::parse(&args)?;
        let request = self.request(&args, &run).await?;
        if args.run_in_background {
            return self.start_background(request, &args, &run);
        }
        let mut request = request;
        request.signal = Some(run.signal.clone());
        let spec = self.shell.resolve(request).map_err(shell_error)?;
        let result = self.shell.run(spec).await.map_err(shell_error)?;
        if result.aborted {
            return Err(ToolError::aborted());
        }
        foreground_output(&result, self.escalation())
    }

    fn render(&self, _args: &Value, value: Value) -> Result<ToolOutput, ToolError> {
        if value.get("kind").and_then(Value::as_str) == Some("background") {
            let id = value
                .get("jobId")
                .and_then(Value::as_str)
                .unwrap_or_default();
            return Ok(background_output(id));
        }
        let mut fields = value.clone();
        if let Some(map) = fields.as_object_mut() {
            map.shift_remove("kind");
        }
        let parsed: ShellRunResult = serde_json::from_value(fields)
            .map_err(|error| ToolError::new(format!("invalid bash value: {error}")))?;
        Ok(ToolOutput::new(
            value,
            vec![ContentBlock::text(render_result(
                &parsed,
                self.escalation(),
            ))],
        ))
    }
}

/// dsh's output schema: a background handle or a finished run.
fn output_schema() -> Value {
    let stream = json!({"type": "object", "additionalProperties": false,
        "properties": {"text": {"type": "string"}, "truncated": {"type": "boolean"},
            "spillPath": {"type": "string"}},
        "required": ["text", "truncated"]});
    json!({"oneOf": [
        {"type": "object", "additionalProperties": false,
            "properties": {"kind": {"type": "string", "const": "background"},
                "jobId": {"type": "string"}},
            "required": ["kind", "jobId"]},
        {"type": "object", "additionalProperties": false,
            "properties": {
                "kind": {"type": "string", "const": "foreground"},
                "exitCode": {"oneOf": [{"type": "integer"}, {"type": "null"}]},
                "signal": {"oneOf": [{"type": "string"}, {"type": "null"}]},
                "timedOut": {"type": "boolean"},
                "aborted": {"type": "boolean"},
                "timeoutMs": {"type": "number"},
                "stdout": stream,
                "stderr": stream,
                "sandbox": {"type": "object", "additionalProperties": false,
                    "properties": {"mode": {"type": "string"}, "denied": {"type": "boolean"},
                        "enforcement": {"type": "string"}, "runnerFailed": {"type": "boolean"}},
                    "required": ["mode", "denied"]}},
            "required": ["kind", "exitCode", "signal", "timedOut", "aborted", "timeoutMs",
                "stdout", "stderr"]}
    ]})
}
