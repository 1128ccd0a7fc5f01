//! Background jobs: a minimal registry of started commands and the `job_output`, `job_list`
//! and `job_kill` tools that read and stop them.
//!
//! Jobs live as long as the process: they belong to the plugin that started them, and the
//! shell kills their process groups when it unloads.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dsh_kernel::sync::lock;
use dsh_session::header::now_ms;
use dsh_shell::{ShellProcess, ShellProcessStatus};
use dsh_tools::{ContentBlock, ToolDefinition, ToolError, ToolOutput, ToolRunContext};
use serde::Serialize;
use serde_json::{Value, json};

use crate::render::render_process_read;

/// How long `job_output` with `wait` waits when no `timeout_ms` is given.
pub const DEFAULT_WAIT_MS: u64 = 30_000;
/// The longest `job_output` wait.
pub const MAX_WAIT_MS: u64 = 600_000;

/// One job as the tools report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobSnapshot {
    /// `bash-N`.
    pub id: String,
    /// What started it (`bash`).
    pub kind: String,
    /// The command.
    pub label: String,
    /// `running`, `stopping`, `completed` or `killed`.
    pub status: String,
    /// How it ended (`exit code: 0`, `signal: SIGTERM`, `killed before exit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Start time, epoch milliseconds.
    pub started_at: u64,
    /// End time, epoch milliseconds, once it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<u64>,
}

impl JobSnapshot {
    /// `[status: completed, exit code: 0]`.
    pub fn status_line(&self) -> String {
        match &self.detail {
            Some(detail) => format!("[status: {}, {detail}]", self.status),
            None => format!("[status: {}]", self.status),
        }
    }
}

struct Job {
    label: String,
    started_at: u64,
    finished_at: Mutex<Option<u64>>,
    process: ShellProcess,
}

impl Job {
    fn snapshot(&self, id: &str) -> JobSnapshot {
        let status = self.process.status();
        // A kill was asked for but the process has not settled yet: dsh's `stopping`.
        if status == ShellProcessStatus::Killed && !self.process.is_done() {
            return JobSnapshot {
                id: id.to_owned(),
                kind: "bash".to_owned(),
                label: self.label.clone(),
                status: "stopping".to_owned(),
                detail: None,
                started_at: self.started_at,
                finished_at: None,
            };
        }
        let detail = match status {
            ShellProcessStatus::Running => None,
            ShellProcessStatus::Killed => Some(self.process.signal().map_or_else(
                || "killed before exit".to_owned(),
                |s| format!("signal: {s}"),
            )),
            ShellProcessStatus::Completed => Some(format!(
                "exit code: {}",
                self.process.exit_code().unwrap_or(0)
            )),
        };
        let finished_at = (status != ShellProcessStatus::Running)
            .then(|| *lock(&self.finished_at).get_or_insert_with(now_ms));
        JobSnapshot {
            id: id.to_owned(),
            kind: "bash".to_owned(),
            label: self.label.clone(),
            status: status.as_str().to_owned(),
            detail,
            started_at: self.started_at,
            finished_at,
        }
    }
}

/// The jobs started in this process, by id.
#[derive(Default)]
pub struct JobRegistry {
    next: AtomicU64,
    jobs: Mutex<BTreeMap<u64, Arc<Job>>>,
}

impl JobRegistry {
    /// Tracks a started command; returns its id (`bash-1`, `bash-2`, ...).
    pub fn add(&self, label: &str, process: ShellProcess) -> String {
        let number = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let job = Arc::new(Job {
            label: label.to_owned(),
            started_at: now_ms(),
            finished_at: Mutex::new(None),
            process,
        });
        lock(&self.jobs).insert(number, job);
        format!("bash-{number}")
    }

    fn job(&self, id: &str) -> Result<Arc<Job>, ToolError> {
        if id.is_empty() {
            return Err(ToolError::new(format!(
                "invalid job_id: expected a non-empty string, got {}",
                json!(id)
            )));
        }
        id.strip_prefix("bash-")
            .and_then(|number| {
                number
                    .parse::<u64>()
                    .ok()
                    .filter(|n| n.to_string() == number)
            })
            .and_then(|number| lock(&self.jobs).get(&number).cloned())
            .ok_or_else(|| ToolError::new(format!("unknown job {id}")))
    }

    /// Every job, oldest first.
    pub fn list(&self) -> Vec<JobSnapshot> {
        lock(&self.jobs)
            .iter()
            .map(|(number, job)| job.snapshot(&format!("bash-{number}")))
            .collect()
    }

    /// Kills every running job (at shutdown).
    pub fn kill_all(&self) {
        for job in lock(&self.jobs).values() {
            job.process.kill();
        }
    }
}

fn job_id(args: &Value) -> String {
    args.get("job_id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

const JOB_ID_DESCRIPTION: &str = "Job id returned by the tool that started the background work.";

/// `job_output`: the new output of a job, ending with its status.
pub struct JobOutputTool {
    jobs: Arc<JobRegistry>,
    /// Whether denial notices carry the escalation hint.
    escalation: bool,
    parameters: Value,
}

impl JobOutputTool {
    /// The tool over `jobs`; `escalation` when the executor confines.
    pub fn new(jobs: Arc<JobRegistry>, escalation: bool) -> Self {
        Self {
            jobs,
            escalation,
            parameters: json!({"type": "object", "properties": {
                "job_id": {"type": "string", "description": JOB_ID_DESCRIPTION},
                "wait": {"type": "boolean", "description": "Block until the job reaches a \
                    terminal status or the timeout expires. A timed-out wait returns [status: \
                    running] and leaves the job alive."},
                "timeout_ms": {"type": "number", "description": "Max wait in milliseconds (only \
                    meaningful with wait: true). Defaults to the configured wait timeout; capped \
                    by the configured maximum."}
            }, "required": ["job_id"]}),
        }
    }

    fn output(text: String, job: &JobSnapshot) -> ToolOutput {
        let body = if text.is_empty() {
            "(no new output)".to_owned()
        } else {
            text.clone()
        };
        let separator = if body.ends_with('\n') { "" } else { "\n" };
        let rendered = format!("{body}{separator}{}", job.status_line());
        ToolOutput::new(
            json!({"text": text, "job": job}),
            vec![ContentBlock::text(rendered)],
        )
    }
}

#[dsh_tools::async_trait]
impl ToolDefinition for JobOutputTool {
    fn name(&self) -> &str {
        "job_output"
    }

    fn description(&self) -> &str {
        "Read a background job. Stream jobs return only output since the previous read; \
         final-output jobs return their result after settlement. Every response ends with \
         `[status: ...]`. Reads are non-blocking unless `wait: true`, which waits up to the \
         configured cap."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    async fn execute(&self, args: Value, run: ToolRunContext) -> Result<ToolOutput, ToolError> {
        let id = job_id(&args);
        let job = self.jobs.job(&id)?;
        if args.get("wait").and_then(Value::as_bool) == Some(true) {
            let requested = args.get("timeout_ms").and_then(Value::as_f64);
            if let Some(timeout) = requested.filter(|t| !(t.is_finite() && *t > 0.0)) {
                return Err(ToolError::new(format!(
                    "invalid wait timeout: expected a positive number of milliseconds, got {timeout}"
                )));
            }
            let wait = requested
                .map_or(DEFAULT_WAIT_MS, |t| t.ceil() as u64)
                .min(MAX_WAIT_MS);
            tokio::select! {
                () = job.process.done() => {}
                () = tokio::time::sleep(Duration::from_millis(wait)) => {}
                () = run.signal.cancelled() => return Err(ToolError::new("wait aborted")),
            }
        }
        let read = job.process.read_output();
        let text = render_process_read(&read, job.process.sandbox().as_ref(), self.escalation);
        Ok(Self::output(text, &job.snapshot(&id)))
    }
}

/// `job_list`: every job with its status.
pub struct JobListTool {
    jobs: Arc<JobRegistry>,
    parameters: Value,
}

impl JobListTool {
    /// The tool over `jobs`.
    pub fn new(jobs: Arc<JobRegistry>) -> Self {
        Self {
            jobs,
            parameters: json!({"type": "object", "properties": {}}),
        }
    }
}

#[dsh_tools::async_trait]
impl ToolDefinition for JobListTool {
    fn name(&self) -> &str {
        "job_list"
    }

    fn description(&self) -> &str {
        "List your background jobs (running and finished) with their ids, kinds, and statuses."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn is_concurrency_safe(&self, _args: &Value) -> bool {
        true
    }

    async fn execute(&self, _args: Value, _run: ToolRunContext) -> Result<ToolOutput, ToolError> {
        let jobs = self.jobs.list();
        let text = if jobs.is_empty() {
            "(no background jobs)".to_owned()
        } else {
            jobs.iter()
                .map(|job| format!("{} [{}] {} — {}", job.id, job.kind, job.status, job.label))
                .collect::<Vec<_>>()
                .join("\n")
        };
        Ok(ToolOutput::new(json!(jobs), vec![ContentBlock::text(text)]))
    }
}

/// `job_kill`: asks a running job to stop.
pub struct JobKillTool {
    jobs: Arc<JobRegistry>,
    parameters: Value,
}

impl JobKillTool {
    /// The tool over `jobs`.
    pub fn new(jobs: Arc<JobRegistry>) -> Self {
        Self {
            jobs,
            parameters: json!({"type": "object", "properties": {
                "job_id": {"type": "string", "description": JOB_ID_DESCRIPTION},
                "reason": {"type": "string", "description": "Optional short reason, recorded in \
                    the log and forwarded to the job."}
            }, "required": ["job_id"]}),
        }
    }
}

#[dsh_tools::async_trait]
impl ToolDefinition for JobKillTool {
    fn name(&self) -> &str {
        "job_kill"
    }

    fn description(&self) -> &str {
        "Request cancellation of a running background job by job id. Returns immediately; the \
         job settles as killed once its work actually stops."
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    async fn execute(&self, args: Value, _run: ToolRunContext) -> Result<ToolOutput, ToolError> {
        let id = job_id(&args);
        let job = self.jobs.job(&id)?;
        let requested = job.process.kill();
        let snapshot = job.snapshot(&id);
        let (outcome, text) = if requested {
            (
                "cancellation-requested",
                format!("requested cancellation of job {id}"),
            )
        } else {
            (
                "already-finished",
                format!("job {id} had already finished {}", snapshot.status_line()),
            )
        };
        Ok(ToolOutput::new(
            json!({"outcome": outcome, "job": snapshot}),
            vec![ContentBlock::text(text)],
        ))
    }
}
